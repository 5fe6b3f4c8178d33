// A shard's candidates capped by its match limit (candidates.ts, EXAMINE_PER_LIMIT) and
// refined once they turn out mostly false (REFINE_AFTER): the refined search examines
// fewer documents and answers exactly what the brute-force scan answers.
//
// The tree: 200 documents hold every trigram of `abcdxyz` and every 4-gram but `dxyz`
// (`abcdxyq wxyz`), so only the follow masks of `dxy` rule them out; 50 more hold `dxy`
// alone and 100 `xyz` alone (the last trigram, no follow bits to check), so that `dxy` is
// the list the cap leaves undecoded; 2 match. A tree with 60 such documents stays under
// the cap: its candidates are ruled out at once.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

/** A one-shard tree of `falses` documents ruled out by the masks of `dxy` alone, the fillers, and the 2 that match. */
async function build(root: string, falses: number): Promise<Shard> {
  const tree = join(root, 'tree');
  mkdirSync(tree, { recursive: true });
  // Documents of some size: a posting list is worth decoding for what reading them costs.
  const text = 'the quick brown fog jumps over the lazy hen\n'.repeat(50);
  for (let i = 0; i < falses; i++) writeFileSync(join(tree, `false-${String(i).padStart(3, '0')}.txt`), `line ${i}\nabcdxyq wxyz\n${text}`);
  for (let i = 0; i < 50; i++) writeFileSync(join(tree, `filler-${String(i).padStart(2, '0')}.txt`), `only dxy ${i}\n`);
  for (let i = 0; i < 100; i++) writeFileSync(join(tree, `xyz-${String(i).padStart(3, '0')}.txt`), `only xyz ${i}\n`);
  writeFileSync(join(tree, 'true-1.txt'), 'abcdxyz\n');
  writeFileSync(join(tree, 'true-2.txt'), 'x abcdxyz y\n');
  const dataDir = join(root, 'data');
  await indexLocal(tree, { dataDir, workers: 1 });
  const m = readAllManifests(dataDir)[0]!;
  assert.equal(m.shards.length, 1);
  return Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
}

const plan = planQuery({ query: 'abcdxyz', isRegexEnabled: false, isCaseSensitivityEnabled: true });
const run = (shard: Shard, limit: number, useIndex: boolean) =>
  searchShard(shard, { plan, matchers: planTerms(plan).map((t) => new Matcher(t, 'indexed')), limit, useIndex });

test('capped candidates that turn out false are refined by the follow masks, with the oracle’s answer', async () => {
  const dir = tempDir('follow-refine');
  try {
    const shard = await build(join(dir.path, 'many'), 200);
    for (const limit of [1, 3, 10, 1000]) {
      const indexed = run(shard, limit, true);
      const brute = run(shard, limit, false);
      const names = (r: typeof indexed) => r.hits.map((h) => shard.name(h.doc)).sort();
      assert.deepEqual(names(indexed), ['true-1.txt', 'true-2.txt'], `limit ${limit}`);
      assert.deepEqual(names(indexed), names(brute), `limit ${limit}`);
      assert.deepEqual(
        indexed.hits.map((h) => h.ranges),
        brute.hits.map((h) => h.ranges),
        `limit ${limit}`,
      );
      // Capped (202 candidates: more than 4 × (limit + 1), or than 128 whatever the limit):
      // 64 examined (REFINE_AFTER), nearly all false, then refined, and of the other 138 only
      // the true ones are read. Without the refinement all 202 would be; uncapped, only 2.
      const examined = indexed.counters.filesConsidered;
      assert.ok(examined >= 64 && examined <= 66, `limit ${limit}: ${examined} documents examined`);
      assert.equal(indexed.counters.ngramMatches, indexed.counters.filesConsidered, `limit ${limit}: the candidates left are the ones examined`);
    }
    // Few candidates (62) and a limit that covers them: no cap, the masks rule the false
    // ones out at once.
    const few = await build(join(dir.path, 'few'), 60);
    const uncapped = run(few, 1000, true);
    assert.equal(uncapped.counters.filesConsidered, 2);
    assert.deepEqual(uncapped.hits.map((h) => few.name(h.doc)).sort(), ['true-1.txt', 'true-2.txt']);
  } finally {
    dir.cleanup();
  }
});
