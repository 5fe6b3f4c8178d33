// docs/security-and-faults.md, row 9: SIGTERM while streams are in flight, against a real
// `trawl serve`.
// During the drain the daemon keeps listening and answers every new request with 503
// SERVICE_UNAVAILABLE (Retry-After, Connection: close), health says it is shutting down
// (503), and requests in flight go on: with time enough they all finish, and the process
// exits as soon as they have, well before its deadline. With a short drain
// (settings.http.shutdownTimeoutMs 300 ms) the streams still running or waiting for a
// turn get a final `error` event (503 SERVICE_UNAVAILABLE) and `data: [DONE]` before
// their connection closes, never a bare cut, and the process exits 0 soon after.
//
// Searches take turns (search.maxConcurrent 1), so a few 10 MB streams keep
// the daemon busy for a second or more; a blocking search whose body is still arriving
// when SIGTERM comes is in flight by construction.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { until, writeHaystack } from '../helpers/haystack.ts';
import { rawRequest, type RawExchange, type RawResponse } from '../helpers/raw-http.ts';
import { exited, serve, type ServeProcess } from '../helpers/serve.ts';

/** Half the lines of every file: a 10 MB stream, exhaustive when it runs to its end. */
const STREAM = JSON.stringify({ query: 'needle_[0-9]+_[0-9]?[0-4] ', isRegexEnabled: true, matches: 100000 });
const SEARCH = JSON.stringify({ query: 'needle_[0-9]+_[0-9]?7 ', isRegexEnabled: true, matches: 100000 });
const END = /data: \[DONE\]\n\n$/;

test('SIGTERM during active streams: new requests get 503, requests in flight finish or end with an error event, exit 0', { timeout: 180_000 }, async (t) => {
  const dir = tempDir('sigterm-drain');
  try {
    const corpus = join(dir.path, 'haystack');
    const dataDir = join(dir.path, 'data');
    writeHaystack(corpus, 1200, 100);
    await indexLocal(corpus, { dataDir, symbols: false, shardTargetBytes: 1 << 20 });
    const start = (name: string, shutdownTimeoutMs: number): Promise<ServeProcess> => {
      const configPath = join(dir.path, `${name}.json`);
      const settings = { anonymousAccess: true, symbols: false, search: { maxConcurrent: 1, maxQueued: 20 }, http: { shutdownTimeoutMs, keepAliveMs: 100 } };
      writeFileSync(configPath, JSON.stringify({ settings }));
      return serve(['--data-dir', dataDir, '--config', configPath], dir.path);
    };
    /** Streams started, each at least answering (queued ones with a keep-alive comment). */
    const openStreams = async (url: string, n: number): Promise<RawExchange[]> => {
      const streams = Array.from({ length: n }, () => rawRequest(url, 'POST', '/api/stream_search', STREAM));
      await Promise.all(streams.map((s) => s.firstBytes));
      return streams;
    };
    /**
     * A blocking search in flight: its body's last byte is held back (and the client does
     * not ask for the connection to close); health answering after it was sent means the
     * daemon read its head.
     */
    const inFlightSearch = async (url: string): Promise<RawExchange> => {
      const search = rawRequest(url, 'POST', '/api/search', SEARCH, { hold: true, keepAlive: true });
      assert.equal((await rawRequest(url, 'GET', '/api/health').closed).status, 200);
      return search;
    };

    await t.test('a long drain: new requests get 503 while the streams and the search in flight finish; the process exits when they have', async (st) => {
      // A deadline far beyond the test's own timeout: a process that waited for it instead of
      // exiting when its requests were done would fail the test by its timeout, not by a clock.
      const d = await start('long', 600_000);
      st.after(() => kill(d));
      const streams = await openStreams(d.url, 3);
      const search = await inFlightSearch(d.url);
      const began = performance.now();
      d.child.kill('SIGTERM');

      // Still listening: a new connection is answered, health first says so. (The probes do
      // not ask for the connection to close: the server closes it, and says so.)
      let health: RawResponse;
      await until('health says the daemon is shutting down', async () => {
        const probe = rawRequest(d.url, 'GET', '/api/health', undefined, { keepAlive: true });
        health = await probe.response();
        if (health.status === 503) await within(probe.closed, 'the server closes the connection');
        else probe.socket.destroy(); // answered before the signal was handled
        return health.status === 503;
      });
      assert.deepEqual(JSON.parse(health!.body), { status: 'unavailable', reason: 'shutting down' });
      assert.equal(health!.headers.connection, 'close');
      for (const [path, body] of [
        ['/api/search', SEARCH],
        ['/api/stream_search', STREAM],
        ['/api/repos', undefined],
      ] as const) {
        const probe = rawRequest(d.url, body ? 'POST' : 'GET', path, body, { keepAlive: true });
        const r = await probe.response();
        assert.equal(r.status, 503, path);
        assert.equal(r.headers['retry-after'], '1', path);
        assert.equal(r.headers.connection, 'close', path);
        assert.equal(JSON.parse(r.body).errorCode, 'SERVICE_UNAVAILABLE', path);
        await within(probe.closed, `the server closes the connection (${path})`);
      }
      st.diagnostic(`health, search, stream and repos probes all answered 503 by ${(performance.now() - began).toFixed(0)} ms after SIGTERM`);

      search.finish();
      const answer = await search.closed;
      assert.equal(answer.status, 200, 'the search in flight finishes');
      assert.equal(answer.headers.connection, 'close', 'and the server closes its connection after it');
      const body = JSON.parse(answer.body) as { isSearchExhaustive: boolean; files: unknown[] };
      assert.equal(body.isSearchExhaustive, true);
      assert.equal(body.files.length, 1200);
      for (const s of streams) {
        const r = await s.closed;
        assert.ok(r.complete, 'a stream in flight is not cut');
        assert.match(r.body, /\n\ndata: \{"type":"final"[^\n]*"isSearchExhaustive":true\}\n\ndata: \[DONE\]\n\n$/, 'it finishes its search and says so');
      }
      assert.equal(await exited(d.child), 0);
      const took = performance.now() - began;
      st.diagnostic(`SIGTERM to exit: ${took.toFixed(0)} ms (deadline 600000 ms)`);
      await assert.rejects(refused(d.url), 'then nothing listens');
    });

    await t.test('a short drain (300 ms): what is still running or waiting gets a final error event and [DONE]; exit 0', async (st) => {
      const d = await start('short', 300);
      st.after(() => kill(d));
      const streams = await openStreams(d.url, 4);
      const search = await inFlightSearch(d.url);
      const began = performance.now();
      d.child.kill('SIGTERM');
      search.finish();
      const outcomes: string[] = [];
      for (const s of streams) {
        const r = await s.closed;
        assert.ok(r.complete, `a stream in flight at the deadline is ended, not cut: ${r.body.slice(-200)}`);
        assert.match(r.body, END);
        const last = JSON.parse(r.body.trimEnd().split('\n\n').at(-2)!.slice('data: '.length)) as {
          type: string;
          isSearchExhaustive?: boolean;
          error?: { statusCode: number; errorCode: string; message: string };
        };
        if (last.type === 'error') {
          assert.equal(last.error!.statusCode, 503);
          assert.equal(last.error!.errorCode, 'SERVICE_UNAVAILABLE');
          assert.match(last.error!.message, /shutting down/);
        } else {
          assert.equal(last.type, 'final');
          assert.equal(last.isSearchExhaustive, true, 'a stream that ends with its final message finished its search (a stopped one says why)');
        }
        outcomes.push(last.type);
      }
      st.diagnostic(`streams ended with: ${outcomes.join(', ')}`);
      assert.ok(outcomes.includes('error'), 'the streams outlasted the drain: some got the error event');
      const answer = await search.closed;
      st.diagnostic(`the blocking search in flight: ${answer.status}`);
      if (answer.status === 503) {
        assert.equal(JSON.parse(answer.body).errorCode, 'SERVICE_UNAVAILABLE', 'stopped at the deadline: told so, not given partial results');
        assert.equal(answer.headers['retry-after'], '1');
      } else {
        assert.equal(answer.status, 200);
        assert.equal((JSON.parse(answer.body) as { isSearchExhaustive: boolean }).isSearchExhaustive, true);
      }
      assert.equal(await exited(d.child), 0);
      const took = performance.now() - began;
      st.diagnostic(`SIGTERM to exit: ${took.toFixed(0)} ms (drain 300 ms, then up to 1000 ms for the last words)`);
      assert.ok(took < 10_000, 'the process exits soon after the deadline');
    });
  } finally {
    dir.cleanup();
  }
});

/** After a failed assertion: the daemon must not outlive its test. */
function kill(d: ServeProcess): void {
  if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill('SIGKILL');
}

/** The promise, or a failure naming what did not happen within 10 s. */
function within<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within 10 s: ${what}`)), 10_000)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Resolves if something accepts a connection at the URL's port, rejects if refused. */
function refused(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.destroy();
      resolve();
    });
    socket.on('error', reject);
  });
}
