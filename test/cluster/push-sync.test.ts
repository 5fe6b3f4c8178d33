// Push webhooks and POST /api/repos/{id}/sync in a cluster: two daemons in this process
// (replication 2) on a private Redis and PostgreSQL, whose connection names a repository on
// this machine and takes a git server's signed push notices. A notice delivered to the node
// that does not lead is queued (202), builds the repository once (one job of it completes),
// and the push is searchable through that node, with its freshness in GET /api/repos and
// its push-to-searchable time in the node's metrics; the sync route with wait=true answers
// with the build's outcome.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { QUEUE_NAME } from '../../daemon/cluster/jobs.ts';
import { ClusterKeys } from '../../daemon/cluster/redis-keys.ts';
import { loadConfig } from '../../daemon/config/load.ts';
import type { Daemon } from '../../daemon/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { NodeLogs, startClusterBackends, startDaemons, stopCluster } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { delivery } from '../webhooks/deliveries.ts';

const SECRET = 'cluster-hook-secret-0123456789abcdef';
/** What the nodes logged: printed when the test fails. */
const logs = new NodeLogs();
const dir = tempDir('cluster-push');
const keys = new ClusterKeys(`push${process.pid}`);
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
const daemons: Daemon[] = [];
let repo: TestRepo;
let ownerKey = '';
let events: QueueEvents | undefined;
let eventsRedis: Redis | undefined;
/** The ids of the jobs that completed, in order. */
const completed: string[] = [];

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  repo = TestRepo.init(join(dir.path, 'repos', 'widgets'));
  repo.commit({ 'w.c': 'int widget_zero;\n' });
  const configPath = join(dir.path, 'cluster.json');
  // Long enough that a loaded machine does not move the leadership or count a node dead:
  // the new leader's listing, or a lost shard's rebuild, would add builds to those counted.
  const cluster = { store: await postgres.newDatabase(), redis: redis.url, replicationFactor: 2, name: keys.name, heartbeatMs: 1000, nodeTimeoutMs: 6000 };
  const connections = { local: { type: 'git', url: join(dir.path, 'repos', '*'), webhookSecret: { env: 'LOCAL_HOOK' } } };
  writeFileSync(configPath, JSON.stringify({ settings: { anonymousAccess: true, symbols: false }, cluster, connections }));
  ownerKey = await newUserKey('ops@example.com', ['--config', configPath], 'owner');
  eventsRedis = new Redis(redis.url, { maxRetriesPerRequest: null });
  events = new QueueEvents(QUEUE_NAME, { connection: eventsRedis, prefix: keys.queuePrefix });
  events.on('completed', ({ jobId }) => completed.push(jobId));
  await events.waitUntilReady();
  const config = loadConfig(configPath);
  await startDaemons(daemons, config, dir.path, ['a', 'b'], { env: { ...process.env, LOCAL_HOOK: SECRET } }, logs);
});

after(async () => {
  await events?.close();
  eventsRedis?.disconnect();
  await stopCluster({ daemons, stores: [], ...(redis ? { redis } : {}), ...(postgres ? { postgres } : {}), dir });
});

/** The repository as GET /api/repos on `d` lists it. */
async function listed(d: Daemon): Promise<Record<string, unknown> | undefined> {
  const res = await call(`${d.url}/api/repos`);
  return (res.json as Array<Record<string, unknown>>).find((r) => r.repoName === 'widgets');
}

async function found(d: Daemon, query: string): Promise<number> {
  const res = await call(`${d.url}/api/search`, { json: { query, matches: 10 } });
  return (res.json as { files: unknown[] }).files.length;
}

test('a push notice on the node that does not lead builds once and is searchable; the sync route waits for its outcome', { timeout: 120_000 }, (t) =>
  logs.printedOnFailure(t, async () => {
    if (skip) return t.skip(skip);
    const own = new Redis(redis!.url);
    t.after(() => own.disconnect());
    // The node that does not lead.
    const leads = await own.get(keys.leader);
    assert.ok(leads === 'a' || leads === 'b', String(leads));
    const b = daemons[leads === 'a' ? 1 : 0]!;
    await until('the first listing searchable through b', async () => (await found(b, 'widget_zero')) === 1);
    const id = (await listed(b))!.repoId as number;
    const job = `repo-${id}`;

    // The notice.
    const head = repo.commit({ 'w.c': 'int widget_one;\n' });
    const builtBefore = completed.filter((j) => j === job).length;
    const notice = delivery('git', { path: 'widgets', secret: SECRET });
    const answer = await call(`${b.url}/api/webhooks/git`, { method: 'POST', headers: notice.headers, body: notice.body });
    assert.equal(answer.status, 202, answer.text);
    assert.deepEqual(answer.json, { outcome: 'queued', event: 'push', repositories: ['widgets'] });
    await until('the push searchable through b', async () => (await found(b, 'widget_one')) === 1);
    let seen: Record<string, unknown> | undefined;
    await until('its freshness listed', async () => {
      seen = await listed(b);
      return seen?.indexedCommit === head && seen.lastEventSyncedAt !== undefined;
    });
    assert.ok(typeof seen!.eventLagSeconds === 'number' && seen!.eventLagSeconds < 30, JSON.stringify(seen));
    assert.ok(Date.parse(seen!.lastEventSyncedAt as string) >= Date.parse(seen!.lastEventAt as string));
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.equal(completed.filter((j) => j === job).length, builtBefore + 1, 'one build');
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    assert.match(metrics, /trawl_webhook_deliveries_total\{host="git",outcome="queued"\} 1/);
    assert.match(metrics, /trawl_webhook_push_to_searchable_seconds_count 1/);

    // The sync route, waiting.
    const next = repo.commit({ 'w.c': 'int widget_two;\n' });
    const waited = await call(`${b.url}/api/repos/${id}/sync?wait=true`, { method: 'POST', headers: { authorization: `Bearer ${ownerKey}` } });
    assert.equal(waited.status, 200, waited.text);
    // A build that started before the request may have read the commit (a repository on this
    // machine is read in place, its refs when it is built): the one that answers then finds
    // it indexed. test/cluster/asked-syncs.test.ts tells the two apart.
    const outcome = waited.json as Record<string, unknown>;
    assert.ok(outcome.outcome === 'indexed' || outcome.outcome === 'unchanged', waited.text);
    assert.deepEqual({ ...outcome, outcome: 'indexed', seconds: 0 }, { repoId: id, repoName: 'widgets', outcome: 'indexed', seconds: 0 });
    await until('the sync searchable through b', async () => (await found(b, 'widget_two')) === 1);
    await until('its commit listed', async () => (await listed(b))?.indexedCommit === next);
    const built = completed.filter((j) => j === job).length;
    const queued = await call(`${b.url}/api/repos/${id}/sync`, { method: 'POST', headers: { authorization: `Bearer ${ownerKey}` } });
    assert.equal(queued.status, 202, queued.text);
    await until('its build', () => completed.filter((j) => j === job).length === built + 1);
  }),
);
