// Clients written for Sourcebot (scripts, its former MCP server package, editor plug-ins)
// against trawl, unchanged (docs/http-api.md sections 13 and 14):
// - the API key in X-Sourcebot-Api-Key authenticates and is counted, like X-Service-Api-Key,
//   also where anonymous access is on (a credential that was sent is never ignored; a bad
//   one is 401); CORS allows the header; logs redact it;
// - /api/commit and /api/commits answer `refs` as git's %D string, and take Sourcebot's
//   relative since/until forms;
// - repositories indexed from plain git (`trawl index`, a `type: git` connection) have a
//   pushedAt, the commit time of the default branch's tip, and sort=pushed orders by it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { Catalog } from '../../daemon/http/catalog.ts';
import { createLogger } from '../../daemon/http/logging.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

/** A pino logger (the daemon's own, redaction included) writing into a string. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; text: () => string } {
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { logger: createLogger('trace', sink), text: () => text };
}

const OLD_TIP = '2020-01-02T03:04:05.000Z';
const MID_TIP = '2023-06-01T00:00:00.000Z';

test('a client written for Sourcebot against trawl', async (t) => {
  const log = capturedLogger();
  const d = await startTestDaemon({
    // Anonymous access on: a credential that is sent must still be used, never dropped.
    settings: { anonymousAccess: true },
    daemon: { logger: log.logger },
    extraRepos: [
      { name: 'oldrepo', build: (r) => void r.commit({ 'o.c': 'int old_marker;\n' }, 'old', { author: 'Old <old@example.com>', date: OLD_TIP }) },
      { name: 'midrepo', build: (r) => void r.commit({ 'm.c': 'int mid_marker;\n' }, 'mid', { author: 'Mid <mid@example.com>', date: MID_TIP }) },
    ],
  });
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => void lines.push(l), err: () => {}, now: () => new Date() };
    const dd = ['--data-dir', d.dataDir];
    await usersCommand(['add', '--email', 'ann@example.com', ...dd], io);
    await usersCommand(['add', '--email', 'ben@example.com', ...dd], io);
    await keysCommand(['create', '--user', 'ann@example.com', ...dd], io);
    const ann = lines.at(-1)!;
    await keysCommand(['create', '--user', 'ben@example.com', ...dd], io);
    const ben = lines.at(-1)!;
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const get = async (path: string, query: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> => {
      const a = await call(`${d.url}${path}?${new URLSearchParams(query).toString()}`, { headers });
      checker.check('GET', path, a.status, a.json);
      return a;
    };
    const names = (a: Answer): string[] => a.json.map((r: { repoName: string }) => r.repoName);

    await t.test('X-Sourcebot-Api-Key authenticates and is counted, with anonymous access on', async () => {
      const anonymous = await get('/api/repos', {});
      assert.equal(anonymous.status, 200);
      assert.ok(!names(anonymous).includes('secret'), 'anonymous callers do not see the private repository');
      assert.equal(anonymous.headers.get('x-ratelimit-limit'), null, 'and are not counted');

      const first = await get('/api/repos', {}, { 'X-Sourcebot-Api-Key': ann });
      assert.equal(first.status, 200);
      assert.ok(names(first).includes('secret'), 'the key was used: its user sees the private repository');
      assert.equal(first.headers.get('x-ratelimit-limit'), '10000', 'counted');
      const remaining = Number(first.headers.get('x-ratelimit-remaining'));
      // One budget per user, whichever header carries the key.
      const second = await get('/api/repos', {}, { 'x-service-api-key': ann });
      assert.equal(Number(second.headers.get('x-ratelimit-remaining')), remaining - 1);
      const third = await call(`${d.url}/api/search`, { json: { query: 'widget_secret_sauce', matches: 10 }, headers: { 'x-sourcebot-api-key': ann } });
      assert.equal(third.status, 200);
      assert.deepEqual(
        third.json.files.map((f: { repository: string }) => f.repository),
        ['secret'],
      );
      assert.equal(Number(third.headers.get('x-ratelimit-remaining')), remaining - 2);
    });

    await t.test('a credential that was sent but is not valid is 401, never anonymous', async () => {
      const wrong = `${ann.slice(0, -1)}${ann.endsWith('0') ? '1' : '0'}`;
      for (const [what, headers] of [
        ['an unknown key', { 'x-sourcebot-api-key': wrong }],
        ['not a key at all', { 'x-sourcebot-api-key': 'hello' }],
        ['an empty header', { 'x-sourcebot-api-key': '' }],
        ['blanks only', { 'x-sourcebot-api-key': '   ' }],
        ['two different keys', { authorization: `Bearer ${ann}`, 'x-sourcebot-api-key': ben }],
        ['two different keys in the two key headers', { 'x-service-api-key': ben, 'x-sourcebot-api-key': ann }],
      ] as Array<[string, Record<string, string>]>) {
        const a = await get('/api/repos', {}, headers);
        assert.equal(a.status, 401, what);
        assert.equal(a.json.errorCode, 'NOT_AUTHENTICATED', what);
        assert.match(a.headers.get('www-authenticate') ?? '', /error="invalid_token"/, `${what}: the challenge says a credential was refused`);
      }
      const same = await get('/api/repos', {}, { authorization: `Bearer ${ann}`, 'x-sourcebot-api-key': ann });
      assert.equal(same.status, 200, 'the same key twice is one credential');
    });

    await t.test('CORS lets a page send the header to the tool server', async () => {
      const pre = await fetch(`${d.url}/api/mcp`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'x-sourcebot-api-key, content-type',
        },
      });
      assert.equal(pre.status, 204);
      const allowed = (pre.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
      assert.ok(allowed.includes('x-sourcebot-api-key'), `allowed: ${allowed.join(', ')}`);
      assert.ok(allowed.includes('x-service-api-key'));
      // And the tool server authenticates with it.
      const init = await call(`${d.url}/api/mcp`, {
        json: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sourcebot-client', version: '1' } },
        },
        headers: { 'x-sourcebot-api-key': ann, accept: 'application/json, text/event-stream' },
      });
      assert.equal(init.status, 200, init.text);
      assert.equal((await call(`${d.url}/api/mcp`, { json: {}, headers: { 'x-sourcebot-api-key': 'svk_nope' } })).status, 401);
    });

    await t.test('logs never hold the key', async () => {
      const text = log.text();
      assert.ok(text.includes('"msg":"request"'), 'requests were logged');
      for (const k of [ann, ben]) assert.ok(!text.includes(k), 'no key in the request logs');
      // Whatever a caller logs: every credential header is redacted.
      const probe = capturedLogger();
      const headers = {
        'x-sourcebot-api-key': ann,
        'x-service-api-key': ben,
        authorization: `Bearer ${ann}`,
        cookie: 'trawl_session=abc',
        'x-csrf-token': 'csrf-value',
        accept: 'text/plain',
      };
      probe.logger.info({ headers }, 'headers');
      const line = JSON.parse(probe.text()) as { headers: Record<string, string> };
      for (const h of ['x-sourcebot-api-key', 'x-service-api-key', 'authorization', 'cookie', 'x-csrf-token']) assert.equal(line.headers[h], '[redacted]', h);
      assert.equal(line.headers.accept, 'text/plain', 'other headers are kept');
    });

    await t.test("commits and commit: refs is git's %D string", async () => {
      const decorations = new Map(
        execFileSync('git', ['log', '--all', '--format=%H %D'], { cwd: d.repoPath, encoding: 'utf8' })
          .trim()
          .split('\n')
          .map((l) => [l.slice(0, 40), l.slice(41)] as [string, string]),
      );
      for (const ref of ['main', 'dev']) {
        const list = await get('/api/commits', { repo: 'widgets', ref }, { 'x-sourcebot-api-key': ann });
        assert.equal(list.status, 200);
        for (const c of list.json as Array<{ hash: string; refs: unknown }>) {
          assert.equal(typeof c.refs, 'string');
          assert.equal(c.refs, decorations.get(c.hash), c.hash);
        }
      }
      const head = await get('/api/commit', { repo: 'widgets' });
      assert.equal(head.json.refs, 'HEAD -> main');
      assert.equal((await get('/api/commit', { repo: 'widgets', ref: 'v1.0' })).json.refs, 'tag: v1.0');
      assert.equal((await get('/api/commit', { repo: 'widgets', ref: 'main~2' })).json.refs, '');
    });

    await t.test("since and until take Sourcebot's relative forms; a date alone is the start of its day", async () => {
      const hashes = async (q: Record<string, string>) => {
        const a = await get('/api/commits', { repo: 'oldrepo', ...q });
        assert.equal(a.status, 200, JSON.stringify(a.json));
        return a.json.length as number;
      };
      // oldrepo's one commit was made at 2020-01-02T03:04:05Z.
      assert.equal(await hashes({ since: '10 years ago' }), 1);
      assert.equal(await hashes({ since: 'last year' }), 0);
      assert.equal(await hashes({ until: 'yesterday' }), 1);
      assert.equal(await hashes({ until: '2 weeks ago', since: '100 months ago' }), 1);
      assert.equal(await hashes({ until: '2020-01-02' }), 0, 'until a date: its first instant, before 03:04');
      assert.equal(await hashes({ until: '2020-01-03' }), 1);
      assert.equal(await hashes({ since: '2020-01-02', until: '2020-01-02T03:04:05Z' }), 1);
      const bad = await get('/api/commits', { repo: 'oldrepo', since: 'a fortnight ago' });
      assert.equal(bad.status, 400);
      assert.equal(bad.json.errorCode, 'INVALID_QUERY_PARAMS');
      assert.match(bad.json.message, /N <unit>s ago/);
    });

    await t.test("pushedAt of plain git repositories is their tip's commit time; sort=pushed orders by it", async () => {
      const all = await get('/api/repos', { perPage: '100' }, { 'x-sourcebot-api-key': ann });
      const pushed = new Map((all.json as Array<{ repoName: string; pushedAt?: string }>).map((r) => [r.repoName, r.pushedAt]));
      assert.equal(pushed.get('oldrepo'), OLD_TIP);
      assert.equal(pushed.get('midrepo'), MID_TIP);
      const tip = execFileSync('git', ['log', '-1', '--format=%ct', 'main'], { cwd: d.repoPath, encoding: 'utf8' }).trim();
      assert.equal(pushed.get('widgets'), new Date(Number(tip) * 1000).toISOString());
      assert.ok(pushed.get('secret'), 'the private repository too');
      const asc = names(await get('/api/repos', { sort: 'pushed', direction: 'asc' }, { 'x-sourcebot-api-key': ann }));
      assert.deepEqual(asc.slice(0, 2), ['oldrepo', 'midrepo'], asc.join(', '));
      const desc = names(await get('/api/repos', { sort: 'pushed', direction: 'desc' }, { 'x-sourcebot-api-key': ann }));
      assert.deepEqual(desc.slice(-2), ['midrepo', 'oldrepo'], desc.join(', '));
    });
  } finally {
    await d.cleanup();
  }
});

test("a type: git connection gets its pushedAt from the tip too; a host's own push time wins", async () => {
  const dir = tempDir('sourcebot-pushed');
  const data = join(dir.path, 'data');
  const store = openStore(data);
  try {
    const repo = TestRepo.init(join(dir.path, 'repos', 'gamma'));
    repo.commit({ 'g.c': 'int g;\n' }, 'first', { author: 'G <g@example.com>', date: '2021-01-01T00:00:00Z' });
    repo.commit({ 'g.c': 'int g2;\n' }, 'second', { author: 'G <g@example.com>', date: '2022-02-02T02:02:02Z' });
    const config = parseConfig(
      JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } } }),
      join(dir.path, 'trawl.json'),
    );
    const report = await syncOnce({ config, dataDir: data, store });
    assert.equal(report.repos[0]?.outcome, 'indexed');
    const catalog = new Catalog(data, store);
    await catalog.refresh();
    assert.equal(catalog.list().find((r) => r.name === 'gamma')?.pushedAt, '2022-02-02T02:02:02.000Z');
    // A host that reports a push time (GitHub's pushed_at) is believed over the tip's time.
    await store.updateRepo((await store.getRepoByName('gamma'))!.repoId, { pushedAt: '2024-05-05T05:05:05.000Z' });
    await catalog.refresh(); // what the daemon does in the background (the records' time to live)
    assert.equal(catalog.list().find((r) => r.name === 'gamma')?.pushedAt, '2024-05-05T05:05:05.000Z');
  } finally {
    await store.close();
    dir.cleanup();
  }
});
