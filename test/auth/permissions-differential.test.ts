// Permissions, differentially: a daemon with settings.permissions "code-host", groups and
// grants drawn at random (seeded), what the code hosts let members read drawn at random too
// (written to the store as the permission sync writes it: account-driven and
// repository-driven rows), members with API keys, and one member granted every repository
// as the oracle's eye. For every member, every endpoint that reads a repository, REST and
// the tool server's tools alike, answers exactly as the oracle does for the repositories
// the member may read (public ones, those its grants match and those its hosts allow,
// computed here by a rule of its own), and for the others exactly as for a repository that
// does not exist: zero differences, zero leaks.

import { seededRandom } from '../../bench/suite/stats.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { signLicense } from '../../daemon/auth/license.ts';
import { openStore } from '../../daemon/store/open.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Answer, call, type ExtraRepo, startTestDaemon } from '../helpers/daemon.ts';

// Scoped access tokens are an enterprise endpoint: a license that grants them.
const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const LICENSE = signLicense(
  { id: 'L-permissions', licensee: 'Test Org', entitlements: ['scoped-access-tokens'], issuedAt: '2026-01-01T00:00:00Z', expiresAt: '2099-01-01T00:00:00Z' },
  privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);

const SEED = Number(process.env.TRAWL_PERMISSIONS_SEED ?? 20261128);

/** Repositories made here (besides the helper's public "widgets" and private "secret"). */
const MADE: Array<{ name: string; visibility: 'public' | 'private' }> = [
  { name: 'team-a-api', visibility: 'private' },
  { name: 'team-a-web', visibility: 'private' },
  { name: 'team-b-core', visibility: 'private' },
  { name: 'tools-lint', visibility: 'private' },
  { name: 'open-lib', visibility: 'public' },
];
const ALL = [...MADE.map((m) => m.name), 'widgets', 'secret'].sort();
const PUBLIC = new Set(['open-lib', 'widgets']);

const EXTRA: ExtraRepo[] = MADE.map(({ name, visibility }) => ({
  name,
  visibility,
  build(r) {
    const id = name.replace(/-/g, '_');
    r.commit({ [`src/${id}.c`]: `/* perm_common_term */\nint perm_marker_${id}(void) {\n  return perm_common_term_${id.length};\n}\n` }, `add ${name}`, {
      author: 'Perm Author <perm@example.com>',
      date: '2026-03-01T00:00:00Z',
    });
  },
}));

const FILE_OF: Record<string, string> = Object.fromEntries([
  ...MADE.map((m) => [m.name, `src/${m.name.replace(/-/g, '_')}.c`]),
  ['widgets', 'src/main.c'],
  ['secret', 'vault.c'],
]);

const GLOBS = ['team-a-*', 'team-*', 'tools-*', 'secret', '*-web', 'open-lib', 'nomatch-*', 'TEAM-B-CORE', '*'];
const MEMBERS = ['m0@example.com', 'm1@example.com', 'm2@example.com', 'M3@Example.com', 'm4@example.com', 'm5@example.com'];
const ORACLE = 'root@example.com';

interface Grant {
  groups: string[];
  users: string[];
  repos: string[];
}

/** What the code hosts let members read (the permission sync's rows), by source. */
interface HostRows {
  /** Member email -> repositories their account can read (account-driven). */
  accounts: Record<string, string[]>;
  /** Repository -> members who can read it (repository-driven). */
  readers: Record<string, string[]>;
}

/** The draw of the hosts' answers: each private repository's readers and each member's account, at random. */
function drawHostRows(seed: number): HostRows {
  const r = seededRandom(seed ^ 0x5eed);
  const privates = ALL.filter((n) => !PUBLIC.has(n));
  const accounts: Record<string, string[]> = {};
  for (const m of MEMBERS) accounts[m] = privates.filter(() => r() < 0.2);
  const readers: Record<string, string[]> = {};
  for (const repo of privates) readers[repo] = MEMBERS.filter(() => r() < 0.2);
  return { accounts, readers };
}

/** The draw: groups of members, and grants to users and groups; the oracle gets every repository. */
function draw(seed: number): { groups: Record<string, string[]>; grants: Grant[] } {
  const r = seededRandom(seed);
  const pick = <T>(xs: readonly T[], p: number) => xs.filter(() => r() < p);
  const groups: Record<string, string[]> = { g0: pick(MEMBERS, 0.4), g1: pick(MEMBERS, 0.3), empty: [] };
  const grants: Grant[] = [];
  for (let i = 0, n = 2 + Math.floor(r() * 4); i < n; i++) {
    const users = pick(MEMBERS, 0.2);
    const named = pick(Object.keys(groups), 0.5);
    if (users.length === 0 && named.length === 0) users.push(MEMBERS[Math.floor(r() * MEMBERS.length)]!);
    const repos = pick(GLOBS.slice(0, -1), 0.25);
    if (repos.length === 0) repos.push(GLOBS[Math.floor(r() * (GLOBS.length - 1))]!);
    grants.push({ groups: named, users, repos });
  }
  grants.push({ groups: [], users: [ORACLE], repos: ['*'] });
  return { groups, grants };
}

/** The files of a stream_search answer's chunks, as repository/path, sorted. */
function streamedFiles(text: string): string[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (e) => events.push(e) }).feed(text);
  return events
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data) as { type: string; files?: Array<{ repository: string; fileName: { text: string } }> })
    .filter((m) => m.type === 'chunk')
    .flatMap((m) => m.files!.map((f) => `${f.repository}/${f.fileName.text}`))
    .sort();
}

/** The oracle's own rule: a glob over names without "/", "*" any run, without regard to case. */
function matches(glob: string, name: string): boolean {
  const re = new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i');
  return re.test(name);
}

function visibleTo(email: string, config: ReturnType<typeof draw>, host: HostRows): string[] {
  const e = email.toLowerCase();
  const allowed = new Set([
    ...(host.accounts[email] ?? []),
    ...Object.entries(host.readers)
      .filter(([, members]) => members.includes(email))
      .map(([repo]) => repo),
  ]);
  const groups = Object.entries(config.groups)
    .filter(([, members]) => members.some((m) => m.toLowerCase() === e))
    .map(([g]) => g);
  const granted = config.grants.filter((g) => g.users.some((u) => u.toLowerCase() === e) || g.groups.some((n) => groups.includes(n)));
  return ALL.filter((name) => PUBLIC.has(name) || allowed.has(name) || granted.some((g) => g.repos.some((glob) => matches(glob, name))));
}

/** A tool server session as a member. */
async function mcpClient(url: string, key: string): Promise<{ client: Client; close(): Promise<void> }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  const client = new Client({ name: 'permissions-differential', version: '1.0.0' });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

/** A tool's answer as text (its content blocks joined), and whether it is an error. */
async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = (await client.callTool({ name, arguments: args })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
  return { text: r.content.map((c) => c.text ?? '').join('\n'), isError: r.isError === true };
}

test(`code-host permissions, differentially (seed ${SEED}): every endpoint answers for exactly the repositories a member may read`, async (t) => {
  const config = draw(SEED);
  const host = drawHostRows(SEED);
  t.diagnostic(`groups ${JSON.stringify(config.groups)}; grants ${JSON.stringify(config.grants)}; hosts ${JSON.stringify(host)}`);
  const d = await startTestDaemon({
    settings: { permissions: 'code-host', rateLimit: { requestsPerDay: 1_000_000 } },
    config: { permissions: config, license: { publicKeys: [publicKey.export({ type: 'spki', format: 'pem' }).toString()] } },
    extraRepos: EXTRA,
  });
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => new Date() };
    const dd = ['--data-dir', d.dataDir];
    const keys = new Map<string, string>();
    for (const email of [ORACLE, ...MEMBERS]) {
      await usersCommand(['add', '--email', email.toLowerCase(), ...dd], io);
      await keysCommand(['create', '--user', email.toLowerCase(), ...dd], io);
      keys.set(email, lines.at(-1)!);
    }
    const ask = (email: string, path: string, json?: unknown): Promise<Answer> =>
      call(`${d.url}${path}`, { headers: { authorization: `Bearer ${keys.get(email)}` }, ...(json !== undefined ? { json } : {}) });
    const repoNames = async (email: string) => ((await ask(email, '/api/repos')).json as Array<{ repoName: string }>).map((r) => r.repoName).sort();
    const store = openStore(d.dataDir);
    try {
      await store.putLicense(LICENSE);
      // The hosts' answers, as the permission sync writes them (before any member's first
      // request: the daemon reads a member's rows once, then after its own sync's writes).
      const byName = new Map((await store.listRepos()).map((r) => [r.repoName, r.repoId]));
      const userOf = async (email: string) => (await store.getUserByEmail(email.toLowerCase()))!.id;
      const now = new Date().toISOString();
      for (const [email, repos] of Object.entries(host.accounts))
        await store.permissions.replaceAccountRepos(
          await userOf(email),
          'hosted',
          repos.map((n) => byName.get(n)!),
          now,
        );
      for (const [repo, members] of Object.entries(host.readers))
        await store.permissions.replaceRepoReaders(byName.get(repo)!, await Promise.all(members.map(userOf)), now);
    } finally {
      await store.close();
    }
    assert.deepEqual(await repoNames(ORACLE), ALL, 'the oracle sees every repository');

    const QUERIES = [
      { query: 'perm_common_term' },
      { query: 'perm_marker_[a-z_]+', isRegexEnabled: true },
      { query: 'int lang:c' },
      { query: 'sym:perm_marker' },
      { query: 'widget' },
    ];
    const ENDPOINTS = (repo: string): Array<[string, string, unknown?]> => [
      ['source', `/api/source?repo=${repo}&path=${encodeURIComponent(FILE_OF[repo]!)}`],
      ['blame', `/api/blame?repo=${repo}&path=${encodeURIComponent(FILE_OF[repo]!)}`],
      ['commits', `/api/commits?repo=${repo}`],
      ['commit', `/api/commit?repo=${repo}`],
      ['commit authors', `/api/commits/authors?repo=${repo}`],
      ['diff', `/api/diff?repo=${repo}&base=HEAD&head=HEAD`],
      ['folder contents', `/api/folder_contents?repoName=${repo}`],
      ['files', '/api/files', { repoName: repo }],
      ['tree', '/api/tree', { repoName: repo, paths: [] }],
    ];
    let compared = 0;
    const oracleTools = await mcpClient(d.url, keys.get(ORACLE)!);
    for (const member of MEMBERS) {
      const visible = visibleTo(member, config, host);
      const seen = new Set(visible);
      compared += await compareTools(d.url, keys.get(member)!, oracleTools.client, seen, member);
      assert.deepEqual(await repoNames(member), visible, `${member}: /api/repos`);
      for (const q of QUERIES) {
        const body = { ...q, matches: 10_000 };
        const all = (await ask(ORACLE, '/api/search', body)).json;
        const mine = (await ask(member, '/api/search', body)).json;
        assert.deepEqual(
          mine.files,
          all.files.filter((f: { repository: string }) => seen.has(f.repository)),
          `${member}: search ${JSON.stringify(q)}`,
        );
        assert.deepEqual(
          mine.repositoryInfo,
          all.repositoryInfo.filter((r: { name: string }) => seen.has(r.name)),
          `${member}: repositoryInfo of ${JSON.stringify(q)}`,
        );
        const stream = await ask(member, '/api/stream_search', body);
        assert.deepEqual(
          streamedFiles(stream.text),
          all.files
            .filter((f: { repository: string }) => seen.has(f.repository))
            .map((f: { repository: string; fileName: { text: string } }) => `${f.repository}/${f.fileName.text}`)
            .sort(),
          `${member}: stream_search ${JSON.stringify(q)}`,
        );
        compared += 2;
      }
      for (const endpoint of ['/api/find_definitions', '/api/find_references']) {
        const body = { symbolName: 'perm_marker_team_a_api' };
        const all = (await ask(ORACLE, endpoint, body)).json;
        const mine = (await ask(member, endpoint, body)).json;
        const repos = (a: { files?: Array<{ repository: string }> }) => [...new Set((a.files ?? []).map((f) => f.repository))].sort();
        assert.deepEqual(
          repos(mine),
          repos(all).filter((r) => seen.has(r)),
          `${member}: ${endpoint}`,
        );
        compared++;
      }
      // A scoped token asked for a repository the member may not see is refused like one for a missing repository.
      const ids = Object.fromEntries(
        ((await ask(ORACLE, '/api/repos')).json as Array<{ repoName: string; repoId: number }>).map((r) => [r.repoName, r.repoId]),
      );
      for (const repo of ALL) {
        const asked = await ask(member, '/api/ee/scoped_access_token', { repoIds: [ids[repo]] });
        if (seen.has(repo)) assert.equal(asked.status, 201, `${member}: a scoped token for ${repo}, which it sees: ${asked.text}`);
        else {
          const missing = await ask(member, '/api/ee/scoped_access_token', { repoIds: [987654] });
          assert.equal(asked.status, missing.status, `${member}: a scoped token for ${repo}`);
          assert.equal(asked.json.errorCode, missing.json.errorCode, `${member}: a scoped token for ${repo}`);
        }
        compared++;
      }
      for (const repo of ALL) {
        for (const [what, path, json] of ENDPOINTS(repo)) {
          const mine = await ask(member, path, json);
          if (seen.has(repo)) {
            const oracle = await ask(ORACLE, path, json);
            assert.equal(mine.status, oracle.status, `${member}: ${what} of ${repo}`);
            assert.deepEqual(mine.json, oracle.json, `${member}: ${what} of ${repo}`);
          } else {
            const missing = await ask(member, path.replace(`=${repo}`, '=no-such-repository'), json && { ...(json as object), repoName: 'no-such-repository' });
            assert.equal(mine.status, 404, `${member}: ${what} of ${repo}, which it may not see`);
            assert.equal(mine.status, missing.status, `${member}: ${what}`);
            // Word for word the answer about a repository that does not exist (its name echoed).
            assert.equal(mine.text, missing.text.replaceAll('no-such-repository', repo), `${member}: ${what} of ${repo}`);
          }
          compared++;
        }
      }
    }
    await oracleTools.close();
    t.diagnostic(`${compared} answers compared over ${MEMBERS.length} members`);
  } finally {
    await d.cleanup();
  }
});

/**
 * Which repositories a tool's text names: by each repository's own file (FILE_OF), which
 * no other repository holds (not by a symbol's name: the tools echo what they were asked).
 */
function reposIn(text: string): string[] {
  return ALL.filter((repo) => text.includes(FILE_OF[repo]!));
}

/**
 * The tool server, differentially: the listing and searching tools name exactly the
 * repositories the oracle's do that the member may read; the tools on one repository
 * answer as the oracle's for those, and for the others exactly as for a repository that
 * does not exist.
 */
async function compareTools(url: string, key: string, oracle: Client, seen: Set<string>, member: string): Promise<number> {
  const mine = await mcpClient(url, key);
  let compared = 0;
  try {
    const wide: Array<[string, Record<string, unknown>]> = [
      ['search_code', { query: 'perm_common_term' }],
      ['search_code', { query: 'int lang:c' }],
      ['list_repos', {}],
      ['find_symbol_definitions', { symbolName: 'perm_marker_team_a_api' }],
      ['find_symbol_references', { symbolName: 'perm_marker_team_a_api' }],
    ];
    for (const [name, args] of wide) {
      const all = await tool(oracle, name, args);
      const got = await tool(mine.client, name, args);
      const expected = reposIn(all.text).filter((r) => seen.has(r));
      if (name === 'list_repos') {
        const listed = ALL.filter((r) => new RegExp(`(^|[^\\w-])${r}($|[^\\w-])`, 'm').test(got.text));
        assert.deepEqual(listed, [...seen].sort(), `${member}: MCP list_repos`);
      } else assert.deepEqual(reposIn(got.text), expected, `${member}: MCP ${name} ${JSON.stringify(args)}`);
      compared++;
    }
    for (const repo of ALL) {
      const path = FILE_OF[repo]!;
      const narrow: Array<[string, Record<string, unknown>]> = [
        ['read_file', { repo, path }],
        ['list_tree', { repo }],
        ['glob', { repo, pattern: '**/*.c' }],
        ['list_commits', { repo }],
        ['blame', { repo, path }],
        ['get_diff', { repo, base: 'HEAD', head: 'HEAD' }],
      ];
      for (const [name, args] of narrow) {
        const got = await tool(mine.client, name, args);
        if (seen.has(repo)) {
          assert.deepEqual(got, await tool(oracle, name, args), `${member}: MCP ${name} of ${repo}`);
        } else {
          const missing = await tool(mine.client, name, { ...args, repo: 'no-such-repository' });
          assert.ok(got.isError, `${member}: MCP ${name} of ${repo}, which it may not see, is an error`);
          assert.equal(got.text, missing.text.replaceAll('no-such-repository', repo), `${member}: MCP ${name} of ${repo}`);
        }
        compared++;
      }
    }
  } finally {
    await mine.close();
  }
  return compared;
}
