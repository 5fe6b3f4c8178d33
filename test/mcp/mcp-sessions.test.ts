// Tool-server sessions (daemon/mcp/sessions.ts) on their own, with raw JSON-RPC over
// fetch-API requests: an initialize opens a session and names it; the session answers only
// its owner (anyone else gets the 404 of an unknown id); a request without a session is
// refused and leaves nothing behind; DELETE, idleness and the session cap close sessions;
// an open GET event stream keeps its session from being closed as idle.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Identity } from '../../daemon/auth/identity.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { McpSessions } from '../../daemon/mcp/sessions.ts';

const URL_ = 'http://127.0.0.1/api/mcp';
const ann: Identity = { kind: 'apiKey', userId: 'usr_ann', canSee: () => true };
const ben: Identity = { kind: 'apiKey', userId: 'usr_ben', canSee: () => true };

function post(body: unknown, session?: string): Request {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-06-18',
  };
  if (session) headers['mcp-session-id'] = session;
  return new Request(URL_, { method: 'POST', headers, body: JSON.stringify(body) });
}

const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
});
const ping = (id = 2) => ({ jsonrpc: '2.0', id, method: 'ping' });

function sessions(options: { idleMs?: number; maxSessions?: number; maxPerUser?: number; now?: () => number; streamKeepAliveMs?: number } = {}): McpSessions {
  return new McpSessions({
    createServer: () => new McpServer({ name: 'test', version: '0' }),
    idleMs: options.idleMs ?? 60_000,
    maxSessions: options.maxSessions ?? 100,
    maxPerUser: options.maxPerUser ?? 100,
    now: options.now ?? Date.now,
    log: silentHttpLogger,
    ...(options.streamKeepAliveMs !== undefined ? { streamKeepAliveMs: options.streamKeepAliveMs } : {}),
  });
}

async function open(s: McpSessions, who: Identity): Promise<string> {
  const res = await s.handle(post(initialize()), who);
  assert.equal(res.status, 200, await res.clone().text());
  const id = res.headers.get('mcp-session-id');
  assert.ok(id, 'the answer names the session');
  // The client confirms; the server then takes requests.
  const ok = await s.handle(post({ jsonrpc: '2.0', method: 'notifications/initialized' }, id), who);
  assert.equal(ok.status, 202);
  return id;
}

test('a session answers its owner, and nobody else learns it exists', async () => {
  const s = sessions();
  try {
    const id = await open(s, ann);
    const pong = await s.handle(post(ping(), id), ann);
    assert.equal(pong.status, 200);
    assert.deepEqual((await pong.json()) as unknown, { jsonrpc: '2.0', id: 2, result: {} });
    const stolen = await s.handle(post(ping(), id), ben);
    const unknown = await s.handle(post(ping(), '00000000-0000-0000-0000-000000000000'), ben);
    assert.equal(stolen.status, 404);
    assert.equal(await stolen.text(), await unknown.text(), "another user's session answers like an unknown id");
    const anonymous = await s.handle(post(ping(), id), { kind: 'anonymous', canSee: () => false });
    assert.equal(anonymous.status, 404);
  } finally {
    await s.closeAll();
  }
});

test('without a session: only initialize opens one; other requests leave nothing behind', async () => {
  const s = sessions();
  try {
    const res = await s.handle(post(ping()), ann);
    assert.equal(res.status, 400);
    assert.equal(s.size, 0);
    const get = await s.handle(new Request(URL_, { method: 'GET', headers: { accept: 'text/event-stream' } }), ann);
    assert.equal(get.status, 400);
    assert.match(((await get.json()) as { error: { message: string } }).error.message, /Mcp-Session-Id/);
    await open(s, ann);
    assert.equal(s.size, 1);
  } finally {
    await s.closeAll();
  }
});

test("DELETE ends a session; idle sessions are closed; the cap closes the opener's own least recently used", async () => {
  let clock = 1_000_000;
  const s = sessions({ idleMs: 50, maxSessions: 2, now: () => clock });
  try {
    const a = await open(s, ann);
    const del = await s.handle(new Request(URL_, { method: 'DELETE', headers: { 'mcp-session-id': a, 'mcp-protocol-version': '2025-06-18' } }), ann);
    assert.equal(del.status, 200);
    assert.equal((await s.handle(post(ping(), a), ann)).status, 404);
    assert.equal(s.size, 0);

    const b = await open(s, ann);
    clock += 10;
    const c = await open(s, ben);
    clock += 10;
    assert.equal((await s.handle(post(ping(), b), ann)).status, 200, 'b used last');
    // A third, of ann's: the cap never takes ben's only session; ann's own least recently used makes room.
    // (Who gives way in which case: test/faults/mcp-sessions.test.ts.)
    const d = await open(s, ann);
    assert.equal(s.size, 2);
    assert.equal((await s.handle(post(ping(), b), ann)).status, 404);
    assert.equal((await s.handle(post(ping(), c), ben)).status, 200);
    assert.equal((await s.handle(post(ping(), d), ann)).status, 200);

    clock += 1000; // everything idle past 50 ms; the sweep runs every 50 ms
    // Until the sweep has closed them (one after the other), not a fixed 200 ms a loaded
    // machine can outrun.
    const deadline = Date.now() + 10_000;
    while (s.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.size, 0, 'the idle sessions were not swept within 10 s');
    assert.equal((await s.handle(post(ping(), d), ann)).status, 404);
  } finally {
    await s.closeAll();
  }
});

test('a session listening on its GET event stream is not idle; once the stream ends, it is', async () => {
  const s = sessions({ idleMs: 100, streamKeepAliveMs: 20 });
  try {
    const id = await open(s, ann);
    const get = await s.handle(
      new Request(URL_, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } }),
      ann,
    );
    assert.equal(get.status, 200);
    assert.match(get.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(get.headers.get('mcp-session-id'), id);
    const reader = get.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        received += decoder.decode(value, { stream: true });
      }
    })();
    // Several sweeps (every 100 ms) pass while the stream carries keep-alives.
    await new Promise((r) => setTimeout(r, 600));
    assert.match(received, /: keepalive/);
    assert.equal(s.size, 1, 'not closed as idle while its stream is open');
    await reader.cancel();
    await reading;
    const deadline = Date.now() + 10_000;
    while (s.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.size, 0, 'closed as idle once the stream ended');
  } finally {
    await s.closeAll();
  }
});

test('at shutdown the open GET event streams end, and any opened after; the sessions still answer', async () => {
  const s = sessions({ streamKeepAliveMs: 20 });
  try {
    const id = await open(s, ann);
    const getStream = () =>
      s.handle(new Request(URL_, { method: 'GET', headers: { accept: 'text/event-stream', 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } }), ann);
    const drained = async (res: Response): Promise<string> => {
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    };
    const first = await getStream();
    assert.equal(first.status, 200);
    const reading = drained(first);
    await new Promise((r) => setTimeout(r, 100));
    s.endStreams();
    const ended = await Promise.race([reading.then(() => 'ended'), new Promise((r) => setTimeout(() => r('still open after 5 s'), 5_000))]);
    assert.equal(ended, 'ended');
    assert.equal(s.size, 1, 'the session is left open');
    const answered = await s.handle(post(ping(), id), ann);
    assert.equal(answered.status, 200, 'its requests are still answered');
    // A stream opened once shutdown began ends at once, empty.
    const second = await getStream();
    assert.equal(second.status, 200);
    assert.equal(await drained(second), '');
  } finally {
    await s.closeAll();
  }
});
