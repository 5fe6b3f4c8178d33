// The indexed matcher's line-local path (matcher.ts findInLines) against the reference
// matcher (RE2 over the whole document) on documents built to hit its edges: several
// occurrences in one line, adjacent lines merged into one window, CRLF, anchors and word
// boundaries at line edges, no final newline, and more occurrences than one scan locates.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Matcher } from '../../daemon/search/matcher.ts';
import { compileTerm } from '../../daemon/query/plan.ts';
import { prng } from '../helpers/corpus.ts';

const many = (n: number, line: (i: number) => string): string => Array.from({ length: n }, (_, i) => line(i)).join('\n');

const CASES: Array<[pattern: string, doc: string]> = [
  ['[A-Z][a-z]+Exception', 'class FooException extends BarException {}\nnone here\nxException\nOneException\nTwoException\n'],
  ['[A-Z][a-z]+Exception', 'NoNewlineAtEndException'],
  ['[A-Z][a-z]+Exception', 'Exception at the start\r\nThenException\r\n'],
  ['^Exception', 'Exception\n Exception\nException'],
  ['Exception$', 'a Exception\nException \nb Exception\r\nException'],
  ['\\bException\\b', 'Exception\nxException\nException_\n(Exception)\n'],
  ['Foo[0-9]+', 'Foo1 Foo22\nFoo\nFoo333\n\nFoo4'],
  ['x_[a-z]+_y', 'x_a_y x_bb_y\nx_c_y\nno\nx__y x_d_y\n'],
  // Not line-local: the whole document is searched (the required literal only rules out).
  ['(?-m)^Exception', 'Exception\nException'],
  ['Foo\\s+Bar', 'Foo\nBar Foo  Bar\nFoo\n\nBar'],
  ['\\AFoo', 'Foo\nFoo'],
  // More occurrences than one scan locates (REQUIRED_SCAN_MAX), with matches after them.
  ['[A-Z]Zqx', many(3000, (i) => (i % 7 === 0 ? `xx AZqx${i}` : `Zqx${i}`))],
  ['[A-Z]Zqx', `${many(70, () => 'Zqx Zqx')}\nBZqx\nCZqx`],
];

test('a line-local regex finds the same matches in the lines holding its literal as in the whole document', () => {
  for (const [pattern, doc] of CASES) {
    const term = compileTerm(pattern, true, true);
    const indexed = new Matcher(term, 'indexed');
    const reference = new Matcher(term, 'reference');
    const buf = Buffer.from(doc);
    for (const max of [1, 3, 1_000_000]) {
      assert.deepEqual(indexed.find(buf, max), reference.find(buf, max), `${pattern} (max ${max}) on ${JSON.stringify(doc.slice(0, 60))}`);
    }
  }
});

test('random documents: line-local regexes agree with RE2 over the whole document', () => {
  const r = prng(20261124);
  const words = ['Exception', 'exception', 'FooException', 'Foo', 'foo', 'Bar', '_', ' ', '  ', '\n', '\r\n', '(', ')', 'X', 'é', 'Ünï'];
  const patterns = ['[A-Z][a-z]+Exception', '\\bFoo\\b', 'Foo[a-z]*$', '^ *Bar', 'Foo[ _]Bar', '[A-Z]\\w*Exception\\(', 'É?Foo'];
  for (let i = 0; i < 300; i++) {
    const doc = Array.from({ length: r.int(200) }, () => r.pick(words)).join('');
    const pattern = r.pick(patterns);
    const term = compileTerm(pattern, true, r.chance(0.8));
    const buf = Buffer.from(doc);
    assert.deepEqual(new Matcher(term, 'indexed').find(buf, 1000), new Matcher(term, 'reference').find(buf, 1000), `${pattern} on ${JSON.stringify(doc)}`);
  }
});
