// What a cluster test starts first: a private Redis and a private PostgreSQL (redis.ts,
// postgres.ts), or why the test is skipped when this machine has neither (CI requires
// them: TRAWL_REQUIRE_POSTGRES). The caller stops both in its `after` (stopCluster).
// And for tests of `trawl serve` processes in a cluster: a node started, and its status.

import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { settled, type ClusterStatus } from '../../daemon/cluster/status.ts';
import type { Config } from '../../daemon/config/types.ts';
import { startDaemon, type Daemon, type DaemonOptions } from '../../daemon/daemon.ts';
import { silentHttpLogger, type HttpLogger } from '../../daemon/http/logging.ts';
import { call } from './daemon.ts';
import { startTestPostgres, type TestPostgres } from './postgres.ts';
import { startTestRedis, type TestRedis } from './redis.ts';
import { serve, type ServeProcess } from './serve.ts';

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
export async function stopCluster(o: {
  daemons: Array<{ close(): Promise<void> }>;
  stores: Array<{ close(): Promise<void> | void }>;
  redis?: TestRedis;
  postgres?: TestPostgres;
  dir: { cleanup(): void };
}): Promise<void> {
  for (const d of [...o.daemons].reverse()) await d.close().catch(() => {});
  for (const s of o.stores) await Promise.resolve(s.close()).catch(() => {});
  await o.redis?.stop();
  await o.postgres?.stop();
  o.dir.cleanup();
}

/** How many of the daemons' log lines NodeLogs keeps. */
const LOGGED_LINES = 300;

/**
 * What the daemons of a test logged, the last LOGGED_LINES lines, printed as the test's
 * diagnostics when it fails: a cluster test that fails on a loaded CI machine says what the
 * nodes saw (which node led, built, copied, failed a shard). Requests' own lines are left out.
 */
export class NodeLogs {
  readonly #lines: string[] = [];

  /** A logger for node `node`. */
  logger(node: string): HttpLogger {
    const line = (level: string, requests: boolean) => (fields: Record<string, unknown>, message: string) => {
      if (requests && level === 'info') return;
      this.#lines.push(`${new Date().toISOString()} ${node} ${level}: ${message} ${JSON.stringify(fields)}`);
      if (this.#lines.length > LOGGED_LINES) this.#lines.shift();
    };
    const of = (requests: boolean): HttpLogger => ({
      info: line('info', requests),
      warn: line('warn', requests),
      error: line('error', requests),
      child: () => of(true),
    });
    return of(false);
  }

  /** Runs a test's body; when it throws, the lines kept are the test's diagnostics first. */
  async printedOnFailure(t: TestContext, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (err) {
      t.diagnostic(`the daemons' last ${this.#lines.length} log lines:`);
      for (const l of this.#lines) t.diagnostic(l);
      throw err;
    }
  }
}

/**
 * Starts a daemon in this process as each node of `ids`, one after the other, its data dir
 * `<root>/<id>`; each is pushed to `into` as it starts (for stopCluster, whatever fails
 * later). With `logs`, each node logs there; otherwise nowhere.
 */
export async function startDaemons(
  into: Daemon[],
  config: Config,
  root: string,
  ids: readonly string[],
  extra: Partial<DaemonOptions> = {},
  logs?: NodeLogs,
): Promise<void> {
  for (const id of ids)
    into.push(
      await startDaemon({
        config,
        dataDir: join(root, id),
        host: '127.0.0.1',
        port: 0,
        logger: logs?.logger(id) ?? silentHttpLogger,
        workers: 1,
        nodeId: id,
        ...extra,
      }),
    );
}

/** Starts `trawl serve` as node `id` of the cluster `configPath` names, its data dir `<root>/<id>`; kept in `procs` under its id. */
export async function startNode(procs: Map<string, ServeProcess>, configPath: string, root: string, id: string): Promise<ServeProcess> {
  const p = await serve(['--config', configPath, '--data-dir', join(root, id), '--node-id', id]);
  procs.set(id, p);
  return p;
}

/** GET /api/cluster as an owner; undefined while the node cannot answer it. */
export async function clusterStatus(url: string, ownerKey: string): Promise<ClusterStatus | undefined> {
  const res = await call(`${url}/api/cluster`, { headers: { 'X-Sourcebot-Api-Key': ownerKey } }).catch(() => undefined);
  return res?.status === 200 ? (res.json as ClusterStatus) : undefined;
}

/** `live` nodes live, `repositories` repositories, every shard held by exactly its placement owners. */
export function placed(s: ClusterStatus | undefined, live: number, repositories: number): boolean {
  return s !== undefined && s.nodes.filter((n) => n.live).length === live && s.repositories.length === repositories && settled(s);
}
