// A cluster whose nodes all stop and come back one by one builds nothing again: the first
// listing after the restart runs while only some nodes are back, so some shards have no
// live holder yet, and that is not a lost shard (the replicator decides that, after its
// grace, and asks for a rebuild: ClusterSyncScheduler.requeue). Before, the listing's job
// saw the shards without a holder and built every repository again, a new generation at
// every restart (a four-node Linux cluster: one full build per restart).
//
// Three `trawl serve` processes (replication 2) on a private PostgreSQL and Redis, four git
// repositories; all three stopped; one restarted and left alone until its listing's jobs
// have run (each repository's last success recorded after the restart), then the others:
// every repository keeps its generation, and every shard regains its two holders.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { newUserKey } from '../helpers/cli-users.ts';
import type { ClusterStatus } from '../../daemon/cluster/status.ts';
import { openPgStore } from '../../daemon/store/pg-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { generateCorpus, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { clusterStatus, placed, startClusterBackends, startNode } from '../helpers/cluster.ts';
import { stop, type ServeProcess } from '../helpers/serve.ts';

const REPOS = 4;
const dir = tempDir('cluster-restart');
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let store: Store | undefined;
let skip: string | undefined;
let configPath = '';
let ownerKey = '';
const procs = new Map<string, ServeProcess>();

const start = (id: string): Promise<ServeProcess> => startNode(procs, configPath, dir.path, id);
const status = (url: string): Promise<ClusterStatus | undefined> => clusterStatus(url, ownerKey);

const generations = (s: ClusterStatus): Record<string, number> => Object.fromEntries(s.repositories.map((r) => [r.repository, r.generation]));

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  for (let i = 0; i < REPOS; i++) {
    const root = join(dir.path, 'repos', `r${i}`);
    generateCorpus(root, 300 + i, 30);
    TestRepo.init(root).commit({}, 'import');
  }
  configPath = join(dir.path, 'cluster.json');
  const storeUrl = await postgres.newDatabase();
  // The node restarted alone rebuilds a shard no live node holds once its start-up graces
  // (three node timeouts, counted from its start) are over, as it should. Everything the
  // test waits for must come before: its listing's jobs, then the two other nodes' start and
  // their holdings, which on a loaded machine (a fresh clone's suite, two files at a time)
  // can take well over 10 s: a 20 s timeout gives it a minute.
  // Stopped nodes leave the cluster at once, so nothing here waits for a timeout.
  const cluster = { store: storeUrl, redis: redis.url, replicationFactor: 2, name: `rt${process.pid}`, heartbeatMs: 250, nodeTimeoutMs: 20_000 };
  writeFileSync(
    configPath,
    JSON.stringify({
      settings: { anonymousAccess: true, symbols: false },
      cluster,
      connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } },
    }),
  );
  ownerKey = await newUserKey('ops@example.com', ['--config', configPath], 'owner');
  store = openPgStore(storeUrl);
  await Promise.all(['a', 'b', 'c'].map(start));
});

after(async () => {
  await Promise.all([...procs.values()].map((p) => stop(p.child)));
  await store?.close();
  await redis?.stop();
  await postgres?.stop();
  dir.cleanup();
});

/** The node's JSON log lines (the last 200: a few per job), as diagnostics of test `t`. */
function logLines(t: { diagnostic(message: string): void }, node: string, log: string): void {
  const lines = log.split('\n').filter((l) => l !== '');
  for (const line of lines.slice(-200)) t.diagnostic(`node ${node}: ${line}`);
}

/** Whether two repositories' generations are the same (whatever order the statuses list them in). */
const sameGenerations = (a: Record<string, number>, b: Record<string, number>): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, v]) => b[k] === v);

test('nodes restarted one by one build nothing again', async (t) => {
  if (skip) return t.skip(skip);
  let before: ClusterStatus | undefined;
  // (The small repositories are copied into a compound shard once built: the generations to keep are theirs there.)
  const packed = (s: ClusterStatus | undefined): boolean => !!s && s.repositories.every((r) => r.shards.every((sh) => /^p\d+-\d+\.trawl$/.test(sh.shard)));
  // Packing comes in rounds: packs made by jobs that ran apart are small and merged by a
  // later plan (a new generation of their repositories). The state to keep is the one that
  // stopped moving: the same shards and generations for STILL_MS, far more than a plan's
  // heartbeat and a merge job on a loaded machine.
  const STILL_MS = 4_000;
  let shape = '';
  let since = Date.now();
  await until(
    'three nodes, every repository in a compound shard on its two owners, and nothing moving',
    async () => {
      before = await status(procs.get('a')!.url);
      if (!placed(before, 3, REPOS) || !packed(before)) return false;
      const now = JSON.stringify(before!.repositories.map((r) => [r.repository, r.generation, r.shards.map((sh) => sh.shard)]).sort());
      if (now !== shape) [shape, since] = [now, Date.now()];
      return Date.now() - since >= STILL_MS;
    },
    120_000,
  );
  const was = generations(before!);

  // Stopped as an operator stops them (SIGTERM): each leaves the cluster at once.
  await Promise.all([...procs.values()].map((p) => stop(p.child)));
  procs.clear();
  const restartedAt = new Date().toISOString();

  // One node alone: it leads, lists, and runs every repository's job while the shards
  // the other two held have no live holder.
  await start('a');
  await until(
    'every repository synced again by the node restarted first',
    async () => {
      const repos = await store!.listRepos({});
      return repos.length === REPOS && repos.every((r) => r.lastSuccessAt !== undefined && r.lastSuccessAt > restartedAt);
    },
    120_000,
  );
  const alone = await status(procs.get('a')!.url);
  // When it did, what the node logged says why (a build, a pack merge, a reclaim): its log
  // goes with the failure.
  if (!sameGenerations(generations(alone!), was)) logLines(t, 'a', procs.get('a')!.stdout());
  assert.deepEqual(generations(alone!), was, 'the lone node built no new generation');

  await Promise.all(['b', 'c'].map(start));
  let s: ClusterStatus | undefined;
  await until('three nodes again, every shard on its two owners', async () => placed((s = await status(procs.get('c')!.url)), 3, REPOS), 120_000);
  if (!sameGenerations(generations(s!), was)) for (const [id, p] of procs) logLines(t, id, p.stdout());
  assert.deepEqual(generations(s!), was, 'no repository was built again');
});
