// Judging one metric of a bench comparison: the two sides' samples summarised, the ratio of
// their medians, and a verdict by the test of stats.ts, by a plain threshold when a side has
// too few samples, or exactly for deterministic figures. Every metric of the report, the
// search queries' and the phases', goes through metric() here.

import type { CompareResultsOptions, MetricComparison, MetricGroup, MetricUnit, SampleSummary } from './compare-report.ts';
import { quantileSorted } from './percentiles.ts';
import { compareSamples, type Verdict } from './stats.ts';

/** Fewer samples than this on a side: one noisy figure, judged against singleThreshold. */
export const MIN_TESTED_SAMPLES = 5;
/**
 * The bootstrap sorts every resample, 2000 times per side: the HTTP load run's per-response
 * latencies (one sample per response, 10^5 and more) would take minutes. Larger sides are
 * thinned to this many evenly spaced order statistics, which keeps the distribution's shape
 * and only widens the interval and raises p: conservative.
 */
const MAX_TESTED_SAMPLES = 5000;

type Kind = 'sampled' | 'exact';
type Judgement = Pick<MetricComparison, 'old' | 'new' | 'ratio' | 'ratioLow' | 'ratioHigh' | 'p' | 'verdict' | 'basis'>;

function summarise(sorted: readonly number[]): SampleSummary {
  const n = sorted.length;
  return {
    n,
    median: n > 0 ? quantileSorted(sorted, 0.5) : null,
    p95: n >= 20 ? quantileSorted(sorted, 0.95) : null,
    p99: n >= 100 ? quantileSorted(sorted, 0.99) : null,
  };
}

function thin(sorted: readonly number[]): readonly number[] {
  if (sorted.length <= MAX_TESTED_SAMPLES) return sorted;
  const step = (sorted.length - 1) / (MAX_TESTED_SAMPLES - 1);
  return Array.from({ length: MAX_TESTED_SAMPLES }, (_, i) => sorted[Math.round(i * step)]!);
}

/** The verdict for a metric where lower is better, turned round when higher is. */
function oriented(lowerIsBetter: Verdict, better: 'lower' | 'higher'): Verdict {
  if (better === 'lower' || lowerIsBetter === 'no change') return lowerIsBetter;
  return lowerIsBetter === 'regression' ? 'improvement' : 'regression';
}

/** Beyond 1 ± bound in the ratio, as a lower-is-better verdict. */
function byRatio(ratio: number, bound: number): Verdict {
  if (ratio > 1 + bound) return 'regression';
  if (ratio < 1 - bound) return 'improvement';
  return 'no change';
}

function judge(
  oldValues: readonly number[],
  newValues: readonly number[],
  kind: Kind,
  better: 'lower' | 'higher',
  opts: Required<CompareResultsOptions>,
): Judgement {
  const sortedOld = oldValues.filter(Number.isFinite).sort((a, b) => a - b);
  const sortedNew = newValues.filter(Number.isFinite).sort((a, b) => a - b);
  const summaries = { old: summarise(sortedOld), new: summarise(sortedNew) };
  const oldMedian = summaries.old.median;
  const newMedian = summaries.new.median;
  const unjudged = { ...summaries, ratio: null, ratioLow: null, ratioHigh: null, p: null, verdict: 'not judged', basis: 'none' } as const;
  if (oldMedian === null || newMedian === null) return unjudged;
  // A zero baseline (no throughput at all, say) has no ratio to judge against.
  if (oldMedian <= 0) return unjudged;
  const ratio = newMedian / oldMedian;
  if (kind === 'exact') {
    return { ...summaries, ratio, ratioLow: null, ratioHigh: null, p: null, verdict: oriented(byRatio(ratio, opts.threshold), better), basis: 'exact' };
  }
  if (sortedOld.length < MIN_TESTED_SAMPLES || sortedNew.length < MIN_TESTED_SAMPLES) {
    return {
      ...summaries,
      ratio,
      ratioLow: null,
      ratioHigh: null,
      p: null,
      verdict: oriented(byRatio(ratio, opts.singleThreshold), better),
      basis: 'threshold',
    };
  }
  // compareSamples calls a rise a regression. For higher-is-better figures its verdict is
  // turned round rather than its input: the ratio and its interval are then those of the
  // values as measured, and a second with no completed request (0 req/s, the stall one
  // wants to see) stays a plain 0 where a reciprocal would be infinite.
  const c = compareSamples(thin(sortedOld), thin(sortedNew), { threshold: opts.threshold, alpha: opts.alpha });
  return { ...summaries, ratio, ratioLow: c.ratioLow, ratioHigh: c.ratioHigh, p: c.p, verdict: oriented(c.verdict, better), basis: 'test' };
}

export interface MetricSpec {
  id: string;
  group: MetricGroup;
  label: string;
  unit: MetricUnit;
  better: 'lower' | 'higher';
  kind: Kind;
  old: readonly number[];
  new: readonly number[];
}

export function metric(spec: MetricSpec, opts: Required<CompareResultsOptions>): MetricComparison {
  const j = judge(spec.old, spec.new, spec.kind, spec.better, opts);
  return {
    id: spec.id,
    group: spec.group,
    label: spec.label,
    queryName: null,
    unit: spec.unit,
    better: spec.better,
    ...j,
    stats: null,
    statsChanged: [],
    statsComparable: true,
  };
}
