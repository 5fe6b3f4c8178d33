// The shared slice clock: one waiting task a turn of the event loop, in the order they
// asked, and a slice spent once SLICE_MS of it has passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { nextSlice, SLICE_MS, sliceUsed } from '../../daemon/runtime/time-slices.ts';

test('tasks waiting for a slice get one each, a turn of the event loop apart, first come first served', async () => {
  // A probe that counts turns: a setImmediate callback runs once in each turn's check phase.
  let turn = 0;
  let probing = true;
  const probe = () => {
    turn++;
    if (probing) setImmediate(probe);
  };
  setImmediate(probe);
  const granted: Array<{ task: number; turn: number }> = [];
  await Promise.all(
    [0, 1, 2, 3, 4].map(async (task) => {
      await nextSlice();
      granted.push({ task, turn });
    }),
  );
  probing = false;
  assert.deepEqual(
    granted.map((g) => g.task),
    [0, 1, 2, 3, 4],
  );
  for (let i = 1; i < granted.length; i++)
    assert.ok(granted[i]!.turn > granted[i - 1]!.turn, `slices ${i - 1} and ${i} came in the same turn: ${JSON.stringify(granted)}`);
});

test('a slice is spent once SLICE_MS of it has passed, not before', async () => {
  await nextSlice();
  assert.equal(sliceUsed(), false, 'a slice just granted');
  const start = performance.now();
  while (performance.now() - start < SLICE_MS) {
    // busy: the slice runs out
  }
  assert.equal(sliceUsed(), true);
});
