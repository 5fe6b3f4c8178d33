// The cluster's index job queue, on BullMQ (docs/deployment.md): the leader (leader.ts)
// lists the connections and queues one job per repository (cluster-sync.ts); every node
// runs a worker that takes jobs and builds them (sync.ts syncRepoJob). BullMQ's keys live
// under ClusterKeys.queuePrefix, in its queue QUEUE_NAME.
//
// Rules:
// - One job per repository at a time, cluster-wide: its id is `repo-<repoId>`, and BullMQ
//   adds nothing under an id it already has. A repository queued again while it waits is
//   queued once. One queued again while it *runs* is not re-added either: a listing's
//   change made during a build is picked up by the next listing (the leader lists every
//   interval); one asked for (a push: ask()) is built again once the running job has left
//   the queue (`left`, cluster-sync.ts, sync-answers.ts).
// - A job asked for goes ahead of the listings' (and the pack jobs'): those carry a BullMQ
//   priority, and BullMQ takes a job without one first. A push made during a listing of
//   thousands of repositories is built next, not after them.
// - Finished jobs are removed, completed or failed, so that the next pass can queue the
//   repository again. A repository's own failures (fetch, build) never fail its job: they
//   are recorded in the store with their back-off (sync.ts). A job fails when the node
//   cannot run it at all (the store unreachable, a connection this node does not have): it
//   is tried `attempts` times (default 3), with exponential back-off from `backoffMs`, and
//   then dropped with an error in the log and counted in counts().failed of the node.
// - A node killed mid-build: the job's lock (lockDurationMs, default 30 s) is renewed by
//   the worker every half of it while the node lives; once it expires, another node's
//   stalled-job check (every lockDurationMs) returns the job to the queue and someone runs
//   it from the start. A job that stalls twice (a repository whose build kills its node,
//   out of memory) fails instead, so that it takes down at most two nodes per pass. An
//   event loop blocked longer than the lock would also lose it, and the job would then run
//   twice at once: builds run in worker threads, and each build of a repository gets its
//   own generations (published.ts allocate), so two builds never write the same file name.
// - Redis unreachable: enqueue() and counts() fail at once (the connection queues nothing,
//   commands time out after 2 s). The worker waits for Redis to come back (BullMQ's
//   blocking connection needs maxRetriesPerRequest null) and carries on; close() does not
//   wait for it longer than its bound.

import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../runtime/logger.ts';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';
import type { RepoJob } from '../sync/sync.ts';
import { packJobId, type PackJob } from './pack-plan.ts';

/** A repository's build, or copies of built repositories into compound shards (pack-job.ts). */
export type ClusterJob = RepoJob | PackJob;

export function isPackJob(job: ClusterJob): job is PackJob {
  return 'pack' in job;
}

/** The BullMQ queue's name, under the prefix. */
export const QUEUE_NAME = 'index';

export interface ClusterJobsOptions {
  redisUrl: string;
  /** BullMQ's key prefix: ClusterKeys.queuePrefix. */
  prefix: string;
  /** Jobs this node runs at once; 0: none, the node only queues (and counts). */
  concurrency: number;
  /** Runs one job; throws when it could not run it (it is then retried, see above). */
  run(job: ClusterJob): Promise<void>;
  /** Told on the node that ran it when a job has left the queue (done, or failed its last attempt): its id is free again. */
  left?(job: ClusterJob): void;
  log: Logger;
  /** This node's id, recorded on the jobs its worker takes. */
  nodeId?: string;
  /** How long a running job's lock holds without renewal, and the stalled check's interval (default 30 000). */
  lockDurationMs?: number;
  /** Tries per job (default 3). */
  attempts?: number;
  /** Delay before the first retry, doubling after (default 10 000). */
  backoffMs?: number;
  /** How long close() waits for the running jobs before it abandons them (default 60 000). */
  closeTimeoutMs?: number;
}

export interface JobCounts {
  /** Queued, cluster-wide. */
  waiting: number;
  /** Running on some node, cluster-wide. */
  active: number;
  /** Waiting for a retry, or for the requests of the next moment to join it (ask()), cluster-wide. */
  delayed: number;
  /** Jobs this node ran that failed their last attempt, since it opened. */
  failed: number;
}

const BULK = 500;

/** The BullMQ priority of the listings' and the pack jobs: below the jobs asked for, which have none. */
const LISTED = 1;

export function jobId(repoId: number): string {
  return `repo-${repoId}`;
}

export class ClusterJobs {
  readonly #queue: Queue<ClusterJob>;
  readonly #queueRedis: Redis;
  readonly #worker: Worker<ClusterJob> | undefined;
  readonly #workerRedis: Redis | undefined;
  readonly #options: ClusterJobsOptions;
  readonly #running = new Set<Promise<void>>();
  #failed = 0;
  #closing: Promise<void> | undefined;

  /** `workerRedis`: the connection the worker's are made from (none: no worker). */
  private constructor(
    options: ClusterJobsOptions,
    queue: Queue<ClusterJob>,
    queueRedis: Redis,
    workerRedis: Redis | undefined,
    onError: (where: string, err: Error) => void,
  ) {
    this.#options = options;
    this.#queue = queue;
    this.#queueRedis = queueRedis;
    this.#workerRedis = workerRedis;
    if (workerRedis === undefined) return;
    const lockDuration = options.lockDurationMs ?? 30_000;
    const worker = new Worker<ClusterJob>(QUEUE_NAME, (job: Job<ClusterJob>) => this.#runOne(job), {
      connection: workerRedis,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration,
      stalledInterval: lockDuration,
      maxStalledCount: 1,
      ...(options.nodeId !== undefined ? { name: options.nodeId } : {}),
    });
    worker.on('error', (err: Error) => onError('worker', err));
    worker.on('failed', (job: Job<ClusterJob> | undefined, err: Error) => this.#onFailed(job, err));
    worker.on('completed', (job: Job<ClusterJob>) => options.left?.(job.data));
    worker.on('stalled', (id: string) => options.log.warn({ job: id }, 'index job stalled (its node stopped renewing its lock): back in the queue'));
    this.#worker = worker;
  }

  /** Connects (rejecting with a one-line reason when Redis cannot be reached) and starts the worker, when concurrency > 0. */
  static async open(options: ClusterJobsOptions): Promise<ClusterJobs> {
    const onError = errorReporter(options.log);
    const queueRedis = await connectRedis(options.redisUrl, { what: 'the cluster job queue', onError: (err) => onError('queue', err) });
    const queue = new Queue<ClusterJob>(QUEUE_NAME, {
      connection: queueRedis,
      prefix: options.prefix,
      defaultJobOptions: {
        attempts: options.attempts ?? 3,
        backoff: { type: 'exponential', delay: options.backoffMs ?? 10_000 },
        removeOnComplete: true,
        removeOnFail: true,
      },
    });
    queue.on('error', (err: Error) => onError('queue', err));
    let workerRedis: Redis | undefined;
    let jobs: ClusterJobs | undefined;
    try {
      await withTimeout(queue.waitUntilReady(), 10_000, 'the cluster job queue did not get ready within 10 s');
      // BullMQ makes the worker's two connections (one blocks waiting for jobs) from this
      // one, which it keeps using: they wait for a lost server to come back rather than
      // fail their commands.
      if (options.concurrency > 0) {
        workerRedis = await connectRedis(options.redisUrl, {
          what: 'the cluster job queue',
          extra: { maxRetriesPerRequest: null, enableOfflineQueue: true, commandTimeout: undefined },
        });
      }
      jobs = new ClusterJobs(options, queue, queueRedis, workerRedis, onError);
      if (jobs.#worker) await withTimeout(jobs.#worker.waitUntilReady(), 10_000, 'the cluster job queue worker did not get ready within 10 s');
      return jobs;
    } catch (err) {
      if (jobs) await jobs.close(0);
      else {
        if (workerRedis) await closeRedis(workerRedis);
        await queue.close().catch(() => {});
        await closeRedis(queueRedis);
      }
      throw err;
    }
  }

  async #runOne(job: Job<ClusterJob>): Promise<void> {
    const run = this.#options.run(job.data);
    this.#running.add(run);
    try {
      await run;
    } finally {
      this.#running.delete(run);
    }
  }

  #onFailed(job: Job<ClusterJob> | undefined, err: Error): void {
    const fields = { job: job?.id, ...(job && !isPackJob(job.data) ? { repo: job.data.hostRepo.repoName } : {}), err: err.message, attempt: job?.attemptsMade };
    if (job !== undefined && job.attemptsMade < (job.opts.attempts ?? 1)) {
      this.#options.log.warn(fields, 'index job failed; it will be retried');
      return;
    }
    this.#failed++;
    this.#options.log.error(fields, 'index job failed its last attempt; the next pass queues the repository again');
    if (job !== undefined) this.#options.left?.(job.data);
  }

  /** Queues the jobs not already queued or running (by repository id). */
  async enqueue(jobs: readonly RepoJob[]): Promise<void> {
    for (let i = 0; i < jobs.length; i += BULK) {
      await this.#queue.addBulk(jobs.slice(i, i + BULK).map((data) => ({ name: 'repo', data, opts: { jobId: jobId(data.repoId), priority: LISTED } })));
    }
  }

  /**
   * Queues a repository's job asked for (asked-syncs.ts), ahead of the listings' jobs, to
   * start after `delayMs` (the requests of that while join it). When the repository has a
   * job already it stays the one, but a listing's job waiting its turn is moved ahead; one
   * that runs runs on.
   */
  async ask(job: RepoJob, delayMs: number): Promise<void> {
    const id = jobId(job.repoId);
    await this.#queue.add('repo', job, { jobId: id, ...(delayMs > 0 ? { delay: delayMs } : {}) });
    const queued = await this.#queue.getJob(id);
    // (A job that ended meanwhile is gone: changePriority then fails, and nothing is left to move.)
    if (queued !== undefined && (await queued.getState()) === 'prioritized') await queued.changePriority({ priority: 0 }).catch(() => {});
  }

  /** Queues pack jobs (pack-plan.ts); a plan already queued or running is not queued twice. */
  async enqueuePacks(jobs: readonly PackJob[]): Promise<void> {
    if (jobs.length > 0) await this.#queue.addBulk(jobs.map((data) => ({ name: 'pack', data, opts: { jobId: packJobId(data), priority: LISTED } })));
  }

  async counts(): Promise<JobCounts> {
    const c = await this.#queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0), active: c.active ?? 0, delayed: c.delayed ?? 0, failed: this.#failed };
  }

  /** Jobs running on this node now. */
  get running(): number {
    return this.#running.size;
  }

  /** Stops this node taking new jobs; the running ones carry on. */
  async pause(): Promise<void> {
    await this.#worker?.pause(true);
  }

  /**
   * Stops taking jobs, waits up to `timeoutMs` (default closeTimeoutMs) for the running
   * ones, and disconnects. Jobs still running then are abandoned: their locks expire and
   * another node runs them again (close(0) is what a killed node does).
   */
  close(timeoutMs = this.#options.closeTimeoutMs ?? 60_000): Promise<void> {
    this.#closing ??= (async () => {
      if (this.#worker) {
        await this.pause();
        if (this.#running.size > 0 && timeoutMs > 0) {
          await withTimeout(Promise.allSettled([...this.#running]), timeoutMs, '').catch(() => {});
        }
        const abandoned = this.#running.size;
        if (abandoned > 0) this.#options.log.warn({ jobs: abandoned }, 'closing with index jobs still running: another node runs them once their locks expire');
        await this.#worker.close(abandoned > 0).catch(() => {});
        await closeRedis(this.#workerRedis!);
      }
      await this.#queue.close().catch(() => {});
      await closeRedis(this.#queueRedis);
    })();
    return this.#closing;
  }
}

/** Logs Redis errors of the queue's connections, once per distinct message a minute (an outage repeats them). */
function errorReporter(log: Logger): (where: string, err: Error) => void {
  const last = new Map<string, number>();
  return (where, err) => {
    const key = `${where}:${err.message}`;
    const now = Date.now();
    if ((last.get(key) ?? -Infinity) > now - 60_000) return;
    last.set(key, now);
    log.error({ err: err.message, where }, 'cluster job queue: Redis error');
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(message)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
