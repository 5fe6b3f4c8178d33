// Order statistics over samples (latencies in ms, RSS in bytes, ...): the one definition of
// a percentile that every figure of `trawl bench` uses, from a run's p99 to compare's
// medians, so that two numbers called "p50" are always computed the same way.

/** The q-quantile (0..1) of sorted values: linear interpolation between closest ranks (R's type 7). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) throw new Error('quantile of no samples');
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

/** The q-quantile of values in any order. */
export function quantile(values: readonly number[], q: number): number {
  return quantileSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) throw new Error('mean of no samples');
  return values.reduce((s, x) => s + x, 0) / values.length;
}

/** p50, p95, p99, mean, min, max. */
export interface Summary {
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: quantileSorted(sorted, 0.5),
    p95: quantileSorted(sorted, 0.95),
    p99: quantileSorted(sorted, 0.99),
    mean: mean(values),
    min: sorted[0]!,
    max: sorted[sorted.length - 1]!,
  };
}
