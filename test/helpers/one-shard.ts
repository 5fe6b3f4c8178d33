// A repository of a few files (path → text), indexed into a temporary directory and its
// first shard opened: for the tests of what is read from a shard.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { searchShard, type ShardHit } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { tempDir } from './corpus.ts';

export interface OneShard {
  shard: Shard;
  repoId: number;
  /** Removes the directory (the shard stays mapped until collected). */
  cleanup(): void;
}

export async function indexedShard(prefix: string, tree: Record<string, string | Buffer>): Promise<OneShard> {
  const dir = tempDir(prefix);
  try {
    for (const [path, text] of Object.entries(tree)) {
      mkdirSync(dirname(join(dir.path, 'tree', path)), { recursive: true });
      writeFileSync(join(dir.path, 'tree', path), text);
    }
    const dataDir = join(dir.path, 'data');
    await indexLocal(join(dir.path, 'tree'), { dataDir, workers: 1 });
    const m = readAllManifests(dataDir)[0]!;
    return { shard: Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file)), repoId: m.repoId, cleanup: () => dir.cleanup() };
  } catch (err) {
    dir.cleanup();
    throw err;
  }
}

/** The hits of a query in `shard` as a search worker finds them (their line tables located, no context asked). */
export function hitsOf(shard: Shard, query: string, isRegexEnabled: boolean, isCaseSensitivityEnabled: boolean): ShardHit[] {
  const plan = planQuery({ query, isRegexEnabled, isCaseSensitivityEnabled });
  const matchers = planTerms(plan).map((t) => new Matcher(t, 'indexed'));
  return searchShard(shard, { plan, matchers, limit: 1000, locate: { contextLines: 0 } }).hits;
}
