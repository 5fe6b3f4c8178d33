// The one rounding of figures for people (daemon/cli/format.ts): `trawl index`'s summary,
// `trawl bench run`'s report and `trawl bench compare`'s table all print bytes through it,
// so the same number reads the same everywhere.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatBytes, formatMs, sig3 } from '../../daemon/cli/format.ts';

describe('formatBytes', () => {
  const table: Array<[number, string]> = [
    [0, '0 B'],
    [999, '999 B'],
    [999.4, '999 B'],
    // Whole bytes never read "1000 B": that is a kilobyte.
    [999.5, '1.00 KB'],
    [1234, '1.23 KB'],
    [12_345, '12.3 KB'],
    [780_800, '781 KB'],
    // 999.96 KB rounds to three digits as 1000: it is shown in the next unit.
    [999_960, '1.00 MB'],
    [1_310_000, '1.31 MB'],
    [282_300_000, '282 MB'],
    [25_300_000_000, '25.3 GB'],
    [1.5e12, '1.50 TB'],
  ];
  for (const [n, text] of table) it(`${n} → ${text}`, () => assert.equal(formatBytes(n), text));
});

describe('sig3', () => {
  it('keeps three significant digits without exponent notation', () => {
    assert.deepEqual([0, 0.5, 1.5, 12.34, 123.4, 999.4, 999.5, 1234.5].map(sig3), ['0', '0.500', '1.50', '12.3', '123', '999', '1000', '1235']);
  });
});

describe('formatMs', () => {
  it('about three significant digits, seconds from 10 s, a dash when unknown', () => {
    assert.deepEqual([0.391, 10.94, 123.4, 9_999, 12_345, null, undefined, NaN].map(formatMs), [
      '0.39 ms',
      '10.9 ms',
      '123 ms',
      '9999 ms',
      '12.3 s',
      '—',
      '—',
      '—',
    ]);
  });
});
