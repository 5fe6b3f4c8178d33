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
