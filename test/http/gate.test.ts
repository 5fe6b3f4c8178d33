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

test('a caller runs at most its share; the slot left over goes to another caller at once', async () => {
  const gate = new SearchGate({ concurrent: 4, queued: 10 });
  assert.equal(gate.perCaller, 3);
  const order: string[] = [];
  const a = await Promise.all([1, 2, 3].map((i) => entering(gate, 'a', order, `a${i}`)));
  const a4 = entering(gate, 'a', order, 'a4');
  await tick();
  assert.deepEqual(order, ['a1', 'a2', 'a3'], "a's fourth waits behind its own");
  const b = await entering(gate, 'b', order);
  assert.deepEqual(order, ['a1', 'a2', 'a3', 'b'], 'b takes the slot a may not');
  a[0]!();
  await tick();
  assert.deepEqual(order.at(-1), 'a4');
  for (const r of [...a.slice(1), b, await a4]) r();
});

test('freed slots go to waiting callers by turns, not in arrival order', async () => {
  const gate = new SearchGate({ concurrent: 1, queued: 10 });
  const order: string[] = [];
  const releases = new Map<string, () => void>();
  const enter = (caller: string, label: string) => void entering(gate, caller, order, label).then((r) => releases.set(label, r));
  enter('a', 'a0');
  await tick();
  for (const [caller, label] of [['a', 'a1'], ['a', 'a2'], ['a', 'a3'], ['b', 'b1'], ['c', 'c1']] as const) enter(caller, label);
  // Each turn, the one running gives its slot back.
  for (let k = 0; k < 6; k++) {
    await tick();
    await tick();
    releases.get(order.at(-1)!)!();
  }
  assert.deepEqual(order, ['a0', 'a1', 'b1', 'c1', 'a2', 'a3']);
});

test("a caller's share of the queue is refused beyond its bound, another caller still queues", async () => {
  const gate = new SearchGate({ concurrent: 1, queued: 4 });
  assert.equal(gate.perCallerQueued, 2);
  const order: string[] = [];
  const running = await gate.enter('a');
  const queued = [entering(gate, 'a', order, 'a1'), entering(gate, 'a', order, 'a2')];
  assert.throws(() => gate.enter('a'), (e: unknown) => e instanceof ServiceError && e.errorCode === 'SERVICE_UNAVAILABLE' && /of yours/.test(e.message));
  const others = [entering(gate, 'b', order, 'b'), entering(gate, 'c', order, 'c')];
  assert.throws(() => gate.enter('d'), (e: unknown) => e instanceof ServiceError && e.errorCode === 'SERVICE_UNAVAILABLE' && /too many searches at once/.test(e.message));
  running();
  for (const p of [queued[0]!, others[0]!, others[1]!, queued[1]!]) (await p)();
  assert.deepEqual(order, ['a1', 'b', 'c', 'a2']);
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
