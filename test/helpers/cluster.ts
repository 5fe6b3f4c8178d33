// What a cluster test starts first: a private Redis and a private PostgreSQL (redis.ts,
// postgres.ts), or why the test is skipped when this machine has neither (CI requires
// them: TRAWL_REQUIRE_POSTGRES). The caller stops both in its `after` (stopCluster).

import { startTestPostgres, type TestPostgres } from './postgres.ts';
import { startTestRedis, type TestRedis } from './redis.ts';

export async function startClusterBackends(): Promise<{ redis: TestRedis; postgres: TestPostgres } | { skip: string }> {
  const redis = await startTestRedis();
  if ('skip' in redis) return redis;
  const postgres = await startTestPostgres();
  if ('skip' in postgres) {
    await redis.stop();
    return postgres;
  }
  return { redis, postgres };
}

/** Stops what a cluster test started, last started first, whatever failed before. */
export async function stopCluster(o: { daemons: Array<{ close(): Promise<void> }>; stores: Array<{ close(): Promise<void> | void }>; redis?: TestRedis; postgres?: TestPostgres; dir: { cleanup(): void } }): Promise<void> {
  for (const d of [...o.daemons].reverse()) await d.close().catch(() => {});
  for (const s of o.stores) await Promise.resolve(s.close()).catch(() => {});
  await o.redis?.stop();
  await o.postgres?.stop();
  o.dir.cleanup();
}
