// How many units a fan-out asks again whole when the merge needs a speculative one before
// its cut (fan-out.ts unitsToCut): as many as the cut still needs at the rate the units
// before gave ranges and content, at least one, and every one left when that rate says
// nothing. Table test.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unitsToCut } from '../../daemon/cluster/fan-out.ts';

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
