// The search gate's admission: the totals, each caller's share of the running slots and of
// the queue, and freed slots handed to callers by turns.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SearchGate } from '../../daemon/http/gate.ts';
import { ServiceError } from '../../daemon/errors.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** Enters for `caller`, recording the order in which turns are given. */
function entering(gate: SearchGate, caller: string, order: string[], label = caller): Promise<() => void> {
  return gate.enter(caller).then((release) => {
    order.push(label);
    return release;
  });
}

test("a caller's first search runs at once, even when another caller holds every slot", async () => {
  const gate = new SearchGate({ concurrent: 2, queued: 10 });
  assert.equal(gate.perCaller, 2);
  const order: string[] = [];
  const a = await Promise.all([1, 2].map((i) => entering(gate, 'a', order, `a${i}`)));
  const a3 = entering(gate, 'a', order, 'a3');
  await tick();
  assert.deepEqual(order, ['a1', 'a2'], "a's third waits behind its own");
  const b = await entering(gate, 'b', order, 'b1');
  const c = await entering(gate, 'c', order, 'c1');
  assert.deepEqual(order, ['a1', 'a2', 'b1', 'c1'], 'b and c start at once, beyond the slots');
  // Twice the slots are running: a fourth caller's first search waits its turn.
  const d = entering(gate, 'd', order, 'd1');
  const b2 = entering(gate, 'b', order, 'b2');
  await tick();
  assert.deepEqual(order, ['a1', 'a2', 'b1', 'c1']);
  // Slots free up only once fewer than `concurrent` run; then callers by turns.
  a[0]!();
  b();
  c();
  await tick();
  // One left running: a's third takes a slot within them, and d's and b's searches, first
  // ones again, start beside it (under twice the slots).
  assert.deepEqual(order.slice(4), ['a3', 'd1', 'b2']);
  for (const r of [a[1]!, await a3, await d, await b2]) r();
});

test('a caller runs at most its share when it is set below the slots', async () => {
  const gate = new SearchGate({ concurrent: 4, queued: 10, perCaller: 2 });
  const order: string[] = [];
  const a = await Promise.all([1, 2].map((i) => entering(gate, 'a', order, `a${i}`)));
  const a3 = entering(gate, 'a', order, 'a3');
  const b = await entering(gate, 'b', order, 'b1');
  await tick();
  assert.deepEqual(order, ['a1', 'a2', 'b1']);
  a[0]!();
  await tick();
  assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3']);
  for (const r of [a[1]!, b, await a3]) r();
});

test('freed slots go to waiting callers by turns, not in arrival order', async () => {
  const gate = new SearchGate({ concurrent: 1, queued: 10 });
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  const enter = (caller: string, label: string) => void entering(gate, caller, order, label).then((r) => releases.set(label, r));
  const release = async (label: string) => {
    releases.get(label)!();
    await tick();
    await tick();
  };
  enter('a', 'a0');
  enter('z', 'z0');
  await tick();
  assert.deepEqual(order, ['a0', 'z0'], "z's first search runs beside a's");
  for (const [caller, label] of [
    ['a', 'a1'],
    ['a', 'a2'],
    ['a', 'a3'],
    ['b', 'b1'],
    ['c', 'c1'],
  ] as const)
    enter(caller, label);
  await tick();
  assert.deepEqual(order, ['a0', 'z0'], 'twice the slots run: the rest wait');
  await release('z0');
  assert.deepEqual(order.slice(2), ['b1'], "b's first search, beside a's");
  await release('b1');
  assert.deepEqual(order.slice(2), ['b1', 'c1']);
  await release('c1');
  assert.deepEqual(order.slice(2), ['b1', 'c1'], "a's next waits for a's first to end: one slot");
  await release('a0');
  await release('a1');
  await release('a2');
  await release('a3');
  assert.deepEqual(order, ['a0', 'z0', 'b1', 'c1', 'a1', 'a2', 'a3']);
});

test("a caller's share of the queue is refused beyond its bound, another caller still queues", async () => {
  const gate = new SearchGate({ concurrent: 1, queued: 4 });
  assert.equal(gate.perCallerQueued, 2);
  const order: string[] = [];
  const running = await gate.enter('a');
  const queued = [entering(gate, 'a', order, 'a1'), entering(gate, 'a', order, 'a2')];
  assert.throws(
    () => gate.enter('a'),
    (e: unknown) => e instanceof ServiceError && e.errorCode === 'SERVICE_UNAVAILABLE' && /of yours/.test(e.message),
  );
  const b1 = await gate.enter('b');
  const others = [entering(gate, 'b', order, 'b2'), entering(gate, 'c', order, 'c1')];
  assert.throws(
    () => gate.enter('d'),
    (e: unknown) => e instanceof ServiceError && e.errorCode === 'SERVICE_UNAVAILABLE' && /too many searches at once/.test(e.message),
  );
  running();
  b1();
  for (const p of [queued[0]!, others[0]!, others[1]!, queued[1]!]) (await p)();
  assert.deepEqual(order, ['a1', 'b2', 'c1', 'a2']);
});

test('a free slot is not taken past a caller waiting for it', async () => {
  const gate = new SearchGate({ concurrent: 2, queued: 10, perCaller: 2 });
  const order: string[] = [];
  const [a1, a2] = await Promise.all([entering(gate, 'a', order, 'a1'), entering(gate, 'a', order, 'a2')]);
  const b = entering(gate, 'b', order, 'b');
  a1();
  // Before the turn is passed on, a new request of a's may not jump the queue.
  const a3 = entering(gate, 'a', order, 'a3');
  await tick();
  await tick();
  assert.deepEqual(order, ['a1', 'a2', 'b']);
  a2();
  (await b)();
  (await a3)();
  assert.deepEqual(order, ['a1', 'a2', 'b', 'a3']);
});
