// A stream's sink: takes each shard's files as they come, in shard order, until `matches`
// match ranges are given, and sends them in batches (CHUNK_MAX_FILES files, or whatever is
// in hand CHUNK_MAX_WAIT_MS after the last batch), each batch ranked in itself. The first
// batch goes as soon as it holds a file (its wait is zero: FLUSH_REASON_TIMER_EXPIRED),
// however early in its shard that file was found (partDone).
//
// Backpressure: the workers may run at most `ahead` shards past the one being taken
// (STREAM_AHEAD_PER_WORKER per worker), and a batch is taken from the searcher only once
// its client has taken the previous one (onChunk's promise). So a stream holds at most
// workers × STREAM_AHEAD_PER_WORKER shard replies (each at most `matches` match ranges,
// shaped; the parts a shard sends before its reply are parts of it) beyond the batch
// being written, whatever its client's pace.

import { ShardError } from '../index/shard-error.ts';
import { releaseFile } from './file-codec.ts';
import type { Cut } from './protocol.ts';
import { compareRanked } from './rank.ts';
import type { ShapedFile } from './file-json.ts';
import type { Reshape, Sink } from './sink.ts';
import { emptyStats, type FlushReason, type RepositoryInfo, type SearchStats } from './types.ts';

/** Shards a stream's workers may run ahead of the one being taken, per worker. */
const STREAM_AHEAD_PER_WORKER = 2;

/** A streamed batch is sent once it holds this many files, or this long after the last one. */
const CHUNK_MAX_FILES = 100;
const CHUNK_MAX_WAIT_MS = 100;

/** One batch of a streamed search: files in their wire form (file-json.ts); `stats` covers this batch only. */
export interface SearchChunk {
  stats: SearchStats;
  files: ShapedFile[];
  repositoryInfo: RepositoryInfo[];
}

/**
 * Takes a batch; false (or a promise of it) stops the search. The batch's files may be read
 * until it returns (or its promise resolves), not after: their bytes are then given back to
 * the workers (file-codec.ts releaseFile). Keep a copy to keep them.
 */
export type OnChunk = (chunk: SearchChunk) => boolean | void | Promise<boolean | void>;

export class StreamSink implements Sink {
  readonly cut: Cut;
  readonly batch = false;
  readonly shardStats = true;
  readonly ahead: number;
  actual = 0;
  crashes = 0;
  /** Files sent (the stream's answer holds none: they went out in batches). */
  fileCount = 0;
  readonly files: ShapedFile[] = [];
  readonly repositoryInfo: RepositoryInfo[] = [];
  private budget: number;
  private pending: ShapedFile[] = [];
  /** Every repository met so far, in the order first met: a batch names those of its files. */
  private readonly repos = new Map<number, RepositoryInfo>();
  private stats = emptyStats();
  private last = performance.now();
  private stopped = false;

  constructor(
    limit: number,
    workers: number,
    private readonly reshape: Reshape,
    private readonly onChunk: OnChunk,
    /** Stops the search (the client said so). */
    private readonly stop: () => void,
  ) {
    this.budget = limit;
    this.cut = { ranges: limit, rankedRanges: limit, loadedKiB: Infinity };
    this.ahead = workers * STREAM_AHEAD_PER_WORKER;
  }

  /** Results waiting in a batch go out on time even while a slow shard runs. */
  async waiting(reply: Promise<unknown>): Promise<void> {
    if (this.pending.length === 0) return;
    const due = CHUNK_MAX_WAIT_MS - (performance.now() - this.last);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([reply.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, due))))]);
    clearTimeout(timer);
    if (late) await this.flush('FLUSH_REASON_TIMER_EXPIRED');
  }

  async take(files: ShapedFile[], repositories: RepositoryInfo[]): Promise<void> {
    const before = { budget: this.budget, actual: this.actual, pending: this.pending.length };
    let took = false;
    try {
      for (const f of files) {
        if (this.budget <= 0) {
          releaseFile(f);
          continue;
        }
        // A stream's files are shaped whole (search-worker.ts).
        const g = f.count <= this.budget ? f : await this.reshape(f, this.budget);
        this.pending.push(g);
        this.budget -= g.count;
        this.actual += g.count;
        took = true;
      }
    } catch (err) {
      if (!(err instanceof ShardError)) throw err;
      // The shard gives nothing: what it gave in this call is taken back.
      this.budget = before.budget;
      this.actual = before.actual;
      this.pending.length = before.pending;
      this.crashes++;
      return;
    }
    if (!took) return;
    for (const g of this.pending.slice(before.pending)) {
      if (this.repos.has(g.repositoryId)) continue;
      const info = repositories.find((r) => r.id === g.repositoryId);
      if (info) this.repos.set(info.id, info);
    }
  }

  async partDone(): Promise<void> {
    if (this.pending.length === 0) return;
    if (this.fileCount === 0 || performance.now() - this.last >= CHUNK_MAX_WAIT_MS) await this.flush('FLUSH_REASON_TIMER_EXPIRED');
    else if (this.pending.length >= CHUNK_MAX_FILES) await this.flush('FLUSH_REASON_MAX_SIZE');
  }

  async shardDone(stats: SearchStats): Promise<void> {
    for (const k of Object.keys(stats) as Array<keyof SearchStats>) {
      if (k !== 'flushReason') (this.stats as unknown as Record<string, number>)[k]! += stats[k] as number;
    }
    if (this.pending.length >= CHUNK_MAX_FILES) await this.flush('FLUSH_REASON_MAX_SIZE');
    else if (this.pending.length > 0 && performance.now() - this.last >= CHUNK_MAX_WAIT_MS) await this.flush('FLUSH_REASON_TIMER_EXPIRED');
  }

  async end(): Promise<void> {
    await this.flush('FLUSH_REASON_FINAL_FLUSH');
  }

  /** Sends what is pending, ranked, in messages of at most CHUNK_MAX_FILES files. */
  private async flush(reason: FlushReason): Promise<void> {
    // A batch without files is not sent: the end of the search reports the stats of it all.
    if (this.stopped || this.pending.length === 0) return;
    const pending = this.pending.splice(0).sort(compareRanked);
    for (let at = 0; at < pending.length && !this.stopped; at += CHUNK_MAX_FILES) {
      const batch = pending.slice(at, at + CHUNK_MAX_FILES);
      const ids = new Set(batch.map((f) => f.repositoryId));
      // The batch's share of the work goes with its first message.
      const stats = this.stats;
      stats.actualMatchCount = batch.reduce((n, f) => n + f.count, 0);
      stats.fileCount = batch.length;
      stats.flushReason = at + CHUNK_MAX_FILES < pending.length ? 'FLUSH_REASON_MAX_SIZE' : reason;
      const now = performance.now();
      stats.duration = Math.round((now - this.last) * 1e6); // since the previous message
      this.stats = emptyStats();
      this.last = now;
      this.fileCount += batch.length;
      const go = await this.onChunk({ stats, files: batch, repositoryInfo: [...this.repos.values()].filter((r) => ids.has(r.id)) });
      // Written (onChunk resolves once its bytes are taken): their messages' buffers may go back.
      for (const f of batch) releaseFile(f);
      if (go === false) {
        this.stopped = true;
        this.stop();
      }
    }
  }
}
