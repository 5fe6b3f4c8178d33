// How many units a fan-out asks again whole when the merge needs a speculative one before
// its cut (fan-out.ts unitsToCut): as many as the cut still needs at the rate the units
// before gave ranges and content, at least one, and every one left when that rate says
// nothing. Table test. And the cut a part asked again applies to its own counts
// (cutAfter): the search's, less what the merge already took.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cutAfter, unitsToCut } from '../../daemon/cluster/fan-out.ts';
import { pastCut } from '../../daemon/search/protocol.ts';

const CUT = { ranges: 100, rankedRanges: 300, loadedKiB: 8192 };

test('units the cut still needs, from the rate of the units taken', () => {
  const cases: Array<[taken: number, ranges: number, readKiB: number, want: number, why: string]> = [
    [3, 150, 30, 4, 'past cut.ranges; 151 more ranked ranges at 50 a unit (reading would need 8,163 KiB more at 10)'],
    [3, 60, 30, 13, 'below cut.ranges: 41 more at 20 a unit (3); then 241 ranked at 20 (13) or 8,163 KiB at 10 (817)'],
    [3, 60, 6000, 3, 'below cut.ranges at 20 a unit: 3; reading passes in 2'],
    [3, 300, 10, 1, 'exactly rankedRanges: one unit more may pass it'],
    [3, 0, 0, Infinity, 'nothing found so far: no rate, every unit left'],
    [3, 0, 600, Infinity, 'content read but no range: cut.ranges is never reached at this rate'],
    [4, 2, 100, 324, 'half a range a unit: cut.ranges in 198, rankedRanges in 598, loadedKiB in 324'],
    [3, 200, 9000, 1, 'read past loadedKiB and past cut.ranges: the cut has passed; at least one'],
  ];
  for (const [taken, ranges, readKiB, want, why] of cases) assert.equal(unitsToCut(CUT, taken, ranges, readKiB), want, why);
});

test('a part asked again after the merge took some ranges stops where the merge would', () => {
  // pastCut over the part's own counts, with the cut shifted, must agree with pastCut over
  // the merge's counts (the part's added to what was taken) at every point.
  const takens = [
    { ranges: 0, readKiB: 0 },
    { ranges: 60, readKiB: 30 },
    { ranges: 150, readKiB: 8000 },
    { ranges: 301, readKiB: 10 },
  ];
  let passes = 0;
  for (const taken of takens) {
    const cut = cutAfter(CUT, taken);
    for (const ranges of [0, 1, 40, 41, 100, 150, 151, 240, 241, 400]) {
      for (const readKiB of [0, 100, 192, 193, 8162, 8163, 9000]) {
        const merge = pastCut(CUT, taken.ranges + ranges, taken.readKiB + readKiB);
        assert.equal(pastCut(cut, ranges, readKiB), merge, `taken ${JSON.stringify(taken)}, part ${ranges} ranges ${readKiB} KiB`);
        if (merge) passes++;
      }
    }
  }
  // The table covers both sides of the cut.
  assert.ok(passes > 0 && passes < takens.length * 70);
});
