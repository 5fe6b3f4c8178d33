// The idle collector: once per burst of work, after the work has been quiet for its time;
// the heap collection and the C heap trim it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdleCollector } from '../../daemon/runtime/idle-collector.ts';
import { collectHeap } from '../../daemon/runtime/collect-heap.ts';
import { HEAP_TRIM_ADDON, trimHeap } from '../../daemon/runtime/heap-trim.ts';
import { existsSync } from 'node:fs';

test('collects once, quietMs after the last work ends; new work puts it off', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let runs = 0;
  const idle = new IdleCollector(1000, () => runs++);
  idle.quiet();
  t.mock.timers.tick(5000);
  assert.equal(runs, 0, 'no work, nothing to collect');
  idle.busy();
  idle.quiet();
  t.mock.timers.tick(999);
  assert.equal(runs, 0);
  idle.busy(); // work again before the time is up
  t.mock.timers.tick(5000);
  assert.equal(runs, 0, 'not while work runs');
  idle.quiet();
  idle.quiet(); // a second "quiet" does not start a second timer
  t.mock.timers.tick(1000);
  assert.equal(runs, 1);
  t.mock.timers.tick(60_000);
  assert.equal(runs, 1, 'once per burst, not every quietMs');
  idle.busy();
  idle.quiet();
  idle.close();
  t.mock.timers.tick(5000);
  assert.equal(runs, 1, 'a closed collector runs nothing');
});

test('collectHeap collects this thread and gives no gc to code that did not ask for one', async () => {
  const held = new WeakRef({ big: new Array(1000).fill(0) });
  // A WeakRef holds its target until the job that made it ends.
  await new Promise((r) => setImmediate(r));
  collectHeap();
  assert.equal(held.deref(), undefined, 'an unreachable object is gone');
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined');
});

test('trimHeap gives free C heap pages back where glibc is (the addon setup builds)', () => {
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  const trimmed = trimHeap();
  if (glibc) {
    assert.ok(existsSync(HEAP_TRIM_ADDON), `setup built ${HEAP_TRIM_ADDON}`);
    assert.equal(typeof trimmed, 'boolean');
  } else {
    assert.ok(trimmed === null || trimmed === false);
  }
});
