// The counting semaphore (runtime/slots.ts): turns in order, a release given twice counts
// once, and a wait its signal aborts takes no turn.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Slots } from '../../daemon/runtime/slots.ts';

test('at most `count` turns at once, granted in the order asked; a second release does nothing', async () => {
  const slots = new Slots(2);
  const order: string[] = [];
  const a = await slots.take();
  const b = await slots.take();
  const c = slots.take().then((r) => (order.push('c'), r));
  const d = slots.take().then((r) => (order.push('d'), r));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'both turns are held');
  a();
  a();
  const releaseC = await c;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['c'], 'the release given twice handed on one turn');
  b();
  (await d)();
  releaseC();
  // Both turns free again: two takes at once need no wait.
  const [x, y] = await Promise.all([slots.take(), slots.take()]);
  x();
  y();
});

test('a wait aborted before its turn is rejected with the given error and takes none', async () => {
  const slots = new Slots(1);
  const held = await slots.take();
  const controller = new AbortController();
  const waiting = slots.take(controller.signal, () => new Error('gone'));
  controller.abort();
  await assert.rejects(waiting, /gone/);
  await assert.rejects(slots.take(controller.signal), /cancelled/, 'an aborted signal is refused at once');
  held();
  const next = await slots.take();
  next();
});
