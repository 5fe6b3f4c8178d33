// Search contexts, differentially: a daemon with code-host permissions (members granted
// repositories at random, public and private repositories, anonymous access on),
// repositories on two connections with code-host topics, and search contexts drawn at
// random (seeded) over repository-name globs, connections, topics and excludes, half in the
// configuration file and half made through the API. For every caller and every context,
// every search with `context:` (in the query or the body, blocking and streamed) answers
// exactly what an oracle who sees everything finds in the repositories of the context (by
// this test's own rule) that the caller may see; so does a member's default context, and
// GET /api/contexts/{name} names those repositories. Zero differences: a context narrows a
// search and never shows what its caller may not see.

import { seededRandom } from '../../bench/suite/stats.ts';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type Answer, call, type ExtraRepo, startTestDaemon } from '../helpers/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';

const SEED = Number(process.env.TRAWL_CONTEXTS_SEED ?? 20261128);

interface Made {
  name: string;
  visibility: 'public' | 'private';
  connection?: 'conn-a' | 'conn-b';
  topics: string[];
}

/** Repositories made here, besides the helper's public "widgets" and private "secret" (on no connection, without topics). */
const MADE: Made[] = [
  { name: 'api-users', visibility: 'private', connection: 'conn-a', topics: ['backend', 'go'] },
  { name: 'api-billing', visibility: 'public', connection: 'conn-a', topics: ['Backend'] },
  { name: 'legacy-api', visibility: 'private', connection: 'conn-a', topics: [] },
  { name: 'web-shop', visibility: 'private', connection: 'conn-b', topics: ['frontend'] },
  { name: 'legacy-cart', visibility: 'public', connection: 'conn-b', topics: ['frontend', 'legacy'] },
  { name: 'tools-lint', visibility: 'private', topics: ['tooling'] },
];
const ALL: Made[] = [...MADE, { name: 'widgets', visibility: 'public', topics: [] }, { name: 'secret', visibility: 'private', topics: [] }];

const EXTRA: ExtraRepo[] = MADE.map(({ name, visibility }) => ({
  name,
  visibility,
  build(r) {
    const id = name.replace(/-/g, '_');
    r.commit({ [`src/${id}.c`]: `/* ctx_common_term */\nint ctx_marker_${id}(void) {\n  return ${id.length};\n}\n` }, `add ${name}`);
  },
}));

const GLOBS = ['api-*', '*-api', 'legacy-*', '**/legacy-*', 'API-USERS', 'w?dgets', 'secret', '*', 'tools-**', 'nomatch-*'];
const TOPICS = ['backend', 'FRONTEND', 'legacy', 'go', 'tooling', 'none-such'];
const CONNECTIONS = ['conn-a', 'conn-b'];
const MEMBERS = ['m0@example.com', 'm1@example.com', 'm2@example.com', 'm3@example.com'];
const ORACLE = 'oracle@example.com';
const OWNER = 'owner@example.com';

interface Selection {
  repos?: string[];
  connections?: string[];
  topics?: string[];
}
interface Definition {
  include?: Selection;
  exclude?: Selection;
}

/** A selection of one to three entries of any kinds. */
function selection(r: () => number): Selection {
  const out: Selection = {};
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  for (let n = 1 + Math.floor(r() * 3); n > 0; n--) {
    const kind = pick(['repos', 'connections', 'topics'] as const);
    const value = kind === 'repos' ? pick(GLOBS) : kind === 'connections' ? pick(CONNECTIONS) : pick(TOPICS);
    const list = (out[kind] ??= []);
    if (!list.includes(value)) list.push(value);
  }
  return out;
}

/** The draw: the contexts, and each member's grants (the oracle is granted everything). */
function draw(seed: number): { contexts: Definition[]; grants: Array<{ users: string[]; repos: string[] }> } {
  const r = seededRandom(seed);
  const contexts: Definition[] = [];
  for (let i = 0; i < 12; i++) {
    const def: Definition = {};
    if (r() < 0.75) def.include = selection(r);
    if (r() < 0.5) def.exclude = selection(r);
    contexts.push(def);
  }
  const grants = MEMBERS.map((m) => ({ users: [m], repos: ALL.filter(() => r() < 0.35).map((x) => x.name) })).filter((g) => g.repos.length > 0);
  grants.push({ users: [ORACLE], repos: ['*'] });
  return { contexts, grants };
}

/**
 * The test's own reading of a repository-name glob: `**` followed by `/` is nothing or any
 * run ending in `/` (so `**\/legacy-*` matches "legacy-cart" at the top), another `**` any
 * run; `*` and `?` stay within one `/`-separated part; without regard to case.
 */
function globMatches(glob: string, name: string): boolean {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*' && glob[i + 2] === '/') {
      re += '(?:.*/)?';
      i += 2;
    } else if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i').test(name);
}

function selects(s: Selection, repo: Made): boolean {
  return (
    (s.repos ?? []).some((g) => globMatches(g, repo.name)) ||
    (repo.connection !== undefined && (s.connections ?? []).includes(repo.connection)) ||
    (s.topics ?? []).some((t) => repo.topics.some((u) => u.toLowerCase() === t.toLowerCase()))
  );
}

/** The repositories of the context, by the test's rule. */
function inContext(def: Definition): Set<string> {
  return new Set(ALL.filter((repo) => (!def.include || selects(def.include, repo)) && !(def.exclude && selects(def.exclude, repo))).map((r) => r.name));
}

/** What a caller may see: public repositories and the ones granted to them (anonymous: public only). */
function visibleTo(email: string | undefined, grants: Array<{ users: string[]; repos: string[] }>): Set<string> {
  const granted = grants.filter((g) => email !== undefined && g.users.includes(email)).flatMap((g) => g.repos);
  return new Set(ALL.filter((r) => r.visibility === 'public' || granted.includes(r.name) || email === ORACLE).map((r) => r.name));
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

const QUERIES = [{ query: 'int' }, { query: 'ctx_marker_[a-z_]+', isRegexEnabled: true }, { query: 'widget or ctx_common_term' }];

test(`search contexts, differentially (seed ${SEED}): every search within a context finds exactly the context's repositories the caller may see`, async (t) => {
  const { contexts, grants } = draw(SEED);
  const names = contexts.map((_, i) => `ctx-${i}`);
  t.diagnostic(`contexts ${JSON.stringify(contexts)}; grants ${JSON.stringify(grants)}`);
  const fromFile = Object.fromEntries(names.flatMap((name, i) => (i % 2 === 0 ? [[name, contexts[i]!]] : [])));
  const d = await startTestDaemon({
    settings: { permissions: 'code-host', rateLimit: { requestsPerDay: 1_000_000 } },
    config: {
      connections: { 'conn-a': { type: 'git', url: '/nonexistent/trawl-a/*' }, 'conn-b': { type: 'git', url: '/nonexistent/trawl-b/*' } },
      permissions: { grants },
      contexts: fromFile,
    },
    extraRepos: EXTRA,
    async prepare(store) {
      const ids = { 'conn-a': (await store.upsertConnection('conn-a', 'git')).id, 'conn-b': (await store.upsertConnection('conn-b', 'git')).id };
      for (const m of MADE) {
        const rec = (await store.getRepoByName(m.name))!;
        await store.updateRepo(rec.repoId, { topics: m.topics.map((x) => x.toLowerCase()), ...(m.connection ? { connectionId: ids[m.connection] } : {}) });
      }
    },
  });
  try {
    const where = ['--data-dir', d.dataDir];
    const keys = new Map<string | undefined, string | undefined>([[undefined, undefined]]);
    for (const email of [ORACLE, ...MEMBERS]) keys.set(email, await newUserKey(email, where));
    const owner = await newUserKey(OWNER, where, 'owner');
    const ask = (key: string | undefined, path: string, init: { method?: string; json?: unknown } = {}): Promise<Answer> =>
      call(`${d.url}${path}`, { ...init, headers: key ? { authorization: `Bearer ${key}` } : {} });
    for (const [i, name] of names.entries()) {
      if (i % 2 === 0) continue;
      const made = await ask(owner, `/api/contexts/${name}`, { method: 'PUT', json: contexts[i] });
      assert.equal(made.status, 201, made.text);
    }
    const listed = (await ask(keys.get(ORACLE), '/api/repos?perPage=100')).json as Array<{ repoName: string; topics: string[] }>;
    assert.deepEqual(
      listed.map((r) => r.repoName),
      ALL.map((r) => r.name).sort(),
      'the oracle sees every repository',
    );
    for (const r of listed)
      assert.deepEqual(
        r.topics,
        ALL.find((a) => a.name === r.repoName)!.topics.map((x) => x.toLowerCase()),
        `${r.repoName}: its topics on /api/repos`,
      );

    /** The oracle's files of a query, everywhere. */
    const everything = new Map<string, { files: Array<{ repository: string }>; repositoryInfo: Array<{ name: string }> }>();
    for (const q of QUERIES) {
      const a = await ask(keys.get(ORACLE), '/api/search', { json: { ...q, query: `${q.query} context:global`, matches: 10_000 } });
      assert.equal(a.status, 200, a.text);
      assert.equal(a.json.isSearchExhaustive, true);
      everything.set(q.query, a.json);
    }
    assert.ok(everything.get('int')!.files.length >= ALL.length, 'every repository holds a match of "int"');

    let compared = 0;
    let nonEmpty = 0;
    /** The caller's search with `extra` (a context, or none) equals the oracle's within `expected`. */
    const check = async (who: string | undefined, q: (typeof QUERIES)[number], body: Record<string, unknown>, expected: Set<string>, label: string) => {
      const all = everything.get(q.query)!;
      const mine = await ask(keys.get(who), '/api/search', { json: { ...q, ...body, matches: 10_000 } });
      assert.equal(mine.status, 200, `${label}: ${mine.text}`);
      const want = all.files.filter((f) => expected.has(f.repository));
      assert.deepEqual(mine.json.files, want, label);
      assert.deepEqual(
        mine.json.repositoryInfo,
        all.repositoryInfo.filter((r) => expected.has(r.name)),
        `${label}: repositoryInfo`,
      );
      compared++;
      if (want.length > 0) nonEmpty++;
    };

    for (const who of [undefined, ...MEMBERS]) {
      const visible = visibleTo(who, grants);
      for (const [i, name] of names.entries()) {
        const expected = new Set([...inContext(contexts[i]!)].filter((r) => visible.has(r)));
        const label = `${who ?? 'anonymous'} in ${name} ${JSON.stringify(contexts[i])}`;
        const detail = await ask(keys.get(who), `/api/contexts/${name}`);
        assert.deepEqual(detail.json.repositories, [...expected].sort(), `${label}: GET /api/contexts/${name}`);
        for (const [k, q] of QUERIES.entries()) {
          // The query's context: and the body's field, in turns.
          const body = (i + k) % 2 === 0 ? { query: `context:${name} ${q.query}` } : { query: q.query, context: name };
          await check(who, q, body, expected, `${label}: ${JSON.stringify(body)}`);
        }
        const q = QUERIES[i % QUERIES.length]!;
        const stream = await ask(keys.get(who), '/api/stream_search', { json: { ...q, query: `${q.query} context:${name}`, matches: 10_000 } });
        assert.deepEqual(
          streamedFiles(stream.text),
          everything
            .get(q.query)!
            .files.filter((f) => expected.has(f.repository))
            .map((f) => `${f.repository}/${(f as unknown as { fileName: { text: string } }).fileName.text}`)
            .sort(),
          `${label}: stream_search`,
        );
        compared++;
      }
    }

    // Each member's default context: searches that name none are limited to it; context:global lifts it.
    for (const [m, who] of MEMBERS.entries()) {
      const i = (m * 5 + 3) % names.length;
      const set = await ask(keys.get(who), '/api/default_context', { method: 'PUT', json: { context: names[i] } });
      assert.equal(set.status, 200, set.text);
      const visible = visibleTo(who, grants);
      const expected = new Set([...inContext(contexts[i]!)].filter((r) => visible.has(r)));
      for (const q of QUERIES) {
        await check(who, q, { query: q.query }, expected, `${who}: default ${names[i]}`);
        await check(who, q, { query: `${q.query} context:global` }, visible, `${who}: default ${names[i]}, context:global`);
      }
    }
    t.diagnostic(`${compared} answers compared (${nonEmpty} with files)`);
    assert.ok(nonEmpty > compared / 4, `only ${nonEmpty} of ${compared} comparisons had files: the draw tests too little`);
  } finally {
    await d.cleanup();
  }
});
