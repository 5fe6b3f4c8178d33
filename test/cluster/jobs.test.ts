// A cluster's sync on a private Redis: one leader at a time (and a successor when it goes),
// one queued job per repository, a pass's jobs spread over the nodes' workers with every
// repository built once, failed jobs retried then dropped, and a killed node's job run by
// another once its lock expires. Two "nodes" in this process: two schedulers (or queues)
// with their own data dirs, sharing one store (the embedded one stands in for PostgreSQL).

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ClusterSyncScheduler } from '../../daemon/cluster/cluster-sync.ts';
import { ClusterJobs } from '../../daemon/cluster/jobs.ts';
import { ClusterKeys } from '../../daemon/cluster/redis-keys.ts';
import { Leader } from '../../daemon/cluster/leader.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import type { Manifest } from '../../daemon/index/manifest.ts';
import { silentLogger } from '../../daemon/runtime/logger.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { RepoJob, SyncEvent } from '../../daemon/sync/sync.ts';
import type { PackJob } from '../../daemon/cluster/pack-plan.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { startTestRedis } from '../helpers/redis.ts';

// Started before the tests are declared, so that they know whether to skip.
const started = await startTestRedis();
const redis = 'skip' in started ? undefined : started;
const skip = 'skip' in started ? started.skip : undefined;
after(async () => {
  await redis?.stop();
});

let clusters = 0;
/** A cluster name of its own for each test: their queues and keys never meet. */
const freshKeys = () => new ClusterKeys(`jobs-test-${process.pid}-${++clusters}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const job = (repoId: number): RepoJob => ({
  repoId,
  connection: 'local',
  hostRepo: {
    repoName: `repo${repoId}`,
    displayName: `repo${repoId}`,
    codeHostType: 'genericGitHost',
    cloneUrl: '/nowhere',
    externalWebUrl: '',
    isFork: false,
    isArchived: false,
    visibility: 'public',
  },
});

test("leader: one node at a time; a released key is taken at the next heartbeat, a dead holder's once it expires", { skip, timeout: 30_000 }, async () => {
  const key = freshKeys().leader;
  // Long enough that a loaded machine does not stall a holder's renewal past the point
  // where it gives up (a heartbeat before its key expires: 2 heartbeats after the last).
  const heartbeatMs = 400;
  const events: string[] = [];
  const own = new Redis(redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false });
  await own.connect();
  const a = await Leader.open({
    redis: own,
    key,
    id: 'a',
    leads: 'the test',
    heartbeatMs,
    log: silentLogger,
    onGain: () => events.push('a+'),
    onLose: () => events.push('a-'),
  });
  const b = await Leader.open({
    redis: redis!.url,
    key,
    id: 'b',
    leads: 'the test',
    heartbeatMs,
    log: silentLogger,
    onGain: () => events.push('b+'),
    onLose: () => events.push('b-'),
  });
  let c: Leader | undefined;
  let both = false;
  const watch = setInterval(() => (both ||= a.isLeader && b.isLeader), 5);
  try {
    assert.equal(a.isLeader, true);
    assert.equal(b.isLeader, false);
    assert.equal(await b.holder(), 'a');
    await sleep(4 * heartbeatMs);
    assert.equal(a.isLeader, true, 'renewed');
    assert.equal(b.isLeader, false);

    // a's connection dies: it stops counting itself leader before its key expires; b takes
    // the key once it has.
    const lostAt = Date.now();
    own.disconnect();
    await waitFor('b to take over', () => b.isLeader);
    assert.equal(a.isLeader, false);
    assert.ok(Date.now() - lostAt >= 2 * heartbeatMs, 'not before the key could expire');
    assert.deepEqual(events, ['a+', 'a-', 'b+']);

    // b closes: c, waiting, takes the released key at its next heartbeat.
    c = await Leader.open({ redis: redis!.url, key, id: 'c', leads: 'the test', heartbeatMs, log: silentLogger });
    assert.equal(c.isLeader, false);
    const closedAt = Date.now();
    await b.close();
    assert.equal(b.isLeader, false);
    assert.notEqual(await c.holder(), 'b', 'b released the key as it closed');
    await waitFor('c to take over', () => c!.isLeader);
    assert.ok(Date.now() - closedAt < 3 * heartbeatMs, 'a released key is taken before it would have expired');
    assert.equal(both, false, 'never two leaders');
  } finally {
    clearInterval(watch);
    await a.close();
    await b.close();
    await c?.close();
  }
});

test('a repository is queued once while it waits, and again once it is done', { skip, timeout: 20_000 }, async () => {
  const keys = freshKeys();
  const producer = await ClusterJobs.open({ redisUrl: redis!.url, prefix: keys.queuePrefix, concurrency: 0, run: async () => {}, log: silentLogger });
  let consumer: ClusterJobs | undefined;
  try {
    await producer.enqueue([job(1), job(2)]);
    await producer.enqueue([job(1)]);
    await producer.enqueue([job(1), job(1), job(3)]);
    assert.deepEqual(await producer.counts(), { waiting: 3, active: 0, delayed: 0, failed: 0 });

    const runs: number[] = [];
    consumer = await ClusterJobs.open({
      redisUrl: redis!.url,
      prefix: keys.queuePrefix,
      concurrency: 2,
      run: async (j) => void runs.push((j as RepoJob).repoId),
      log: silentLogger,
    });
    await waitFor('the three jobs', () => runs.length === 3);
    await producer.enqueue([job(1)]);
    await waitFor('the repository queued again', () => runs.length === 4);
    assert.deepEqual(runs.sort(), [1, 1, 2, 3]);
    await waitFor('an empty queue', async () => (await producer.counts()).active === 0);
    assert.deepEqual(await producer.counts(), { waiting: 0, active: 0, delayed: 0, failed: 0 });
  } finally {
    await consumer?.close();
    await producer.close();
  }
});

test('a job that throws is retried, then dropped as failed (and can be queued again)', { skip, timeout: 20_000 }, async () => {
  const keys = freshKeys();
  let calls = 0;
  const jobs = await ClusterJobs.open({
    redisUrl: redis!.url,
    prefix: keys.queuePrefix,
    concurrency: 1,
    attempts: 3,
    backoffMs: 20,
    run: async () => {
      calls++;
      throw new Error('the store is unreachable');
    },
    log: silentLogger,
  });
  try {
    await jobs.enqueue([job(7)]);
    await waitFor('the last attempt to fail', async () => (await jobs.counts()).failed === 1);
    assert.equal(calls, 3);
    assert.deepEqual(await jobs.counts(), { waiting: 0, active: 0, delayed: 0, failed: 1 });
    await jobs.enqueue([job(7)]);
    await waitFor('the second round', async () => (await jobs.counts()).failed === 2);
    assert.equal(calls, 6);
  } finally {
    await jobs.close();
  }
});

test("a killed node's job is run by another once its lock expires", { skip, timeout: 60_000 }, async () => {
  const keys = freshKeys();
  // Long enough that a loaded machine does not stall the live node's lock renewal (every
  // half of it) until the lock expires: the job would be taken from a node that lives.
  const lockDurationMs = 2000;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let startedOnA = false;
  const a = await ClusterJobs.open({
    redisUrl: redis!.url,
    prefix: keys.queuePrefix,
    concurrency: 1,
    lockDurationMs,
    run: async () => {
      startedOnA = true;
      await gate;
    },
    log: silentLogger,
  });
  let b: ClusterJobs | undefined;
  try {
    await a.enqueue([job(3)]);
    await waitFor('a to start the job', () => startedOnA);
    const onB: number[] = [];
    b = await ClusterJobs.open({
      redisUrl: redis!.url,
      prefix: keys.queuePrefix,
      concurrency: 1,
      lockDurationMs,
      run: async (j) => void onB.push((j as RepoJob).repoId),
      log: silentLogger,
    });
    await sleep(2 * lockDurationMs);
    assert.deepEqual(onB, [], 'a live node keeps its job');
    assert.equal((await b.counts()).active, 1);

    const killedAt = Date.now();
    await a.close(0);
    await waitFor('b to run the abandoned job', () => onB.length === 1, 30_000);
    assert.deepEqual(onB, [3]);
    assert.ok(Date.now() - killedAt >= lockDurationMs / 2, 'only once the lock could have expired');
    await waitFor('an empty queue', async () => (await b!.counts()).active === 0);
  } finally {
    release();
    await a.close(0);
    await b?.close();
  }
});

test('two nodes: the leader lists, both build, each repository once per pass; the other node leads when it goes', { skip, timeout: 30_000 }, async () => {
  const dir = tempDir('cluster-jobs');
  const store = openStore(join(dir.path, 'store'));
  const repos = join(dir.path, 'repos');
  const names = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];
  for (const name of names) TestRepo.init(join(repos, name)).commit({ [`${name}.c`]: `int ${name}_marker;\n` });
  const config = parseConfig(
    JSON.stringify({
      settings: { symbols: false, syncConcurrency: 1 },
      connections: { local: { type: 'git', url: `${repos}/*` } },
    }),
    join(dir.path, 'trawl.json'),
  );
  const keys = freshKeys();
  // Node a leads and lists as it opens; its first build waits until b is open, so that b's
  // worker is there to take jobs however long its opening takes on a loaded machine (with
  // one build at a time per node, the other jobs wait for b or for a's next turn).
  let bOpen!: () => void;
  const bOpened = new Promise<void>((resolve) => (bOpen = resolve));

  // Per node: the repositories it built (repo-done events), and the manifests it committed.
  const built: Record<string, string[]> = { a: [], b: [] };
  const committed: Record<string, Manifest[]> = { a: [], b: [] };
  const node = (id: 'a' | 'b') =>
    ClusterSyncScheduler.open({
      config,
      store,
      dataDir: join(dir.path, `data-${id}`),
      redisUrl: redis!.url,
      keys,
      nodeId: id,
      // Long enough that a loaded machine (a build on each node, other tests) does not
      // stall a node's event loop past the leader key's renewal: a leader that lost and
      // regained the key would list again, a pass this test does not expect.
      heartbeatMs: 400,
      log: silentLogger,
      onEvent: (e: SyncEvent) => {
        if (e.type === 'repo-done') {
          assert.equal(e.outcome === 'indexed' || e.outcome === 'unchanged', true, `${e.repoName}: ${e.outcome} ${e.error ?? ''}`);
          built[id]!.push(e.repoName);
        }
      },
      // Builds long enough for both workers to take some; generations of the cluster's own.
      indexExtras: async (record) => {
        if (id === 'a') await bOpened;
        await sleep(150);
        return { minGeneration: 1000 + record.repoId, onCommit: (m: Manifest) => committed[id]!.push(m) };
      },
    });
  const a = await node('a');
  let b: ClusterSyncScheduler | undefined;
  const all = () => [...built.a!, ...built.b!];
  const perRepo = () => {
    const n: Record<string, number> = {};
    for (const r of all()) n[r] = (n[r] ?? 0) + 1;
    return n;
  };
  const once = (times: number) => Object.fromEntries(names.map((n) => [n, times]));
  try {
    b = await node('b');
    bOpen();
    assert.equal(a.isLeader, true);
    assert.equal(b.isLeader, false);
    assert.equal(await b.runNow(), undefined, 'a node that does not lead lists nothing');

    // The first pass ran when a became leader.
    await waitFor('the first pass', () => all().length === names.length);
    assert.equal(a.passes, 1);
    assert.equal(b.passes, 0);
    assert.equal(typeof (await b.listedAt()), 'number', 'every node sees that the cluster listed');
    assert.deepEqual(perRepo(), once(1));
    assert.ok(built.a!.length > 0 && built.b!.length > 0, `spread over both nodes: ${JSON.stringify(built)}`);
    for (const m of [...committed.a!, ...committed.b!]) assert.ok(m.generation >= 1000 + m.repoId, 'the generation the cluster gave');
    assert.equal(committed.a!.length + committed.b!.length, names.length);
    for (const name of names) assert.equal((await store.getRepoByName(name))!.state, 'indexed');

    // A pass on demand: every repository once more, none twice.
    const report = (await a.runNow())!;
    assert.deepEqual(report.connections, [{ name: 'local', ok: true, repos: names.length }]);
    assert.equal(report.queued, names.length);
    await waitFor('the second pass', () => all().length === 2 * names.length);
    assert.deepEqual(perRepo(), once(2));
    // (A job ends a moment after its build: it answers the syncs asked for, sync-answers.ts.)
    await waitFor('an empty queue', async () => (await a.counts()).active === 0);
    assert.deepEqual(await a.counts(), { waiting: 0, active: 0, delayed: 0, failed: 0 });

    // The leader goes: b takes over (its first pass at once).
    await a.close();
    await waitFor('b to lead', () => b!.isLeader, 3000);
    await waitFor("b's first pass", () => all().length === 3 * names.length);
    assert.equal(b.passes, 1);
    assert.deepEqual(perRepo(), once(3));
  } finally {
    bOpen();
    await a.close();
    await b?.close();
    await store.close();
    dir.cleanup();
  }
});

test('compound shards: the leader plans once the builds are done and the published index moved; any node runs a pack job', {
  skip,
  timeout: 30_000,
}, async () => {
  const dir = tempDir('cluster-pack-jobs');
  const store = openStore(join(dir.path, 'store'));
  const repos = join(dir.path, 'repos');
  const names = ['one', 'two', 'three'];
  for (const name of names) TestRepo.init(join(repos, name)).commit({ [`${name}.c`]: `int ${name}_marker;\n` });
  const config = parseConfig(
    JSON.stringify({ settings: { symbols: false, syncConcurrency: 1 }, connections: { local: { type: 'git', url: `${repos}/*` } } }),
    join(dir.path, 'trawl.json'),
  );
  const keys = freshKeys();
  // The published index's version: the builds committed so far (what a publication moves).
  const committed: Manifest[] = [];
  const plans: Array<{ committed: number }> = [];
  const ran: Array<{ node: string; job: PackJob }> = [];
  const node = (id: string) =>
    ClusterSyncScheduler.open({
      config,
      store,
      dataDir: join(dir.path, `data-${id}`),
      redisUrl: redis!.url,
      keys,
      nodeId: id,
      // As above: a leader whose renewal a loaded machine stalled would lose the key, take
      // it again and plan again, which this test does not expect.
      heartbeatMs: 400,
      log: silentLogger,
      indexExtras: async (record) => {
        await sleep(100);
        return { minGeneration: 1 + record.repoId, onCommit: (m: Manifest) => committed.push(m) };
      },
      compoundShards: {
        version: () => committed.length,
        plan: () => {
          plans.push({ committed: committed.length });
          return committed.length === 0 ? [] : [{ pack: committed.map((m) => ({ repoId: m.repoId, generation: m.generation })) }];
        },
        run: async (job) => void ran.push({ node: id, job }),
      },
    });
  const a = await node('a');
  const b = await node('b');
  try {
    await waitFor('the builds and the pack job', () => committed.length === names.length && ran.length === 1, 20_000);
    // Planned only with the queue dry: after every build (plans made before the first build saw none).
    const queued = plans.filter((p) => p.committed > 0);
    assert.deepEqual(
      queued.map((p) => p.committed),
      [names.length],
      JSON.stringify(plans),
    );
    assert.deepEqual(ran[0]!.job.pack.map((p) => p.repoId).sort(), committed.map((m) => m.repoId).sort());
    // Nothing published since: no plan again, no second job.
    await sleep(600);
    assert.equal(plans.filter((p) => p.committed > 0).length, 1);
    assert.equal(ran.length, 1);
  } finally {
    await a.close();
    await b.close();
    await store.close();
    dir.cleanup();
  }
});
