// GET /metrics under attack (docs/security-and-faults.md, row 6):
// - it never names a private repository, whatever requests named it (API routes with the
//   name in the query, web UI pages with it in the path, unknown paths carrying it, tool
//   calls, searches, failures as well as answers);
// - it can require a credential (settings.metrics.auth): an owner's API key, or a scrape
//   token from the environment; the default follows anonymous access.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newUserKey } from '../helpers/cli-users.ts';
import { metricsGate } from '../../daemon/http/metrics-access.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const PRIVATE = 'zq-private-7f3a9';
const TOKEN = 'scrape-token-0123456789abcdef';

/** An owner's and a member's API key, made with the CLI. */
async function keys(dataDir: string): Promise<{ owner: string; member: string }> {
  const dd = ['--data-dir', dataDir];
  return { owner: await newUserKey('olga@example.com', dd, 'owner'), member: await newUserKey('mel@example.com', dd) };
}

const privateRepo = {
  name: PRIVATE,
  visibility: 'private' as const,
  build: (r: { commit(files: Record<string, string>): string }) => void r.commit({ 'hidden.c': 'int zq_hidden_symbol;\n' }),
};

test('/metrics never names a private repository, whatever the requests named', async () => {
  const d = await startTestDaemon({ settings: { anonymousAccess: true }, extraRepos: [privateRepo] });
  try {
    const { owner } = await keys(d.dataDir);
    const as = { authorization: `Bearer ${owner}` };
    const q = encodeURIComponent(PRIVATE);
    const requests: Array<[string, RequestInit & { json?: unknown }]> = [
      // The name in query strings and bodies, answered and refused.
      [`/api/repos?query=${q}`, { headers: as }],
      [`/api/commits?repo=${q}`, { headers: as }],
      [`/api/commits?repo=${q}`, {}],
      [`/api/commit?repo=${q}&ref=main`, { headers: as }],
      [`/api/source?repo=${q}&path=hidden.c`, { headers: as }],
      [`/api/source?repo=${q}&path=hidden.c`, {}],
      [`/api/blame?repo=${q}&path=hidden.c`, { headers: as }],
      [`/api/folder_contents?repoName=${q}&revisionName=main&path=`, { headers: as }],
      [`/api/files`, { headers: as, json: { repoName: PRIVATE, revisionName: 'main' } }],
      [`/api/search`, { headers: as, json: { query: `repo:${PRIVATE} zq_hidden_symbol`, matches: 10 } }],
      [`/api/search`, { json: { query: `repo:${PRIVATE}`, matches: 10 } }],
      [`/api/stream_search`, { headers: as, json: { query: `repo:${PRIVATE} zq_hidden_symbol` } }],
      [`/api/find_definitions`, { headers: as, json: { symbolName: 'zq_hidden_symbol', repoName: PRIVATE } }],
      // The name in the path: web UI pages, unknown API paths, paths with parameters.
      [`/${q}`, { headers: { accept: 'text/html' } }],
      [`/${q}/-/blob/main/hidden.c`, { headers: { accept: 'text/html' } }],
      [`/${q}/-/tree/main/`, { headers: { accept: 'text/html' } }],
      [`/api/${q}`, { headers: as }],
      [`/api/repos/${q}`, { headers: as }],
      [`/api/ee/scoped_access_token/${q}`, { method: 'DELETE', headers: as }],
      [`/metrics/${q}`, {}],
      [`/.well-known/${q}`, {}],
    ];
    for (const [path, init] of requests) {
      const a = await call(`${d.url}${path}`, init);
      assert.ok(a.status > 0, path);
    }
    // A tool call naming it.
    const mcp = (body: unknown, session?: string) =>
      call(`${d.url}/api/mcp`, {
        json: body,
        headers: {
          ...as,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-06-18',
          ...(session ? { 'mcp-session-id': session } : {}),
        },
      });
    const init = await mcp({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id')!;
    await mcp({ jsonrpc: '2.0', method: 'notifications/initialized' }, session);
    const read = await mcp(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { repo: PRIVATE, path: 'hidden.c' } } },
      session,
    );
    assert.match(read.text, /zq_hidden_symbol/, 'the tool read the private file: its name went through the daemon');

    const metrics = await call(`${d.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.text, /trawl_http_requests_total\{/, 'requests are counted');
    assert.match(metrics.text, /route="\/api\/commits"/, 'by route template');
    assert.ok(!metrics.text.includes(PRIVATE), "the private repository's name is in no series and no label");
    assert.ok(!metrics.text.includes(q), 'not even encoded');
    assert.ok(!metrics.text.includes('zq_hidden_symbol'), 'nor what it holds');
    assert.ok(!metrics.text.includes(d.privateRepo), 'nor the other private repository');
  } finally {
    await d.cleanup();
  }
});

test('/metrics access: the default follows anonymous access; "owner"; a scrape token from the environment', async (t) => {
  let d: TestDaemon | undefined;
  try {
    await t.test("anonymous access off, no setting: an owner's API key only", async () => {
      d = await startTestDaemon({ settings: { anonymousAccess: false } });
      const { owner, member } = await keys(d.dataDir);
      const none = await call(`${d.url}/metrics`);
      assert.equal(none.status, 401);
      assert.equal(none.json.errorCode, 'NOT_AUTHENTICATED');
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer realm="trawl"/);
      assert.ok(!none.text.includes('trawl_'), 'no metrics in the refusal');
      assert.equal((await call(`${d.url}/metrics`, { headers: { authorization: `Bearer ${member}` } })).status, 403, 'a member');
      assert.equal((await call(`${d.url}/metrics`, { headers: { authorization: 'Bearer svk_nope' } })).status, 401, 'a bad key');
      assert.equal((await call(`${d.url}/metrics`, { headers: { cookie: 'trawl_session=x' } })).status, 401, 'a session cookie is no scrape credential');
      const ok = await call(`${d.url}/metrics`, { headers: { authorization: `Bearer ${owner}` } });
      assert.equal(ok.status, 200);
      assert.match(ok.text, /trawl_repositories\{state="indexed"\}/);
      assert.equal((await call(`${d.url}/metrics`, { headers: { 'x-sourcebot-api-key': owner } })).status, 200, 'in an API key header too');
      await d.cleanup();
      d = undefined;
    });

    await t.test('anonymous access on, no setting: open', async () => {
      d = await startTestDaemon({ settings: { anonymousAccess: true } });
      assert.equal((await call(`${d.url}/metrics`)).status, 200);
      await d.cleanup();
      d = undefined;
    });

    await t.test('a scrape token from the environment, or an owner\'s key; "none" opens it', async () => {
      const env = { TRAWL_METRICS_TOKEN: TOKEN };
      d = await startTestDaemon({ settings: { anonymousAccess: true, metrics: { auth: { env: 'TRAWL_METRICS_TOKEN' } } }, daemon: { env } });
      const { owner, member } = await keys(d.dataDir);
      const get = (headers: Record<string, string>) => call(`${d!.url}/metrics`, { headers });
      assert.equal((await get({})).status, 401, 'anonymous access does not open it');
      assert.equal((await get({ authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.equal((await get({ authorization: `Bearer ${TOKEN}x` })).status, 401);
      assert.equal((await get({ authorization: `Bearer ${TOKEN.slice(0, -1)}` })).status, 401);
      assert.equal((await get({ 'x-service-api-key': TOKEN })).status, 401, 'the token goes in Authorization: Bearer');
      assert.equal((await get({ authorization: `Bearer ${owner}` })).status, 200);
      assert.equal((await get({ authorization: `Bearer ${member}` })).status, 403);
      await d.cleanup();
      d = undefined;

      // Unset or short: the daemon does not start (the gate is built before it listens).
      const refuse = { authenticate: () => Promise.reject(new Error('not reached')) };
      assert.throws(() => metricsGate({ env: 'TRAWL_METRICS_TOKEN' }, refuse, {}), /TRAWL_METRICS_TOKEN, which is not set/);
      assert.throws(() => metricsGate({ env: 'TRAWL_METRICS_TOKEN' }, refuse, { TRAWL_METRICS_TOKEN: '' }), /which is not set/);
      assert.throws(() => metricsGate({ env: 'TRAWL_METRICS_TOKEN' }, refuse, { TRAWL_METRICS_TOKEN: 'short' }), /shorter than 16 characters/);

      d = await startTestDaemon({ settings: { anonymousAccess: false, metrics: { auth: 'none' } } });
      assert.equal((await call(`${d.url}/metrics`)).status, 200, '"none" opens it even with anonymous access off');
    });
  } finally {
    await d?.cleanup();
  }
});
