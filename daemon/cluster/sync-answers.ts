// Which build answers a sync asked for one repository at a time in a cluster (a push, POST
// /api/repos/{id}/sync: asked-syncs.ts), kept in the cluster's Redis so that whichever
// node runs the repository's job answers the requests made on any node:
//
// - A request takes a ticket: the repository's count of requests, one up (ClusterKeys
//   asked.tickets). The first request since the repository's last build started also
//   records when it came (asked.since): the event whose freshness the store keeps.
// - A build, as its job starts and before it fetches, reads the count: it answers the
//   requests up to it, all made before it fetched. It takes the first request's time too.
//   As it ends it records its outcome with that count (asked.answers), publishes it
//   (asked.news), and writes the repository's freshness to the store (sync/repo-queue.ts
//   eventRecord) as the queue of a daemon alone does.
// - A request with a ticket above what the build read came while it ran, and its job was
//   not queued again then (one job per repository id, jobs.ts): the build is owed one
//   more, which cluster-sync.ts queues once its job has left the queue.
//
// The hashes hold one field per repository ever asked for, bounded by the repositories.

import type { Redis } from 'ioredis';
import { silentLogger, type Logger } from '../runtime/logger.ts';
import type { Store } from '../store/store.ts';
import type { RepoSyncResult } from '../sync/repo-work.ts';
import { eventRecord } from '../sync/repo-queue.ts';
import type { ClusterKeys } from './redis-keys.ts';

/** A build's outcome, and the tickets up to `covers` it answered. */
export interface SyncAnswer {
  repoId: number;
  covers: number;
  result: RepoSyncResult;
}

/** The news that asks the leader for a listing (asked-syncs.ts); every other message is a SyncAnswer. */
export const LISTING_NEWS = 'listing';

// KEYS: tickets, since; ARGV: repository id, now (ms). The ticket, and 1 when it is the first since the last build started.
const ASK = `
local ticket = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
return {ticket, redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])}
`;

// KEYS: tickets, since; ARGV: repository id. The requests a build starting now answers, and when the first of them not yet taken came ('' if none).
const START = `
local covers = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local since = redis.call('HGET', KEYS[2], ARGV[1])
if since then redis.call('HDEL', KEYS[2], ARGV[1]) end
return {covers, since or ''}
`;

// KEYS: answers, news; ARGV: repository id, covers, the answer (JSON). Recorded and published
// only when it answers a request no build recorded before answered: a listing's build of a
// repository nobody asked for since costs no message (nor does a second run of one job).
const END = `
local covers = tonumber(ARGV[2])
if covers == 0 then return 0 end
local last = redis.call('HGET', KEYS[1], ARGV[1])
if last and tonumber(cjson.decode(last).covers) >= covers then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('PUBLISH', KEYS[2], ARGV[3])
return 1
`;

// KEYS: tickets, answers; ARGV: repository id. 1 when a request came after the last recorded build started.
const OWED = `
local tickets = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local last = redis.call('HGET', KEYS[2], ARGV[1])
local covers = 0
if last then covers = tonumber(cjson.decode(last).covers) end
if tickets > covers then return 1 end
return 0
`;

export interface SyncAnswersOptions {
  /** A connection of the caller's, left open. */
  redis: Redis;
  keys: ClusterKeys;
  store: Pick<Store, 'getRepo' | 'updateRepo'>;
  log?: Logger;
  now?: () => number;
}

export class SyncAnswers {
  readonly #options: SyncAnswersOptions;
  readonly #record: ReturnType<typeof eventRecord>;

  constructor(options: SyncAnswersOptions) {
    this.#options = options;
    this.#record = eventRecord(options.store);
  }

  /** The store's record of the requests' freshness (asked-syncs.ts writes the first request's). */
  get record(): ReturnType<typeof eventRecord> {
    return this.#record;
  }

  /** A request's ticket, and whether it is the first since the repository's last build started. */
  async ask(repoId: number, at: number): Promise<{ ticket: number; first: boolean }> {
    const { tickets, since } = this.#options.keys.asked;
    const [ticket, first] = (await this.#options.redis.eval(ASK, 2, tickets, since, String(repoId), String(at))) as [number, number];
    return { ticket, first: first === 1 };
  }

  /**
   * Runs the build of the repository's job, answering the requests made before it starts.
   * A build that throws (its job is then retried, jobs.ts) answers them failed, and leaves
   * the first request's time for the build that will.
   */
  async answering(repoId: number, build: () => Promise<RepoSyncResult>): Promise<void> {
    const { redis, keys } = this.#options;
    const [covers, since] = (await redis.eval(START, 2, keys.asked.tickets, keys.asked.since, String(repoId))) as [number, string];
    const askedAt = since === '' ? undefined : Number(since);
    const started = this.#now();
    let result: RepoSyncResult;
    try {
      result = await build();
    } catch (err) {
      const seconds = (this.#now() - started) / 1000;
      await this.#end({ repoId, covers, result: { repoId, outcome: 'failed', error: (err as Error).message, seconds } }, askedAt);
      if (askedAt !== undefined) await redis.hsetnx(keys.asked.since, String(repoId), String(askedAt)).catch(() => {});
      throw err;
    }
    await this.#end({ repoId, covers, result }, askedAt);
  }

  /** Whether a request came after the repository's last recorded build started (its follow-up is owed). */
  async owed(repoId: number): Promise<boolean> {
    const { tickets, answers } = this.#options.keys.asked;
    return (await this.#options.redis.eval(OWED, 2, tickets, answers, String(repoId))) === 1;
  }

  /** The repository's last recorded build, if any. */
  async last(repoId: number): Promise<SyncAnswer | undefined> {
    const json = await this.#options.redis.hget(this.#options.keys.asked.answers, String(repoId));
    return json === null ? undefined : (JSON.parse(json) as SyncAnswer);
  }

  /** Asks the leader for a listing, through the news every node listens to. */
  async askListing(): Promise<void> {
    await this.#options.redis.publish(this.#options.keys.asked.news, LISTING_NEWS);
  }

  /**
   * Records the freshness of the event a build answered, then its outcome, published (an
   * answer read from GET /api/repos shows the event synced). A failure is logged: the
   * requests then learn the outcome by their recheck, or time out.
   */
  async #end(answer: SyncAnswer, askedAt: number | undefined): Promise<void> {
    const { redis, keys } = this.#options;
    const log = this.#options.log ?? silentLogger;
    if (askedAt !== undefined) {
      try {
        await this.#record.answered(answer.result, askedAt, this.#now());
      } catch (err) {
        log.warn({ repoId: answer.repoId, err: (err as Error).message }, "recording a repository's sync request failed");
      }
    }
    try {
      await redis.eval(END, 2, keys.asked.answers, keys.asked.news, String(answer.repoId), String(answer.covers), JSON.stringify(answer));
    } catch (err) {
      log.warn({ repoId: answer.repoId, err: (err as Error).message }, "a repository's sync outcome could not be published to the nodes waiting for it");
    }
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }
}
