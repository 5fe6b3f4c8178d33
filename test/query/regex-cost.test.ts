// The estimate of a regular expression's compile cost (regex-cost.ts): a table of patterns
// with the estimate each must stay under or exceed, the growth with counted repetitions
// that the bound exists for, and the parser's refusal of what exceeds it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REGEX_COST, patternCost } from '../../daemon/query/regex-cost.ts';

const within: string[] = [
  'EXPORT_SYMBOL_GPL',
  'struct file_operations [a-z_]+ = \\{',
  '(foo|bar)baz[0-9]+',
  '\\bkmalloc\\(',
  '[A-Z][a-z]+[A-Z][a-z]+Exception',
  '.{0,1000}',
  '.{0,1000}'.repeat(2),
  '[a-z]{1000}',
  '\\pL{100}',
  '(?s:.){1000}',
  'a'.repeat(16_000),
  Array.from({ length: 2000 }, (_, i) => `w${i}`).join('|'),
];

const over: string[] = ['.{0,1000}'.repeat(3), '.{0,1000}'.repeat(1800), '\\pL{1000}', '[a-z]{1000}'.repeat(30), '(\\w{100}){100}'];

test('ordinary and large-but-cheap patterns are within the bound', () => {
  for (const p of within) assert.ok(patternCost(p) <= MAX_REGEX_COST, `${p.slice(0, 40)}: ${patternCost(p)}`);
});

test('patterns whose compiled form explodes are over the bound', () => {
  for (const p of over) assert.ok(patternCost(p) > MAX_REGEX_COST, `${p.slice(0, 40)}: ${patternCost(p)}`);
});

test('the estimate grows with each counted repetition, as RE2 copies its operand out', () => {
  const costs = [1, 2, 4, 8].map((n) => patternCost('.{0,1000}'.repeat(n)));
  for (let i = 1; i < costs.length; i++) assert.ok(costs[i]! >= 2 * costs[i - 1]! - 10, costs.join(' '));
  assert.ok(patternCost('x{10}') < patternCost('x{100}'));
  assert.ok(patternCost('(ab){10}') > patternCost('ab{10}'));
});

test('a pattern this parser does not take costs nothing here (RE2 refuses it while parsing)', () => {
  assert.equal(patternCost('(foo'), 0);
  assert.equal(patternCost('a{1001}'), 0);
});
