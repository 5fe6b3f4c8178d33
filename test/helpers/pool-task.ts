// Search tasks as the pool tests write them: with the shards themselves, which startOn
// gives the pool as a catalog (SearchPool.catalog) before it starts the task.

import type { PoolRun, SearchPool } from '../../daemon/search/pool.ts';
import type { SearchTask, ShardRef } from '../../daemon/search/protocol.ts';

export type TestTask = Omit<SearchTask, 'catalog' | 'shards'> & { shards: ShardRef[] };

/** Starts `t` on `pool`, its shards given to the pool first (one catalog per run). */
export function startOn(pool: SearchPool, t: TestTask, cancel: SharedArrayBuffer, grant = t.shards.length, releasesFiles = false): PoolRun {
  const catalog = pool.catalog(t.shards);
  return pool.start({ ...t, catalog, shards: t.shards.map((_, i) => i) }, cancel, grant, releasesFiles);
}
