// A node that has copied a repository's published generation into a compound shard and not
// yet published the copy no longer holds the published file; asked for it (by the unit's
// generation) it answers from its copy, which holds the same documents. Here the whole
// search runs through the fan-out, this node the only holder: it stays exhaustive and finds
// what the published generation holds. A unit of another generation, or one that does not
// name its generation (a node of an older version), is not held.

import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ClusterCounters } from '../../daemon/cluster/counters.ts';
import { FanOut, type PlacedUnit } from '../../daemon/cluster/fan-out.ts';
import type { PeerLinks } from '../../daemon/cluster/peer-link.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { commitManifest, readAllManifests, readManifest, shardFiles, type ManifestShard } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const count = { inc() {} };
const counters = Object.fromEntries(
  [
    'remoteRequests',
    'remoteShards',
    'shardFailures',
    'shardRetries',
    'speculativeShards',
    'shardsAskedAgain',
    'filesCut',
    'filesShapedRemotely',
    'unavailableShards',
    'copiedShards',
    'copiedBytes',
    'copyFailures',
  ].map((k) => [k, count]),
) as unknown as ClusterCounters;

test('a copy committed here and not yet published answers for the generation it copied', async (t) => {
  const dir = tempDir('copy-stand-in');
  t.after(() => dir.cleanup());
  const repo = TestRepo.init(join(dir.path, 'widgets'));
  repo.commit({ 'w.c': 'int widget_marker;\n', 'x.c': 'int other;\n' });
  const dataDir = join(dir.path, 'data');
  await indexLocal(repo.path, { dataDir, symbols: false });
  const [published] = readAllManifests(dataDir);
  assert.ok(published?.version === 2 && published.shards.length === 1);
  const source = published.shards[0]!;

  // The copy: the same documents under another file, committed at a later generation that
  // names the generation it copied (as a pack job commits a member of a compound shard).
  const copyFile = `g${published.generation + 1}-0.trawl`;
  const from = shardFiles(dataDir, published.repoId, source);
  const renamed = (name: string) => name.replace(/^g\d+-/, `g${published.generation + 1}-`);
  const shard: ManifestShard = { ...source, file: copyFile };
  const repoDir = shardsDir(dataDir, published.repoId);
  copyFileSync(from.path, join(repoDir, copyFile));
  if (source.membership && from.membership) {
    shard.membership = renamed(source.membership);
    copyFileSync(from.membership, join(repoDir, shard.membership));
  }
  const { retired: _r, indexVersion: _v, fileBytes: _b, ...rest } = published;
  commitManifest(dataDir, { ...rest, generation: published.generation + 1, shards: [shard], copyOf: published.generation }, published);
  assert.equal(readManifest(dataDir, published.repoId)?.copyOf, published.generation);

  const searcher = new Searcher({ dataDir, workers: 1 });
  t.after(() => searcher.close());
  let units: PlacedUnit[] = [];
  const fanOut = new FanOut({
    self: 'a',
    searcher,
    links: {} as PeerLinks,
    urlOf: () => undefined,
    units: () => units,
    counters,
  });
  const unit = (u: Partial<PlacedUnit>): PlacedUnit => ({
    repoId: published.repoId,
    file: source.file,
    repository: published.repo!.name,
    visibility: 'public',
    holders: ['a'],
    ...u,
  });
  const req = { query: 'widget_marker', matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false };

  units = [unit({ generation: published.generation })];
  const answered = await fanOut.search(req);
  assert.equal(answered.isSearchExhaustive, true, JSON.stringify(answered.unavailableShards));
  assert.deepEqual(
    answered.files.map((f) => f.fileName.text),
    ['w.c'],
  );

  for (const other of [unit({}), unit({ generation: published.generation + 5 })]) {
    units = [other];
    const res = await fanOut.search(req);
    assert.equal(res.isSearchExhaustive, false, `generation ${other.generation}: not held`);
    assert.equal(res.unavailableShards?.[0]?.shard, source.file);
  }
});
