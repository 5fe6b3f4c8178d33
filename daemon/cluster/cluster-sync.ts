// Sync passes of a cluster: the single-node SyncScheduler's (sync/scheduler.ts) pass cut in
// two (sync.ts). The leader (leader.ts) lists the connections — when it becomes leader, then
// every settings.reindexIntervalMs, and on runNow() — bringing the shared store's records
// in line and removing what is gone, and queues one job per listed repository that is not
// backing off after a failure (`force`: those too) (jobs.ts). Every node, the leader too,
// takes jobs from the queue and builds them in its own data dir (syncRepoJob), a few at a
// time (settings.syncConcurrency, or `concurrency`). Every interval each node collects the
// index files its builds retired, once no search holds them.
//
// The leader also records when it finished its last listing (<name>:listed, ms since the
// epoch): a node that is not the leader can tell that the cluster's first listing is done
// (listedAt()), for readiness. It keeps each listed repository's job too (<name>:listing),
// so that any node can queue one repository's build again (requeue(): a shard of it lost
// every copy) without a listing of every connection.
//
// Syncs of single repositories asked for (a push, POST /api/repos/{id}/sync) go through the
// same queue from any node (asked-syncs.ts): every build, a listing's too, answers the
// requests made before it started (sync-answers.ts), and once its job has left the queue
// one more is queued when a request came during it. The leader also lists when a node
// asks it to (a webhook saying a repository was created or renamed: requestPass()).
//
// A node that loses leadership during a pass finishes it: the jobs it queues are the ones
// the new leader would queue (a repository's job is queued once, jobs.ts).
//
// Compound shards: a build in a cluster is a repository's own, so the leader, every
// heartbeat, once the queue has run dry and the published index moved since it last
// looked, plans copies of the small repositories (and of packs mostly tombstoned or small)
// into compound shards (pack-plan.ts) and queues them as pack jobs, which any node runs
// (pack-job.ts).

import type { Redis } from 'ioredis';
import { collectIndexGarbage } from '../index/garbage.ts';
import { silentLogger } from '../runtime/logger.ts';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';
import type { RepoSyncResult } from '../sync/repo-work.ts';
import { backingOff, buildWorkers, listConnections, syncRepoJob, type RepoJob, type SyncOptions, type SyncReport } from '../sync/sync.ts';
import { ClusterAskedSyncs, type AskedSyncsOptions } from './asked-syncs.ts';
import { ClusterJobs, isPackJob, type ClusterJob, type ClusterJobsOptions, type JobCounts } from './jobs.ts';
import type { ClusterKeys } from './redis-keys.ts';
import { Leader } from './leader.ts';
import type { PackJob } from './pack-plan.ts';
import { SyncAnswers } from './sync-answers.ts';

export interface ClusterSyncOptions extends SyncOptions {
  redisUrl: string;
  keys: ClusterKeys;
  /** This node's id. */
  nodeId: string;
  /** The leader key's renewal interval (cluster.heartbeatMs); the key lasts three. */
  heartbeatMs: number;
  /** Repositories this node builds at once (default settings.syncConcurrency). */
  concurrency?: number;
  /** Between the leader's listings (default settings.reindexIntervalMs). */
  intervalMs?: number;
  /** Files a running search may still open (Searcher.inUse), kept by the garbage collector. */
  inUse?: () => ReadonlySet<string>;
  /** After each listing this node ran as leader. */
  onPass?: (report: ClusterPassReport) => void;
  /** The queue's timings (tests shorten them). */
  queue?: Pick<ClusterJobsOptions, 'lockDurationMs' | 'attempts' | 'backoffMs' | 'closeTimeoutMs'>;
  /** The timings of the syncs asked for (asked-syncs.ts; tests change them). */
  asked?: Pick<AskedSyncsOptions, 'coalesceMs' | 'recheckMs' | 'timeoutMs'>;
  /** Compound shards: the published index's version, the copies to make now, and how a node makes them (absent: none). */
  compoundShards?: {
    /** As last read (the node reads it every heartbeat). */
    version(): number;
    /** From the published index as it is now (read again first): version() is then what the plan read. */
    plan(): PackJob[] | Promise<PackJob[]>;
    run(job: PackJob): Promise<void>;
  };
}

/**
 * A listing's report: the connections, the repositories it deleted and those it left
 * backing off (in `repos`, sorted by name), and how many jobs it queued. The outcomes of
 * the builds are each node's (SyncOptions.onEvent, and the store's records).
 */
export interface ClusterPassReport extends SyncReport {
  queued: number;
}

/** A pack plan that queued jobs is made again after this long even when nothing was published since. */
const REPLAN_MS = 60_000;

export class ClusterSyncScheduler {
  readonly #options: ClusterSyncOptions;
  #jobs!: ClusterJobs;
  #leader!: Leader;
  #redis!: Redis;
  #answers!: SyncAnswers;
  #asked!: ClusterAskedSyncs;
  /** A listing was asked for (requestPass) while one ran: another follows it. */
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  #packTimer: NodeJS.Timeout | undefined;
  /** The published index's version the last pack plan read (-1: none yet). */
  #plannedAt = -1;
  /** When the last plan was made, and whether it queued anything. */
  #plannedWhen = 0;
  #plannedSome = false;
  #planning = false;
  #running: Promise<ClusterPassReport> | undefined;
  #stopped = false;
  /** Listings this node ran as leader. */
  passes = 0;

  private constructor(options: ClusterSyncOptions) {
    this.#options = options;
  }

  /** Starts this node's worker, then its bid for leadership (a listing at once when it wins), then the interval. */
  static async open(options: ClusterSyncOptions): Promise<ClusterSyncScheduler> {
    const s = new ClusterSyncScheduler(options);
    const log = options.log ?? silentLogger;
    const concurrency = Math.max(1, options.concurrency ?? options.config.settings.syncConcurrency);
    const workers = buildWorkers(concurrency);
    // Before the worker: its first job answers the requests made before it (sync-answers.ts).
    s.#redis = await connectRedis(options.redisUrl, { what: 'the cluster leader key' });
    s.#answers = new SyncAnswers({ redis: s.#redis, keys: options.keys, store: options.store, log, ...(options.now ? { now: options.now } : {}) });
    try {
      s.#jobs = await ClusterJobs.open({
        ...options.queue,
        redisUrl: options.redisUrl,
        prefix: options.keys.queuePrefix,
        concurrency,
        nodeId: options.nodeId,
        log,
        run: (job) => s.#run(job, workers),
        left: (job) => void s.#followUp(job),
      });
    } catch (err) {
      await closeRedis(s.#redis);
      throw err;
    }
    try {
      s.#asked = await ClusterAskedSyncs.open({
        ...options.asked,
        redisUrl: options.redisUrl,
        keys: options.keys,
        answers: s.#answers,
        sync: options,
        queue: (job, delayMs) => s.#jobs.ask(job, delayMs),
        leads: () => s.#leader?.isLeader === true,
        requestPass: () => s.requestPass(),
      });
      s.#leader = await Leader.open({
        redis: s.#redis,
        key: options.keys.leader,
        id: options.nodeId,
        leads: 'the sync',
        heartbeatMs: options.heartbeatMs,
        log,
        // Not before open() below has returned: the first bid's gain is handled there.
        onGain: () => {
          if (s.#leader !== undefined) void s.#tryPass();
        },
      });
    } catch (err) {
      await s.#asked?.stop();
      await s.#jobs.close(0);
      await closeRedis(s.#redis);
      throw err;
    }
    if (s.#leader.isLeader) void s.#tryPass();
    s.#schedule();
    if (options.compoundShards) {
      s.#packTimer = setInterval(() => void s.#planPacks(), options.heartbeatMs);
      s.#packTimer.unref();
    }
    return s;
  }

  get isLeader(): boolean {
    return this.#leader.isLeader;
  }

  get leader(): Leader {
    return this.#leader;
  }

  get jobs(): ClusterJobs {
    return this.#jobs;
  }

  /** Syncs of single repositories asked for on this node (a push, POST /api/repos/{id}/sync). */
  get asked(): ClusterAskedSyncs {
    return this.#asked;
  }

  counts(): Promise<JobCounts> {
    return this.#jobs.counts();
  }

  /**
   * A listing now, on the leader: joins the running one when there is one, so two never
   * overlap. Undefined on a node that is not the leader (it lists nothing).
   */
  runNow(): Promise<ClusterPassReport | undefined> {
    if (!this.#leader.isLeader || this.#stopped) return Promise.resolve(undefined);
    this.#running ??= this.#pass().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.requestPass();
      }
    });
    return this.#running;
  }

  /**
   * On the leader, a listing as soon as possible, for news the running one may have listed
   * too early (a webhook saying a repository was created, renamed or deleted): now when
   * none runs, else one more right after it. Nothing on a node that does not lead.
   */
  requestPass(): void {
    if (!this.#leader.isLeader || this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    void this.#tryPass();
  }

  /** When the cluster's last listing finished (ms since the epoch; any leader's), undefined before the first. */
  async listedAt(): Promise<number | undefined> {
    const at = await this.#leaderRedisGet(this.#options.keys.listed);
    return at === undefined ? undefined : Number(at);
  }

  /**
   * Stops: gives leadership up (the next node takes it at its next heartbeat), waits for a
   * running listing, then closes the queue, waiting up to its bound for the builds running
   * here (jobs.ts close).
   */
  async close(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#packTimer);
    await this.#asked.stop();
    await this.#leader.close();
    await this.#running?.catch(() => {});
    await closeRedis(this.#redis);
    await this.#jobs.close();
  }

  async #tryPass(): Promise<void> {
    try {
      await this.runNow();
    } catch (err) {
      (this.#options.log ?? silentLogger).error({ err: (err as Error).message }, 'cluster sync listing failed');
    }
  }

  /** Runs a job: a repository's build answers the requests made before it started. */
  async #run(job: ClusterJob, workers: number): Promise<void> {
    const options = this.#options;
    if (isPackJob(job)) {
      if (!options.compoundShards) throw new Error('a pack job reached a node that does not make compound shards');
      await options.compoundShards.run(job);
      return;
    }
    await this.#answers.answering(job.repoId, async (): Promise<RepoSyncResult> => {
      const r = await syncRepoJob(options, job, workers);
      if (r === undefined) return { repoId: job.repoId, outcome: 'failed', error: 'the repository was removed', seconds: 0 };
      return { repoId: r.repoId, outcome: r.outcome, ...(r.error !== undefined ? { error: r.error } : {}), seconds: r.seconds };
    });
  }

  /**
   * A repository's job has left the queue: when a request came while it ran (its build may
   * have fetched before the push), one more is queued now that its id is free. A failure
   * here is made up for by the requests' nodes, which queue their job again (asked-syncs.ts).
   */
  async #followUp(job: ClusterJob): Promise<void> {
    if (isPackJob(job)) return;
    try {
      if (!(await this.#answers.owed(job.repoId))) return;
      await this.#jobs.ask({ repoId: job.repoId, connection: job.connection, hostRepo: job.hostRepo, force: true }, 0);
    } catch (err) {
      (this.#options.log ?? silentLogger).warn(
        { repoId: job.repoId, err: (err as Error).message },
        'the sync of a repository asked for during its build could not be queued; the node asked retries',
      );
    }
  }

  /** On the leader, once the queue is dry and the published index moved: queues the pack plan's jobs. */
  async #planPacks(): Promise<void> {
    const packs = this.#options.compoundShards;
    if (!packs || this.#planning || this.#stopped || !this.#leader.isLeader) return;
    const version = packs.version();
    // (A plan whose jobs left repositories where they were, their index busy on its node, is made again a while later.)
    if (version === this.#plannedAt && !(this.#plannedSome && Date.now() - this.#plannedWhen > REPLAN_MS)) return;
    this.#planning = true;
    try {
      const c = await this.#jobs.counts();
      if (c.waiting + c.active + c.delayed > 0) return;
      const jobs = await packs.plan();
      await this.#jobs.enqueuePacks(jobs);
      this.#plannedAt = packs.version();
      this.#plannedWhen = Date.now();
      this.#plannedSome = jobs.length > 0;
      if (jobs.length > 0)
        (this.#options.log ?? silentLogger).info({ jobs: jobs.length, repos: jobs.reduce((n, j) => n + j.pack.length, 0) }, 'compound shard copies queued');
    } catch (err) {
      (this.#options.log ?? silentLogger).warn({ err: (err as Error).message }, 'planning compound shards failed; tried again at the next heartbeat');
    } finally {
      this.#planning = false;
    }
  }

  #schedule(): void {
    const interval = this.#options.intervalMs ?? this.#options.config.settings.reindexIntervalMs;
    this.#timer = setTimeout(() => void this.#tick(), interval);
    this.#timer.unref();
  }

  // Every node: a listing when it leads, the garbage of its own builds in any case.
  async #tick(): Promise<void> {
    await this.#tryPass();
    if (this.#stopped) return;
    try {
      collectIndexGarbage(this.#options.dataDir, this.#options.inUse?.() ?? new Set());
    } catch (err) {
      (this.#options.log ?? silentLogger).error({ err: (err as Error).message }, 'collecting retired index files failed');
    }
    this.#schedule();
  }

  async #pass(): Promise<ClusterPassReport> {
    const options = this.#options;
    const now = options.now ?? Date.now;
    const { report, work } = await listConnections(options);
    const queued: RepoJob[] = [];
    const at = now();
    for (const w of work) {
      if (backingOff(w.record, at, options.force)) {
        report.repos.push({ repoId: w.record.repoId, repoName: w.record.repoName, outcome: 'backing-off', seconds: 0 });
        continue;
      }
      queued.push({ repoId: w.record.repoId, connection: w.connectionName, hostRepo: w.hostRepo, ...(options.force ? { force: true } : {}) });
    }
    await this.#jobs.enqueue(queued);
    await this.#remember(work.map((w) => ({ repoId: w.record.repoId, connection: w.connectionName, hostRepo: w.hostRepo })));
    this.passes++;
    await this.#leaderRedisSet(options.keys.listed, String(Date.now()));
    // Deleted repositories' indexes were retired here.
    collectIndexGarbage(options.dataDir, options.inUse?.() ?? new Set());
    report.repos.sort((a, b) => (a.repoName < b.repoName ? -1 : a.repoName > b.repoName ? 1 : 0));
    const out: ClusterPassReport = { ...report, queued: queued.length };
    (options.log ?? silentLogger).info(
      { connections: report.connections.length, queued: queued.length, deleted: report.repos.filter((r) => r.outcome === 'deleted').length },
      'cluster sync listing done',
    );
    options.onPass?.(out);
    return out;
  }

  /**
   * Queues one repository's build again, from any node (a shard of it lost every copy,
   * replicator.ts): its job as the last listing made it, marked `rebuild` (a listing's job
   * leaves an index whose refs did not move as it is), unless it is backing off from
   * failures. False when no listing has queued it yet (the next one will). A job of the
   * repository already waiting or running is not queued twice (jobs.ts).
   */
  async requeue(repoId: number): Promise<boolean> {
    if (this.#stopped) return false;
    const json = await this.#redis.hget(this.#options.keys.listing, String(repoId));
    const record = json === null ? undefined : await this.#options.store.getRepo(repoId);
    if (json === null || !record || backingOff(record, (this.#options.now ?? Date.now)())) return false;
    await this.#jobs.enqueue([{ ...(JSON.parse(json) as RepoJob), rebuild: true }]);
    return true;
  }

  /**
   * Keeps the listing's jobs for requeue(). Nothing is removed: a connection whose listing
   * failed keeps its repositories' last jobs, and the job of a repository deleted since is
   * skipped when it runs (syncRepoJob reloads its record).
   */
  async #remember(jobs: RepoJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += 1000) {
      await this.#redis.hset(this.#options.keys.listing, Object.fromEntries(jobs.slice(i, i + 1000).map((j) => [String(j.repoId), JSON.stringify(j)])));
    }
  }

  async #leaderRedisGet(key: string): Promise<string | undefined> {
    return (await this.#redis.get(key)) ?? undefined;
  }

  async #leaderRedisSet(key: string, value: string): Promise<void> {
    try {
      await this.#redis.set(key, value);
    } catch (err) {
      (this.#options.log ?? silentLogger).warn({ err: (err as Error).message }, 'the time of the listing could not be recorded');
    }
  }
}
