// The statistics of `trawl bench compare`: is NEW slower than OLD, judged on the
// raw samples rather than on two medians, so that noise on a shared machine is not called
// a regression.
//
// A change is reported only when it is both real and large enough:
//   - real: the Mann-Whitney U test (two-sided, normal approximation with tie and
//     continuity corrections) rejects "same distribution" at `alpha`. It makes no normality
//     assumption, which latency samples (skewed, with outliers) never meet;
//   - large: the ratio of medians NEW/OLD, and the whole of its bootstrap confidence
//     interval, lies beyond 1 ± threshold. A 3% wobble is then "no change" even when
//     thousands of samples make it statistically significant.
// The bootstrap uses a seeded generator, so a comparison gives the same verdict every run.

import { median, quantileSorted } from './percentiles.ts';

export type Verdict = 'regression' | 'improvement' | 'no change';

export interface Comparison {
  verdict: Verdict;
  /** median(new) / median(old). */
  ratio: number;
  /** Bootstrap confidence interval of the ratio. */
  ratioLow: number;
  ratioHigh: number;
  /** Two-sided p-value of the Mann-Whitney U test. */
  p: number;
  /** Hodges-Lehmann estimate of the shift new - old (median of pairwise differences). */
  shift: number;
}

export interface CompareOptions {
  /** Smallest relative change reported (default 0.05: 5%). */
  threshold?: number;
  /** Significance level of the U test (default 0.01). */
  alpha?: number;
  /** Confidence of the bootstrap interval (default 0.95). */
  confidence?: number;
  /** Bootstrap resamples (default 2000). */
  resamples?: number;
  /** Seed of the bootstrap's generator (default 1). */
  seed?: number;
}

/** A small, fast, seedable generator (mulberry32): uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The standard normal distribution function (Abramowitz-Stegun 7.1.26 erf, error < 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** Mann-Whitney U of `a` against `b`: U of a, and the two-sided p-value. */
export function mannWhitney(a: readonly number[], b: readonly number[]): { u: number; p: number } {
  const n1 = a.length;
  const n2 = b.length;
  if (n1 === 0 || n2 === 0) throw new Error('Mann-Whitney needs samples on both sides');
  const all = [...a.map((v) => ({ v, first: true })), ...b.map((v) => ({ v, first: false }))].sort((x, y) => x.v - y.v);
  // Mid-ranks for ties, and the tie term of the variance.
  let rankSumA = 0;
  let ties = 0;
  for (let i = 0; i < all.length; ) {
    let j = i;
    while (j + 1 < all.length && all[j + 1]!.v === all[i]!.v) j++;
    const rank = (i + j) / 2 + 1;
    const count = j - i + 1;
    ties += count ** 3 - count;
    for (let k = i; k <= j; k++) if (all[k]!.first) rankSumA += rank;
    i = j + 1;
  }
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const n = n1 + n2;
  const mean = (n1 * n2) / 2;
  const variance = ((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1)));
  if (variance <= 0) return { u, p: 1 }; // every sample equal
  const z = (Math.abs(u - mean) - 0.5) / Math.sqrt(variance);
  return { u, p: Math.min(1, 2 * (1 - normalCdf(Math.max(0, z)))) };
}

/** At most this many samples per side enter the pairwise differences (the product is sorted). */
const HL_MAX_SIDE = 1000;

/**
 * Hodges-Lehmann shift estimate: the median of all differences b[j] - a[i]. A side with
 * more than HL_MAX_SIDE samples is represented by that many evenly spaced order statistics.
 */
export function hodgesLehmann(a: readonly number[], b: readonly number[]): number {
  const xs = thin(a);
  const ys = thin(b);
  const diffs = new Float64Array(xs.length * ys.length);
  let k = 0;
  for (const y of ys) for (const x of xs) diffs[k++] = y - x;
  diffs.sort();
  return quantileSorted(diffs, 0.5);
}

function thin(values: readonly number[]): number[] {
  const sorted = [...values].sort((x, y) => x - y);
  if (sorted.length <= HL_MAX_SIDE) return sorted;
  return Array.from({ length: HL_MAX_SIDE }, (_, i) => sorted[Math.round((i * (sorted.length - 1)) / (HL_MAX_SIDE - 1))]!);
}

/** The verdict on NEW against OLD (module comment). */
export function compareSamples(oldSamples: readonly number[], newSamples: readonly number[], options: CompareOptions = {}): Comparison {
  const threshold = options.threshold ?? 0.05;
  const alpha = options.alpha ?? 0.01;
  const confidence = options.confidence ?? 0.95;
  const resamples = options.resamples ?? 2000;
  const random = seededRandom(options.seed ?? 1);
  const oldMedian = median(oldSamples);
  const ratio = median(newSamples) / oldMedian;
  // Typed arrays sort numerically in native code, several times faster than Array#sort.
  const scratch = new Float64Array(Math.max(oldSamples.length, newSamples.length));
  const draw = (xs: readonly number[]): number => {
    const r = scratch.subarray(0, xs.length);
    for (let i = 0; i < xs.length; i++) r[i] = xs[Math.floor(random() * xs.length)]!;
    r.sort();
    return quantileSorted(r, 0.5);
  };
  const ratios: number[] = [];
  for (let i = 0; i < resamples; i++) ratios.push(draw(newSamples) / draw(oldSamples));
  ratios.sort((x, y) => x - y);
  const ratioLow = quantileSorted(ratios, (1 - confidence) / 2);
  const ratioHigh = quantileSorted(ratios, 1 - (1 - confidence) / 2);
  const { p } = mannWhitney(oldSamples, newSamples);
  let verdict: Verdict = 'no change';
  if (p < alpha && ratioLow > 1 + threshold) verdict = 'regression';
  else if (p < alpha && ratioHigh < 1 - threshold) verdict = 'improvement';
  return { verdict, ratio, ratioLow, ratioHigh, p, shift: hodgesLehmann(oldSamples, newSamples) };
}
