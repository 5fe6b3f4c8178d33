// A search worker shares its time between callers (search-worker.ts): a costly search of
// one caller is suspended between two documents when another caller's search reaches the
// worker, which then runs first; the suspended shards resume where they stopped and give
// the answers they give alone.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { SearchPool, type PoolRun } from '../../daemon/search/pool.ts';
import { memberRef, NO_SPECULATION, packr, shardRef, type ShardReply } from '../../daemon/search/protocol.ts';
import { startOn, type TestTask } from '../helpers/pool-task.ts';
import type { ShapeOptions } from '../../daemon/search/file-json.ts';
import { tempDir } from '../helpers/corpus.ts';
import { haystackIndex as haystack } from '../helpers/haystack.ts';

const SHAPE: ShapeOptions = { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://localhost:3000' };

const dir = tempDir('worker-sharing');
after(() => dir.cleanup());

/** 1,500 files of 100 lines (~14 MB) in shards of ~1 MB. */
const haystackIndex = haystack(dir.path, 1500, 100, 1 << 20);

/** 64 two-character terms found nowhere: no trigram to rule a document out, every one scanned 64 times. */
const COSTLY = Array.from({ length: 64 }, (_, i) => `${'qrstuvw'[Math.floor(i / 10)]}${i % 10}`).join(' or ');
const CHEAP = '"needle_1234_7 "';

async function task(query: string, planId: number, caller: string): Promise<TestTask> {
  const dataDir = await haystackIndex();
  const m = readAllManifests(dataDir)[0]!;
  const plan = packr.pack(planQuery({ query, isCaseSensitivityEnabled: true }));
  const shards = m.shards.map((s) => shardRef(join(shardsDir(dataDir, m.repoId), s.file), [memberRef(0, m.repoId)]));
  return {
    planId,
    plan,
    limit: 1_000_000,
    brute: false,
    shards,
    cut: { ranges: 1e9, rankedRanges: 1e9, loadedKiB: Infinity },
    batch: true,
    definitionsPastCut: false,
    shape: SHAPE,
    speculateFrom: NO_SPECULATION,
    caller,
  };
}

const settled = (run: PoolRun): Promise<ShardReply[]> => Promise.all(run.replies);
const summary = (replies: ShardReply[]) => replies.map((r) => (r.status === 'done' ? `${r.result.found}/${r.result.counters.filesConsidered}` : r.status));

test("another caller's search runs while a costly one is suspended, and the costly one's answer is unchanged", async () => {
  const pool = new SearchPool(1);
  try {
    const costly = await task(COSTLY, 1, 'a');
    const cheap = await task(CHEAP, 2, 'b');
    // Alone, for reference (and so both plans' matchers exist in the worker).
    const t0 = performance.now();
    const alone = summary(await settled(startOn(pool, costly, new SharedArrayBuffer(4))));
    const aloneMs = performance.now() - t0;
    const cheapAlone = summary(await settled(startOn(pool, cheap, new SharedArrayBuffer(4))));
    assert.ok(
      cheapAlone.some((s) => s.startsWith('1/')),
      `the cheap query finds its line: ${cheapAlone.join(' ')}`,
    );

    // The costly search streams (a reply per shard), so that its first reply says it is
    // under way with most of its shards still to scan, whatever this machine's speed.
    const order: string[] = [];
    const costlyRun = startOn(pool, { ...costly, planId: 3, batch: false }, new SharedArrayBuffer(4));
    const a = settled(costlyRun).then((r) => (order.push('a'), r));
    await Promise.race(costlyRun.replies);
    const b = settled(startOn(pool, { ...cheap, planId: 4 }, new SharedArrayBuffer(4))).then((r) => (order.push('b'), r));
    const [shared, cheapShared] = await Promise.all([a, b]);
    assert.deepEqual(order, ['b', 'a'], `the cheap search waited for the costly one (alone it took ${aloneMs.toFixed(0)} ms)`);
    assert.deepEqual(summary(shared), alone, 'the suspended search answers as it does alone');
    assert.deepEqual(summary(cheapShared), cheapAlone);

    // The same caller's searches are taken in turn: the second waits for the first.
    const same: string[] = [];
    const firstRun = startOn(pool, { ...costly, planId: 5, batch: false }, new SharedArrayBuffer(4));
    const first = settled(firstRun).then(() => same.push('first'));
    await Promise.race(firstRun.replies);
    const second = settled(startOn(pool, { ...cheap, planId: 6, caller: 'a' }, new SharedArrayBuffer(4))).then(() => same.push('second'));
    await Promise.all([first, second]);
    assert.deepEqual(same, ['first', 'second']);
  } finally {
    await pool.close();
  }
});
