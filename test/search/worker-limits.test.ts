// Search workers run with a bounded heap: the pool starts every worker, the first ones
// and any replacement, with SEARCH_WORKER_LIMITS, so that no shard task can grow the
// daemon's anonymous memory past the bound.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { SearchPool } from '../../daemon/search/pool.ts';
import { SEARCH_WORKER_LIMITS } from '../../daemon/search/worker-limits.ts';

const workers = (pool: SearchPool) => (pool as unknown as { slots: Array<{ worker: Worker }> }).slots.map((s) => s.worker);

test('every search worker, a replacement too, runs with the heap bound', async () => {
  const pool = new SearchPool(2);
  try {
    const first = workers(pool);
    assert.equal(first.length, 2);
    for (const w of first) {
      assert.equal(w.resourceLimits?.maxOldGenerationSizeMb, SEARCH_WORKER_LIMITS.maxOldGenerationSizeMb);
      assert.equal(w.resourceLimits?.maxYoungGenerationSizeMb, SEARCH_WORKER_LIMITS.maxYoungGenerationSizeMb);
    }
    // A worker that dies is replaced, with the same bound.
    await first[0]!.terminate();
    let replacement: Worker | undefined;
    // Bounded by time (30 s), not by two seconds of polls a loaded machine's thread start can outlast.
    const deadline = Date.now() + 30_000;
    while (!replacement && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
      replacement = workers(pool).find((w) => !first.includes(w));
    }
    assert.ok(replacement, 'the dead worker was not replaced within 30 s');
    assert.equal(replacement.resourceLimits?.maxOldGenerationSizeMb, SEARCH_WORKER_LIMITS.maxOldGenerationSizeMb);
  } finally {
    await pool.close();
  }
});
