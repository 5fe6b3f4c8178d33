// The scope-escape suite: a scoped access token (docs/http-api.md section 14) limited to one
// repository must reveal nothing of any other repository: not its name, id, paths,
// content, branches, authors or connection, and not even whether it exists (an unseen
// repository answers exactly like one that does not exist). Four repositories: the
// helper's public "widgets" and private "secret", and two made here with canary strings,
// public "gadgets" and private "classified"; the suite runs once with a token scoped to
// each of the latter two. Every attempt is also made with the creator's API key, which
// must see the other repositories, so that the suite cannot pass by seeing nothing.
// Markers of the other repositories are looked for in every body, header and SSE message
// the token gets (except where the request itself names them: echoes are not leaks).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { signLicense } from '../../daemon/auth/license.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readAllManifests, retireRepository } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { git, TestRepo } from '../helpers/git.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const LICENSE = signLicense(
  {
    id: 'L-escape',
    licensee: 'Test Org',
    entitlements: ['org-management', 'scoped-access-tokens'],
    issuedAt: '2026-01-01T00:00:00Z',
    expiresAt: '2027-01-01T00:00:00Z',
  },
  privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);

/**
 * What gives each repository away: its name, and strings only it has in paths, content,
 * branches, authors and its connection's name. Repository ids are checked structurally.
 */
const MARKERS: Record<string, string[]> = {
  widgets: ['widgets', 'widget_count', 'src/main.c', 'README.txt', 'logo.bin', 'widget_dev_only', 'Bea Author', 'bea@example.com', 'conn-widgets'],
  secret: ['secret', 'vault.c', 'widget_secret_sauce', 'conn-secret'],
  gadgets: ['gadgets', 'ESCAPE_CANARY_GADGETS', 'gizmo_box', 'gadgets-feature', 'Gadget Author', 'conn-gadgets'],
  classified: ['classified', 'ESCAPE_CANARY_CLASSIFIED', 'dossier', 'classified-feature', 'Classified Author', 'conn-classified'],
};

/** Per repository: a file, a directory, a branch and a diff that exist there (the key's control gets 200 for them). */
const TARGETS: Record<string, { file: string; dir: string; ref: string; base: string; head: string }> = {
  widgets: { file: 'src/main.c', dir: 'src', ref: 'dev', base: 'v1.0', head: 'dev' },
  secret: { file: 'vault.c', dir: '', ref: 'main', base: 'main', head: 'main' },
  gadgets: { file: 'gizmo_box/gadgets_canary.c', dir: 'gizmo_box', ref: 'gadgets-feature', base: 'main', head: 'gadgets-feature' },
  classified: { file: 'dossier/classified_canary.go', dir: 'dossier', ref: 'classified-feature', base: 'main', head: 'classified-feature' },
};

/** `shared_escape_symbol` is defined in both made repositories (find_definitions has two to tell apart). */
const GADGETS = {
  name: 'gadgets',
  branches: ['gadgets-feature'],
  build(r: TestRepo) {
    const as = { author: 'Gadget Author <gadget-author@example.com>', date: '2026-03-01T00:00:00Z' };
    r.commit(
      {
        'gizmo_box/gadgets_canary.c':
          '/* ESCAPE_CANARY_GADGETS */\nint escape_common_marker = 1;\nint shared_escape_symbol(void) {\n  return escape_common_marker;\n}\n',
        'gizmo_box/gadgets_tool.py': 'def gadgets_only_function():\n    return "ESCAPE_CANARY_GADGETS_PY"\n',
      },
      'Gadgets: ESCAPE_CANARY_GADGETS_COMMIT',
      as,
    );
    r.checkout('gadgets-feature', true).commit(
      { 'gizmo_box/gadgets_feature.c': 'int gadgets_feature_only = 2; /* ESCAPE_CANARY_GADGETS_BRANCH */\n' },
      'Gadgets feature',
      as,
    );
    r.checkout('main');
  },
};
const CLASSIFIED = {
  name: 'classified',
  visibility: 'private' as const,
  branches: ['classified-feature'],
  build(r: TestRepo) {
    const as = { author: 'Classified Author <classified-author@example.com>', date: '2026-04-01T00:00:00Z' };
    r.commit(
      {
        'dossier/classified_canary.go':
          'package dossier\n\n// ESCAPE_CANARY_CLASSIFIED\nvar escape_common_marker = 1\n\nfunc shared_escape_symbol() int {\n\treturn escape_common_marker\n}\n',
      },
      'Classified: ESCAPE_CANARY_CLASSIFIED_COMMIT',
      as,
    );
    r.checkout('classified-feature', true).commit(
      { 'dossier/classified_feature.go': 'package dossier\n\n// ESCAPE_CANARY_CLASSIFIED_BRANCH\nvar classified_feature_only = 2\n' },
      'Classified feature',
      as,
    );
    r.checkout('main');
  },
};

/**
 * Searches the token tries (`{own}`: the token's repository; `{other-feature}`: the
 * feature branch of the other made repository). Every one with `others` set
 * finds another repository for the API key; the token must get exactly the key's results
 * in its own repository, no more.
 */
const SEARCHES: Array<{ query: string; others: boolean; regex?: boolean; caseSensitive?: boolean; whole?: boolean; contextLines?: number }> = [
  { query: 'ESCAPE_CANARY', others: true },
  { query: 'widget_secret_sauce', others: true },
  { query: '"widget_secret_sauce"', others: true },
  { query: 'escape_common_marker', others: true },
  { query: 'int', others: true },
  { query: 'repo:.*', others: true },
  { query: 'repo:.* ESCAPE_CANARY', others: true },
  { query: 'repo:secret', others: true },
  { query: 'repo:secret widget', others: true },
  { query: 'r:^s', others: true },
  { query: 'repo:^(widgets|secret|gadgets|classified)$', others: true },
  { query: 'repo:widgets|secret|gadgets|classified int', others: true },
  { query: 'repo:{own} or repo:secret or repo:widgets', others: true },
  { query: '-repo:^{own}$', others: true },
  { query: '-repo:{own} escape_common_marker', others: true },
  { query: '-repo:no_such_repository int', others: true },
  { query: 'branch:* ESCAPE_CANARY', others: true },
  { query: 'branch:*', others: true },
  { query: 'branch:dev widget', others: true },
  { query: 'rev:v1.0 widget', others: true },
  { query: 'b:*-feature', others: true },
  { query: 'branch:gadgets-feature ESCAPE_CANARY or branch:classified-feature ESCAPE_CANARY', others: true },
  { query: 'branch:{other-feature}', others: true },
  { query: 'ESCAPE_CANARY_GADGETS or widget_secret_sauce or ESCAPE_CANARY_CLASSIFIED or widget_count', others: true },
  { query: '(widget or escape_common_marker) -(no_such_term)', others: true },
  { query: 'file:vault', others: true },
  { query: 'f:\\.c$', others: true },
  { query: 'file:gizmo_box or file:dossier or file:src/', others: true },
  { query: 'lang:c', others: true },
  { query: 'lang:go or lang:python', others: true },
  { query: 'rev:v1.0 lang:markdown', others: true },
  { query: 'sym:shared_escape_symbol', others: true },
  { query: 'sym:widget', others: true },
  { query: 'sym:.*', others: true },
  { query: 'case:yes ESCAPE_CANARY', others: true },
  { query: 'case:no escape_canary', others: true },
  { query: 'ESCAPE_CANARY', caseSensitive: true, others: true },
  { query: 'escape_canary', caseSensitive: true, others: false },
  { query: 'ESCAPE_CANARY_[A-Z]+', regex: true, others: true },
  { query: '.', regex: true, others: true },
  { query: 'widget.*sauce', regex: true, others: true },
  { query: 'regex:widget.*sauce', others: true },
  { query: 'visibility:private', others: true },
  { query: 'visibility:public', others: true },
  { query: 'visibility:any ESCAPE_CANARY', others: true },
  { query: 'archived:only', others: false },
  { query: 'fork:no int', others: true },
  { query: 'content:ESCAPE_CANARY', whole: true, contextLines: 100, others: true },
];

/** find_definitions / find_references bodies (`{other}`: each other repository in turn). */
const FINDS: Array<Record<string, string>> = [
  { symbolName: 'shared_escape_symbol' },
  { symbolName: 'shared_escape_symbol', repoName: '{other}' },
  { symbolName: 'shared_escape_symbol', repoName: '{own}' },
  { symbolName: 'shared_escape_symbol', repoName: '.*' },
  { symbolName: 'shared_escape_symbol', revisionName: '*' },
  { symbolName: 'shared_escape_symbol', revisionName: 'gadgets-feature' },
  { symbolName: 'shared_escape_symbol', language: 'Go' },
  { symbolName: 'shared_escape_symbol', language: 'C' },
  { symbolName: 'escape_common_marker' },
  { symbolName: 'widget_count' },
  { symbolName: 'widget_secret_sauce', revisionName: 'main' },
];

interface Req {
  method: string;
  path: string;
  json?: unknown;
  /** A JSON body sent as is (duplicate keys and the like). */
  raw?: string;
}

const get = (path: string, params: Record<string, string | undefined>, encode: (s: string) => string = encodeURIComponent): Req => ({
  method: 'GET',
  path: `${path}?${Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encode(v!)}`)
    .join('&')}`,
});
const post = (path: string, json: unknown): Req => ({ method: 'POST', path, json });

/** Every byte percent-encoded ("secret" -> "%73%65..."): the server must decode it to the same name. */
const pct = (s: string): string => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** Every endpoint that takes a repository, asked about `repo` for a file, directory and refs of `t`. */
function repoEndpoints(repo: string, t: (typeof TARGETS)[string], encode: (s: string) => string = encodeURIComponent): Array<[string, Req]> {
  return [
    ['source', get('/api/source', { repo, path: t.file }, encode)],
    ['source at a ref', get('/api/source', { repo, path: t.file, ref: t.ref }, encode)],
    ['HEAD source', { ...get('/api/source', { repo, path: t.file }, encode), method: 'HEAD' }],
    ['blame', get('/api/blame', { repo, path: t.file }, encode)],
    ['diff', get('/api/diff', { repo, base: t.base, head: t.head }, encode)],
    ['commit', get('/api/commit', { repo }, encode)],
    ['commit at a ref', get('/api/commit', { repo, ref: t.ref }, encode)],
    ['commits', get('/api/commits', { repo }, encode)],
    ['commits of a path, paged', get('/api/commits', { repo, path: t.file, perPage: '1', page: '1' }, encode)],
    ['commit authors', get('/api/commits/authors', { repo }, encode)],
    ['HEAD commit authors', { ...get('/api/commits/authors', { repo }, encode), method: 'HEAD' }],
    ['folder contents', get('/api/folder_contents', { repoName: repo, path: t.dir }, encode)],
    ['folder contents at a ref', get('/api/folder_contents', { repoName: repo, revisionName: t.ref }, encode)],
    ['tree', post('/api/tree', { repoName: repo, paths: [t.dir] })],
    ['tree at a ref', post('/api/tree', { repoName: repo, revisionName: t.ref, paths: [] })],
    ['files', post('/api/files', { repoName: repo })],
    ['files at a ref', post('/api/files', { repoName: repo, revisionName: t.ref })],
  ];
}

/**
 * Stands in for a value that names nothing: letters become x, digits 0, the rest stays,
 * so its answer has the same length and shape as the real value's.
 */
const twin = (s: string): string => s.replace(/[a-z]/g, 'x').replace(/[A-Z]/g, 'X').replace(/[0-9]/g, '0');

/** Headers that differ between any two requests. */
const VOLATILE = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

/** An answer as an outsider compares two of them: status, headers and body with every letter and digit masked (echoes of the two inputs differ only there). */
function shape(a: Answer): string {
  const headers = [...a.headers].filter(([k]) => !VOLATILE.has(k)).map(([k, v]) => `${k}: ${twin(v)}`);
  return JSON.stringify({ status: a.status, errorCode: a.json?.errorCode, headers: headers.sort(), body: twin(a.text) });
}

/** The request as text, decoded: what the caller already knows (echoes of it are no leak). */
function asked(r: Req): string {
  let path = r.path;
  try {
    path = decodeURIComponent(r.path);
  } catch {
    // not decodable: as sent
  }
  return `${r.method} ${path} ${r.json === undefined ? '' : JSON.stringify(r.json)} ${r.raw ?? ''}`.toLowerCase();
}

/** SSE messages of a stream_search answer (without the closing [DONE]). */
function sseMessages(text: string): any[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (e) => events.push(e) }).feed(text);
  assert.equal(events.at(-1)?.data, '[DONE]', 'the stream ends with [DONE]');
  return events.slice(0, -1).map((e) => JSON.parse(e.data));
}

/** Match ranges of a search result (file name included). */
const rangesOf = (f: any): number => f.fileName.matchRanges.length + f.chunks.reduce((m: number, c: any) => m + c.matchRanges.length, 0);
/** Matches found: a file that matched without a range (a filter-only query) counts one. */
const foundIn = (files: any[]): number => files.reduce((n, f) => n + Math.max(1, rangesOf(f)), 0);

test('a scoped access token never reveals another repository', async (t) => {
  let clock = new Date('2026-11-22T10:00:00Z');
  const d = await startTestDaemon({
    config: { license: { publicKeys: [PUBLIC_PEM] } },
    settings: { rateLimit: { requestsPerDay: 1_000_000 } },
    daemon: { now: () => clock },
    extraRepos: [GADGETS, CLASSIFIED],
  });
  const withStore = async <T>(fn: (s: Store) => T): Promise<T> => {
    const s = openStore(d.dataDir);
    try {
      return await fn(s);
    } finally {
      await s.close();
    }
  };
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => clock };
    const dd = ['--data-dir', d.dataDir];
    await usersCommand(['add', '--email', 'olga@example.com', '--role', 'owner', ...dd], io);
    await usersCommand(['add', '--email', 'max@example.com', ...dd], io);
    await keysCommand(['create', '--user', 'olga@example.com', ...dd], io);
    const ownerKey = lines.at(-1)!;
    await keysCommand(['create', '--user', 'max@example.com', ...dd], io);
    const memberKey = lines.at(-1)!;
    await withStore((s) => s.putLicense(LICENSE));

    const ask = (cred: string, r: Req): Promise<Answer> => {
      const headers: Record<string, string> = { authorization: `Bearer ${cred}` };
      if (r.raw !== undefined) return call(`${d.url}${r.path}`, { method: r.method, headers: { ...headers, 'content-type': 'application/json' }, body: r.raw });
      return call(`${d.url}${r.path}`, { method: r.method, headers, ...(r.json !== undefined ? { json: r.json } : {}) });
    };

    // Every repository gets its own connection, so /api/connections has something to hide.
    const ids: Record<string, number> = {};
    for (const r of (await ask(memberKey, get('/api/repos', {}))).json) ids[r.repoName] = r.repoId;
    assert.deepEqual(Object.keys(ids).sort(), ['classified', 'gadgets', 'secret', 'widgets']);
    const connections: Record<string, number> = {};
    await withStore(async (s) => {
      for (const [name, id] of Object.entries(ids)) {
        connections[name] = (await s.upsertConnection(`conn-${name}`, 'git')).id;
        await s.updateRepo(id, { connectionId: connections[name]! });
      }
    });
    const manifests = readAllManifests(d.dataDir);
    const totalShards = manifests.reduce((n, m) => n + m.shards.length, 0);

    const newToken = async (key: string, repo: string): Promise<{ id: string; token: string }> => {
      const a = await ask(key, post('/api/ee/scoped_access_token', { repoIds: [ids[repo]] }));
      assert.equal(a.status, 201, a.text);
      return a.json;
    };

    for (const own of ['gadgets', 'classified']) {
      await t.test(`a token scoped to ${own} (${own === 'gadgets' ? 'public' : 'private'})`, async (st) => {
        const { id: tokenId, token } = await newToken(memberKey, own);
        const ownId = ids[own]!;
        const others = Object.keys(ids).filter((n) => n !== own);
        const m = manifests.find((x) => x.repoId === ownId)!;
        const ownShards = {
          count: m.shards.length,
          docs: m.shards.reduce((n, s) => n + s.docs, 0),
          bytes: m.shards.reduce((n, s) => n + s.contentBytes, 0),
          fileBytes: m.shards.reduce((n, s) => n + statSync(join(shardsDir(d.dataDir, ownId), s.file)).size, 0),
        };

        /** No marker of another repository in the answer's body or headers (outside what was asked). */
        const assertNoMarkers = (a: Answer, r: Req, what: string): void => {
          const seen = `${a.text}\n${[...a.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}`.toLowerCase();
          const known = asked(r);
          for (const other of others) {
            for (const marker of MARKERS[other]!) {
              const mk = marker.toLowerCase();
              if (!known.includes(mk)) assert.ok(!seen.includes(mk), `${what}: the answer reveals ${other} ("${marker}"):\n${a.text.slice(0, 2000)}`);
            }
          }
        };
        /** Nothing of another repository in the answer: no marker, and no other repository in a repository field. */
        const assertNoLeak = (a: Answer, r: Req, what: string): void => {
          assertNoMarkers(a, r, what);
          const visit = (v: unknown): void => {
            if (Array.isArray(v)) v.forEach(visit);
            else if (v !== null && typeof v === 'object') {
              for (const [k, x] of Object.entries(v)) {
                if (k === 'repositoryId' || k === 'repoId') assert.equal(x, ownId, `${what}: ${k}`);
                if ((k === 'repository' || k === 'repo' || k === 'repoName') && typeof x === 'string') assert.equal(x, own, `${what}: ${k}`);
                if (k === 'repositoryInfo')
                  for (const info of x as Array<{ id: number; name: string }>) assert.deepEqual([info.id, info.name], [ownId, own], `${what}: repositoryInfo`);
                visit(x);
              }
            }
          };
          visit(a.json);
        };
        /** The token's answer, checked for leaks. */
        const tok = async (r: Req, what: string): Promise<Answer> => {
          const a = await ask(token, r);
          assertNoLeak(a, r, what);
          return a;
        };
        /** Search stats count only the token's repository's shards and documents. */
        const assertOwnStats = (stats: any, files: any[], what: string): void => {
          assert.equal(stats.shardsScanned + stats.shardsSkipped + stats.shardsSkippedFilter + stats.crashes, ownShards.count, `${what}: shards counted`);
          assert.ok(stats.shardFilesConsidered <= ownShards.docs, `${what}: shardFilesConsidered ${stats.shardFilesConsidered} > ${ownShards.docs}`);
          assert.ok(stats.filesConsidered <= ownShards.docs && stats.filesLoaded <= ownShards.docs, `${what}: files considered/loaded`);
          assert.ok(stats.contentBytesLoaded <= ownShards.bytes, `${what}: contentBytesLoaded`);
          assert.ok(stats.indexBytesLoaded <= ownShards.fileBytes, `${what}: indexBytesLoaded`);
          assert.equal(stats.fileCount, files.length, `${what}: fileCount`);
          assert.equal(stats.actualMatchCount, foundIn(files), `${what}: actualMatchCount`);
          // Every match is returned (matches is far above what the corpus has).
          assert.equal(stats.totalMatchCount, foundIn(files), `${what}: totalMatchCount`);
        };

        await st.test('its own repository is visible to it', async () => {
          const repos = await tok(get('/api/repos', {}), 'repos');
          assert.deepEqual(
            repos.json.map((r: { repoName: string }) => r.repoName),
            [own],
          );
          const source = await tok(get('/api/source', { repo: own, path: TARGETS[own]!.file }), 'own source');
          assert.equal(source.status, 200);
          assert.match(source.json.source, /ESCAPE_CANARY_/);
          const search = await tok(post('/api/search', { query: 'ESCAPE_CANARY', matches: 100 }), 'own search');
          assert.ok(search.json.files.length > 0);
          for (const [what, r] of repoEndpoints(own, TARGETS[own]!)) assert.equal((await tok(r, what)).status, 200, `own repository: ${what}`);
        });

        await st.test('search and stream_search: only its repository, in files, repositoryInfo and stats', async () => {
          for (const s of SEARCHES) {
            const query = s.query.replaceAll('{own}', own).replaceAll('{other-feature}', own === 'gadgets' ? 'classified-feature' : 'gadgets-feature');
            const body = {
              query,
              matches: 100_000,
              isRegexEnabled: s.regex ?? false,
              isCaseSensitivityEnabled: s.caseSensitive ?? false,
              whole: s.whole ?? false,
              contextLines: s.contextLines ?? 1,
            };
            const what = `search ${JSON.stringify(query)}`;
            const key = await ask(memberKey, post('/api/search', body));
            const mine = await tok(post('/api/search', body), what);
            assert.equal(mine.status, key.status, `${what}: status`);
            assert.equal(key.status, 200, `${what}: ${key.text}`);
            // The control: the key finds other repositories (else this attempt proves nothing).
            const keyOthers = key.json.files.filter((f: any) => f.repositoryId !== ownId);
            assert.equal(keyOthers.length > 0, s.others, `${what}: the API key ${s.others ? 'finds' : 'finds no'} other repositories`);
            assert.deepEqual(
              mine.json.files,
              key.json.files.filter((f: any) => f.repositoryId === ownId),
              `${what}: exactly the key's results in ${own}`,
            );
            assert.deepEqual(
              mine.json.repositoryInfo,
              key.json.repositoryInfo.filter((r: any) => r.id === ownId),
              `${what}: repositoryInfo`,
            );
            assertOwnStats(mine.json.stats, mine.json.files, what);
            assert.equal(key.json.stats.totalMatchCount, foundIn(key.json.files), `${what}: the key's totalMatchCount`);
            assert.equal(
              key.json.stats.shardsScanned + key.json.stats.shardsSkipped + key.json.stats.shardsSkippedFilter,
              totalShards,
              `${what}: the key's stats count every shard`,
            );

            const stream = await tok(post('/api/stream_search', body), `stream ${what}`);
            assert.equal(stream.status, 200);
            const messages = sseMessages(stream.text);
            const streamed = messages.filter((x) => x.type === 'chunk').flatMap((x) => x.files);
            const final = messages.filter((x) => x.type === 'final');
            assert.equal(final.length, 1, `stream ${what}: one final message`);
            assert.ok(
              messages.every((x) => x.type !== 'error'),
              `stream ${what}: no error`,
            );
            const names = (fs: any[]) => fs.map((f) => `${f.repository}/${f.fileName.text}@${f.branches.join(',')}`).sort();
            assert.deepEqual(names(streamed), names(mine.json.files), `stream ${what}: the blocking search's files`);
            for (const c of messages.filter((x) => x.type === 'chunk'))
              assertNoLeak({ ...stream, json: c, text: JSON.stringify(c) }, post('/api/stream_search', body), `stream ${what}`);
            assertOwnStats(final[0].accumulatedStats, streamed, `stream ${what}`);
          }
        });

        await st.test('find_definitions and find_references: only its repository', async () => {
          for (const endpoint of ['/api/find_definitions', '/api/find_references']) {
            let keySawOthers = 0;
            for (const f of FINDS) {
              for (const other of f.repoName === '{other}' ? others : [own]) {
                const body = Object.fromEntries(Object.entries(f).map(([k, v]) => [k, v.replace('{other}', other).replace('{own}', own)]));
                const what = `${endpoint} ${JSON.stringify(body)}`;
                const key = await ask(memberKey, post(endpoint, body));
                const mine = await tok(post(endpoint, body), what);
                assert.equal(key.status, 200, `${what}: ${key.text}`);
                assert.equal(mine.status, 200, `${what}: ${mine.text}`);
                if (key.json.files.some((x: any) => x.repositoryId !== ownId)) keySawOthers++;
                const expected = key.json.files.filter((x: any) => x.repositoryId === ownId);
                assert.deepEqual(mine.json.files, expected, `${what}: exactly the key's results in ${own}`);
                assert.equal(
                  mine.json.stats.matchCount,
                  expected.reduce((n: number, x: any) => n + x.matches.length, 0),
                  `${what}: matchCount`,
                );
              }
            }
            assert.ok(keySawOthers >= 6, `${endpoint}: the key's control found other repositories (${keySawOthers} times)`);
          }
          // The symbol defined in both made repositories: the key finds both (the token got only its own above).
          const both = await ask(memberKey, post('/api/find_definitions', { symbolName: 'shared_escape_symbol' }));
          assert.deepEqual(both.json.files.map((f: any) => f.repository).sort(), ['classified', 'gadgets']);
        });

        await st.test('every repository endpoint: another repository answers like one that does not exist', async () => {
          // Names as given, in other cases, with slashes, spaces, suffixes, traversal,
          // percent-encoded, and the repository's id in place of its name.
          const variants = (name: string): Array<{ label: string; repo: string; encode?: (s: string) => string }> => [
            { label: 'its name', repo: name },
            { label: 'upper case', repo: name.toUpperCase() },
            { label: 'capitalized', repo: name[0]!.toUpperCase() + name.slice(1) },
            { label: 'trailing slash', repo: `${name}/` },
            { label: 'leading slash', repo: `/${name}` },
            { label: 'leading space', repo: ` ${name}` },
            { label: '.git suffix', repo: `${name}.git` },
            { label: 'traversal from its own name', repo: `${own}/../${name}` },
            { label: 'dot segment', repo: `./${name}` },
            { label: 'percent-encoded once more', repo: `%${name.charCodeAt(0).toString(16)}${name.slice(1)}` },
            { label: 'every byte percent-encoded', repo: name, encode: pct },
            { label: 'its id', repo: String(ids[name]) },
            { label: 'with a NUL', repo: `${name}\u0000` },
            { label: 'a Cyrillic look-alike first letter', repo: `${String.fromCharCode(0x441)}${name.slice(1)}` },
          ];
          for (const other of others) {
            for (const v of variants(other)) {
              for (const [what, r] of repoEndpoints(v.repo, TARGETS[other]!, v.encode)) {
                const label = `${what} of ${other} (${v.label}: ${JSON.stringify(v.repo)})`;
                const mine = await tok(r, label);
                const [, nothing] = repoEndpoints(twin(v.repo), TARGETS[other]!, v.encode).find(([w]) => w === what)!;
                const none = await ask(token, nothing);
                assert.ok(mine.status >= 400, `${label}: refused (${mine.status})`);
                assert.equal(shape(mine), shape(none), `${label}: answers like the nonexistent ${JSON.stringify(twin(v.repo))}`);
                if (r.method !== 'HEAD') assert.equal(mine.json.errorCode, 'REPOSITORY_NOT_FOUND', label);
                if (v.label === 'its name') {
                  // The control: the key reads it.
                  assert.equal((await ask(memberKey, r)).status, 200, `${label}: the API key reads it`);
                }
              }
            }
            // Smuggled next to its own name: a parameter given twice, a JSON key given twice
            // (the last one counts), a __proto__ key, a list where a name goes.
            const target = TARGETS[other]!;
            const smuggled: Array<[string, (name: string) => Req]> = [
              [
                'repo twice, its own first',
                (n) => ({ method: 'GET', path: `/api/source?repo=${own}&repo=${encodeURIComponent(n)}&path=${encodeURIComponent(target.file)}` }),
              ],
              [
                'repo twice, its own last',
                (n) => ({ method: 'GET', path: `/api/source?repo=${encodeURIComponent(n)}&repo=${own}&path=${encodeURIComponent(target.file)}` }),
              ],
              ['repoName twice in JSON, the other last', (n) => ({ method: 'POST', path: '/api/files', raw: `{"repoName":"${own}","repoName":"${n}"}` })],
              ['repoName twice in JSON, its own last', (n) => ({ method: 'POST', path: '/api/files', raw: `{"repoName":"${n}","repoName":"${own}"}` })],
              ['__proto__ in JSON', (n) => ({ method: 'POST', path: '/api/tree', raw: `{"repoName":"${own}","__proto__":{"repoName":"${n}"},"paths":[]}` })],
              ['a list of names', (n) => post('/api/files', { repoName: [own, n] })],
              [
                'find_definitions repoName twice in JSON',
                (n) => ({ method: 'POST', path: '/api/find_definitions', raw: `{"symbolName":"shared_escape_symbol","repoName":"${own}","repoName":"${n}"}` }),
              ],
            ];
            for (const [what, f] of smuggled) {
              const label = `${what} (${other})`;
              const mine = await tok(f(other), label);
              assert.equal(shape(mine), shape(await ask(token, f(twin(other)))), `${label}: answers as for a nonexistent name`);
            }
          }
          // Search fields that do not exist cannot widen it either.
          for (const extra of [{ repoIds: Object.values(ids) }, { repositories: others }, { repo: others[0] }]) {
            const a = await tok(post('/api/search', { query: 'ESCAPE_CANARY', matches: 100, ...extra }), `search with ${JSON.stringify(extra)}`);
            assert.equal(a.json.errorCode, 'INVALID_REQUEST_BODY');
          }
        });

        await st.test("its own repository: traversal paths and other repositories' paths and refs reveal nothing", async () => {
          const mineT = TARGETS[own]!;
          const reposDir = dirname(d.repoPath);
          // Endpoints of its own repository that take a path, and those that take a ref.
          const byPath: Array<[string, (p: string) => Req]> = [
            ['source', (p) => get('/api/source', { repo: own, path: p })],
            ['blame', (p) => get('/api/blame', { repo: own, path: p })],
            ['commits', (p) => get('/api/commits', { repo: own, path: p })],
            ['commit authors', (p) => get('/api/commits/authors', { repo: own, path: p })],
            ['diff', (p) => get('/api/diff', { repo: own, base: mineT.base, head: mineT.head, path: p })],
            ['folder contents', (p) => get('/api/folder_contents', { repoName: own, path: p })],
            ['tree', (p) => post('/api/tree', { repoName: own, paths: [p] })],
          ];
          const byRef: Array<[string, (ref: string) => Req]> = [
            ['source', (ref) => get('/api/source', { repo: own, path: mineT.file, ref })],
            ['blame', (ref) => get('/api/blame', { repo: own, path: mineT.file, ref })],
            ['commit', (ref) => get('/api/commit', { repo: own, ref })],
            ['commits', (ref) => get('/api/commits', { repo: own, ref })],
            ['commit authors', (ref) => get('/api/commits/authors', { repo: own, ref })],
            ['diff head', (ref) => get('/api/diff', { repo: own, base: 'main', head: ref })],
            ['diff base', (ref) => get('/api/diff', { repo: own, base: ref, head: 'main' })],
            ['folder contents', (ref) => get('/api/folder_contents', { repoName: own, revisionName: ref })],
            ['tree', (ref) => post('/api/tree', { repoName: own, revisionName: ref, paths: [] })],
            ['files', (ref) => post('/api/files', { repoName: own, revisionName: ref })],
            ['find_definitions', (ref) => post('/api/find_definitions', { symbolName: 'shared_escape_symbol', revisionName: ref })],
          ];
          for (const other of others) {
            const ot = TARGETS[other]!;
            const otherSha = git(join(reposDir, other), 'rev-parse', 'HEAD').trim();
            const paths = [
              ot.file,
              `/${ot.file}`,
              `../${other}/${ot.file}`,
              `${mineT.dir}/../../${other}/${ot.file}`,
              join(reposDir, other, ot.file),
              `..%2f${other}%2f${ot.file}`,
              `....//${other}/${ot.file}`,
              `..\\${other}\\${ot.file}`,
            ];
            // Its branches and tags (but "main", which every repository has), and its commit ids.
            const refs = [
              otherSha,
              otherSha.slice(0, 12),
              `${otherSha}~0`,
              `${otherSha}^{commit}`,
              ...(ot.ref === 'main' ? [] : [ot.ref, `refs/heads/${ot.ref}`, `${ot.ref}^{commit}`]),
              ...(other === 'widgets' ? ['v1.0'] : []),
            ];
            // A ref's twin keeps its suffix (`~0`, `^{commit}`): masked, it would be a suffix refused for its syntax.
            const twinRef = (ref: string): string => {
              const cut = ref.search(/[~^]/);
              return cut < 0 ? twin(ref) : twin(ref.slice(0, cut)) + ref.slice(cut);
            };
            const attempts: Array<[string, string, string, (x: string) => Req]> = [
              ...paths.flatMap((p) =>
                byPath.map(([w, f]): [string, string, string, (x: string) => Req] => [`${w} of path ${JSON.stringify(p)}`, p, twin(p), f]),
              ),
              ...refs.flatMap((ref) =>
                byRef.map(([w, f]): [string, string, string, (x: string) => Req] => [`${w} at ref ${JSON.stringify(ref)}`, ref, twinRef(ref), f]),
              ),
            ];
            for (const [what, value, masked, f] of attempts) {
              const label = `${own}: ${what} (from ${other})`;
              const mine = await tok(f(value), label);
              const none = await ask(token, f(masked));
              assert.equal(shape(mine), shape(none), `${label}: answers as for ${JSON.stringify(masked)}`);
            }
          }
        });

        await st.test('repos: every parameter; X-Total-Count and Link count only its repository', async () => {
          const lists: Array<Record<string, string>> = [
            {},
            { page: '1', perPage: '1' },
            { page: '2', perPage: '1' },
            { page: '4', perPage: '1' },
            { page: '1000' },
            { perPage: '100' },
            { sort: 'name', direction: 'asc' },
            { sort: 'name', direction: 'desc', perPage: '1' },
            { sort: 'pushed', direction: 'asc' },
            { sort: 'pushed', direction: 'desc', perPage: '1', page: '3' },
            { query: '' },
            { query: 'secret' },
            { query: 'WIDGETS' },
            { query: 'e' },
            { query: 's', perPage: '1', page: '2' },
            { query: own.toUpperCase() },
            { query: '.*' },
            ...others.map((o) => ({ connectionId: String(connections[o]) })),
            { connectionId: String(connections[own]) },
            { connectionId: '999' },
            ...others.map((o) => ({ connectionId: String(connections[own]), query: o })),
            ...others.map((o) => ({ connectionId: String(connections[o]), query: own, sort: 'pushed', direction: 'desc', perPage: '100' })),
          ];
          const listed = (name: string, q: Record<string, string>): boolean =>
            (q.query === undefined || name.includes(q.query.toLowerCase())) && (q.connectionId === undefined || Number(q.connectionId) === connections[name]);
          for (const q of lists) {
            const what = `repos ${JSON.stringify(q)}`;
            const mine = await tok(get('/api/repos', q), what);
            const key = await ask(memberKey, get('/api/repos', q));
            assert.equal(mine.status, 200, what);
            const seen = listed(own, q);
            assert.equal(mine.headers.get('x-total-count'), seen ? '1' : '0', `${what}: X-Total-Count`);
            assert.deepEqual(
              mine.json.map((r: { repoName: string }) => r.repoName),
              seen && (q.page ?? '1') === '1' ? [own] : [],
              what,
            );
            const link = mine.headers.get('link')!;
            assert.doesNotMatch(link, /rel="next"/, `${what}: no next page`);
            assert.match(link, /[?&]page=1>; rel="last"/, `${what}: the last page is 1`);
            // The control: the key's count is every repository that matches.
            assert.equal(Number(key.headers.get('x-total-count')), Object.keys(ids).filter((n) => listed(n, q)).length, `${what}: the key's X-Total-Count`);
          }
          assert.equal((await ask(memberKey, get('/api/repos', {}))).headers.get('x-total-count'), '4');
        });

        await st.test("connections and the system endpoints: only its repository's connection, no other repository", async () => {
          const mine = await tok(get('/api/connections', {}), 'connections');
          assert.deepEqual(mine.json, [{ id: connections[own], name: `conn-${own}`, connectionType: 'git' }]);
          assert.equal((await ask(memberKey, get('/api/connections', {}))).json.length, 4, 'the key sees all four');
          for (const path of ['/api/health', '/api/version']) {
            const a = await ask(token, { method: 'GET', path });
            assert.equal(a.status, 200);
            assertNoMarkers(a, { method: 'GET', path }, path);
          }
          // The OpenAPI document describes the API, whose words ("client_secret" of OAuth)
          // may contain a repository's name: it must instead be the same for every caller.
          const doc = await ask(token, { method: 'GET', path: '/api/openapi.json' });
          assert.equal(doc.status, 200);
          assert.equal(
            doc.text,
            (await ask(memberKey, { method: 'GET', path: '/api/openapi.json' })).text,
            'the OpenAPI document does not depend on the caller',
          );
        });

        await st.test('enterprise endpoints: no wider token, no revocation, no way around the API key', async () => {
          // Creating a token: 403 whatever the ids (the same answer: which ids exist is not told).
          const creations = [[ownId], Object.values(ids), ...others.map((o) => [ids[o]!]), [999_999]].map((repoIds) =>
            post('/api/ee/scoped_access_token', { repoIds }),
          );
          const refused = await Promise.all(creations.map((r) => tok(r, `create ${JSON.stringify(r.json)}`)));
          for (const a of refused) {
            assert.equal(a.status, 403);
            assert.equal(a.json.errorCode, 'INSUFFICIENT_PERMISSIONS');
            assert.equal(a.text, refused[0]!.text);
          }
          // Revoking: its own, another live token of its creator, an unknown id: the same 403.
          const another = await newToken(memberKey, others[0]!);
          const revokes = await Promise.all(
            [tokenId, another.id, `sat_${'0'.repeat(24)}`].map((id) => tok({ method: 'DELETE', path: `/api/ee/scoped_access_token/${id}` }, `revoke ${id}`)),
          );
          for (const a of revokes) {
            assert.equal(a.status, 403);
            assert.equal(a.text, revokes[0]!.text);
          }
          assert.equal((await ask(another.token, get('/api/repos', {}))).status, 200, 'the other token still works');
          // As X-Service-Api-Key (where only API keys go) it is no credential at all.
          const viaHeader = await call(`${d.url}/api/ee/scoped_access_token`, { headers: { 'x-service-api-key': token }, json: { repoIds: [ownId] } });
          assert.equal(viaHeader.status, 401);
          // Members: its creator is no owner, so 403 like the creator's key.
          for (const r of [get('/api/ee/users', {}), get('/api/ee/user', { userId: 'usr_nope' })]) {
            const a = await tok(r, r.path);
            assert.equal(a.status, 403);
            assert.equal(a.text, (await ask(memberKey, r)).text);
          }
          // An owner's token acts as the owner (docs/http-api.md section 14): the member list, with no repository in it.
          const ownerToken = (await newToken(ownerKey, own)).token;
          const users = await ask(ownerToken, get('/api/ee/users', {}));
          assert.equal(users.status, 200);
          assertNoLeak(users, get('/api/ee/users', {}), 'users');
          // After all that it still sees exactly its repository.
          assert.deepEqual(
            (await tok(get('/api/repos', {}), 'repos')).json.map((r: { repoName: string }) => r.repoName),
            [own],
          );
        });
      });
    }

    // Requests over everything a token of gadgets could reach, for the lifecycle tests.
    const everywhere: Req[] = [
      post('/api/search', { query: 'ESCAPE_CANARY', matches: 100 }),
      post('/api/stream_search', { query: 'ESCAPE_CANARY', matches: 100 }),
      post('/api/find_definitions', { symbolName: 'shared_escape_symbol' }),
      post('/api/find_references', { symbolName: 'shared_escape_symbol' }),
      ...repoEndpoints('gadgets', TARGETS.gadgets!).map(([, r]) => r),
      get('/api/repos', {}),
      get('/api/connections', {}),
    ];
    const unknownToken = `svst_${randomBytes(32).toString('hex')}`;
    /** 401 on every endpoint, with nothing of any repository; `likeUnknown`: the very answer an unknown token gets. */
    const assertDead = async (token: string, why: string, likeUnknown: boolean): Promise<void> => {
      for (const r of everywhere) {
        const a = await ask(token, r);
        assert.equal(a.status, 401, `${why}: ${r.method} ${r.path}`);
        for (const marker of Object.values(MARKERS).flat())
          assert.ok(!a.text.toLowerCase().includes(marker.toLowerCase()) || asked(r).includes(marker.toLowerCase()), `${why}: ${marker}`);
        if (likeUnknown) assert.equal(shape(a), shape(await ask(unknownToken, r)), `${why}: ${r.method} ${r.path} answers as for an unknown token`);
      }
    };
    const assertAlive = async (token: string, why: string): Promise<void> => {
      const a = await ask(token, get('/api/repos', {}));
      assert.equal(a.status, 200, why);
      assert.deepEqual(
        a.json.map((r: { repoName: string }) => r.repoName),
        ['gadgets'],
        why,
      );
    };

    await t.test('revoked, expired, or its creator suspended: 401 everywhere', async () => {
      const revoked = await newToken(memberKey, 'gadgets');
      await assertAlive(revoked.token, 'before revocation');
      assert.equal((await ask(memberKey, { method: 'DELETE', path: `/api/ee/scoped_access_token/${revoked.id}` })).status, 204);
      await assertDead(revoked.token, 'revoked', true);

      // Exactly one hour (the clock is the daemon's).
      const born = clock;
      const expiring = await newToken(memberKey, 'gadgets');
      clock = new Date(born.getTime() + 3_600_000 - 1);
      await assertAlive(expiring.token, 'a millisecond before expiry');
      clock = new Date(born.getTime() + 3_600_000);
      await assertDead(expiring.token, 'expired', true);
      clock = new Date(born.getTime() + 30 * 86_400_000);
      await assertDead(expiring.token, 'long expired', true);
      clock = born;

      // Its creator suspended: the token goes with the creator's keys, and comes back with them.
      const suspended = await newToken(memberKey, 'gadgets');
      await usersCommand(['suspend', 'max@example.com', ...dd], io);
      await assertDead(suspended.token, 'creator suspended', false);
      assert.equal((await ask(memberKey, get('/api/repos', {}))).status, 401, "the creator's key is refused too");
      await usersCommand(['unsuspend', 'max@example.com', ...dd], io);
      await assertAlive(suspended.token, 'creator active again');

      // Its creator no longer an owner: the owner-only endpoints refuse the token at once.
      const olga = (await withStore((s) => s.getUserByEmail('olga@example.com')))!;
      const ownerToken = (await newToken(ownerKey, 'gadgets')).token;
      assert.equal((await ask(ownerToken, get('/api/ee/users', {}))).status, 200);
      await withStore((s) => s.updateUser(olga.id, { role: 'member' }, clock.toISOString()));
      assert.equal((await ask(ownerToken, get('/api/ee/users', {}))).status, 403, 'demoted: no member list');
      await withStore((s) => s.updateUser(olga.id, { role: 'owner' }, clock.toISOString()));

      // The API key that created it revoked: the token belongs to the user, not the key
      // (docs/http-api.md section 14 does not say), but it must never be wider for it.
      await keysCommand(['create', '--user', 'max@example.com', ...dd], io);
      const spareKey = lines.at(-1)!;
      const orphan = await newToken(spareKey, 'gadgets');
      const spareId = await withStore(
        async (s) => (await s.listApiKeys((await s.getUserByEmail('max@example.com'))!.id)).find((k) => spareKey.startsWith(k.hint))!.id,
      );
      await keysCommand(['revoke', spareId, ...dd], io);
      assert.equal((await ask(spareKey, get('/api/repos', {}))).status, 401, 'the key is revoked');
      const after = await ask(orphan.token, get('/api/repos', {}));
      assert.ok(
        after.status === 401 || JSON.stringify(after.json.map((r: { repoName: string }) => r.repoName)) === '["gadgets"]',
        `after its key's revocation: ${after.status} ${after.text}`,
      );
    });

    await t.test('bound to repository ids: a repository deleted and indexed again under its name is out of scope', async () => {
      // "ephemeral" is indexed, scoped, deleted (as sync deletes a repository), and a
      // different repository is indexed under the same name: it gets a new id.
      const reposDir = dirname(d.repoPath);
      const first = TestRepo.init(join(reposDir, 'ephemeral'));
      first.commit({ 'old.c': 'int ESCAPE_CANARY_EPHEMERAL_OLD;\n' });
      const store = openStore(d.dataDir);
      try {
        const before = await indexLocal(first.path, { dataDir: d.dataDir, store, name: 'ephemeral' });
        const created = await ask(memberKey, post('/api/ee/scoped_access_token', { repoIds: [before.repoId] }));
        assert.equal(created.status, 201);
        const token = created.json.token as string;
        assert.equal((await ask(token, get('/api/source', { repo: 'ephemeral', path: 'old.c' }))).status, 200);

        retireRepository(d.dataDir, before.repoId);
        await store.updateRepo(before.repoId, { state: 'deleted' });
        const second = TestRepo.init(join(reposDir, 'ephemeral-reborn'));
        second.commit({ 'old.c': 'int ESCAPE_CANARY_REBORN;\n' });
        const after = await indexLocal(second.path, { dataDir: d.dataDir, store, name: 'ephemeral' });
        assert.notEqual(after.repoId, before.repoId);

        const reborn = get('/api/source', { repo: 'ephemeral', path: 'old.c' });
        assert.match((await ask(memberKey, reborn)).json.source, /ESCAPE_CANARY_REBORN/, 'the key reads the new one');
        const mine = await ask(token, reborn);
        assert.equal(shape(mine), shape(await ask(token, get('/api/source', { repo: twin('ephemeral'), path: 'old.c' }))));
        const repos = await ask(token, get('/api/repos', {}));
        assert.deepEqual(repos.json, []);
        assert.equal(repos.headers.get('x-total-count'), '0');
        const search = await ask(token, post('/api/search', { query: 'ESCAPE_CANARY', matches: 100 }));
        assert.deepEqual([search.json.files, search.json.repositoryInfo, search.json.stats.shardFilesConsidered], [[], [], 0]);
        assert.doesNotMatch(search.text + mine.text + repos.text, /REBORN|ephemeral-reborn/);
      } finally {
        await store.close();
      }
    });
  } finally {
    await d.cleanup();
  }
});
