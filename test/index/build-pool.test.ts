// BuildPool (index/build-pool.ts) on stand-in threads that answer after a delay: shard
// jobs before symbols jobs, the costliest symbols job first, results in job order, and a
// failing symbols job failing the symbols only.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { BuildPool, symbolsCost } from '../../daemon/index/build-pool.ts';
import type { BuildRequest } from '../../daemon/index/build-worker.ts';
import type { ShardJob } from '../../daemon/index/shard-builder.ts';
import type { SymbolsJob } from '../../daemon/index/symbols-pass.ts';

/** A stand-in thread: answers each job after `ms(job)` milliseconds; `fail` names jobs answered with an error. */
class FakeThread extends EventEmitter {
  constructor(
    private readonly log: string[],
    private readonly ms: (name: string) => number,
    private readonly fail: Set<string>,
  ) {
    super();
  }

  postMessage(req: BuildRequest): void {
    const name = 'symbols' in req ? `symbols:${req.symbols.from}` : `content:${req.job.finalPath}`;
    this.log.push(`start ${name}`);
    setTimeout(() => {
      this.log.push(`done ${name}`);
      if (this.fail.has(name)) this.emit('message', { id: req.id, type: 'error', message: `${name} failed` });
      else if ('symbols' in req)
        this.emit('message', { id: req.id, type: 'symbols-done', symbolCount: Number(req.symbols.from.slice(1)), symbolFailures: 0, symbolsReused: 0 });
      else
        this.emit('message', {
          id: req.id,
          type: 'done',
          docCount: req.job.shardIndex,
          contentBytes: 0,
          totalBytes: 0,
          skipped: [],
          symbolCount: 0,
          symbolFailures: 0,
        });
    }, this.ms(name));
  }
}

const shardJob = (i: number): ShardJob => ({
  finalPath: `s${i}`,
  repo: {} as ShardJob['repo'],
  shardIndex: i,
  files: [],
  maxFileSize: 1,
  maxTrigrams: 1,
  indexedAt: '',
  branches: [],
});
const symbolsJob = (i: number): SymbolsJob => ({ from: `s${i}`, finalPath: `y${i}` });

async function* slowly(jobs: ShardJob[]): AsyncIterable<ShardJob> {
  for (const j of jobs) {
    await new Promise((r) => setTimeout(r, 2));
    yield j;
  }
}

function pool(threads: number, ms: (name: string) => number, fail: string[] = []) {
  const log: string[] = [];
  const workers = Array.from({ length: threads }, () => new FakeThread(log, ms, new Set(fail)) as unknown as Worker);
  return { pool: new BuildPool(workers), log };
}

test('shard jobs go first; a thread with none left takes the costliest symbols job; results in job order', async () => {
  const { pool: p, log } = pool(2, (name) => (name === 'content:s0' ? 60 : 10));
  const costs = [5, 50, 20, 40, 30];
  const content = p.content(
    slowly([0, 1, 2, 3, 4].map(shardJob)),
    () => {},
    (job) => p.addSymbols(symbolsJob(job.shardIndex), costs[job.shardIndex]),
  );
  const results = await content;
  assert.deepEqual(
    results.map((r) => r.docCount),
    [0, 1, 2, 3, 4],
  );
  const symbols = await p.symbols();
  // In the order the jobs were queued (as each shard was built), whatever order they ran in.
  const queued = log.filter((l) => l.startsWith('done content')).map((l) => Number(l.slice('done content:s'.length)));
  assert.deepEqual(
    symbols.map((r) => r.symbolCount),
    queued,
  );
  const starts = log.filter((l) => l.startsWith('start'));
  // No symbols job starts before the last shard job has.
  const lastContent = starts.findLastIndex((l) => l.startsWith('start content'));
  assert.ok(starts.findIndex((l) => l.startsWith('start symbols')) > lastContent, starts.join('\n'));
  // Each symbols job started was the costliest of those waiting then (queued, as their
  // shard was built, and not yet started), whatever the timing of the threads.
  const waiting = new Set<number>();
  for (const l of log) {
    const m = /^(start|done) (content|symbols):s(\d+)$/.exec(l)!;
    const i = Number(m[3]);
    if (m[1] === 'done' && m[2] === 'content') waiting.add(i);
    if (m[1] === 'start' && m[2] === 'symbols') {
      assert.equal(i, [...waiting].sort((a, b) => costs[b]! - costs[a]!)[0], `${l} with ${[...waiting]} waiting`);
      waiting.delete(i);
    }
  }
  const order = starts.filter((l) => l.startsWith('start symbols'));
  assert.equal(order.length, 5);
});

test('a failing symbols job fails the symbols, not the content; a failing shard job fails the content', async () => {
  {
    const { pool: p } = pool(2, () => 5, ['symbols:s1']);
    const content = p.content(
      slowly([0, 1, 2, 3].map(shardJob)),
      () => {},
      (job) => p.addSymbols(symbolsJob(job.shardIndex), 1),
    );
    assert.deepEqual(
      (await content).map((r) => r.docCount),
      [0, 1, 2, 3],
    );
    await assert.rejects(p.symbols(), /symbols:s1 failed/);
  }
  {
    const { pool: p } = pool(2, () => 5, ['content:s2']);
    await assert.rejects(
      p.content(slowly([0, 1, 2, 3].map(shardJob)), () => {}),
      /content:s2 failed/,
    );
  }
});

test("symbolsCost counts the bytes of files for ctags thrice, the scanners' and JSON once, too-large ones not at all", () => {
  const files = [
    { path: 'a.c', size: 100 },
    { path: 'b.h', size: 10 },
    { path: 'Documentation/x.rst', size: 50 },
    { path: 'arch/x.dts', size: 7 },
    { path: 'tools/perf/events.json', size: 1000 },
    { path: 'huge.rst', size: 5000 },
  ];
  assert.equal(symbolsCost(files, 4096), 100 + 10 + 150 + 7 + 1000);
});
