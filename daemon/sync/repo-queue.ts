// Syncs of single repositories asked for between the scheduled passes (a code host's
// webhook, POST /api/repos/{id}/sync), coalesced into batches.
//
// A request waits at most COALESCE_MS for others to join it: a push sends several events
// (the push, the branch it created, a tag), and a burst of pushes to one repository needs
// one fetch and one build, not one each. Then everything waiting is synced as one batch
// (sync.ts syncWork: repositories read and built a few at a time, small ones together into
// compound shards). Requests that arrive while a batch runs wait for the next one, which
// starts when it ends: a request is answered by a sync that started after it, so a push
// received while its repository is being fetched is not lost to a fetch that came too
// early. One batch runs at a time, so a repository is never built twice at once here.
//
// What the queue holds is bounded by the repositories there are, not by the requests: one
// entry per repository waiting, whatever the number of deliveries naming it. A request for
// a repository is refused before it gets here when the repository is unknown.
//
// Nothing is kept across a restart: a request accepted but not yet synced when the
// process ends is caught up by the first scheduled pass of the next start, which compares
// every repository's refs with its index.

import { silentLogger, type Logger } from '../runtime/logger.ts';
import type { RepoRecord, Store } from '../store/store.ts';
import { syncRefusal, syncRepos, type RepoSyncResult } from './repo-work.ts';
import { mergeCompoundShards, type SyncOptions } from './sync.ts';

/** How long a request waits for others to join its batch. */
export const COALESCE_MS = 100;

export interface RepoQueueOptions {
  /** Syncs these repositories as one batch: each one's result (repo-work.ts syncRepos). */
  run: (repoIds: number[]) => Promise<RepoSyncResult[]>;
  /**
   * Told when a repository starts waiting (`at`: its first request since its last batch
   * started) and when the batch that answered it ended: its freshness, as the store keeps
   * it (RepoRecord lastEventAt). A failure here is logged; the sync goes on.
   */
  record?: {
    asked(repoId: number, at: number): Promise<void>;
    answered(result: RepoSyncResult, askedAt: number, at: number): Promise<void>;
  };
  now?: () => number;
  /** Called after a batch when nothing waits any more (compound shards merged). */
  onIdle?: () => Promise<void>;
  /** Called at the end of every batch, after onIdle when it ran. */
  onBatchEnd?: () => void;
  coalesceMs?: number;
  log?: Logger;
}

interface Waiting {
  /** Settled with the repository's result once its batch has ended. */
  done: Promise<RepoSyncResult>;
  settle: (r: RepoSyncResult) => void;
  /** Requests it stands for (the coalescing, counted). */
  requests: number;
  /** When the first of them came. */
  askedAt: number;
}

export class RepoSyncQueue {
  readonly #options: RepoQueueOptions;
  #waiting = new Map<number, Waiting>();
  #timer: NodeJS.Timeout | undefined;
  #batch: Promise<void> | undefined;
  #stopped = false;
  /** Requests taken, batches run, repositories synced (what the coalescing saved: the tests read it). */
  readonly counts = { requests: 0, batches: 0, synced: 0 };

  constructor(options: RepoQueueOptions) {
    this.#options = options;
  }

  /** Repositories waiting for a batch. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /**
   * Queues a sync of the repository: the result of the first batch that starts after this
   * call and holds it (a caller that does not wait may drop the promise: it never rejects).
   */
  request(repoId: number): Promise<RepoSyncResult> {
    if (this.#stopped) return Promise.resolve({ repoId, outcome: 'failed', error: 'the server is shutting down', seconds: 0 });
    this.counts.requests++;
    let w = this.#waiting.get(repoId);
    if (w === undefined) {
      let settle!: (r: RepoSyncResult) => void;
      const done = new Promise<RepoSyncResult>((resolve) => (settle = resolve));
      w = { done, settle, requests: 0, askedAt: this.#now() };
      this.#waiting.set(repoId, w);
      const { askedAt } = w;
      this.#note((r) => r.asked(repoId, askedAt));
    }
    w.requests++;
    this.#schedule();
    return w.done;
  }

  /** Stops taking requests and waits for the batch running; those still waiting are answered as failed. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#batch;
    const left = this.#waiting;
    this.#waiting = new Map();
    for (const [repoId, w] of left) w.settle({ repoId, outcome: 'failed', error: 'the server is shutting down', seconds: 0 });
  }

  #now(): number {
    return (this.#options.now ?? Date.now)();
  }

  /** The record's writes, one after the other (so that a repository's request is never recorded after its answer). */
  #writes: Promise<void> = Promise.resolve();

  /** A record's write, after those before it; logged if it fails: the queue does not wait for it. */
  #note(write: (record: NonNullable<RepoQueueOptions['record']>) => Promise<void>): void {
    const record = this.#options.record;
    if (record === undefined) return;
    this.#writes = this.#writes
      .then(() => write(record))
      .catch((err: Error) => (this.#options.log ?? silentLogger).warn({ err: err.message }, "recording a repository's sync request failed"));
  }

  /** A batch COALESCE_MS after the first request, unless one runs: that one starts the next as it ends. */
  #schedule(): void {
    if (this.#batch !== undefined || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#batch = this.#runBatch().finally(() => {
        this.#batch = undefined;
        if (this.#waiting.size > 0 && !this.#stopped) this.#schedule();
      });
    }, this.#options.coalesceMs ?? COALESCE_MS);
  }

  async #runBatch(): Promise<void> {
    const batch = this.#waiting;
    this.#waiting = new Map();
    if (batch.size === 0) return;
    const log = this.#options.log ?? silentLogger;
    const ids = [...batch.keys()];
    this.counts.batches++;
    let results: RepoSyncResult[];
    try {
      results = await this.#options.run(ids);
    } catch (err) {
      const error = (err as Error).message;
      log.error({ repos: ids.length, err: error }, 'a batch of repository syncs failed; the next scheduled pass catches up');
      results = ids.map((repoId) => ({ repoId, outcome: 'failed', error, seconds: 0 }));
    }
    const byId = new Map(results.map((r) => [r.repoId, r]));
    const ended = this.#now();
    for (const [repoId, w] of batch) {
      this.counts.synced++;
      const result = byId.get(repoId) ?? { repoId, outcome: 'failed', error: 'the sync gave no result for it', seconds: 0 };
      this.#note((r) => r.answered(result, w.askedAt, ended));
      w.settle(result);
    }
    if (this.#waiting.size === 0 && this.#options.onIdle) {
      try {
        await this.#options.onIdle();
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'tidying up after repository syncs failed');
      }
    }
    this.#options.onBatchEnd?.();
  }
}

/**
 * The queue's record in the store (RepoRecord lastEventAt, lastEventSyncedAt): a
 * repository that starts waiting has an event not yet synced; the sync that answered it,
 * unless it failed, says when it became searchable.
 */
export function eventRecord(store: Pick<Store, 'updateRepo' | 'getRepo'>): NonNullable<RepoQueueOptions['record']> {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    async asked(repoId, at) {
      const record = await store.getRepo(repoId);
      // In a cluster the node that built the repository may have recorded the answer to
      // this very request first (cluster/sync-answers.ts): it stands.
      if (record === undefined || (record.lastEventAt === iso(at) && record.lastEventSyncedAt !== undefined)) return;
      await store.updateRepo(repoId, { lastEventAt: iso(at), lastEventSyncedAt: undefined });
    },
    async answered(result, askedAt, at) {
      const record = await store.getRepo(result.repoId);
      // A request that came during this sync waits for the next one: its event stands.
      if (record === undefined || (record.lastEventAt !== undefined && record.lastEventAt > iso(askedAt))) return;
      const searchable = result.outcome === 'indexed' || result.outcome === 'unchanged';
      await store.updateRepo(result.repoId, { lastEventAt: iso(askedAt), lastEventSyncedAt: searchable ? iso(at) : undefined });
    },
  };
}

/**
 * Seconds from a repository's last event to its searchable sync, or while that sync waits
 * (or failed) to now; undefined for times that cannot be read.
 */
export function eventLagSeconds(eventAt: string, syncedAt: string | undefined, now: number): number | undefined {
  const from = Date.parse(eventAt);
  const to = syncedAt === undefined ? now : Date.parse(syncedAt);
  if (Number.isNaN(from) || Number.isNaN(to)) return undefined;
  return Math.max(0, Math.round(to - from) / 1000);
}

/**
 * A daemon's syncs of single repositories: the queue (its batches synced as a pass syncs,
 * compound shards merged once nothing waits, its events recorded in the store), why a
 * repository cannot be synced alone, and a listing asked of the scheduler.
 */
export function askedSyncs(options: SyncOptions, passes: { requestPass(): void }) {
  const queue = new RepoSyncQueue({
    run: (ids) => syncRepos(options, ids),
    onIdle: () => mergeCompoundShards(options),
    ...(options.onSynced ? { onBatchEnd: options.onSynced } : {}),
    record: eventRecord(options.store),
    ...(options.log ? { log: options.log } : {}),
  });
  return {
    queue,
    refusal: (record: RepoRecord) => syncRefusal(options, record),
    request: (repoId: number) => queue.request(repoId),
    listing: () => passes.requestPass(),
  };
}
