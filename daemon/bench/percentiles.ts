// Order statistics over latency samples (milliseconds). The interpolation itself is
// `trawl bench`'s (daemon/bench/stats.ts), so that every benchmark computes a percentile
// the same way.

import { quantileSorted } from '../daemon/bench/stats.ts';

/** The q-quantile (0..1) by linear interpolation between closest ranks; NaN when empty. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return NaN;
  return quantileSorted([...samples].sort((a, b) => a - b), q);
}

export function median(samples: readonly number[]): number {
  return quantile(samples, 0.5);
}

export function mean(samples: readonly number[]): number {
  return samples.length === 0 ? NaN : samples.reduce((s, x) => s + x, 0) / samples.length;
}

export interface Summary {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function summarize(samples: readonly number[]): Summary {
  return {
    p50: quantile(samples, 0.5),
    p95: quantile(samples, 0.95),
    p99: quantile(samples, 0.99),
    mean: mean(samples),
    min: quantile(samples, 0),
    max: quantile(samples, 1),
  };
}

/** Milliseconds elapsed since `start` (a process.hrtime.bigint() reading). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}
