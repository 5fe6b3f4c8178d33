// formatCount groups digits by hand (no ICU at start-up); it must print what
// toLocaleString('en-US') prints. escapeControl, escaped and jsonText show the control
// characters of text from elsewhere instead of letting a terminal act on them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeControl, escaped, formatCount, formatTable, jsonText } from '../../daemon/cli/format.ts';

test('formatCount prints what toLocaleString("en-US") prints', () => {
  const table = [
    0,
    1,
    -1,
    12,
    999,
    1000,
    -1000,
    12_345,
    100_000,
    999_999,
    1_000_000,
    4_619_582,
    78_580,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    1.5,
    1e21,
    -0,
  ];
  for (const n of table) assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  let x = 1;
  for (let i = 0; i < 2000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const n = Math.floor(x / 2 ** (i % 31)) * (i % 7 === 0 ? -1 : 1);
    assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  }
});

test('formatTable pads every column but the last to its widest cell', () => {
  assert.deepEqual(
    formatTable(
      ['ID', 'NAME', 'NOTE'],
      [
        ['1', 'alpha', ''],
        ['22', 'b', 'last column as it is'],
      ],
    ),
    ['ID  NAME   NOTE', '1   alpha', '22  b      last column as it is'],
  );
});

test('escapeControl shows every control character visibly and leaves other text as it is', () => {
  const rows: Array<[string, string]> = [
    ['laptop', 'laptop'],
    ['ünïcödé 日本語 \u{1f680}', 'ünïcödé 日本語 \u{1f680}'],
    ['a\n\u001b[2J', 'a\\n\\x1b[2J'],
    ['\r\t', '\\r\\t'],
    ['\u0000\u0007\u007f', '\\x00\\x07\\x7f'],
    ['8-bit CSI \u009b2J', '8-bit CSI \\x9b2J'],
    ['good\u202eevil', 'good\\u202eevil'],
    ['\u061c\u200e\u200f\u2028\u2029\u2066\u2069', '\\u061c\\u200e\\u200f\\u2028\\u2029\\u2066\\u2069'],
    // A backslash is shown as it is: the output is for reading, not for parsing back.
    ['C:\\temp', 'C:\\temp'],
  ];
  for (const [text, shown] of rows) {
    assert.equal(escapeControl(text), shown, JSON.stringify(text));
    // What is shown holds none, so showing it again changes nothing.
    assert.equal(escapeControl(shown), shown, `again: ${JSON.stringify(text)}`);
  }
});

test('escaped escapes every interpolated value and none of the literal text', () => {
  const name = 'a\n2026-01-01T00:00:00.000Z  api_key.revoked';
  assert.equal(escaped`key ${'key_1'} (${name}) revoked; ${3} ended`, 'key key_1 (a\\n2026-01-01T00:00:00.000Z  api_key.revoked) revoked; 3 ended');
  assert.equal(escaped`a\tb ${'\t'}`, 'a\tb \\t', 'a tab the program wrote stays');
  assert.equal(escaped`${undefined} ${null}`, 'undefined null');
});

test('jsonText is JSON of the same value, with no control character outside the indentation', () => {
  const value = { name: 'a\n\u001b[2J\u009b\u007f\u202e\u2028', plain: 'ok', nested: [{ id: 'x\u2066' }] };
  for (const space of [undefined, 2]) {
    const text = jsonText(value, space);
    assert.deepEqual(JSON.parse(text), value, `space ${space}`);
    const body =
      space === undefined
        ? text
        : text
            .split('\n')
            .map((l) => l.trimStart())
            .join('');
    assert.equal(escapeControl(body), body, `nothing left to escape (space ${space})`);
  }
  assert.equal(jsonText({ a: '\u009b' }), '{"a":"\\u009b"}');
  assert.equal(jsonText([1, 'x'], 2), JSON.stringify([1, 'x'], null, 2), 'clean values: what JSON.stringify gives');
});
