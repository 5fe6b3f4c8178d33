// The blocking search's sink (collect-sink.ts): it keeps the best `matches` ranges' worth
// of files by score, takes the workers' shaped files as they are, shapes on the main thread
// only a file its worker left unshaped or one the budget ends inside, and drops every file
// of a shard that fails its checks then, giving their budget back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ShardError } from '../../daemon/index/shard-error.ts';
import { CollectSink } from '../../daemon/search/collect-sink.ts';
import type { ShapedFile } from '../../daemon/search/file-json.ts';
import type { RepositoryInfo } from '../../daemon/search/types.ts';

const REPO: RepositoryInfo = { id: 1, codeHostType: 'genericGitHost', name: 'r', displayName: 'r', webUrl: 'http://x/r' };
const OTHER: RepositoryInfo = { id: 2, codeHostType: 'genericGitHost', name: 's', displayName: 's', webUrl: 'http://x/s' };

/** `total`: the hit's ranges when its worker cut it to `count`. */
function file(path: string, score: number, count: number, shard: number, shaped = true, repo = REPO, total = count): ShapedFile {
  return {
    json: shaped ? Buffer.from(JSON.stringify({ path, count })) : new Uint8Array(0),
    count,
    total,
    score,
    repositoryId: repo.id,
    repository: repo.name,
    path,
    hit: { doc: 0, member: 0, ranges: [], nameRanges: [], branches: [], termFreqs: [], score, definition: false },
    shard,
  };
}

/** A reshape that records its calls and gives `budget` ranges (or fails for the shards in `bad`). */
function recorder(bad = new Set<number>()) {
  const calls: Array<[string, number]> = [];
  const reshape = (f: ShapedFile, budget: number): ShapedFile => {
    calls.push([f.path, budget]);
    if (bad.has(f.shard)) throw new ShardError('/x', 'corrupt');
    const count = Math.min(budget, f.total);
    return { ...f, count, json: Buffer.from(JSON.stringify({ path: f.path, count })) };
  };
  return { calls, reshape };
}

const kept = (s: CollectSink) => s.files.map((f) => `${f.path}:${f.count}`);

const CASES: Array<{
  name: string;
  limit: number;
  shards: ShapedFile[][];
  bad?: number[];
  kept: string[];
  reshaped: Array<[string, number]>;
  crashes?: number;
  repos?: number[];
}> = [
  {
    name: 'shaped files within the budget are kept as they are, best first',
    limit: 10,
    shards: [[file('a', 1, 2, 0), file('b', 3, 2, 0)], [file('c', 2, 2, 1)]],
    kept: ['b:2', 'c:2', 'a:2'],
    reshaped: [],
  },
  {
    name: 'the file the budget ends inside is shaped again with the ranges left',
    limit: 5,
    shards: [[file('a', 3, 2, 0), file('b', 2, 4, 0)], [file('c', 1, 1, 1)]],
    kept: ['a:2', 'b:3'],
    reshaped: [['b', 3]],
  },
  {
    name: 'a file its worker cut to the ranges the answer has left is kept as it is',
    limit: 5,
    shards: [[file('a', 3, 2, 0), file('b', 2, 3, 0, true, REPO, 9)]],
    kept: ['a:2', 'b:3'],
    reshaped: [],
  },
  {
    name: 'a file its worker cut elsewhere than the answer is shaped again',
    limit: 6,
    shards: [[file('a', 3, 2, 0), file('b', 2, 3, 0, true, REPO, 9)]],
    kept: ['a:2', 'b:4'],
    reshaped: [['b', 4]],
  },
  {
    name: 'a file its worker left unshaped is shaped when the answer needs it',
    limit: 10,
    shards: [[file('a', 3, 2, 0), file('b', 2, 2, 0, false)], [file('c', 1, 2, 1, false)]],
    kept: ['a:2', 'b:2', 'c:2'],
    reshaped: [
      ['b', 8],
      ['c', 6],
    ],
  },
  {
    name: 'an unshaped file past the budget is never shaped',
    limit: 2,
    shards: [[file('a', 3, 2, 0), file('b', 2, 2, 0, false)]],
    kept: ['a:2'],
    reshaped: [],
  },
  {
    name: 'a shard failing its checks while shaping gives nothing, and its budget goes to the others',
    limit: 4,
    shards: [
      [file('a', 5, 2, 0), file('b', 4, 2, 0, false)],
      [file('c', 3, 2, 1), file('d', 2, 2, 1)],
    ],
    bad: [0],
    kept: ['c:2', 'd:2'],
    reshaped: [['b', 2]],
    crashes: 1,
  },
  {
    name: 'repositories are listed in the order the kept files first name them',
    limit: 10,
    shards: [[file('a', 1, 1, 0, true, REPO)], [file('b', 2, 1, 1, true, OTHER)]],
    kept: ['b:1', 'a:1'],
    reshaped: [],
    repos: [2, 1],
  },
];

for (const c of CASES) {
  test(`collect sink: ${c.name}`, async () => {
    const { calls, reshape } = recorder(new Set(c.bad ?? []));
    const sink = new CollectSink(c.limit, reshape);
    for (const files of c.shards) sink.take(files, [files[0]!.repositoryId === OTHER.id ? OTHER : REPO]);
    await sink.end();
    assert.deepEqual(kept(sink), c.kept);
    assert.deepEqual(calls, c.reshaped);
    assert.equal(sink.crashes, c.crashes ?? 0);
    assert.equal(
      sink.actual,
      sink.files.reduce((n, f) => n + f.count, 0),
    );
    if (c.repos)
      assert.deepEqual(
        sink.repositoryInfo.map((r) => r.id),
        c.repos,
      );
  });
}

test('collect sink: the files to shape again are asked at once, each with the ranges it will have left', async () => {
  // As a cluster's are (each a round trip to another node): all in flight together.
  let inFlight = 0;
  let most = 0;
  const calls: Array<[string, number]> = [];
  const reshape = async (f: ShapedFile, budget: number): Promise<ShapedFile> => {
    calls.push([f.path, budget]);
    most = Math.max(most, ++inFlight);
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
    const count = Math.min(budget, f.total);
    return { ...f, count, json: Buffer.from(JSON.stringify({ path: f.path, count })) };
  };
  const sink = new CollectSink(10, reshape);
  sink.take([file('a', 5, 3, 0, false), file('b', 4, 2, 0), file('c', 3, 4, 1, false), file('d', 2, 9, 1, false), file('e', 1, 1, 1, false)], [REPO]);
  await sink.end();
  assert.deepEqual(kept(sink), ['a:3', 'b:2', 'c:4', 'd:1']);
  assert.deepEqual(calls, [
    ['a', 10],
    ['c', 5],
    ['d', 1],
  ]);
  assert.equal(most, 3);
});
