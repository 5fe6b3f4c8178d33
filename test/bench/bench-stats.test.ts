// The statistics of `trawl bench compare` (bench/suite/stats.ts): the U test and the
// shift estimate against values worked out by hand, and the verdicts on synthetic
// latency samples: a 30% slowdown is a regression, a 30% speed-up an improvement, the
// same distribution drawn with another seed no change, and a 3% shift no change either
// (significant with this many samples, but under the 5% threshold).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, quantileSorted } from '../../bench/suite/percentiles.ts';
import { compareSamples, hodgesLehmann, mannWhitney, normalCdf, seededRandom } from '../../bench/suite/stats.ts';

/** Log-normal latencies (median `medianMs`, spread sigma) from a seeded generator, with a few slow outliers. */
function latencies(n: number, medianMs: number, seed: number, sigma = 0.25): number[] {
  const random = seededRandom(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const outlier = random() < 0.01 ? 5 : 1;
    out.push(medianMs * Math.exp(sigma * z) * outlier);
  }
  return out;
}

const close = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual}, expected ${expected} ± ${tolerance}`);

test('normal distribution function', () => {
  close(normalCdf(0), 0.5, 1e-7, 'Φ(0)');
  close(normalCdf(1.959964), 0.975, 1e-6, 'Φ(1.96)');
  close(normalCdf(-1.959964), 0.025, 1e-6, 'Φ(-1.96)');
  close(normalCdf(3), 0.99865, 1e-5, 'Φ(3)');
});

test('quantiles and medians', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(quantileSorted([10, 20, 30, 40, 50], 0.25), 20);
  assert.equal(quantileSorted([10, 20], 0.9), 19);
  assert.throws(() => median([]), /no samples/);
});

test('Mann-Whitney U: worked examples', () => {
  // Complete separation: U = 0; z = (|0 - 4.5| - 0.5) / sqrt(3·3/12 · 7) = 1.7457, p = 0.08086.
  const separated = mannWhitney([1, 2, 3], [4, 5, 6]);
  assert.equal(separated.u, 0);
  close(separated.p, 0.08086, 1e-4, 'p, separated');
  // The other way round: U = n1·n2, the same p.
  assert.equal(mannWhitney([4, 5, 6], [1, 2, 3]).u, 9);
  // Ties get mid-ranks: a = [1, 2, 2], b = [2, 3, 3]: ranks 1, 3, 3 | 3, 5.5, 5.5 → R_a = 7, U = 1.
  assert.equal(mannWhitney([1, 2, 2], [2, 3, 3]).u, 1);
  // Identical samples: no evidence at all.
  assert.equal(mannWhitney([5, 5, 5], [5, 5, 5]).p, 1);
  assert.throws(() => mannWhitney([], [1]), /both sides/);
});

test('Hodges-Lehmann shift', () => {
  assert.equal(hodgesLehmann([1, 2, 3], [11, 12, 13]), 10);
  assert.equal(hodgesLehmann([1, 2, 3], [1, 2, 3]), 0);
  // Large samples are thinned to order statistics: a constant shift survives.
  const a = latencies(3000, 10, 7);
  close(
    hodgesLehmann(
      a,
      a.map((x) => x + 2),
    ),
    2,
    0.05,
    'shift of +2 on 3000 samples',
  );
});

test('verdicts on synthetic latency samples', () => {
  const old = latencies(1000, 10, 1);
  const cases: Array<{ what: string; samples: number[]; verdict: string }> = [
    { what: 'samples shifted by 30% (slower)', samples: old.map((x) => x * 1.3), verdict: 'regression' },
    { what: 'a new run 30% slower (other seed)', samples: latencies(1000, 13, 2), verdict: 'regression' },
    { what: 'a new run 30% faster (other seed)', samples: latencies(1000, 7, 3), verdict: 'improvement' },
    { what: 'the same distribution, another seed', samples: latencies(1000, 10, 4), verdict: 'no change' },
    { what: 'the same distribution, another seed, fewer samples', samples: latencies(100, 10, 5), verdict: 'no change' },
    { what: 'a 3% wobble', samples: latencies(1000, 10.3, 6), verdict: 'no change' },
    { what: 'a 30% slowdown seen in only 5 samples', samples: latencies(5, 13, 8), verdict: 'no change' },
  ];
  const wrong: string[] = [];
  for (const c of cases) {
    const r = compareSamples(old, c.samples);
    if (r.verdict !== c.verdict)
      wrong.push(
        `${c.what}: ${r.verdict} (ratio ${r.ratio.toFixed(3)} [${r.ratioLow.toFixed(3)}, ${r.ratioHigh.toFixed(3)}], p ${r.p.toExponential(2)}), expected ${c.verdict}`,
      );
  }
  assert.deepEqual(wrong, []);
  const slower = compareSamples(
    old,
    old.map((x) => x * 1.3),
  );
  close(slower.ratio, 1.3, 1e-9, 'ratio of medians');
  assert.ok(slower.ratioLow > 1.05 && slower.ratioLow <= 1.3 && slower.ratioHigh >= 1.3, `interval [${slower.ratioLow}, ${slower.ratioHigh}]`);
  assert.ok(slower.shift > 0);
  // A real but small change: with tight samples a 3% slowdown is certain (p tiny, interval
  // above 1) yet under the 5% threshold, so not a regression; at a 1% threshold it is one.
  const tightOld = latencies(3000, 10, 11, 0.05);
  const tightNew = latencies(3000, 10.3, 12, 0.05);
  const small = compareSamples(tightOld, tightNew, { resamples: 500 });
  assert.ok(small.p < 1e-6 && small.ratioLow > 1.01, `a certain 3% change: p ${small.p}, interval [${small.ratioLow}, ${small.ratioHigh}]`);
  assert.equal(small.verdict, 'no change');
  assert.equal(compareSamples(tightOld, tightNew, { resamples: 500, threshold: 0.01 }).verdict, 'regression');
  // Seeded: the same inputs give the same answer.
  assert.deepEqual(compareSamples(old, latencies(1000, 10, 4)), compareSamples(old, latencies(1000, 10, 4)));
});
