// The merge of a search: takes the shards' replies in shard order (repository name, then
// shard number, so results are deterministic however the threads interleave) and hands
// each shard's files to a sink (sink.ts), applying the search's cut the same way whoever
// answered the shards: the searcher's worker pool (searcher.ts), or, in a cluster, the
// nodes that hold them (cluster/fan-out.ts), so that one node and a cluster of them give
// the same answer.
//
// The cut: the shards taken before it count, in shard order; the files of a shard after it
// are dropped (their work is counted), whatever the threads' timing, as are those of shards
// already in when the search was aborted. Past the cut a blocking search with literals
// keeps each shard's definitions (definition-first.ts).

import { CollectSink } from './collect-sink.ts';
import { positiveLiterals } from './definition-first.ts';
import type { PoolRun } from './pool.ts';
import { loadedKiB, NO_SPECULATION, pastCut, type PartialReply, type SearchTask, type ShardReply } from './protocol.ts';
import type { ShapedFile, ShapeOptions } from './file-json.ts';
import type { Reshape, Sink } from './sink.ts';
import { StreamSink } from './stream-sink.ts';
import { planSearch } from './plan-cache.ts';
import type { SearchOptions, WireResponse } from './search-options.ts';
import { emptyCounters, emptyStats, type SearchRequest, type SearchStats, type ShardCounters } from './types.ts';

/** A search task without its shards: whoever starts it knows which shards it runs on. */
export type TaskParams = Omit<SearchTask, 'catalog' | 'shards' | 'only' | 'docs'>;

export interface MergeDeps {
  /** Starts the task on the shards (0 to count - 1); `grant` as SearchPool.start. */
  start(task: TaskParams, cancel: SharedArrayBuffer, grant: number): PoolRun;
  /** Threads searching at once (a stream's sink lets them run ahead by as many shards). */
  workers: number;
  /** Shards counted as failed before the search starts (broken repositories the caller may see). */
  lostShards: number;
  /** Shards the query's filters ruled out before the search (counted as skipped by filter). */
  skippedShards?: number;
  /** Shards left out of the run, but counted as scanned: their candidates, found before it, were none (and they hold no documents). */
  scannedShards?: number;
  shape: ShapeOptions;
  /** Shapes a file of shard `shard` again (sink.ts Reshape). */
  reshape(shard: number, shape: ShapeOptions, f: ShapedFile, budget: number): ShapedFile | Promise<ShapedFile>;
  /** Shard `shard` failed its checks (its repository's index is damaged). */
  corrupt(shard: number, error: string): void;
}

/** Searches `count` shards through `deps` and merges their replies. */
export async function mergeSearch(count: number, req: Required<SearchRequest>, options: SearchOptions, deps: MergeDeps): Promise<WireResponse> {
  const started = process.hrtime.bigint();
  const planned = options.planned ?? planSearch(req);
  const { plan, planNs } = planned;
  // A plan made before the search waited for its turn counts as the search's own work.
  const aheadNs = options.planned ? planNs : 0;
  // No shard to search and nothing to stream (the tip index of a search at an older commit,
  // a history whose candidates were none): the answer a run of no shards makes, without
  // starting one.
  if (count === 0 && options.onChunk === undefined && options.signal?.aborted !== true) {
    const stats = startingStats(planNs, deps);
    stats.flushReason = 'FLUSH_REASON_FINAL_FLUSH';
    stats.duration = Number(process.hrtime.bigint() - started) + aheadNs;
    return { stats, files: [], repositoryInfo: [], isSearchExhaustive: stats.crashes === 0 };
  }
  const limit = req.matches;
  const cancel = new SharedArrayBuffer(4);
  // Stopping sets the flag the running shards check and skips the ones not started. (The
  // sink stops the search only once results flow, after the run has started.)
  let run: PoolRun | undefined;
  const stop = () => {
    Atomics.store(new Int32Array(cancel), 0, 1);
    run?.stop();
  };
  const shape = deps.shape;
  const reshape: Reshape = (f, budget) => deps.reshape(f.shard, shape, f, budget);
  const sink: Sink = options.onChunk ? new StreamSink(limit, deps.workers, reshape, options.onChunk, stop) : new CollectSink(limit, reshape);
  const cut = sink.cut;
  // Past its cut a blocking search with literals still takes every shard's definitions of
  // the query's names (definition-first.ts); a stream stops at its cut.
  const definitionsPastCut = sink.batch && positiveLiterals(plan).length > 0;
  const task: TaskParams = {
    planId: planned.planId,
    // (Encoded when a pool sends the task, not for a run in this thread: plan-cache.ts.)
    get plan() {
      return planned.bytes;
    },
    limit,
    brute: options.brute === true,
    cut,
    batch: sink.batch,
    definitionsPastCut,
    shape,
    speculateFrom: NO_SPECULATION,
    caller: options.caller ?? '',
  };
  run = deps.start(task, cancel, sink.ahead);
  // The time budget: past it the search stops as when its client leaves (the workers see
  // the flag before their next document or term) and answers with what it has, saying so.
  let timedOut = false;
  const timer = options.timeoutMs !== undefined ? setTimeout(() => ((timedOut = true), stop()), options.timeoutMs) : undefined;
  options.signal?.addEventListener('abort', stop, { once: true });
  if (options.signal?.aborted) stop();

  const stats = startingStats(planNs, deps);
  let ranges = 0;
  /** KiB of content the shards taken have read (as the cut counts it). */
  let read = 0;
  let more = false;
  /** Whether the files of shard `i` can still be taken: before the cut, the client still there. */
  const taking = (): boolean => (!pastCut(cut, ranges, read) || definitionsPastCut) && !options.signal?.aborted;
  // A stream's files of shards not yet done (protocol.ts, PartialReply), by shard, taken
  // in shard order like the rest; `arrived` wakes the loop waiting on their shard.
  const early: PartialReply[][] = Array.from({ length: count }, () => []);
  let current = -1;
  let arrived: (() => void) | undefined;
  run.onPartial = (shard, p) => {
    early[shard]!.push(p);
    if (shard === current) arrived?.();
  };
  const takeEarly = async (i: number): Promise<void> => {
    const parts = early[i]!.splice(0);
    if (parts.length === 0) return;
    for (const p of parts) {
      if (p.files.length === 0 || !taking()) continue;
      const crashes = sink.crashes;
      await sink.take(p.files, p.repositories);
      stats.crashes += sink.crashes - crashes;
    }
    await sink.partDone();
  };
  try {
    for (let i = 0; i < count; i++) {
      current = i;
      if (!pastCut(cut, ranges, read)) run.need?.(i, ranges, read);
      let answered = false;
      void run.replies[i]!.then(() => (answered = true));
      for (;;) {
        await takeEarly(i);
        if (answered) break;
        const next = Promise.race([run.replies[i]!, new Promise<void>((r) => (arrived = r))]);
        await sink.waiting(next);
        await next;
        arrived = undefined;
      }
      await takeEarly(i);
      const reply: ShardReply = await run.replies[i]!;
      const before = sink.shardStats ? { ...stats } : undefined;
      if (reply.status === 'skipped') {
        stats.shardsSkipped++;
      } else {
        stats.wait += reply.queuedNs;
        if (reply.status === 'failed') {
          stats.crashes++;
          if (reply.corrupt) deps.corrupt(i, reply.error);
        } else {
          const r = reply.result;
          for (const k of COUNTERS) stats[k] += r.counters[k];
          if (r.filtered) stats.shardsSkippedFilter++;
          else stats.shardsScanned++;
          stats.totalMatchCount += r.found;
          if (r.more) more = true;
          // The shards taken before the cut count, in shard order; the files of a shard after
          // it are dropped (their work is counted), whatever the threads' timing, as are
          // those of shards already in when the search was aborted: nobody waits for them.
          // Past the cut a blocking search with literals keeps each shard's definitions
          // (definition-first.ts: examined first and whole, so which ones does not depend on
          // when the shard saw the cut either).
          const past = pastCut(cut, ranges, read);
          const files = past && definitionsPastCut ? reply.files.filter((f) => f.hit.definition) : reply.files;
          if (files.length > 0 && taking()) {
            const crashes = sink.crashes;
            await sink.take(files, reply.repositories);
            stats.crashes += sink.crashes - crashes;
          }
          ranges += r.found;
          read += loadedKiB(r.counters.contentBytesLoaded);
          if (pastCut(cut, ranges, read)) {
            if (definitionsPastCut) run.definitionsOnly();
            else stop();
          }
        }
      }
      if (before) await sink.shardDone(delta(before, stats));
      if (sink.ahead !== Infinity) run.grant(i + 1 + sink.ahead);
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
  }
  const crashes = sink.crashes;
  await sink.end();
  stats.crashes += sink.crashes - crashes;
  stats.actualMatchCount = sink.actual;
  stats.flushReason = timedOut ? 'FLUSH_REASON_TIMER_EXPIRED' : 'FLUSH_REASON_FINAL_FLUSH';
  const response: WireResponse = { stats, files: sink.files, repositoryInfo: sink.repositoryInfo, isSearchExhaustive: false };
  stats.fileCount = sink.fileCount;
  stats.duration = Number(process.hrtime.bigint() - started) + aheadNs;
  response.isSearchExhaustive =
    !timedOut && !more && stats.filesSkipped === 0 && stats.shardsSkipped === 0 && stats.crashes === 0 && stats.totalMatchCount === stats.actualMatchCount;
  return response;
}

/** A search's stats before any shard answers: its planning, and the shards lost or ruled out before it started. */
function startingStats(planNs: number, deps: MergeDeps): SearchStats {
  const stats = emptyStats();
  stats.matchTreeConstruction = planNs;
  stats.crashes = deps.lostShards;
  stats.shardsSkippedFilter = deps.skippedShards ?? 0;
  stats.shardsScanned = deps.scannedShards ?? 0;
  return stats;
}

/** The counters a shard reports, summed into the search's stats. */
const COUNTERS = Object.keys(emptyCounters()) as Array<keyof ShardCounters>;

/** What changed in the numeric stats between two moments (a batch's share). */
function delta(before: SearchStats, after: SearchStats): SearchStats {
  const d = emptyStats();
  for (const k of Object.keys(d) as Array<keyof SearchStats>) {
    if (k !== 'flushReason') (d as unknown as Record<string, number>)[k] = (after[k] as number) - (before[k] as number);
  }
  return d;
}
