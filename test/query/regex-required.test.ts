import { test } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { requiredLiteral } from '../../daemon/query/regex-required.ts';
import { regexFlags } from '../../daemon/query/terms.ts';
import { prng } from '../helpers/corpus.ts';

// (a) Table: pattern, case-insensitive term, the longest string every match contains.

const TABLE: Array<[pattern: string, ci: boolean, expected: string | null]> = [
  // The motivating query: classes around a case-sensitive word.
  ['[A-Z][a-z]+[A-Z][a-z]+Exception', false, 'Exception'],
  ['[A-Z][a-z]+[A-Z][a-z]+Exception', true, null],
  ['netif_receive_skb(_list)?\\(', false, 'netif_receive_skb'],
  ['\\bu(8|16|32|64)\\b', false, 'u'],
  ['hello', false, 'hello'],
  // Alternation: only what every branch requires.
  ['foo|bar', false, null],
  ['foobar|barbaz', false, 'bar'],
  ['xfooy|zfooq|foo', false, 'foo'],
  ['(foo|foo)bar', false, 'foobar'],
  ['(xabcx|yabcy)+z', false, 'abc'],
  ['(?:foo|)bar', false, 'bar'],
  ['a|', false, null],
  ['(foo|bar)baz', false, 'baz'],
  // Quantifiers: min 0 requires nothing, min >= 1 the child's strings.
  ['abc?d', false, 'ab'],
  ['abc*def', false, 'def'],
  ['(abc)*', false, null],
  ['(abc)?x', false, 'x'],
  ['(abc){0,3}xy', false, 'xy'],
  ['(abc)+', false, 'abc'],
  ['(abc)+?', false, 'abc'],
  ['(abc){2,}', false, 'abcabc'],
  ['x{3}', false, 'xxx'],
  ['(ab){2}c', false, 'ababc'],
  ['ab{0}c', false, 'ac'],
  ['a(?:bc){0}', false, 'a'],
  ['a{1000}', false, 'a'.repeat(1000)],
  ['a{1000}b{1000}', false, 'a'.repeat(1000) + 'b'.repeat(24)],
  // Nested groups pass their strings through; exact groups join the run.
  ['((foo)(bar))baz', false, 'foobarbaz'],
  ['(?P<w>foo)(?<n>bar)', false, 'foobar'],
  ['x(?:(?:foo)+bar)+y', false, 'foo'],
  ['((a|b)cde)+', false, 'cde'],
  // Case folding: (?i), (?i:...), scoped flags, a case-insensitive term.
  ['(?i)Exception', false, null],
  ['(?i:foo)Bar', false, 'Bar'],
  ['Foo(?i)Bar', false, 'Foo'],
  ['(?:(?i)foo)Bar', false, 'Bar'],
  ['(?i)foo(?-i)Bar', false, 'Bar'],
  ['(?i)foo_123', false, '_123'],
  ['Foo', true, null],
  ['foo_123', true, '_123'],
  ['(?-i)Foo', true, 'Foo'],
  ['(?i)k', false, null],
  ['(?i)[.]x', false, '.'],
  ['(?s).Foo', false, 'Foo'],
  ['(?U)a+Foo', false, 'Foo'],
  // Non-ASCII: whole characters, longest by UTF-8 length.
  ['café', false, 'café'],
  ['Straße\\d', false, 'Straße'],
  ['日本語+', false, '日本'],
  ['éé.abc', false, 'éé'],
  ['(?i)é', false, null],
  ['(?i)日本', false, '日本'],
  ['\\x41BC', false, 'ABC'],
  ['\\u00e9t', false, 'ét'],
  ['\\x{1F600}!', false, '😀!'],
  // Escaped metacharacters and single-member classes are literals.
  ['a\\.b', false, 'a.b'],
  ['f\\(x\\)', false, 'f(x)'],
  ['[.]com', false, '.com'],
  ['[a]b[^c]', false, 'ab'],
  ['\\Qa.b*\\E+', false, 'a.b'],
  // Assertions end a run.
  ['^foo$', false, 'foo'],
  ['a\\bbc', false, 'bc'],
  ['\\bfoo\\b', false, 'foo'],
  // Classes and wildcards require nothing.
  ['[a-z]+', false, null],
  ['[^x]abc', false, 'abc'],
  ['[Ee]rror', false, 'rror'],
  ['\\d+px', false, 'px'],
  ['.', false, null],
  ['\\C', false, null],
  ['\\pL+x', false, 'x'],
  ['', false, null],
  ['(?:)', false, null],
  // Rejected by RE2: no claim.
  ['(', false, null],
];

test('required literals: table', () => {
  for (const [pattern, ci, expected] of TABLE) {
    assert.equal(requiredLiteral(pattern, { caseInsensitive: ci }), expected, `${JSON.stringify(pattern)} ci=${ci}`);
  }
});

// (b) Every table pattern with a claim, on documents built to match it or nearly: each
// match RE2 finds contains the claimed string.

test('required literals: every RE2 match of a table pattern contains the claim', () => {
  const docs = [
    'FooBarException fooBarException FooBarexception',
    'netif_receive_skb( netif_receive_skb_list(',
    'u8 u16 u64',
    'foobar barbaz xfooy zfooq',
    'abd abcd abccd adef abdef',
    'x abcx abcabcxy abcabc xxx ababc ac a',
    'foobarbaz',
    'xfoobary xfoofoobarfoobary',
    'acde bcdeacde',
    'EXCEPTION FOOBar fooBar FooBAR Foobar FOO_123 foo_123',
    'k K \u212A .x .X',
    'café Straße1 日本語語 éé.abc ÉÉxabc é É 日本 ABC ét 😀!',
    'a.b f(x) .com abx a.b*** a.b*',
    'foo a bc a bbc',
    'xabc error Error 12px ♥x',
    'Foo FOO foo Bar BAR',
  ].join('\n');
  let checked = 0;
  for (const [pattern, ci, expected] of TABLE) {
    if (expected === null) continue;
    const re = new RE2(pattern, regexFlags(!ci));
    for (const m of docs.matchAll(re as unknown as RegExp)) {
      checked++;
      assert.ok(m[0].includes(expected), `${JSON.stringify(pattern)} matched ${JSON.stringify(m[0])} without ${JSON.stringify(expected)}`);
    }
  }
  assert.ok(checked > 50, `only ${checked} matches checked`);
});

// (c) Random patterns over a small alphabet, random documents over the same letters: the
// claim must be in every match (the soundness rule), and the documents must often contain
// matches that skip optional parts, so a wrong claim is found.

const ATOMS = ['a', 'b', 'A', 'é', 'É', '_', 'ab', 'ba', '[ab]', '.', '\\b', '(?i:a)', '(?i:é)', '[a]', '\\.'];
const QUANTIFIERS = ['', '', '', '?', '*', '+', '{0,2}', '{2}', '{1,}', '??', '{0}'];
const LETTERS = ['a', 'b', 'A', 'B', 'é', 'É', '_', ' ', '.'];

function randomPattern(r: ReturnType<typeof prng>, depth: number): string {
  const parts: string[] = [];
  const n = 1 + r.int(4);
  for (let i = 0; i < n; i++) {
    let atom: string;
    if (depth > 0 && r.chance(0.3)) {
      const branches = Array.from({ length: 1 + r.int(3) }, () => randomPattern(r, depth - 1));
      atom = `(${r.chance(0.3) ? '?:' : r.chance(0.2) ? '?i:' : ''}${branches.join('|')})`;
    } else atom = r.pick(ATOMS);
    const q = atom === '\\b' ? '' : r.pick(QUANTIFIERS);
    parts.push(q !== '' && atom.length > 1 && !atom.startsWith('(') && !atom.startsWith('[') && !atom.startsWith('\\') ? `(?:${atom})${q}` : atom + q);
  }
  return parts.join('');
}

test('required literals: random patterns, every match contains the claim', () => {
  const r = prng(20261201);
  let claims = 0;
  let matches = 0;
  for (let i = 0; i < 600; i++) {
    const pattern = randomPattern(r, 2);
    const ci = r.chance(0.2);
    const required = requiredLiteral(pattern, { caseInsensitive: ci });
    if (required === null) continue;
    claims++;
    const re = new RE2(pattern, regexFlags(!ci));
    for (let d = 0; d < 40; d++) {
      const doc = Array.from({ length: r.int(14) }, () => r.pick(LETTERS)).join('');
      for (const m of doc.matchAll(re as unknown as RegExp)) {
        matches++;
        assert.ok(
          m[0].includes(required),
          `${JSON.stringify(pattern)} ci=${ci} claims ${JSON.stringify(required)}, matched ${JSON.stringify(m[0])} in ${JSON.stringify(doc)}`,
        );
      }
    }
  }
  assert.ok(claims > 200 && matches > 1000, `too little exercised: ${claims} claims, ${matches} matches`);
});
