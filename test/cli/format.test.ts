// formatCount groups digits by hand (no ICU at start-up); it must print what
// toLocaleString('en-US') prints.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatCount, formatTable } from '../../daemon/cli/format.ts';

test('formatCount prints what toLocaleString("en-US") prints', () => {
  const table = [0, 1, -1, 12, 999, 1000, -1000, 12_345, 100_000, 999_999, 1_000_000, 4_619_582, 78_580, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 1.5, 1e21, -0];
  for (const n of table) assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  let x = 1;
  for (let i = 0; i < 2000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const n = Math.floor(x / 2 ** (i % 31)) * (i % 7 === 0 ? -1 : 1);
    assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  }
});

test('formatTable pads every column but the last to its widest cell', () => {
  assert.deepEqual(formatTable(['ID', 'NAME', 'NOTE'], [['1', 'alpha', ''], ['22', 'b', 'last column as it is']]), ['ID  NAME   NOTE', '1   alpha', '22  b      last column as it is']);
});
