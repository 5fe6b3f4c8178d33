// The git history endpoints over HTTP (docs/http-api.md section 13): blame, diff, commit,
// commits and commits/authors on a real repository made by the test helper, checked
// against the git CLI and against the daemon's OpenAPI document, with paging headers and
// every documented error.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

test('history endpoints', async (t) => {
  const d = await startTestDaemon();
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const get = async (path: string, query: Record<string, string>): Promise<Answer> => {
      const a = await call(`${d.url}${path}?${new URLSearchParams(query).toString()}`);
      checker.check('GET', path, a.status, a.json);
      return a;
    };
    const gitOut = (...args: string[]) => execFileSync('git', args, { cwd: d.repoPath, encoding: 'utf8' }).trim();
    const log = gitOut('log', '--format=%H', 'main').split('\n');

    await t.test('commit', async () => {
      const c = await get('/api/commit', { repo: 'widgets', ref: 'v1.0' });
      assert.equal(c.json.hash, gitOut('rev-parse', 'v1.0^{commit}'));
      assert.equal(c.json.message, 'Add widget_count');
      assert.equal(c.json.refs, 'tag: v1.0');
      assert.deepEqual(c.json.parents, [gitOut('rev-parse', 'v1.0~1')]);
      const first = await get('/api/commit', { repo: 'widgets', ref: log.at(-1)! });
      assert.equal(first.json.message, 'Initial import');
      assert.equal(first.json.body, 'The first widgets.');
      const head = await get('/api/commit', { repo: 'widgets' });
      assert.equal(head.json.hash, log[0]);
      assert.equal(head.json.authorName, 'Bea Author');
      assert.equal(head.json.refs, gitOut('log', '-1', '--format=%D', 'main'));
    });

    await t.test('commits: newest first, filters, paging headers', async () => {
      const all = await get('/api/commits', { repo: 'widgets' });
      assert.deepEqual(
        all.json.map((c: { hash: string }) => c.hash),
        log,
      );
      assert.equal(all.headers.get('x-total-count'), String(log.length));
      const page = await get('/api/commits', { repo: 'widgets', perPage: '1', page: '2' });
      assert.deepEqual(
        page.json.map((c: { hash: string }) => c.hash),
        [log[1]],
      );
      const link = page.headers.get('link')!;
      assert.match(link, /<[^>]*\/api\/commits\?repo=widgets&perPage=1&page=1>; rel="first"/);
      assert.match(link, /page=1>; rel="prev"/);
      assert.match(link, /page=3>; rel="next"/);
      assert.match(link, new RegExp(`page=${log.length}>; rel="last"`));
      const byAuthor = await get('/api/commits', { repo: 'widgets', author: 'bea@' });
      assert.deepEqual(
        byAuthor.json.map((c: { message: string }) => c.message),
        ['Rename the readme'],
      );
      const byQuery = await get('/api/commits', { repo: 'widgets', query: 'WIDGET_COUNT' });
      assert.equal(byQuery.json.length, 1);
      const byPath = await get('/api/commits', { repo: 'widgets', path: 'src/widget.c' });
      assert.deepEqual(
        byPath.json.map((c: { message: string }) => c.message),
        ['Add widget_count'],
      );
      const onDev = await get('/api/commits', { repo: 'widgets', ref: 'dev', perPage: '1' });
      assert.equal(onDev.json[0].message, 'Dev work');
      const future = await get('/api/commits', { repo: 'widgets', since: '2999-01-01' });
      assert.deepEqual(future.json, []);
      assert.equal(future.headers.get('x-total-count'), '0');
      assert.equal((await get('/api/commits', { repo: 'widgets', since: 'tomorrow' })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.equal((await get('/api/commits', { repo: 'widgets', perPage: '500' })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.equal((await get('/api/commits', { repo: 'widgets', page: '0' })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.equal((await get('/api/commits', {})).json.errorCode, 'MISSING_REQUIRED_QUERY_PARAMETER');
    });

    await t.test(
      'every commit object also carries author_name and author_email (the names @sourcebot/mcp 1.0.x reads), equal to authorName and authorEmail',
      async () => {
        const listed = (await get('/api/commits', { repo: 'widgets' })).json as Array<Record<string, string>>;
        const one = (await get('/api/commit', { repo: 'widgets', ref: log.at(-1)! })).json as Record<string, string>;
        const blamed = Object.values((await get('/api/blame', { repo: 'widgets', path: 'README.txt' })).json.commits) as Array<Record<string, string>>;
        const all = [...listed, one, ...blamed];
        assert.equal(all.length, log.length + 2);
        for (const c of all) {
          assert.equal(c.author_name, c.authorName, c.hash);
          assert.equal(c.author_email, c.authorEmail, c.hash);
        }
        // Both authors of the repository, so the pair is not one constant.
        assert.deepEqual(
          new Set(listed.map((c) => `${c.author_name} <${c.author_email}>`)),
          new Set(['Test <test@example.com>', 'Bea Author <bea@example.com>']),
        );
      },
    );

    await t.test('authors', async () => {
      const a = await get('/api/commits/authors', { repo: 'widgets' });
      assert.deepEqual(a.json, [
        { name: 'Test', email: 'test@example.com', commitCount: 2 },
        { name: 'Bea Author', email: 'bea@example.com', commitCount: 1 },
      ]);
      assert.equal(a.headers.get('x-total-count'), '2');
      const onPath = await get('/api/commits/authors', { repo: 'widgets', path: 'README.txt' });
      assert.deepEqual(
        onPath.json.map((x: { name: string }) => x.name),
        ['Bea Author'],
      );
    });

    await t.test('blame', async () => {
      const b = await get('/api/blame', { repo: 'widgets', path: 'src/main.c' });
      const first = log.at(-1)!;
      assert.deepEqual(b.json.ranges, [{ hash: first, path: 'src/main.c', startLine: 1, lineCount: 3 }]);
      assert.equal(b.json.commits[first].message, 'Initial import');
      const renamed = await get('/api/blame', { repo: 'widgets', path: 'README.txt' });
      assert.equal(renamed.json.ranges[0].hash, first, 'blame follows the rename');
      assert.equal(renamed.json.ranges[0].path, 'README.md');
      assert.equal((await get('/api/blame', { repo: 'widgets', path: 'nope.c' })).json.errorCode, 'FILE_NOT_FOUND');
      assert.equal((await get('/api/blame', { repo: 'widgets', path: '/etc/passwd/../x' })).json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.equal((await get('/api/blame', { repo: 'secret', path: 'vault.c' })).json.errorCode, 'REPOSITORY_NOT_FOUND');
    });

    await t.test('diff', async () => {
      const r = await get('/api/diff', { repo: 'widgets', base: 'v1.0', head: 'dev' });
      const files = r.json.files.map((f: { oldPath: string | null; newPath: string | null }) => `${f.oldPath}->${f.newPath}`);
      assert.deepEqual(files, ['README.md->README.txt', 'null->src/dev.c']);
      const added = r.json.files[1];
      assert.deepEqual(added.hunks[0].oldRange, { start: 0, lines: 0 });
      assert.deepEqual(added.hunks[0].newRange, { start: 1, lines: 1 });
      assert.equal(added.hunks[0].body, '+int widget_dev_only(void) { return widget_count(); }');
      const only = await get('/api/diff', { repo: 'widgets', base: 'v1.0', head: 'dev', path: 'src' });
      assert.equal(only.json.files.length, 1);
      assert.equal((await get('/api/diff', { repo: 'widgets', base: 'v1.0' })).json.errorCode, 'MISSING_REQUIRED_QUERY_PARAMETER');
      assert.equal((await get('/api/diff', { repo: 'widgets', base: 'v1.0', head: '--output=/tmp/x' })).json.errorCode, 'INVALID_GIT_REF');
      assert.equal((await get('/api/diff', { repo: 'widgets', base: 'v1.0..dev', head: 'dev' })).json.errorCode, 'INVALID_GIT_REF');
    });
  } finally {
    await d.cleanup();
  }
});
