// The rule of names (auth/control-characters.ts, auth/key-name.ts): which characters a name
// may not hold, the same in the function and in the JSON Schema pattern, and an API key's
// name as POST /api/keys and `trawl keys create` check it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlCharacterProblem, NO_CONTROL_CHARACTERS, replaceControlCharacters } from '../../daemon/auth/control-characters.ts';
import { KEY_NAME_MAX_LENGTH, keyNameProblem } from '../../daemon/auth/key-name.ts';

/** The class written out by ranges, independently of the module's source text. */
const REFUSED: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x1f], // C0
  [0x7f, 0x9f], // DEL and C1
  [0x061c, 0x061c], // Arabic letter mark
  [0x200e, 0x200f], // left-to-right and right-to-left marks
  [0x2028, 0x2029], // line and paragraph separators
  [0x202a, 0x202e], // embeddings and overrides
  [0x2066, 0x2069], // isolates
];
const refused = (code: number) => REFUSED.some(([from, to]) => code >= from && code <= to);

test('every code point of the Basic Multilingual Plane: refused exactly when it is in the class, by the function, the pattern and the replacement alike', () => {
  const pattern = new RegExp(NO_CONTROL_CHARACTERS, 'u');
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue; // surrogates: not characters on their own
    const c = String.fromCharCode(code);
    const text = `a${c}b`;
    const hex = code.toString(16);
    assert.equal(controlCharacterProblem('name', text) !== undefined, refused(code), `U+${hex}: the function`);
    assert.equal(!pattern.test(text), refused(code), `U+${hex}: the schema's pattern`);
    assert.equal(
      replaceControlCharacters(text, () => '?'),
      refused(code) ? 'a?b' : text,
      `U+${hex}: the replacement`,
    );
  }
  // Beyond the plane: emoji and other astral characters are names like any other.
  assert.equal(controlCharacterProblem('name', 'ci \u{1f680} \u{20000}'), undefined);
  assert.ok(pattern.test('ci \u{1f680}'));
});

test('the refusal names the field, the character and where it is', () => {
  const rows: Array<{ text: string; expected: string | undefined }> = [
    { text: 'laptop', expected: undefined },
    { text: 'CI pipeline (nightly) – ünïcödé, 日本語', expected: undefined },
    { text: '', expected: undefined },
    { text: 'a\nb', expected: 'name may not contain control or bidirectional-override characters (U+000A at character 2)' },
    { text: '\u001b[2J', expected: 'name may not contain control or bidirectional-override characters (U+001B at character 1)' },
    { text: 'ab\u0000', expected: 'name may not contain control or bidirectional-override characters (U+0000 at character 3)' },
    { text: 'x\u009b2J', expected: 'name may not contain control or bidirectional-override characters (U+009B at character 2)' },
    { text: 'good\u202eevil', expected: 'name may not contain control or bidirectional-override characters (U+202E at character 5)' },
    { text: 'tab\there', expected: 'name may not contain control or bidirectional-override characters (U+0009 at character 4)' },
    { text: 'a\u2028b\nc', expected: 'name may not contain control or bidirectional-override characters (U+2028 at character 2)' },
  ];
  for (const { text, expected } of rows) assert.equal(controlCharacterProblem('name', text), expected, JSON.stringify(text));
  assert.match(controlCharacterProblem('--email', 'a@b\r')!, /^--email may not contain/);
});

test("an API key's name: not blank, at most the bound, no control characters", () => {
  const rows: Array<{ name: string; expected: RegExp | undefined }> = [
    { name: 'laptop', expected: undefined },
    { name: 'n'.repeat(KEY_NAME_MAX_LENGTH), expected: undefined },
    { name: 'n'.repeat(KEY_NAME_MAX_LENGTH + 1), expected: /^name must be at most 100 characters, got 101$/ },
    { name: '', expected: /^name must not be blank/ },
    { name: 'a\n\u001b[2J', expected: /^name may not contain control or bidirectional-override characters \(U\+000A at character 2\)$/ },
    { name: 'rtl\u2067', expected: /U\+2067/ },
  ];
  for (const { name, expected } of rows) {
    const problem = keyNameProblem(name);
    if (expected === undefined) assert.equal(problem, undefined, JSON.stringify(name));
    else assert.match(problem ?? '', expected, JSON.stringify(name));
  }
});
