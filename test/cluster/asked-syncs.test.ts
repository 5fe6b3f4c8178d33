// Syncs of single repositories asked for in a cluster (a push, POST /api/repos/{id}/sync:
// cluster/asked-syncs.ts), on a private Redis and PostgreSQL: two nodes in this process
// (two ClusterSyncSchedulers with their own data dirs and store connections), fetching
// their repositories over smart HTTP (a repository on this machine would be read in place,
// its refs read after the point where the test holds a build). A request on the node that
// does not lead builds the repository once and is answered there; a burst of requests from
// both nodes, on a busy queue, is one build; a request made while the repository's job runs gets exactly one
// build after it, which holds the commit made meanwhile; a listing asked on the node that
// does not lead is run by the leader. Never two builds of a repository at once. And a
// node's requests without their build's message: answered from the outcome recorded, or
// their job queued again, then answered failed at their deadline.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import { ClusterAskedSyncs } from '../../daemon/cluster/asked-syncs.ts';
import { ClusterSyncScheduler } from '../../daemon/cluster/cluster-sync.ts';
import { QUEUE_NAME } from '../../daemon/cluster/jobs.ts';
import { ClusterKeys } from '../../daemon/cluster/redis-keys.ts';
import { SyncAnswers } from '../../daemon/cluster/sync-answers.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import type { Config } from '../../daemon/config/types.ts';
import { silentLogger } from '../../daemon/runtime/logger.ts';
import { connectPgStore } from '../../daemon/store/pg-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import type { SyncEvent } from '../../daemon/sync/sync.ts';
import { startClusterBackends, stopCluster } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer, type GitServer } from '../helpers/git-server.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';

const dir = tempDir('cluster-asked');
const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'] as const;
const keys = new ClusterKeys(`asked-${process.pid}`);
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
let gitServer: GitServer | undefined;
let config: Config;
const stores: Store[] = [];
const nodes: ClusterSyncScheduler[] = [];
const repos = new Map<string, TestRepo>();
let events: QueueEvents | undefined;
let eventsRedis: Redis | undefined;
/** Job ids a request found already queued or running (BullMQ's "duplicated" event). */
const duplicated: string[] = [];

/** A repository's name in the test ("gamma"), from trawl's ("127.0.0.1/gamma"). */
const short = (repoName: string): string => repoName.slice(repoName.lastIndexOf('/') + 1);

/** Per repository: builds started (fetches), builds running now, the most at once. */
const builds = new Map<string, { started: number; running: number; most: number }>();
const buildsOf = (name: string) => builds.get(name)?.started ?? 0;
function onEvent(e: SyncEvent): void {
  if (e.type === 'repo-start' && e.stage === 'fetch') {
    const b = builds.get(short(e.repoName)) ?? { started: 0, running: 0, most: 0 };
    b.started++;
    b.running++;
    b.most = Math.max(b.most, b.running);
    builds.set(short(e.repoName), b);
  } else if (e.type === 'repo-done' && e.outcome !== 'backing-off') builds.get(short(e.repoName))!.running--;
}

/** Holds the builds of one repository after their fetch until released, one by one. */
class Gate {
  entered = 0;
  readonly #held: Array<() => void> = [];
  async enter(): Promise<void> {
    this.entered++;
    await new Promise<void>((resolve) => this.#held.push(resolve));
  }
  release(): void {
    this.#held.shift()?.();
  }
  releaseAll(): void {
    while (this.#held.length > 0) this.release();
  }
}
const gates = new Map<string, Gate>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function repoId(name: string): Promise<number> {
  return (await stores[0]!.listRepos()).find((r) => short(r.repoName) === name)!.repoId;
}

/** The commit of `main` that the repository's index holds. */
async function indexedCommit(name: string): Promise<string | undefined> {
  return (await stores[0]!.getRepo(await repoId(name)))!.indexedRefs.find((r) => r.name === 'main')?.commit;
}

async function quiet(): Promise<void> {
  await until('an empty queue', async () => {
    const c = await nodes[0]!.counts();
    return c.waiting + c.active + c.delayed === 0;
  });
}

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  const url = await postgres.newDatabase();
  for (const name of NAMES) {
    const repo = TestRepo.init(join(dir.path, 'repos', name));
    repo.commit({ [`${name}.c`]: `int ${name}_zero;\n` });
    repos.set(name, repo);
  }
  gitServer = await startGitServer(join(dir.path, 'repos'), { credentials: { username: 'git', password: 'git-password' } });
  const served = new URL(gitServer.url);
  served.username = 'git';
  served.password = 'git-password';
  const connections = Object.fromEntries(NAMES.map((name) => [name, { type: 'git', url: `${served.href.replace(/\/$/, '')}/${name}` }]));
  config = parseConfig(JSON.stringify({ settings: { symbols: false, syncConcurrency: 1 }, connections }), join(dir.path, 'trawl.json'));
  eventsRedis = new Redis(redis.url, { maxRetriesPerRequest: null });
  events = new QueueEvents(QUEUE_NAME, { connection: eventsRedis, prefix: keys.queuePrefix });
  events.on('duplicated', ({ jobId }) => duplicated.push(jobId));
  await events.waitUntilReady();
  for (const id of ['a', 'b']) {
    const store = await connectPgStore(url);
    stores.push(store);
    nodes.push(
      await ClusterSyncScheduler.open({
        config,
        store,
        dataDir: join(dir.path, id),
        redisUrl: redis.url,
        keys,
        nodeId: id,
        // Long, so that a loaded machine stalling a renewal does not move the leadership: the
        // new leader would list, and its builds are not the ones these tests count.
        heartbeatMs: 2000,
        intervalMs: 3_600_000,
        log: silentLogger,
        onEvent,
        indexExtras: async (record) => {
          await gates.get(short(record.repoName))?.enter();
          return {};
        },
        // Wide enough that a loaded machine takes a burst's requests within it; no rechecks
        // (the last test has its own): a follow-up can only come from the build's end.
        asked: { coalesceMs: 500, recheckMs: 600_000 },
      }),
    );
  }
  await until('the first listing built every repository', () => NAMES.every((n) => buildsOf(n) === 1 && builds.get(n)!.running === 0));
  await quiet();
});

after(async () => {
  for (const g of gates.values()) g.releaseAll();
  await events?.close();
  eventsRedis?.disconnect();
  await stopCluster({ daemons: [...nodes].reverse(), stores, ...(redis ? { redis } : {}), ...(postgres ? { postgres } : {}), dir });
  await gitServer?.close();
});

/** The node that leads, and the other. */
function roles(): { leader: ClusterSyncScheduler; other: ClusterSyncScheduler } {
  const leader = nodes.find((n) => n.isLeader);
  assert.ok(leader !== undefined, 'a node leads');
  return { leader, other: nodes.find((n) => n !== leader)! };
}

/** `p`, or a failure after `ms` rather than a test that never ends. */
async function within<T>(what: string, p: Promise<T>, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting: ${what}`)), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('syncs asked for in a cluster', { timeout: 120_000 }, () => {
  test('a request on the node that does not lead builds the repository once and is answered there', async (t) => {
    if (skip) return t.skip(skip);
    const { other } = roles();
    const head = repos.get('alpha')!.commit({ 'alpha.c': 'int alpha_one;\n' });
    const id = await repoId('alpha');
    const result = await within('the answer', other.asked.request(id));
    assert.equal(result.outcome, 'indexed', result.error);
    assert.equal(result.repoId, id);
    assert.equal(await indexedCommit('alpha'), head);
    // Its freshness, as a daemon alone records it.
    const record = (await stores[1]!.getRepo(id))!;
    assert.ok(record.lastEventAt !== undefined && record.lastEventSyncedAt !== undefined, JSON.stringify(record));
    assert.ok(Date.parse(record.lastEventSyncedAt) >= Date.parse(record.lastEventAt));
    await sleep(300);
    await quiet();
    assert.equal(buildsOf('alpha'), 2, 'the first listing, then this request');
  });

  test('a burst of requests from both nodes, on a busy queue, is one build', async (t) => {
    if (skip) return t.skip(skip);
    // Both nodes busy (one build at a time each, held): the job asked for waits however
    // long the requests take to come, rather than only for the coalescing window.
    const busy = ['epsilon', 'zeta'];
    for (const name of busy) gates.set(name, new Gate());
    t.after(() => {
      for (const name of busy) {
        gates.get(name)?.releaseAll();
        gates.delete(name);
      }
    });
    const held = busy.map(async (name) => nodes[0]!.asked.request(await repoId(name)));
    await until('both nodes busy', () => busy.every((name) => gates.get(name)!.entered === 1));
    const head = repos.get('beta')!.commit({ 'beta.c': 'int beta_one;\n' });
    const id = await repoId('beta');
    const asked = Promise.all(Array.from({ length: 20 }, (_, i) => nodes[i % 2]!.asked.request(id)));
    await until('every request on the job waiting', () => duplicated.filter((j) => j === `repo-${id}`).length === 19);
    assert.equal(buildsOf('beta'), 1, 'not started yet');
    for (const name of busy) gates.get(name)!.release();
    const results = await within('the answers', asked);
    assert.deepEqual(new Set(results.map((r) => r.outcome)), new Set(['indexed']), JSON.stringify(results));
    assert.equal(await indexedCommit('beta'), head);
    await within('the builds held', Promise.all(held));
    await sleep(300);
    await quiet();
    assert.equal(buildsOf('beta'), 2, 'the first listing, then one for the 20 requests');
  });

  test('a request while the job runs gets exactly one more build, holding the commit made meanwhile', async (t) => {
    if (skip) return t.skip(skip);
    const [a, b] = nodes as [ClusterSyncScheduler, ClusterSyncScheduler];
    const gate = new Gate();
    gates.set('gamma', gate);
    t.after(() => {
      gates.delete('gamma');
      gate.releaseAll();
    });
    const id = await repoId('gamma');
    const first = repos.get('gamma')!.commit({ 'gamma.c': 'int gamma_one;\n' });
    const asked = a.asked.request(id);
    await until('the build fetched', () => gate.entered === 1);
    const second = repos.get('gamma')!.commit({ 'gamma.c': 'int gamma_two;\n' });
    let answered = false;
    const askedAgain = b.asked.request(id).then((r) => {
      answered = true;
      return r;
    });
    // The job was there (running): nothing was added under its id.
    await until('the second request to reach the queue', () => duplicated.includes(`repo-${id}`));

    gate.release();
    assert.equal((await within('the first answer', asked)).outcome, 'indexed');
    assert.equal(await indexedCommit('gamma'), first, 'the first build fetched before the second commit');
    const waiting = (await stores[0]!.getRepo(id))!;
    assert.equal(waiting.lastEventSyncedAt, undefined, 'the second request waits');
    await until('the follow-up build', () => gate.entered === 2);
    assert.equal(answered, false, 'the second request is answered by the build after it');
    gate.release();
    const again = await within('the second answer', askedAgain);
    assert.equal(again.outcome, 'indexed', again.error);
    assert.equal(await indexedCommit('gamma'), second);
    assert.ok((await stores[0]!.getRepo(id))!.lastEventSyncedAt !== undefined);

    await sleep(600);
    await quiet();
    assert.equal(gate.entered, 2, 'no third build');
    assert.equal(buildsOf('gamma'), 3, 'the first listing, the build asked for, one follow-up');
  });

  test('a listing asked on the node that does not lead is run by the leader; never two builds of a repository at once', async (t) => {
    if (skip) return t.skip(skip);
    const { leader, other } = roles();
    const passes = leader.passes;
    const elsewhere = other.passes;
    other.asked.listing();
    await until('the leader listed', () => leader.passes === passes + 1, 10_000);
    assert.equal(other.passes, elsewhere);
    await until('its builds', () => buildsOf('delta') === 2);
    await quiet();
    for (const name of NAMES) assert.equal(builds.get(name)!.most, 1, name);
  });

  test('an outcome not heard is read from the record; a request unanswered is queued again, then answered failed at its deadline', async (t) => {
    if (skip) return t.skip(skip);
    // Requests on a cluster of their own, whose builds this test plays by hand.
    const own = new ClusterKeys(`asked-recheck-${process.pid}`);
    const conn = new Redis(redis!.url);
    const queued: Array<{ repoId: number; delayMs: number }> = [];
    const asked = await ClusterAskedSyncs.open({
      redisUrl: redis!.url,
      keys: own,
      answers: new SyncAnswers({ redis: conn, keys: own, store: stores[0]! }),
      sync: { config, store: stores[0]! },
      queue: async (job, delayMs) => void queued.push({ repoId: job.repoId, delayMs }),
      leads: () => false,
      requestPass: () => {},
      recheckMs: 100,
      timeoutMs: 2000,
    });
    t.after(async () => {
      await asked.stop();
      conn.disconnect();
    });
    const id = await repoId('alpha');
    const first = asked.request(id);
    await until('its job queued', () => queued.length === 1);
    assert.deepEqual(queued[0], { repoId: id, delayMs: 100 });
    // A build that started after it recorded its outcome, and the message was lost.
    const result = { repoId: id, outcome: 'unchanged' as const, seconds: 0.25 };
    await conn.hset(own.asked.answers, String(id), JSON.stringify({ repoId: id, covers: 1, result }));
    assert.deepEqual(await within('the answer read', first), result);

    // No build answers this one: its job is queued again every so often, then it fails.
    const started = Date.now();
    const second = await asked.request(id);
    assert.equal(second.outcome, 'failed');
    assert.match(second.error!, /no sync of it ended within 2 s/);
    assert.ok(Date.now() - started >= 1900, 'not before its deadline');
    assert.ok(queued.length >= 3 && queued.slice(2).every((q) => q.repoId === id && q.delayMs === 0), JSON.stringify(queued));
  });
});
