// Tool-server sessions under a flood (docs/security-and-faults.md, row 7): one user opening
// session after session recycles only their own; the global cap makes room from whoever
// holds the most, never by taking someone's only session (then the newcomer is refused with
// 503 and Retry-After); anonymous callers are capped per address, over real HTTP too.
//
// The flood is TRAWL_FAULTS_FULL=1 ? 500 : 60 sessions.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Identity } from '../../daemon/auth/identity.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { McpSessions } from '../../daemon/mcp/sessions.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const FLOOD = process.env.TRAWL_FAULTS_FULL === '1' ? 500 : 60;
const URL_ = 'http://127.0.0.1/api/mcp';
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const user = (id: string): Identity => ({ kind: 'apiKey', userId: id, canSee: () => true });
const [ann, ben, cat] = [user('usr_ann'), user('usr_ben'), user('usr_cat')];
const anonymous: Identity = { kind: 'anonymous', canSee: () => false };
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } },
};
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

function post(body: unknown, session?: string): Request {
  return new Request(URL_, { method: 'POST', headers: { ...HEADERS, ...(session ? { 'mcp-session-id': session } : {}) }, body: JSON.stringify(body) });
}

function sessions(maxSessions: number, maxPerUser: number, now: () => number): McpSessions {
  return new McpSessions({
    createServer: () => new McpServer({ name: 'test', version: '0' }),
    idleMs: 3_600_000,
    maxSessions,
    maxPerUser,
    now,
    log: silentHttpLogger,
  });
}

test("the caps per user and in all: nobody loses a session to someone else's flood", async (t) => {
  let clock = 1_000_000;
  const tick = () => (clock += 10);
  const open = async (s: McpSessions, who: Identity, key?: string): Promise<string> => {
    tick();
    const res = await s.handle(post(INITIALIZE), who, key);
    assert.equal(res.status, 200, await res.clone().text());
    const id = res.headers.get('mcp-session-id')!;
    assert.equal((await s.handle(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id), who, key)).status, 202);
    return id;
  };
  const alive = async (s: McpSessions, who: Identity, id: string, key?: string): Promise<boolean> => {
    tick();
    const status = (await s.handle(post(PING, id), who, key)).status;
    assert.ok(status === 200 || status === 404, String(status));
    return status === 200;
  };

  await t.test("one user's flood recycles only their own sessions", async () => {
    const s = sessions(100, 3, () => clock);
    try {
      const bens = [await open(s, ben), await open(s, ben)];
      const anns: string[] = [];
      for (let i = 0; i < FLOOD; i++) anns.push(await open(s, ann));
      t.diagnostic(`${FLOOD} sessions opened by one user: ${s.size} open`);
      assert.equal(s.size, 5, "ben's two and ann's last three");
      for (const id of bens) assert.ok(await alive(s, ben, id), 'ben keeps his sessions');
      for (const id of anns.slice(-3)) assert.ok(await alive(s, ann, id));
      for (const id of anns.slice(0, -3)) assert.ok(!(await alive(s, ann, id)), "ann's older ones went");
    } finally {
      await s.closeAll();
    }
  });

  await t.test("the global cap: the user with the most gives way, never someone's only session", async () => {
    const s = sessions(4, 3, () => clock);
    try {
      const anns = [await open(s, ann), await open(s, ann), await open(s, ann)];
      const ben1 = await open(s, ben);
      assert.equal(s.size, 4, 'full');
      // Ben opens another: ann (3) holds more than ben will (2): her least recently used goes.
      const ben2 = await open(s, ben);
      assert.equal(s.size, 4);
      assert.ok(!(await alive(s, ann, anns[0]!)));
      assert.ok(await alive(s, ann, anns[1]!));
      assert.ok(await alive(s, ann, anns[2]!));
      // Two each: ben opening a third gives up his own least recently used, not ann's.
      const ben3 = await open(s, ben);
      assert.equal(s.size, 4);
      assert.ok(!(await alive(s, ben, ben1)));
      assert.ok(await alive(s, ben, ben2));
      assert.ok(await alive(s, ben, ben3));
      assert.ok(await alive(s, ann, anns[1]!), 'ann keeps hers');
      assert.ok(await alive(s, ann, anns[2]!));
      // Ann floods: she only ever recycles her own.
      for (let i = 0; i < FLOOD; i++) await open(s, ann);
      assert.ok(await alive(s, ben, ben2), "ben keeps his through ann's flood");
      assert.ok(await alive(s, ben, ben3));
    } finally {
      await s.closeAll();
    }
  });

  await t.test("when every open session is its user's only one, a newcomer is refused, not served by eviction", async () => {
    const s = sessions(2, 5, () => clock);
    try {
      const a = await open(s, ann);
      const b = await open(s, ben);
      tick();
      const refused = await s.handle(post(INITIALIZE), cat);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal(((await refused.json()) as { error: { code: number } }).error.code, -32000);
      assert.equal(refused.headers.get('mcp-session-id'), null, 'no session named');
      assert.equal(s.size, 2);
      assert.ok(await alive(s, ann, a));
      assert.ok(await alive(s, ben, b));
      // Ann, who has one, may replace it.
      const a2 = await open(s, ann);
      assert.ok(!(await alive(s, ann, a)));
      assert.ok(await alive(s, ann, a2));
      assert.ok(await alive(s, ben, b));
    } finally {
      await s.closeAll();
    }
  });

  await t.test('anonymous callers are capped per address', async () => {
    const s = sessions(100, 2, () => clock);
    try {
      const fromB = await open(s, anonymous, '198.51.100.2');
      for (let i = 0; i < FLOOD; i++) await open(s, anonymous, '198.51.100.1');
      assert.ok(await alive(s, anonymous, fromB, '198.51.100.2'), 'another address keeps its session');
      assert.equal(s.size, 3);
    } finally {
      await s.closeAll();
    }
  });
});

/** A JSON POST to /api/mcp from a chosen loopback source address. */
function mcpFrom(d: TestDaemon, from: string, body: unknown, session?: string): Promise<{ status: number; session?: string }> {
  const text = JSON.stringify(body);
  const url = new URL('/api/mcp', d.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: { ...HEADERS, 'content-length': Buffer.byteLength(text), ...(session ? { 'mcp-session-id': session } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          const id = res.headers['mcp-session-id'];
          resolve({ status: res.statusCode ?? 0, ...(typeof id === 'string' ? { session: id } : {}) });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

test("over HTTP: an anonymous flood from one address leaves another address's session alone", async () => {
  const d = await startTestDaemon({ settings: { anonymousAccess: true }, daemon: { mcpSessions: { max: 100, perUser: 2 } } });
  try {
    const open = async (from: string): Promise<string> => {
      const r = await mcpFrom(d, from, INITIALIZE);
      assert.equal(r.status, 200);
      assert.equal((await mcpFrom(d, from, { jsonrpc: '2.0', method: 'notifications/initialized' }, r.session)).status, 202);
      return r.session!;
    };
    const theirs = await open('127.0.0.3');
    const mine: string[] = [];
    for (let i = 0; i < 10; i++) mine.push(await open('127.0.0.2'));
    assert.equal((await mcpFrom(d, '127.0.0.3', PING, theirs)).status, 200, 'the other address keeps its session');
    assert.equal((await mcpFrom(d, '127.0.0.2', PING, mine.at(-1))).status, 200);
    assert.equal((await mcpFrom(d, '127.0.0.2', PING, mine[0])).status, 404, 'the flooder lost its own oldest');
  } finally {
    await d.cleanup();
  }
});
