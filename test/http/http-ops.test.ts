// Streaming and operations under load, on a corpus whose result stream (about 20 MB) is
// larger than every buffer between the daemon and the client: a client that disconnects
// cancels its search; a client that stops reading holds the search back (memory stays
// bounded); a queued stream sends keep-alive comments; a full queue answers 503 with
// Retry-After; the time budget ends a search with a non-exhaustive result; SIGTERM-style
// close lets requests finish and cuts what outlives the deadline.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import type { HttpLogger } from '../../daemon/http/logging.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { metric, until, writeHaystack } from '../helpers/haystack.ts';

const FILES = 1200;
const LINES = 100;

/** A logger that keeps every line, for asserting on request logs. */
function recorder(): HttpLogger & { lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const make = (base: Record<string, unknown>): HttpLogger => ({
    info: (f, msg) => lines.push({ ...base, ...f, msg }),
    warn: (f, msg) => lines.push({ ...base, ...f, msg }),
    error: (f, msg) => lines.push({ ...base, ...f, msg }),
    child: (f) => make({ ...base, ...f }),
  });
  return Object.assign(make({}), { lines });
}

/** Searches running now and completed so far, every kind summed (all the series of each metric). */
async function searchCounts(url: string): Promise<{ running: number; total: number }> {
  const lines = (await (await fetch(`${url}/metrics`)).text()).split('\n');
  const sum = (name: string) => lines.filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`)).reduce((n, l) => n + Number(l.split(' ').pop()), 0);
  return { running: sum('trawl_searches_running'), total: sum('trawl_searches_total') };
}

const STREAM_BODY = JSON.stringify({ query: 'needle', matches: 100000 });

/** Opens a stream and reads until the first result message; returns the reader. */
async function openStream(url: string, signal?: AbortSignal): Promise<{ reader: ReadableStreamDefaultReader<Uint8Array>; text: string }> {
  const res = await fetch(`${url}/api/stream_search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: STREAM_BODY,
    ...(signal ? { signal } : {}),
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('data: {"type":"chunk"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { reader, text };
}

/** A stream_search over a plain socket, read until the first result message arrived. */
function rawStream(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST /api/stream_search HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(STREAM_BODY)}\r\n\r\n${STREAM_BODY}`,
      );
    });
    let seen = '';
    socket.on('data', (b: Buffer) => {
      seen += b.toString('latin1');
      if (seen.includes('data: {"type":"chunk"')) {
        socket.pause();
        socket.removeAllListeners('data');
        resolve(socket);
      }
    });
    socket.on('error', reject);
  });
}

async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

test('streaming back-pressure, cancellation, queueing, time budget and shutdown', async (t) => {
  const dir = tempDir('http-ops');
  const corpus = join(dir.path, 'haystack');
  const dataDir = join(dir.path, 'data');
  writeHaystack(corpus, FILES, LINES);
  await indexLocal(corpus, { dataDir, symbols: false });
  const daemons: Daemon[] = [];
  const start = async (settings: Record<string, unknown>, logger: HttpLogger) => {
    const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true, ...settings } }), join(dir.path, 'trawl.json'));
    const d = await startDaemon({ config, dataDir, host: '127.0.0.1', port: 0, logger, workers: 1, sync: false });
    daemons.push(d);
    return d;
  };
  try {
    const log = recorder();
    const d = await start({ http: { keepAliveMs: 100 }, search: { maxConcurrent: 1, maxQueued: 1 } }, log);

    await t.test('a client that stops reading holds its search back, then gets everything', async () => {
      const before = await metric(d.url, 'trawl_searches_total');
      const { reader, text } = await openStream(d.url);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(await metric(d.url, 'trawl_searches_running'), 1, 'the search waits for the client');
      assert.equal(await metric(d.url, 'trawl_searches_total'), before, 'and has not finished');
      const rest = text + (await readAll(reader));
      assert.ok(rest.length > 10_000_000, `a large stream (${rest.length} bytes)`);
      assert.match(rest, /data: \{"type":"final"[^\n]*\n\ndata: \[DONE\]\n\n$/);
      await until('the search is counted', async () => (await metric(d.url, 'trawl_searches_total')) === before + 1);
    });

    await t.test('a client that disconnects cancels its search', async () => {
      // A raw socket: closing it is unambiguous (fetch may drain a body to reuse its connection).
      const before = await metric(d.url, 'trawl_searches_total');
      const socket = await rawStream(d.url);
      socket.destroy();
      await until('the search stops', async () => (await metric(d.url, 'trawl_searches_running')) === 0);
      await until('the request is logged as aborted', async () =>
        log.lines.some((l) => l.msg === 'request' && l.route === '/api/stream_search' && l.aborted === true),
      );
      const line = log.lines.find((l) => l.msg === 'request' && l.route === '/api/stream_search' && l.aborted === true)!;
      assert.ok((line.bytes as number) < 10_000_000, `stopped early (${line.bytes} bytes written)`);
      assert.equal(await metric(d.url, 'trawl_searches_total'), before + 1, 'counted once, as a stream that did not run to the end');
      // Nothing is left holding the gate: a search runs now.
      const r = await fetch(`${d.url}/api/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'needle_7_7 ', matches: 5 }),
      });
      assert.equal(r.status, 200);
    });

    await t.test('a queued stream sends keep-alives; a full queue answers 503 with Retry-After', async () => {
      const holder = new AbortController();
      await openStream(d.url, holder.signal); // holds the only turn: its client does not read
      const queued = await fetch(`${d.url}/api/stream_search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'needle_3_3 ', matches: 10 }),
      });
      assert.equal(queued.status, 200);
      const reader = queued.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /^: keep-alive\n\n/);
      const refused = await fetch(`${d.url}/api/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'needle', matches: 5 }),
      });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '1');
      assert.equal(((await refused.json()) as { errorCode: string }).errorCode, 'SERVICE_UNAVAILABLE');
      assert.equal(await metric(d.url, 'trawl_search_rejected_total'), 1);
      holder.abort(); // the queued stream gets its turn
      const rest = await readAll(reader);
      assert.match(rest, /"type":"final".*\n\ndata: \[DONE\]\n\n$/s);
    });

    await t.test('a directory repository is browsed from its index and has no history', async () => {
      const get = async (path: string) => {
        const r = await fetch(`${d.url}${path}`);
        return { status: r.status, json: (await r.json()) as any };
      };
      const post = async (path: string, body: unknown) => {
        const r = await fetch(`${d.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        return { status: r.status, json: (await r.json()) as any };
      };
      const src = await get('/api/source?repo=haystack&path=d3%2Ff3.txt');
      assert.equal(src.status, 200);
      assert.match(src.json.source, /^needle_3_0 x+\n/);
      assert.equal(src.json.blobSha, undefined);
      const files = await post('/api/files', { repoName: 'haystack' });
      assert.equal(files.json.length, FILES);
      assert.deepEqual(files.json[0], { type: 'blob', path: 'd0/f0.txt', name: 'f0.txt' });
      const folder = await get('/api/folder_contents?repoName=haystack&path=d7');
      assert.equal(folder.json.length, FILES / 20);
      assert.ok(folder.json.every((e: { type: string; path: string }) => e.type === 'blob' && e.path.startsWith('d7/')));
      const tree = await post('/api/tree', { repoName: 'haystack', paths: ['d1'] });
      assert.equal(tree.json.tree.children.length, 20);
      assert.equal(tree.json.tree.children.find((c: { name: string }) => c.name === 'd1').children.length, FILES / 20);
      assert.equal(tree.json.tree.children.find((c: { name: string }) => c.name === 'd2').children.length, 0);
      assert.equal((await get('/api/source?repo=haystack&path=nope.txt')).json.errorCode, 'FILE_NOT_FOUND');
      assert.equal((await get('/api/source?repo=haystack&path=d0%2Ff0.txt&ref=main')).json.errorCode, 'INVALID_GIT_REF');
      const history = await get('/api/commits?repo=haystack');
      assert.equal(history.status, 400);
      assert.match(history.json.message, /no history/);
    });

    await t.test('the time budget ends a search with a non-exhaustive result', async () => {
      d.services.config.settings.search.timeoutMs = 1;
      try {
        const r = await fetch(`${d.url}/api/search`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: 'needle_[0-9]+_9[0-9] x+', matches: 100000, isRegexEnabled: true }),
        });
        assert.equal(r.status, 200);
        const body = (await r.json()) as { isSearchExhaustive: boolean; stats: { actualMatchCount: number } };
        assert.equal(body.isSearchExhaustive, false);
        assert.ok(body.stats.actualMatchCount < FILES * 10, 'stopped before the end');
      } finally {
        d.services.config.settings.search.timeoutMs = 20000;
      }
    });

    // States, not durations: close is still waiting after the search in flight has finished
    // (the stuck stream holds it), then it cuts the stream. A close that never cut would not
    // settle (the subtest's timeout fails it). The one time bound is a lower one: the
    // deadline was waited for (a slow machine only makes it longer).
    await t.test('close: in-flight requests finish, what outlives the deadline is cut, new connections are refused', { timeout: 60_000 }, async (st) => {
      // A deadline the search in flight meets with room to spare on a loaded machine.
      const c = await start({ http: { shutdownTimeoutMs: 3000 } }, recorder());
      const stuck = await openStream(c.url);
      const was = await searchCounts(c.url);
      const search = fetch(`${c.url}/api/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'needle_1_1 ', matches: 5 }),
      });
      // Until the daemon has the search (running beside the stuck stream, or done), not a
      // fixed 50 ms: a close begun before the request arrived would refuse it.
      await until(
        'the search reached the daemon',
        async () => {
          const now = await searchCounts(c.url);
          return now.running > was.running || now.total > was.total;
        },
        30_000,
      );
      const began = Date.now();
      let closed = false;
      const closing = c.close().then(() => (closed = true));
      assert.equal((await search).status, 200, 'a request in flight finishes');
      assert.equal(closed, false, 'close waits for the stream still in flight');
      await closing;
      const took = Date.now() - began;
      st.diagnostic(`close took ${took} ms (deadline 3000 ms, then up to 1000 ms for the last words)`);
      assert.ok(took >= 2900, `close waited for the deadline (${took} ms)`);
      await assert.rejects(readAll(stuck.reader), 'the stuck stream was cut');
      await assert.rejects(fetch(`${c.url}/api/health`), 'no new connections');
    });
  } finally {
    for (const d of daemons) await d.close();
    dir.cleanup();
  }
});
