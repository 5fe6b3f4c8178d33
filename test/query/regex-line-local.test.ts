import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lineLocalOf } from '../../daemon/query/regex-line-local.ts';
import { parseForAnalysis } from '../../daemon/query/re2-syntax.ts';

// [pattern, case-insensitive, every match within one line]
const TABLE: Array<[string, boolean, boolean]> = [
  ['[A-Z][a-z]+[A-Z][a-z]+Exception', false, true],
  ['foo', false, true],
  ['^foo$', false, true],
  ['\\bu(8|16|32|64)\\b', false, true],
  ['a.*b', false, true],
  ['(?s)a.*b', false, false],
  ['a\\nb', false, false],
  ['a\\sb', false, false],
  ['a[^x]b', false, false],
  ['a[^\\n]b', false, true],
  ['a\\Sb', false, true],
  ['a\\Db', false, false],
  ['a[\\x00-\\x20]b', false, false],
  ['a[[:space:]]b', false, false],
  ['a[[:alpha:]]b', false, true],
  ['a\\pLb', false, false], // Unicode classes are not modelled
  ['a\\Cb', false, false],
  ['\\Afoo', false, false],
  ['foo\\z', false, false],
  ['(?-m)^foo', false, false],
  ['(?-m)foo$', false, false],
  ['(?i)foo', true, true],
  ['a(\\n){0}b', false, true],
  ['a(\\n)?b', false, false],
  ['(', false, false], // not parsed: nothing claimed
];

test('line-local analysis', () => {
  for (const [pattern, ci, want] of TABLE) {
    assert.equal(lineLocalOf(parseForAnalysis(pattern, { caseInsensitive: ci })), want, pattern);
  }
});
