// docs/security-and-faults.md, row 8: many streaming searches whose clients disconnect
// mid-stream, then idle. A real `trawl serve` process over a corpus whose search streams
// many chunks: half the streams run, half wait for a turn; the clients stop reading once
// their stream has started (so running searches sit mid-stream, held back by their sockets,
// while the worker keeps going through their queued shard tasks), and once results are
// flowing they all reset their connections at once. Then every search stops (no shard task
// runs or waits for a worker, no turn at the search gate is held), and after a rest the
// process holds what it held before: resident memory within 10%, the same file descriptors
// and threads. Two protections are also checked on their own, where the order of events can
// be set exactly: a stopped search's queued shard tasks leave the pool at once, and a turn
// at the gate is not handed to a client that left in the same batch of disconnects.
//
// 50 streams by default; TRAWL_FAULTS_FULL=1 runs the full 200.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SearchGate } from '../../daemon/http/gate.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { SearchPool, type PoolRun } from '../../daemon/search/pool.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { memberRef, NO_SPECULATION, packr, shardRef, type ShardRef, type ShardReply } from '../../daemon/search/protocol.ts';
import { startOn, type TestTask } from '../helpers/pool-task.ts';
import type { ShapeOptions } from '../../daemon/search/file-json.ts';
import { tempDir } from '../helpers/corpus.ts';
import { haystackIndex as haystack, metrics, until } from '../helpers/haystack.ts';
import { formatStats, procStats, type ProcStats } from '../helpers/proc.ts';
import { rawRequest, type RawExchange } from '../helpers/raw-http.ts';
import { serve, stop } from '../helpers/serve.ts';

/** How the workers shape the hits (the request's defaults). */
const SHAPE: ShapeOptions = { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://localhost:3000' };

const STREAMS = process.env.TRAWL_FAULTS_FULL === '1' ? 200 : 50;
const QUERY = { query: 'needle_[0-9]+_[0-9]?7 ', isRegexEnabled: true, matches: 100000 };
/** Ten matching lines in each of the 1200 files: a 6 MB stream of a dozen chunks. */
const BODY = JSON.stringify(QUERY);
/** What "work left" is made of: shard tasks running and queued, searches running and queued. */
const WORK = ['trawl_search_workers_busy', 'trawl_search_shard_tasks_queued', 'trawl_searches_running', 'trawl_search_queue_length'];

const dir = tempDir('stream-disconnect');
after(() => dir.cleanup());
/** The haystack (once for this file), indexed in small shards: every search has a dozen shards. */
const haystackIndex = haystack(dir.path, 1200, 100, 1 << 20);

test(`${STREAMS} streaming searches whose clients disconnect mid-stream: the work stops at once, memory, fds and threads come back`, {
  timeout: 300_000,
}, async (t) => {
  const dataDir = await haystackIndex();
  const configPath = join(dir.path, 'trawl.json');
  const search = { maxConcurrent: STREAMS / 2, maxConcurrentPerCaller: STREAMS / 2, maxQueued: STREAMS, maxQueuedPerCaller: STREAMS };
  writeFileSync(configPath, JSON.stringify({ settings: { anonymousAccess: true, symbols: false, search } }));
  const daemon = await serve(['--data-dir', dataDir, '--config', configPath], dir.path);
  const pid = daemon.child.pid!;
  try {
    // Warm: the shards mapped and read, the code compiled, by one complete stream.
    const warm = await rawRequest(daemon.url, 'POST', '/api/stream_search', BODY).closed;
    assert.match(warm.body, /"type":"final".*\n\ndata: \[DONE\]\n\n$/s);
    t.diagnostic(`one stream: ${(warm.body.length / 1e6).toFixed(1)} MB, ${warm.body.split('"type":"chunk"').length - 1} chunks`);
    await new Promise((r) => setTimeout(r, 1000));
    const before = procStats(pid);
    t.diagnostic(`idle before: ${formatStats(before)}`);
    const SKIPPED = 'trawl_search_shards_skipped_total';
    const skippedBefore = (await metrics(daemon.url, [SKIPPED]))[SKIPPED]!;

    const chunk = (s: RawExchange) => s.text().includes('data: {"type":"chunk"');
    const streams: RawExchange[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const s = rawRequest(daemon.url, 'POST', '/api/stream_search', BODY);
      // A client that stops reading once it has what it came for first.
      s.socket.on('data', () => {
        if (chunk(s)) s.socket.pause();
      });
      streams.push(s);
    }
    await Promise.all(streams.map((s) => s.firstBytes));
    await until('results are flowing', () => streams.filter(chunk).length >= 3, 60_000);
    const load = await metrics(daemon.url, WORK);
    t.diagnostic(`at the disconnect: ${JSON.stringify(load)}; ${streams.filter(chunk).length} streams had results`);
    assert.ok(
      streams.every((s) => s.text().startsWith('HTTP/1.1 200')),
      'every stream was accepted',
    );
    assert.ok(
      load.trawl_searches_running! > 0 && load.trawl_search_queue_length! > 0 && load.trawl_search_shard_tasks_queued! > 0,
      'searches were running and waiting at the disconnect',
    );

    const cutAt = Date.now();
    for (const s of streams) s.socket.resetAndDestroy();
    await until(
      'no work left',
      async () => {
        const m = await metrics(daemon.url, WORK);
        return WORK.every((k) => m[k] === 0);
      },
      10_000,
    );
    // Every stream's request ends once its search has stopped (a search waits for its
    // running shard tasks): the last one's log line is when the last work ended.
    let lines: RequestLine[] = [];
    await until('every stream is logged', () => {
      lines = requestLines(daemon.stdout()).filter((l) => l.route === '/api/stream_search');
      return lines.length === STREAMS + 1; // and the warm one
    });
    const cut = lines.filter((l) => l.aborted === true);
    const idleMs = Math.max(...cut.map((l) => Date.parse(l.time))) - cutAt;
    const skipped = (await metrics(daemon.url, [SKIPPED]))[SKIPPED]! - skippedBefore;
    t.diagnostic(
      `disconnect to idle (the last stream's search stopped): ${idleMs} ms; ${cut.length} streams cut, ${STREAMS - cut.length} had finished before; ${skipped} shard tasks never ran`,
    );
    assert.ok(cut.length >= STREAMS / 2, 'most streams were cut mid-way');
    assert.ok(idleMs < 5000, `the work stopped within 5 s of the disconnect (${idleMs} ms)`);
    assert.ok(
      skipped >= load.trawl_search_shard_tasks_queued! / 2,
      `the shard tasks queued at the disconnect (${load.trawl_search_shard_tasks_queued}) were dropped, not run (${skipped} skipped)`,
    );

    // Rest, then compare: the daemon collects its heaps once its searches have been quiet
    // for a few seconds (runtime/idle-collector.ts); the test forces nothing.
    let after: ProcStats = procStats(pid);
    const rest = Date.now() + 20_000;
    while (Date.now() < rest) {
      await new Promise((r) => setTimeout(r, 1000));
      after = procStats(pid);
      if (after.rssKb <= before.rssKb * 1.1 && after.fds === before.fds && after.threads === before.threads) break;
    }
    t.diagnostic(`idle after: ${formatStats(after)} (rss ${(((after.rssKb - before.rssKb) / before.rssKb) * 100).toFixed(1)}% from before)`);
    assert.equal(after.fds, before.fds, 'no file descriptor leaked');
    assert.equal(after.threads, before.threads, 'no thread leaked');
    assert.ok(after.rssKb <= before.rssKb * 1.1, `resident memory back within 10% (${formatStats(before)} -> ${formatStats(after)})`);
    // And the daemon still answers a stream in full.
    const again = await rawRequest(daemon.url, 'POST', '/api/stream_search', BODY).closed;
    assert.match(again.body, /"type":"final".*\n\ndata: \[DONE\]\n\n$/s);
  } finally {
    await stop(daemon.child);
  }
});

test('a stopped search takes its queued shard tasks out of the pool at once', async () => {
  const dataDir = await haystackIndex();
  const pool = new SearchPool(1);
  try {
    const m = readAllManifests(dataDir)[0]!;
    const plan = packr.pack(planQuery({ ...QUERY }));
    const shard = (i: number): ShardRef => shardRef(join(shardsDir(dataDir, m.repoId), m.shards[i % m.shards.length]!.file), [memberRef(0, m.repoId)]);
    const task = (planId: number, ...ids: number[]): TestTask => ({
      planId,
      plan,
      limit: 100000,
      brute: false,
      shards: ids.map(shard),
      cut: { ranges: 100000, rankedRanges: 100000, loadedKiB: Infinity },
      batch: false,
      definitionsPastCut: false,
      shape: SHAPE,
      speculateFrom: NO_SPECULATION,
      caller: '',
    });
    const live = new SharedArrayBuffer(4);
    const gone = new SharedArrayBuffer(4);
    // Closing the pool after a failed assertion rejects what is still queued: not the failure to report.
    const start = (t: TestTask, cancel: SharedArrayBuffer, grant?: number): PoolRun => {
      const run = startOn(pool, t, cancel, grant);
      for (const r of run.replies) r.catch(() => {});
      return run;
    };
    const running = start(task(1, 0, 1), live);
    const settled: ShardReply[] = [];
    const leaving = start(task(2, 1, 2, 3, 4), gone);
    const dropped = leaving.replies.map((r) => r.then((x) => void settled.push(x)));
    assert.deepEqual(pool.load().queued, 6, 'every shard of both searches is granted and waits for the worker');
    Atomics.store(new Int32Array(gone), 0, 1);
    leaving.stop();
    // Microtasks only: no worker's answer can arrive in between, so this is the stop's doing.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    assert.ok(pool.load().queued <= 2, 'only the live search is still queued');
    assert.deepEqual(settled, [{ status: 'skipped' }, { status: 'skipped' }, { status: 'skipped' }, { status: 'skipped' }]);
    await Promise.all(dropped);
    // A search already stopped when it starts is not even queued.
    const late = start(task(3, 6), gone);
    assert.deepEqual(await late.replies[0], { status: 'skipped' });
    assert.deepEqual(
      (await Promise.all(running.replies)).map((r) => r.status),
      ['done', 'done'],
    );
    assert.deepEqual(pool.load(), { busy: 0, queued: 0 });

    // A grant holds the workers back: only the shards granted run, the next ones once granted.
    const held = start(task(4, 0, 1, 2), live, 1);
    assert.equal((await held.replies[0]).status, 'done');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(pool.load(), { busy: 0, queued: 0 }, 'nothing runs past the grant');
    held.grant(3);
    assert.deepEqual(
      (await Promise.all(held.replies)).map((r) => r.status),
      ['done', 'done', 'done'],
    );

    // Closing the pool (shutdown) ends what is still running or queued: a search waiting
    // for it finishes instead of hanging on a worker that is gone.
    const closing = new SearchPool(1);
    const open = startOn(closing, task(5, 0, 1), live).replies;
    await closing.close();
    const hung = new Promise((r) => setTimeout(() => r('still waiting'), 5000).unref());
    for (const reply of open) assert.deepEqual(await Promise.race([reply, hung]), { status: 'failed', error: 'search pool is closed', queuedNs: 0 });

    // The searcher drops them when the search's signal is aborted (its client left).
    const searcher = new Searcher({ dataDir, workers: 1 });
    const req = { ...QUERY, contextLines: 0, whole: false, isCaseSensitivityEnabled: false };
    const stays = searcher.search(req);
    const client = new AbortController();
    const leaves = searcher.search(req, { signal: client.signal });
    try {
      const shards = m.shards.length;
      // (The worker may already have claimed the first search's first shard.)
      assert.ok(searcher.load().queued >= 2 * shards - 1, 'both searches granted every shard up front');
      client.abort();
      assert.ok(searcher.load().queued <= shards, 'the search whose client left has nothing queued');
      assert.equal((await leaves).stats.shardsSkipped, shards);
      assert.equal((await stays).stats.shardsScanned, shards);
    } finally {
      await Promise.allSettled([stays, leaves]); // closing first would fail their queued tasks
      await searcher.close();
    }
  } finally {
    await pool.close();
  }
});

test('a search whose client left shapes none of the shard results already in hand', async () => {
  const dataDir = await haystackIndex();
  const searcher = new Searcher({ dataDir, workers: 1 });
  try {
    const req = { ...QUERY, contextLines: 0, whole: false, isCaseSensitivityEnabled: false };
    const whole = await searcher.search(req);
    const client = new AbortController();
    let sent = 0;
    const res = await searcher.search(req, {
      signal: client.signal,
      // The first batch's write is slow: meanwhile the worker answers for every shard.
      // Then the client goes away.
      onChunk: async (chunk) => {
        sent += chunk.stats.actualMatchCount;
        await until('every shard answered', () => searcher.load().busy === 0);
        client.abort();
        return false;
      },
    });
    assert.equal(whole.stats.actualMatchCount, 22800);
    // Shaped: the batch being sent at the abort (a shard or two), not the dozen in hand.
    assert.ok(
      res.stats.actualMatchCount >= sent && res.stats.actualMatchCount < whole.stats.actualMatchCount / 4,
      `nothing was shaped after the abort (${res.stats.actualMatchCount} of ${whole.stats.actualMatchCount} match ranges shaped, ${sent} sent)`,
    );
  } finally {
    await searcher.close();
  }
});

test('a turn at the search gate is not handed to a client that left in the same batch of disconnects', async () => {
  const changes: Array<[number, number]> = [];
  const gate = new SearchGate({ concurrent: 1, queued: 10 }, (running, waiting) => changes.push([running, waiting]));
  const outcome = (p: Promise<() => void>) =>
    p.then(
      (release) => ({ release, got: 'turn' as const }),
      () => ({ release: undefined, got: 'left' as const }),
    );
  const releaseA = await gate.enter('client');
  const b = new AbortController();
  const c = new AbortController();
  const turnB = outcome(gate.enter('client', b.signal));
  const turnC = outcome(gate.enter('client', c.signal));
  // One batch of I/O events: the running search's client leaves (its search ends and gives
  // the turn back), then the two queued ones' clients.
  releaseA();
  b.abort();
  c.abort();
  assert.deepEqual([(await turnB).got, (await turnC).got], ['left', 'left'], 'neither departed client got a turn');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(changes.at(-1), [0, 0], 'the gate is free');
  // A client still there gets the turn passed on (once the batch is handled).
  const releaseD = await gate.enter('client');
  const turnE = outcome(gate.enter('client'));
  releaseD();
  const e = await turnE;
  assert.equal(e.got, 'turn');
  e.release!();
  assert.deepEqual(changes.at(-1), [0, 0]);
});

interface RequestLine {
  msg: string;
  route?: string;
  aborted?: boolean;
  time: string;
}

function requestLines(stdout: string): RequestLine[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as RequestLine)
    .filter((l) => l.msg === 'request');
}
