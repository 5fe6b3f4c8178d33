// Refs reach only what the index serves. A repository read in place keeps, in its object
// database, commits no indexed ref holds: one reset away (`git reset --hard HEAD~1` after
// committing a secret; the reflog and ORIG_HEAD still name it), a branch nobody indexed, a
// stash. Every form that would reach them (reflog syntax, other refs, their ids in full,
// abbreviated or upper-case, with ancestor steps) is refused with 400 INVALID_GIT_REF on
// every HTTP endpoint and tool that takes a ref, anonymously and with a key, and no answer
// carries their content or their messages; the indexed branches, tags, HEAD and the ids
// (40 or 7+ digits) of the commits they reach still work everywhere. A commit served by its
// id while a branch held it is refused once the branch is reset away from it, with no
// re-index in between. Every answer is checked against the OpenAPI document.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { newUserKey } from '../helpers/cli-users.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { git, TestRepo } from '../helpers/git.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

/** What must never be in an answer: the removed commit's file and message, the unindexed branch's, the stash's. */
const MARKERS = ['AWS_SECRET=hunter2', 'oops: credentials', 'WIP_ONLY_SECRET', 'wip: unreviewed', 'STASHED_SECRET'];

interface Ids {
  c1: string;
  c2: string;
  c3: string;
  d1: string;
  secret: string;
  wip: string;
  stash: string;
}

function build(repo: TestRepo, ids: Partial<Ids>): void {
  ids.c1 = repo.commit({ 'a.txt': 'one\n' }, 'one');
  repo.tag('v1', true);
  ids.c2 = repo.commit({ 'a.txt': 'two\n' }, 'two');
  repo.checkout('dev', true);
  ids.d1 = repo.commit({ 'dev.txt': 'dev\n' }, 'dev work');
  repo.checkout('wip', true);
  ids.wip = repo.commit({ 'a.txt': 'WIP_ONLY_SECRET\n', 'creds.txt': 'WIP_ONLY_SECRET\n' }, 'wip: unreviewed');
  repo.checkout('main');
  ids.c3 = repo.commit({ 'a.txt': 'three\n' }, 'three');
  repo.tag('light');
  ids.secret = repo.commit({ 'creds.txt': 'AWS_SECRET=hunter2\n', 'a.txt': 'AWS_SECRET=hunter2\n' }, 'oops: credentials');
  git(repo.path, 'reset', '-q', '--hard', 'HEAD~1');
  repo.commit({ 'a.txt': 'STASHED_SECRET\n', 'creds.txt': 'STASHED_SECRET\n' }, 'tmp');
  git(repo.path, 'reset', '-q', '--soft', 'HEAD~1');
  git(repo.path, 'stash', '-q');
  ids.stash = git(repo.path, 'rev-parse', 'refs/stash').trim();
}

test('refs that reach what no indexed ref holds are refused on every endpoint and tool; indexed refs and their commits still work', async (t) => {
  const ids: Partial<Ids> = {};
  const d = await startTestDaemon({ extraRepos: [{ name: 'leaky', branches: ['dev'], build: (repo) => build(repo, ids) }] });
  try {
    const { c1, c2, c3, d1, secret, wip, stash } = ids as Ids;
    const repoPath = join(d.dataDir, '..', 'repos', 'leaky');
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const key = await newUserKey('refs@example.com', ['--data-dir', d.dataDir]);

    // Every HTTP endpoint that takes a ref, with `ref` in each place one goes (diff: both sides).
    const endpoints: Array<[string, (ref: string, auth: Record<string, string>) => Promise<Answer>]> = [];
    const get = (path: string, query: (ref: string) => Record<string, string>) =>
      endpoints.push([
        `GET ${path} ${Object.keys(query('R')).find((k) => query('R')[k] === 'R')}`,
        async (ref, headers) => {
          const a = await call(`${d.url}${path}?${new URLSearchParams(query(ref)).toString()}`, { headers });
          checker.check('GET', path, a.status, a.json);
          return a;
        },
      ]);
    const post = (path: string, body: (ref: string) => Record<string, unknown>) =>
      endpoints.push([
        `POST ${path}`,
        async (ref, headers) => {
          const a = await call(`${d.url}${path}`, { json: body(ref), headers });
          checker.check('POST', path, a.status, a.json);
          return a;
        },
      ]);
    get('/api/source', (ref) => ({ repo: 'leaky', path: 'a.txt', ref }));
    get('/api/outline', (ref) => ({ repo: 'leaky', path: 'a.txt', ref }));
    get('/api/blame', (ref) => ({ repo: 'leaky', path: 'a.txt', ref }));
    get('/api/diff', (ref) => ({ repo: 'leaky', base: c1, head: ref }));
    get('/api/diff', (ref) => ({ repo: 'leaky', base: ref, head: c1 }));
    get('/api/commit', (ref) => ({ repo: 'leaky', ref }));
    get('/api/commits', (ref) => ({ repo: 'leaky', ref }));
    get('/api/commits/authors', (ref) => ({ repo: 'leaky', ref }));
    post('/api/files', (ref) => ({ repoName: 'leaky', revisionName: ref }));
    post('/api/tree', (ref) => ({ repoName: 'leaky', revisionName: ref, paths: [''] }));
    get('/api/folder_contents', (ref) => ({ repoName: 'leaky', revisionName: ref, path: '' }));

    const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
    const client = new Client({ name: 'reflog-refs', version: '1.0.0' });
    await client.connect(transport);
    const tools: Array<[string, (ref: string) => Record<string, unknown>]> = [
      ['read_file', (ref) => ({ repo: 'leaky', path: 'a.txt', ref })],
      ['list_tree', (ref) => ({ repo: 'leaky', ref })],
      ['glob', (ref) => ({ repo: 'leaky', ref, pattern: '**' })],
      ['list_commits', (ref) => ({ repo: 'leaky', ref })],
      ['get_diff', (ref) => ({ repo: 'leaky', base: c1, head: ref })],
      ['blame', (ref) => ({ repo: 'leaky', path: 'a.txt', ref })],
    ];
    const tool = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> };

    /** No marker anywhere, and no id of an unreachable commit except inside the ref the request itself sent. */
    const leaks = (text: string, ref: string): string | undefined => {
      const marker = MARKERS.find((m) => text.includes(m));
      if (marker !== undefined) return marker;
      const rest = text.split(ref).join('').split(ref.toLowerCase()).join('');
      return [secret, wip, stash].find((id) => rest.includes(id) || rest.includes(id.slice(0, 7)));
    };

    const hostile = [
      // HEAD@{4} and main@{4} are the secret commit, HEAD@{2} the stashed one's parent.
      'HEAD@{1}',
      'HEAD@{2}',
      'HEAD@{4}',
      '@{1}',
      'main@{1}',
      'main@{4}',
      'main@{1.year.ago}',
      'main@{yesterday}',
      '@{-1}',
      '@{upstream}',
      'stash@{0}',
      'HEAD@{1}~0',
      'main@{1}^{commit}',
      '@',
      'ORIG_HEAD',
      'stash',
      'refs/stash',
      'wip',
      'refs/heads/wip',
      'wip~0',
      'heads/wip',
      secret,
      secret.slice(0, 7),
      secret.slice(0, 4),
      secret.toUpperCase(),
      `${secret}~0`,
      `${secret}^{commit}`,
      `${secret}^{}`,
      wip,
      wip.slice(0, 9),
      stash,
      stash.slice(0, 7),
      `${stash}^2`,
    ];

    await t.test('every hostile form, on every endpoint, anonymously and with a key: 400 INVALID_GIT_REF, nothing of the commits it names', async () => {
      let slowest = 0;
      for (const ref of hostile) {
        for (const [name, send] of endpoints) {
          for (const headers of [{}, { authorization: `Bearer ${key}` }] as Array<Record<string, string>>) {
            const started = performance.now();
            const a = await send(ref, headers);
            slowest = Math.max(slowest, performance.now() - started);
            const what = `${name} ref=${JSON.stringify(ref)}`;
            assert.equal(a.status, 400, `${what}: ${a.text.slice(0, 300)}`);
            assert.equal(a.json.errorCode, 'INVALID_GIT_REF', what);
            assert.equal(leaks(a.text, ref), undefined, `${what} leaks: ${a.text.slice(0, 300)}`);
          }
        }
      }
      // Generous: refusing is a syntax check or a lookup and a cached walk of a 6-commit history.
      assert.ok(slowest < 5_000, `slowest refusal ${slowest} ms`);
    });

    await t.test('every hostile form, on every tool: INVALID_GIT_REF, nothing of the commits it names', async () => {
      for (const ref of hostile) {
        for (const [name, args] of tools) {
          const r = await tool(name, args(ref));
          const text = r.content.map((c) => c.text).join('\n');
          assert.equal(r.isError, true, `${name} ${ref}: ${text.slice(0, 200)}`);
          assert.match(text, /^INVALID_GIT_REF: /, `${name} ${ref}`);
          assert.equal(leaks(text, ref), undefined, `${name} ${ref} leaks: ${text.slice(0, 300)}`);
        }
      }
    });

    const allowed: Array<[string, string]> = [
      ['main', c3],
      ['HEAD', c3],
      ['HEAD~1', c2],
      ['main^', c2],
      ['refs/heads/main', c3],
      ['dev', d1],
      ['refs/heads/dev', d1],
      ['dev~1', c2],
      ['v1', c1],
      ['refs/tags/v1', c1],
      ['v1^{commit}', c1],
      ['light', c3],
      [c1, c1],
      [c1.slice(0, 7), c1],
      [c2.slice(0, 12), c2],
      [c3.toUpperCase(), c3],
      [d1, d1],
      [`${c3}~2`, c1],
    ];

    await t.test('indexed branches, tags, HEAD, and full and 7+-digit ids of the commits they reach work on every endpoint and tool', async () => {
      for (const [ref, commit] of allowed) {
        for (const [name, send] of endpoints) {
          const a = await send(ref, {});
          assert.equal(a.status, 200, `${name} ref=${JSON.stringify(ref)}: ${a.text.slice(0, 300)}`);
          assert.equal(leaks(a.text, ref), undefined, `${name} ${ref}`);
        }
        const commit1 = await call(`${d.url}/api/commit?repo=leaky&ref=${encodeURIComponent(ref)}`);
        assert.equal(commit1.json.hash, commit, ref);
        for (const [name, args] of tools) {
          const r = await tool(name, args(ref));
          assert.notEqual(r.isError, true, `${name} ${ref}: ${r.content[0]?.text.slice(0, 200)}`);
        }
      }
      const file = await call(`${d.url}/api/source?repo=leaky&path=a.txt&ref=${c1.slice(0, 7)}`);
      assert.equal(file.json.source, 'one\n');
    });

    await t.test('a commit served by its id while main held it is refused once main is reset away from it (no re-index)', async () => {
      // Two new commits on main, in place: the first is reachable now (not a tip: its
      // answer is a walk, remembered), and served by its id.
      const work = new TestRepo(repoPath);
      const later = work.commit({ 'later.txt': 'LATER_SECRET\n' }, 'oops: credentials again');
      work.commit({ 'other.txt': 'x\n' }, 'on top');
      for (const ref of [later, later.slice(0, 7)]) assert.equal((await call(`${d.url}/api/commit?repo=leaky&ref=${ref}`)).json.hash, later);
      git(repoPath, 'reset', '-q', '--hard', 'HEAD~2');
      for (const ref of [later, later.slice(0, 7), 'HEAD@{1}', 'HEAD@{2}', 'ORIG_HEAD']) {
        const a = await call(`${d.url}/api/commit?repo=leaky&ref=${encodeURIComponent(ref)}`);
        assert.equal(a.status, 400, `${ref}: ${a.text.slice(0, 200)}`);
        assert.equal(a.json.errorCode, 'INVALID_GIT_REF', ref);
        assert.ok(!a.text.includes('credentials again'), ref);
        const file = await call(`${d.url}/api/source?repo=leaky&path=later.txt&ref=${encodeURIComponent(ref)}`);
        assert.equal(file.status, 400, ref);
        assert.ok(!file.text.includes('LATER_SECRET'), ref);
      }
      assert.equal((await call(`${d.url}/api/commit?repo=leaky&ref=main`)).json.hash, c3);
    });
    await client.close();
  } finally {
    await d.cleanup();
  }
});
