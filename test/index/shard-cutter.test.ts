import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutShards, cutShardsAsync } from '../../daemon/index/build-pool.ts';
import type { ShardFile } from '../../daemon/index/shard-builder.ts';

const files = (sizes: number[]): ShardFile[] => sizes.map((size, i) => ({ path: `f${i}`, size }));
const shape = (groups: ShardFile[][]) => groups.map((g) => g.map((f) => f.path).join(','));

// [sizes, target, max file size, groups]
const cases: Array<[number[], number, number, string[]]> = [
  [[], 10, 100, ['']], // an empty repository: one empty shard
  [[4, 4, 4], 10, 100, ['f0,f1', 'f2']],
  [[10, 1], 10, 100, ['f0', 'f1']],
  [[11], 10, 100, ['f0']], // a file larger than the target is a shard of its own
  [[5, 500, 5, 5], 10, 100, ['f0,f1,f2', 'f3']], // over the size limit: counts nothing (skipped)
  [[0, 0, 0], 1, 100, ['f0,f1,f2']],
];

test('cutShards and cutShardsAsync cut the same groups', async () => {
  for (const [sizes, target, max, want] of cases) {
    assert.deepEqual(shape(cutShards(files(sizes), target, max)), want, `${sizes} / ${target}`);
    const got: ShardFile[][] = [];
    async function* each() {
      yield* files(sizes);
    }
    for await (const g of cutShardsAsync(each(), target, max)) got.push(g);
    assert.deepEqual(shape(got), want, `async ${sizes} / ${target}`);
  }
});

// [sizes, target, max file size, groups]: cutShards folding a runt last group (under a
// quarter of the target) into the one before.
const folded: Array<[number[], number, number, string[]]> = [
  [[], 10, 100, ['']],
  [[4, 4, 4], 10, 100, ['f0,f1', 'f2']], // 4 is not under a quarter of 10
  [[8, 2], 10, 100, ['f0,f1']], // 8 + 2 fits: one group anyway
  [[9, 2], 10, 100, ['f0,f1']], // 2 is a runt: folded
  [[9, 3], 10, 100, ['f0', 'f1']], // 3 is not under 2.5
  [[10, 10, 1, 1], 10, 100, ['f0', 'f1,f2,f3']], // only the last group folds
  [[9, 500, 2], 10, 100, ['f0,f1,f2']], // over the size limit: counts nothing, the runt is 2
  [[11], 10, 100, ['f0']],
];

test('cutShards with foldRunt: a last group under a quarter of the target joins the one before', () => {
  for (const [sizes, target, max, want] of folded) assert.deepEqual(shape(cutShards(files(sizes), target, max, true)), want, `${sizes} / ${target}`);
});
