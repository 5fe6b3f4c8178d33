// A cluster's syncs of single repositories asked for between the listings (a code host's
// push webhook, POST /api/repos/{id}/sync): what sync/repo-queue.ts is to a daemon alone,
// on the cluster's job queue (jobs.ts), so that a repository is still built by one node at
// a time, whichever node the request came to.
//
// - request() queues the repository's job, made from its record as a sync alone makes its
//   work (repo-work.ts repoJob: tried even when the repository backs off), to start after
//   COALESCE_MS: the requests on any node in that while find it waiting and are answered by
//   its one build (one job per repository id). It goes ahead of a listing's jobs (jobs.ts
//   ask). A request made while the repository's job runs is answered by one more build
//   after it, because the running one may have fetched before the push: sync-answers.ts
//   tells, and cluster-sync.ts queues it once the running job has left the queue.
// - The promise settles with the outcome of the first build that started after the
//   request, on whichever node it ran: each build publishes its outcome (sync-answers.ts)
//   and every node listens. Every recheckMs the outcomes recorded are read too (a message
//   lost while the connection was down), and a request unanswered for six of them has its
//   job queued again (a node that died between its job's end and the follow-up; the job is
//   not queued twice). One unanswered after timeoutMs is answered failed; its build goes on.
// - listing() asks the leader for a listing right after the one running (ClusterSyncScheduler
//   requestPass), through the same channel when this node does not lead. One asked while
//   the leadership moves is lost, but a node lists as it becomes the leader.
//
// Nothing is kept across a restart but what Redis holds: a request whose node stopped is
// not answered, and its build, queued or not, is caught up by the listings as alone.

import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '../runtime/logger.ts';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';
import type { RepoRecord } from '../store/store.ts';
import { COALESCE_MS } from '../sync/repo-queue.ts';
import { NotSyncable, repoJob, syncRefusal, type RepoSyncResult } from '../sync/repo-work.ts';
import type { RepoJob, SyncOptions } from '../sync/sync.ts';
import type { ClusterKeys } from './redis-keys.ts';
import { LISTING_NEWS, type SyncAnswer, type SyncAnswers } from './sync-answers.ts';

export interface AskedSyncsOptions {
  redisUrl: string;
  keys: ClusterKeys;
  answers: SyncAnswers;
  /** What a request's job is made from, and why a repository cannot be synced alone. */
  sync: Pick<SyncOptions, 'config' | 'store' | 'log'>;
  /** Queues a repository's job asked for (ClusterJobs ask). */
  queue(job: RepoJob, delayMs: number): Promise<void>;
  /** Whether this node lists the connections now. */
  leads(): boolean;
  /** On the leader: a listing now, or right after the one running. */
  requestPass(): void;
  /** How long a job asked for waits for other requests (default COALESCE_MS). */
  coalesceMs?: number;
  /** Between two readings of the recorded outcomes for the requests unanswered (default 5 s). */
  recheckMs?: number;
  /** How long a request waits for its outcome before it is answered failed (default 30 minutes). */
  timeoutMs?: number;
  now?: () => number;
}

interface Waiter {
  ticket: number;
  settle(r: RepoSyncResult): void;
  /** When it is answered failed if no build has answered it (ms). */
  deadline: number;
}

/** The requests this node waits on for one repository, and the job they asked for. */
interface Asked {
  job: RepoJob;
  waiters: Waiter[];
  /** When its job was last queued from here (ms). */
  queuedAt: number;
}

const RECHECK_MS = 5000;
/**
 * Rechecks a request waits before its job is queued again: long enough that the requests
 * waiting behind a busy queue do not ask Redis for their jobs every few seconds, the loss
 * it makes up for being rare (a node dying between its job's end and the follow-up).
 */
const REQUEUE_RECHECKS = 6;
const TIMEOUT_MS = 30 * 60_000;

const failed = (repoId: number, error: string): RepoSyncResult => ({ repoId, outcome: 'failed', error, seconds: 0 });

export class ClusterAskedSyncs {
  readonly #options: AskedSyncsOptions;
  readonly #news: Redis;
  readonly #asked = new Map<number, Asked>();
  #timer: NodeJS.Timeout | undefined;
  #checking = false;
  #stopped = false;

  private constructor(options: AskedSyncsOptions, news: Redis) {
    this.#options = options;
    this.#news = news;
  }

  /** Subscribes to the builds' news (rejecting when Redis cannot be reached). */
  static async open(options: AskedSyncsOptions): Promise<ClusterAskedSyncs> {
    const log = options.sync.log ?? silentLogger;
    const news = await connectRedis(options.redisUrl, {
      what: 'the cluster sync news',
      onError: (err) => log.warn({ err: err.message }, 'cluster sync news: Redis error; the requests waiting read the outcomes again every few seconds'),
    });
    const s = new ClusterAskedSyncs(options, news);
    news.on('message', (_channel: string, message: string) => s.#heard(message));
    try {
      await news.subscribe(options.keys.asked.news);
    } catch (err) {
      await closeRedis(news);
      throw err;
    }
    s.#timer = setInterval(() => void s.#recheck(), options.recheckMs ?? RECHECK_MS);
    s.#timer.unref();
    return s;
  }

  /**
   * Queues a sync of the repository: the outcome of the first build of it that starts after
   * this call, on any node (never rejects: what goes wrong is a failed outcome).
   */
  request(repoId: number): Promise<RepoSyncResult> {
    if (this.#stopped) return Promise.resolve(failed(repoId, 'the server is shutting down'));
    return this.#ask(repoId).catch((err: Error) => failed(repoId, `the sync could not be queued: ${err.message}`));
  }

  /** Why the repository cannot be synced alone, or undefined (repo-work.ts syncRefusal). */
  refusal(record: RepoRecord): Promise<string | undefined> {
    return syncRefusal(this.#options.sync, record);
  }

  /** A listing of the connections by the leader, right after the one running if one runs. */
  listing(): void {
    if (this.#stopped) return;
    if (this.#options.leads()) return this.#options.requestPass();
    void this.#options.answers
      .askListing()
      .catch((err: Error) => this.#log.warn({ err: err.message }, 'asking the leader for a listing failed; its next scheduled listing catches up'));
  }

  /** Stops: the requests waiting are answered failed (their builds go on). */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearInterval(this.#timer);
    for (const [repoId, asked] of this.#asked) for (const w of asked.waiters) w.settle(failed(repoId, 'the server is shutting down'));
    this.#asked.clear();
    await closeRedis(this.#news);
  }

  get #log(): Logger {
    return this.#options.sync.log ?? silentLogger;
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  async #ask(repoId: number): Promise<RepoSyncResult> {
    const { store } = this.#options.sync;
    const record = await store.getRepo(repoId);
    if (record === undefined) return failed(repoId, `no repository with id ${repoId}`);
    let job: RepoJob;
    try {
      job = await repoJob(this.#options.sync, record);
    } catch (err) {
      if (err instanceof NotSyncable) return failed(repoId, err.message);
      throw err;
    }
    const at = this.#now();
    const { ticket, first } = await this.#options.answers.ask(repoId, at);
    // Waiting before anything else is awaited: a build that read this ticket may end at once.
    const { answered, waiter } = this.#wait(job, ticket);
    if (first) {
      // Before the job is queued, so that its build records its answer after this.
      await this.#options.answers.record
        .asked(repoId, at)
        .catch((err: Error) => this.#log.warn({ err: err.message }, "recording a repository's sync request failed"));
    }
    try {
      await this.#options.queue(job, this.#options.coalesceMs ?? COALESCE_MS);
    } catch (err) {
      this.#drop(repoId, waiter, failed(repoId, `the sync could not be queued: ${(err as Error).message}`));
    }
    return answered;
  }

  #wait(job: RepoJob, ticket: number): { answered: Promise<RepoSyncResult>; waiter: Waiter } {
    let settle!: (r: RepoSyncResult) => void;
    const answered = new Promise<RepoSyncResult>((resolve) => (settle = resolve));
    const now = this.#now();
    const waiter: Waiter = { ticket, settle, deadline: now + (this.#options.timeoutMs ?? TIMEOUT_MS) };
    if (this.#stopped) {
      settle(failed(job.repoId, 'the server is shutting down'));
      return { answered, waiter };
    }
    const asked = this.#asked.get(job.repoId);
    if (asked === undefined) this.#asked.set(job.repoId, { job, waiters: [waiter], queuedAt: now });
    else {
      asked.waiters.push(waiter);
      asked.job = job;
      asked.queuedAt = now;
    }
    return { answered, waiter };
  }

  /** Answers one request and forgets it. */
  #drop(repoId: number, waiter: Waiter, result: RepoSyncResult): void {
    const asked = this.#asked.get(repoId);
    if (asked === undefined) return;
    asked.waiters = asked.waiters.filter((w) => w !== waiter);
    if (asked.waiters.length === 0) this.#asked.delete(repoId);
    waiter.settle(result);
  }

  #heard(message: string): void {
    if (message === LISTING_NEWS) {
      if (this.#options.leads() && !this.#stopped) this.#options.requestPass();
      return;
    }
    let answer: SyncAnswer;
    try {
      answer = JSON.parse(message) as SyncAnswer;
    } catch {
      return;
    }
    this.#answered(answer);
  }

  /** Settles the requests a build answered: those it started after. */
  #answered(answer: SyncAnswer): void {
    const asked = this.#asked.get(answer.repoId);
    if (asked === undefined) return;
    const done = asked.waiters.filter((w) => w.ticket <= answer.covers);
    if (done.length === 0) return;
    asked.waiters = asked.waiters.filter((w) => w.ticket > answer.covers);
    if (asked.waiters.length === 0) this.#asked.delete(answer.repoId);
    for (const w of done) w.settle(answer.result);
  }

  /** The outcomes recorded, read for the requests still waiting; those too long unanswered queued again, or answered failed past their deadline. */
  async #recheck(): Promise<void> {
    if (this.#checking || this.#stopped || this.#asked.size === 0) return;
    this.#checking = true;
    const recheckMs = this.#options.recheckMs ?? RECHECK_MS;
    try {
      for (const repoId of [...this.#asked.keys()]) {
        const last = await this.#options.answers.last(repoId);
        if (last !== undefined) this.#answered(last);
        const asked = this.#asked.get(repoId);
        if (asked === undefined) continue;
        const now = this.#now();
        for (const w of asked.waiters.filter((x) => x.deadline <= now)) {
          this.#drop(
            repoId,
            w,
            failed(repoId, `no sync of it ended within ${Math.round((this.#options.timeoutMs ?? TIMEOUT_MS) / 1000)} s of the request (it may still come)`),
          );
        }
        if (this.#asked.has(repoId) && now - asked.queuedAt >= REQUEUE_RECHECKS * recheckMs) {
          asked.queuedAt = now;
          await this.#options.queue(asked.job, 0);
        }
      }
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'reading the outcomes of the syncs asked for failed; tried again in a few seconds');
    } finally {
      this.#checking = false;
    }
  }
}
