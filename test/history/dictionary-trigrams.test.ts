// The words of a word counts dictionary holding a literal, from its trigram index
// (history/dictionary-trigrams.ts), against the brute-force answer: every word whose bytes
// hold it. A table of the edge cases, then random dictionaries and literals; zero
// differences is the only pass.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DictionaryTrigrams } from '../../daemon/history/dictionary-trigrams.ts';
import { prng } from '../helpers/corpus.ts';

/** A dictionary as word-counts.ts lays it out: the words in byte order, each followed by "\n", and where each starts. */
function dictionary(words: readonly string[]): { dict: Buffer; starts: Uint32Array; sorted: string[] } {
  const sorted = [...new Set(words)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const dict = Buffer.from(sorted.map((w) => `${w}\n`).join(''));
  const starts = new Uint32Array(sorted.length + 1);
  for (let i = 0; i < sorted.length; i++) starts[i + 1] = starts[i]! + Buffer.byteLength(sorted[i]!) + 1;
  return { dict, starts, sorted };
}

const bruteForce = (sorted: readonly string[], needle: string): number[] => sorted.flatMap((w, i) => (Buffer.from(w).includes(Buffer.from(needle)) ? [i] : []));

const WORDS = ['abc', 'abcabc', 'xabcx', 'getValue', 'get_value', 'GetValue', 'value', 'valuevalue', 'K_abc', 'ſabc', 'z9_'];

/** [what, needle, the words holding it]. */
const CASES: Array<[string, string, string[]]> = [
  ['a whole word, and the words holding it', 'abc', ['K_abc', 'abc', 'abcabc', 'xabcx', 'ſabc']],
  ['a trigram twice in a word lists the word once', 'abcabc', ['abcabc']],
  ['case counts (the dictionary given is the one searched)', 'Value', ['GetValue', 'getValue']],
  ['a literal across two words matches neither', 'valuez9', []],
  ['longer than every word', 'valuevaluevalue', []],
  ['a trigram no word holds', 'qqq', []],
  ['beside a K (its UTF-8 bytes coded apart)', '_abc', ['K_abc']],
  ['digits and underscores', 'z9_', ['z9_']],
  ['every trigram held by some word, the literal by none', 'etValuev', []],
];

for (const [what, needle, want] of CASES) {
  test(`dictionary trigrams: ${what}`, () => {
    const { dict, starts, sorted } = dictionary(WORDS);
    const got = DictionaryTrigrams.of(dict, starts).holding(Buffer.from(needle));
    assert.deepEqual(
      got.map((w) => sorted[w]),
      [...want].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    assert.deepEqual(got, bruteForce(sorted, needle));
  });
}

test('dictionary trigrams: a literal of fewer than 3 bytes is refused', () => {
  const { dict, starts } = dictionary(WORDS);
  assert.throws(() => DictionaryTrigrams.of(dict, starts).holding(Buffer.from('ab')), RangeError);
});

test('dictionary trigrams: random dictionaries and literals, the same words as a scan of every word', () => {
  const r = prng(20261129);
  const alphabet = 'abcAB_1K';
  const letter = () => {
    const c = alphabet[r.int(alphabet.length)]!;
    return c === 'K' ? (r.chance(0.5) ? '\u212a' : 'ſ') : c;
  };
  let differences = 0;
  let found = 0;
  for (let round = 0; round < 40; round++) {
    const words = Array.from({ length: 1 + r.int(300) }, () => Array.from({ length: 3 + r.int(12) }, letter).join(''));
    const { dict, starts, sorted } = dictionary(words);
    const index = DictionaryTrigrams.of(dict, starts);
    for (let q = 0; q < 50; q++) {
      // A piece of a word (ASCII only: what the word counts look up), or letters at random.
      const from = sorted[r.int(sorted.length)]!.replace(/[^\x00-\x7f]/g, 'a');
      const at = r.int(Math.max(1, from.length - 3));
      const needle = r.chance(0.7)
        ? from.slice(at, at + 3 + r.int(from.length - at - 2))
        : Array.from({ length: 3 + r.int(4) }, () => 'abAB_1'[r.int(6)]).join('');
      if (needle.length < 3) continue;
      const want = bruteForce(sorted, needle);
      found += want.length;
      if (JSON.stringify(index.holding(Buffer.from(needle))) !== JSON.stringify(want)) differences++;
    }
  }
  assert.equal(differences, 0);
  assert.ok(found > 500, `the literals were found in ${found} words in all`);
});
