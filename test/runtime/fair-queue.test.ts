// The fair queue: callers' entries are taken by turns, each caller's in arrival order, and
// an owner the caller of shift() does not accept is passed over without losing its turn.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FairQueue } from '../../daemon/runtime/fair-queue.ts';

function drain<T>(q: FairQueue<T>, eligible?: (owner: string) => boolean): string[] {
  const out: string[] = [];
  for (let next = q.shift(eligible); next; next = q.shift(eligible)) out.push(`${next.owner}:${String(next.entry)}`);
  return out;
}

test('owners take turns; within an owner, first come first served', () => {
  const rows: Array<{ pushed: Array<[string, number]>; want: string[] }> = [
    { pushed: [], want: [] },
    { pushed: [['a', 1]], want: ['a:1'] },
    {
      pushed: [
        ['a', 1],
        ['a', 2],
        ['a', 3],
        ['b', 1],
      ],
      want: ['a:1', 'b:1', 'a:2', 'a:3'],
    },
    {
      pushed: [
        ['a', 1],
        ['b', 1],
        ['a', 2],
        ['c', 1],
        ['b', 2],
      ],
      want: ['a:1', 'b:1', 'c:1', 'a:2', 'b:2'],
    },
    {
      pushed: [
        ['b', 1],
        ['a', 1],
        ['a', 2],
        ['a', 3],
        ['a', 4],
        ['c', 1],
      ],
      want: ['b:1', 'a:1', 'c:1', 'a:2', 'a:3', 'a:4'],
    },
  ];
  for (const { pushed, want } of rows) {
    const q = new FairQueue<number>();
    for (const [owner, n] of pushed) q.push(owner, n);
    assert.equal(q.size, pushed.length);
    assert.deepEqual(drain(q), want, JSON.stringify(pushed));
    assert.equal(q.size, 0);
  }
});

test('an owner that is not eligible keeps its entries and its place', () => {
  const q = new FairQueue<number>();
  q.push('a', 1);
  q.push('a', 2);
  q.push('b', 1);
  assert.equal(
    q.any((o) => o === 'c'),
    false,
  );
  assert.equal(
    q.any((o) => o === 'b'),
    true,
  );
  assert.deepEqual(
    drain(q, (o) => o !== 'a'),
    ['b:1'],
  );
  assert.equal(q.countOf('a'), 2);
  assert.deepEqual(drain(q), ['a:1', 'a:2']);
});

test('remove takes one entry out and says whether it was there', () => {
  const q = new FairQueue<object>();
  const x = {};
  const y = {};
  q.push('a', x);
  q.push('a', y);
  assert.equal(q.remove('a', x), true);
  assert.equal(q.remove('a', x), false);
  assert.equal(q.remove('b', y), false);
  assert.equal(q.countOf('a'), 1);
  assert.equal(q.remove('a', y), true);
  assert.equal(q.size, 0);
  assert.equal(q.shift(), undefined);
});
