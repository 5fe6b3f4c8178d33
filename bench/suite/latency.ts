// trawl's query latency, in process: one Searcher over the built data dir, warmed up by
// one untimed pass over the whole mix (worker pool start, shard mapping), then each query
// warmed up (warmUp) and timed `iterations` times with tinybench (matches=100 unless the
// query sets its own, no context).

import { Bench } from 'tinybench';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchStats } from '../../daemon/search/types.ts';
import type { BenchQuery } from './queries.ts';
import { summarize, type Summary } from './percentiles.ts';
import type { Warmup } from './result.ts';
import { warmUp } from './warm-up.ts';

export const MATCH_LIMIT = 100;

/**
 * Untimed runs of a query before its timed ones, in both the in-process and the HTTP
 * phase (a full run's default; --quick's is short). A daemon in service has run its
 * request path many thousand times and V8 has optimized it (in the main thread and in
 * each worker, each its own isolate); one warm-up run left the first queries of the mix
 * timing the JIT instead: a rare literal over HTTP took about twice as long over its first
 * few hundred requests as it did afterwards.
 */
export const FULL_WARMUP: Warmup = { runs: 100, ms: 500 };

export interface TrawlLatency extends Partial<Summary> {
  name: string;
  /** Latency of every timed run, in ms, in ascending order. */
  samplesMs: number[];
  warmupMs: number;
  /** The stats of the last timed run. */
  stats: SearchStats | null;
  isSearchExhaustive: boolean | null;
  error?: string;
}

export interface TrawlLatencies {
  /** The first search of the run: starts the worker pool and maps the shards. */
  coldStartMs: number;
  /** The untimed pass over the whole mix, first search included. */
  warmupPassMs: number;
  queries: TrawlLatency[];
}

/** The search request a query of the mix stands for (in process and over HTTP alike). */
export const requestFor = (q: BenchQuery) => ({
  query: q.query,
  matches: q.matches ?? MATCH_LIMIT,
  contextLines: 0,
  whole: false,
  isRegexEnabled: q.regex,
  isCaseSensitivityEnabled: q.caseSensitive,
});

export async function measureTrawl(
  dataDir: string,
  queries: BenchQuery[],
  iterations: number,
  warmup: Warmup,
  log: (s: string) => void,
): Promise<TrawlLatencies> {
  const searcher = new Searcher({ dataDir });
  const results: TrawlLatency[] = [];
  let coldStartMs = NaN;
  const passStart = performance.now();
  for (const q of queries) {
    const t0 = performance.now();
    const ok = await searcher.search(requestFor(q)).then(
      () => true,
      () => false, // reported below
    );
    if (ok && Number.isNaN(coldStartMs)) coldStartMs = performance.now() - t0;
  }
  const warmupPassMs = performance.now() - passStart;
  log(`trawl   warm-up pass: ${warmupPassMs.toFixed(0)} ms (first search ${coldStartMs.toFixed(0)} ms)`);
  try {
    for (const q of queries) {
      const request = requestFor(q);
      const result: TrawlLatency = { name: q.name, samplesMs: [], warmupMs: NaN, stats: null, isSearchExhaustive: null };
      results.push(result);
      try {
        result.warmupMs = await warmUp(warmup, () => searcher.search(request));
        let last: Awaited<ReturnType<Searcher['search']>> | undefined;
        const bench = new Bench({ time: 0, iterations, warmup: false, retainSamples: true, timestampProvider: 'hrtimeNow', throws: true });
        bench.add(q.name, async () => {
          last = await searcher.search(request);
        });
        await bench.run();
        const latency = bench.tasks[0]!.result;
        if (!('latency' in latency) || !latency.latency.samples) throw new Error(`tinybench: task ended in state ${latency.state}`);
        result.samplesMs = [...latency.latency.samples];
        Object.assign(result, summarize(result.samplesMs));
        result.stats = last!.stats;
        result.isSearchExhaustive = last!.isSearchExhaustive;
        log(
          `trawl   ${q.name}: p50 ${result.p50!.toFixed(2)} ms, p95 ${result.p95!.toFixed(2)} ms, ${last!.stats.actualMatchCount}/${last!.stats.totalMatchCount} matches`,
        );
      } catch (err) {
        result.error = (err as Error).message;
        log(`trawl   ${q.name}: ERROR ${result.error}`);
      }
    }
  } finally {
    await searcher.close();
  }
  return { coldStartMs, warmupPassMs, queries: results };
}
