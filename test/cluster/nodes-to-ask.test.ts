// Which node answers each unit of a fanned-out search (cluster/nodes-to-ask.ts): as few nodes as
// a greedy cover finds, this node first, ties to the units' preferred holders.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cover, spreadFirst } from '../../daemon/cluster/nodes-to-ask.ts';

const cases: Array<{ name: string; holders: string[][]; self: string; want: Record<string, number[]> }> = [
  { name: 'nothing to ask', holders: [], self: 'a', want: {} },
  {
    name: 'this node takes all it holds',
    holders: [
      ['b', 'a'],
      ['a', 'c'],
      ['c', 'b'],
    ],
    self: 'a',
    want: { a: [0, 1], c: [2] },
  },
  {
    name: 'one other node covers the rest',
    holders: [
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'c'],
    ],
    self: 'a',
    want: { c: [0, 1, 2] },
  },
  {
    name: 'one unit per node: its first holder',
    holders: [
      ['b', 'c'],
      ['d', 'b'],
    ],
    self: 'a',
    want: { b: [0, 1] },
  },
  {
    name: 'ties go to the holder the units rank first',
    holders: [
      ['c', 'b'],
      ['d', 'e'],
    ],
    self: 'a',
    want: { c: [0], d: [1] },
  },
  {
    name: 'equal ranks: the smaller id',
    holders: [
      ['c', 'b'],
      ['b', 'c'],
    ],
    self: 'a',
    want: { b: [0, 1] },
  },
  { name: 'units nobody holds are left out', holders: [[], ['b'], []], self: 'a', want: { b: [1] } },
  {
    name: 'greedy: the node with most units first',
    holders: [
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'c'],
      ['b', 'e'],
      ['e', 'b'],
    ],
    self: 'a',
    want: { b: [0, 3, 4], c: [1, 2] },
  },
];

for (const c of cases) {
  test(`cover: ${c.name}`, () => {
    const got = Object.fromEntries(cover(c.holders, c.self));
    assert.deepEqual(got, c.want);
  });
}

test('cover: every unit with a holder is answered once, by one of its holders', () => {
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
  const nodes = ['a', 'b', 'c', 'd', 'e'];
  for (let round = 0; round < 200; round++) {
    const holders = Array.from({ length: 1 + rnd(30) }, () => nodes.filter(() => rnd(3) === 0));
    const got = cover(holders, nodes[rnd(5)]!);
    const seen = new Map<number, string>();
    for (const [node, list] of got) {
      assert.deepEqual(
        list,
        [...list].sort((x, y) => x - y),
      );
      for (const i of list) {
        assert.equal(seen.has(i), false, `unit ${i} answered twice`);
        assert.ok(holders[i]!.includes(node));
        seen.set(i, node);
      }
    }
    holders.forEach((h, i) => assert.equal(seen.has(i), h.length > 0));
  }
});

const spreads: Array<{ name: string; holders: string[][]; first: number; out: Record<string, number[]>; want: Record<string, number[]> }> = [
  {
    name: 'the first units of one node go to another node asked that holds them',
    holders: [
      ['c', 'd'],
      ['c', 'd'],
      ['c', 'b'],
      ['d', 'c'],
    ],
    first: 3,
    out: { c: [0, 1, 2], d: [3] },
    want: { c: [0, 2], d: [1, 3] },
  },
  {
    name: 'no node is added',
    holders: [
      ['c', 'b'],
      ['c', 'b'],
      ['c', 'e'],
    ],
    first: 3,
    out: { c: [0, 1, 2] },
    want: { c: [0, 1, 2] },
  },
  {
    name: 'later units stay',
    holders: [
      ['c', 'd'],
      ['c', 'd'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    first: 1,
    out: { c: [0, 1, 2, 3], d: [] },
    want: { c: [0, 1, 2, 3], d: [] },
  },
  {
    name: 'as even as the holders allow',
    holders: [
      ['c', 'd'],
      ['c', 'd'],
      ['c', 'd'],
      ['c', 'd'],
      ['d', 'c'],
    ],
    first: 4,
    out: { c: [0, 1, 2, 3], d: [4] },
    want: { c: [0, 1], d: [2, 3, 4] },
  },
  {
    name: 'spread already',
    holders: [
      ['c', 'd'],
      ['d', 'c'],
    ],
    first: 2,
    out: { c: [0], d: [1] },
    want: { c: [0], d: [1] },
  },
  {
    name: 'this node keeps what it holds',
    holders: [
      ['a', 'c'],
      ['a', 'c'],
      ['d', 'c'],
    ],
    first: 3,
    out: { a: [0, 1], c: [2] },
    want: { a: [0, 1], c: [2] },
  },
];

for (const c of spreads) {
  test(`spreadFirst: ${c.name}`, () => {
    const out = new Map(Object.entries(c.out).map(([n, l]) => [n, [...l]]));
    spreadFirst(out, c.holders, 'a', (i) => i < c.first);
    assert.deepEqual(Object.fromEntries(out), c.want);
  });
}
