// The search queries' metrics of a bench comparison: the queries of the two runs paired by
// name, each query's latency judged against a threshold raised to the run-to-run noise the
// queries' spread shows, and the engine's counters (SearchStats) old beside new, which
// explain a latency change.

import type { SearchStats } from '../../daemon/search/types.ts';
import type { CompareResultsOptions, MetricComparison, StatDelta } from './compare-report.ts';
import { metric, MIN_TESTED_SAMPLES } from './compare-judge.ts';
import { median } from './percentiles.ts';
import type { AnyBenchResult, QueryResult } from './result.ts';

/** Wall-clock timings of the engine; they are the latency samples' business, not a stats change. */
const TIMING_STATS: ReadonlySet<keyof SearchStats> = new Set<keyof SearchStats>(['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch']);

/** Queries by name, old's order first, then those only new has. */
export function pairQueries(oldR: AnyBenchResult, newR: AnyBenchResult): Array<{ name: string; old: QueryResult | null; new: QueryResult | null }> {
  const oldByName = new Map((oldR.search?.queries ?? []).map((q) => [q.name, q]));
  const newByName = new Map((newR.search?.queries ?? []).map((q) => [q.name, q]));
  const names = [...oldByName.keys(), ...[...newByName.keys()].filter((n) => !oldByName.has(n))];
  return names.map((name) => ({ name, old: oldByName.get(name) ?? null, new: newByName.get(name) ?? null }));
}

/** A failed query's samples (if any) are not the query's latency. */
const latencySamples = (q: QueryResult | null): number[] => (q && q.error === null ? q.samplesMs : []);

/**
 * Two runs of the same commit differ by more than their samples say: each run's samples
 * share one process, one worker pool, one page-cache layout, so a query's median moves
 * between runs by more than its own spread suggests (two runs of one commit on Linux 6.1
 * differ per query by more than the threshold, and every difference is "significant").
 * That run-to-run noise is estimated from the queries themselves: the robust spread
 * (1.4826 × median absolute deviation) of the log of every query's ratio, three times
 * over. A change common to every query moves the median of the ratios, not their spread,
 * so a release 30% slower everywhere still stands out; a few queries that regress are
 * outliers to the MAD and do not raise it.
 */
export const NOISE_MIN_QUERIES = 8;
const NOISE_SIGMAS = 3;

export function searchNoiseFloor(pairs: Array<{ old: readonly number[]; new: readonly number[] }>): number | null {
  const logRatios: number[] = [];
  for (const p of pairs) {
    if (p.old.length < MIN_TESTED_SAMPLES || p.new.length < MIN_TESTED_SAMPLES) continue;
    const a = median([...p.old]);
    const b = median([...p.new]);
    if (a > 0 && b > 0) logRatios.push(Math.log(b / a));
  }
  if (logRatios.length < NOISE_MIN_QUERIES) return null;
  const centre = median(logRatios);
  const mad = median(logRatios.map((x) => Math.abs(x - centre)));
  return Math.exp(NOISE_SIGMAS * 1.4826 * mad) - 1;
}

export function searchMetrics(
  oldR: AnyBenchResult,
  newR: AnyBenchResult,
  opts: Required<CompareResultsOptions>,
): { metrics: MetricComparison[]; noiseFloor: number | null } {
  const pairs = pairQueries(oldR, newR);
  const noiseFloor = searchNoiseFloor(pairs.map((p) => ({ old: latencySamples(p.old), new: latencySamples(p.new) })));
  const queryOpts = { ...opts, threshold: Math.max(opts.threshold, noiseFloor ?? 0) };
  const metrics = pairs.map(({ name, old, new: cur }) => {
    const m = metric(
      {
        id: `search/${name}/latency`,
        group: 'search',
        label: (cur ?? old)!.query,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        old: latencySamples(old),
        new: latencySamples(cur),
      },
      queryOpts,
    );
    const deltas = statDeltas(old?.stats ?? null, cur?.stats ?? null);
    const statsComparable = old?.isSearchExhaustive !== false && cur?.isSearchExhaustive !== false;
    return { ...m, queryName: name, stats: deltas.stats, statsChanged: deltas.changed, statsComparable };
  });
  return { metrics, noiseFloor };
}

function statDeltas(oldStats: SearchStats | null, newStats: SearchStats | null): { stats: Record<string, StatDelta> | null; changed: string[] } {
  if (oldStats === null && newStats === null) return { stats: null, changed: [] };
  // Fields are taken from the objects rather than listed here, so that a counter added to
  // SearchStats later is compared without anyone remembering to add it.
  const numeric = (s: SearchStats | null, k: string): number | null => {
    const v = s === null ? undefined : (s as unknown as Record<string, unknown>)[k];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const keys = new Set([...Object.keys(oldStats ?? {}), ...Object.keys(newStats ?? {})]);
  const stats: Record<string, StatDelta> = {};
  const changed: string[] = [];
  for (const k of keys) {
    if (TIMING_STATS.has(k as keyof SearchStats)) continue;
    const o = numeric(oldStats, k);
    const n = numeric(newStats, k);
    if (o === null && n === null) continue; // not a number on either side (flushReason)
    stats[k] = { old: o, new: n, delta: o !== null && n !== null ? n - o : null };
    // A query missing or failed on one side changed everything; the warnings say so once.
    if (o !== n && oldStats !== null && newStats !== null) changed.push(`${k} ${o ?? '—'}→${n ?? '—'}`);
  }
  return { stats, changed };
}
