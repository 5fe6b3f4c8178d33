// The threads that do bulk work run below the event loop's priority (runtime/thread-priority.ts):
// a search pool's worker threads and a planner's threads are niced, the main thread is not.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { BULK_WORK_NICE } from '../../daemon/runtime/thread-priority.ts';
import { Planner } from '../../daemon/search/planner.ts';
import { SearchPool } from '../../daemon/search/pool.ts';

/** The nice value of each thread of this process, by thread id. */
function niceByThread(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

const niced = () => [...niceByThread().values()].filter((n) => n === BULK_WORK_NICE).length;

test('search workers and planner threads run niced, the main thread does not', { skip: process.platform !== 'linux' }, async () => {
  const before = niced();
  const pool = new SearchPool(2);
  const planner = new Planner({ threads: 2 });
  try {
    await planner.plan({ query: 'warm' }, 'a');
    // The workers lower their priority as they start: wait for both (bounded by time, 30 s,
    // not by a count of polls a loaded machine's slow thread starts can outlast).
    const deadline = Date.now() + 30_000;
    while (niced() < before + 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.equal(niced() - before, 4, 'two search workers and two planner threads');
    assert.equal(niceByThread().get(process.pid), 0, 'the main thread keeps its priority');
  } finally {
    await pool.close();
    await planner.close();
  }
});
