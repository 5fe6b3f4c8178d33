// The word counts file's encoding (history/word-counts.ts) by tables: models written and
// read back (every entry, numbers across varint byte boundaries, negative changes, chain
// starts, words holding K or ſ), the same model giving the same bytes after a read; files whose body is
// wrong in each way the reader checks (refused with an Error, never read past an end); and
// the builder's counting of the change between two versions against counting both whole.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countChanges, countWords } from '../../daemon/history/word-count-build.ts';
import { docsByShard, emptyModel, encodeWordCounts, modelOf, parseWordCounts, readList, type WordCountsModel } from '../../daemon/history/word-counts.ts';
import { prng } from '../helpers/corpus.ts';

const oid = (n: number): Buffer => Buffer.alloc(20, n);
/** A word as the file keys it (its bytes as latin1): "Key" with the Kelvin sign. */
const KEY = Buffer.from('\u212Aey').toString('latin1');

function model(docs: Array<{ path: number; start: boolean }>, paths: string[], words: Record<string, Array<[number, number]>>): WordCountsModel {
  const m = emptyModel();
  m.shards = ['g1-0.trawl'];
  m.paths = paths;
  docs.forEach((d, i) => {
    m.docPath.push(d.path);
    m.blobs.push(oid(i + 1));
    m.starts.push(d.start);
  });
  for (const [w, entries] of Object.entries(words)) m.words.set(w, { last: -1, docs: entries.map((e) => e[0]), deltas: entries.map((e) => e[1]) });
  return m;
}

function entries(m: ReturnType<typeof parseWordCounts>): Record<string, Array<[number, number]>> {
  const out: Record<string, Array<[number, number]>> = {};
  for (let w = 0; w + 1 < m.wordStarts.length; w++) {
    const word = m.dictionary.toString('latin1', m.wordStarts[w]!, m.wordStarts[w + 1]! - 1);
    const list: Array<[number, number]> = [];
    readList(m, w, (doc, delta) => list.push([doc, delta]));
    out[word] = list;
  }
  return out;
}

test('models are written and read back whole, and the same model gives the same bytes', () => {
  const many = Array.from({ length: 300 }, (_, i) => ({ path: i % 3, start: i % 3 === 0 || i < 3 }));
  const cases: Array<{ name: string; m: WordCountsModel; words: Record<string, Array<[number, number]>> }> = [
    { name: 'empty', m: emptyModel(), words: {} },
    {
      name: 'one chain',
      m: model(
        [
          { path: 0, start: true },
          { path: 0, start: false },
          { path: 0, start: false },
        ],
        ['src/a.ts'],
        {
          fooBar: [
            [0, 2],
            [2, -2],
          ],
          quux: [[1, 1]],
          zzz_long_run_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789: [[0, 1]],
          [KEY]: [[2, 1]],
        },
      ),
      words: {
        fooBar: [
          [0, 2],
          [2, -2],
        ],
        quux: [[1, 1]],
        zzz_long_run_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789: [[0, 1]],
        [KEY]: [[2, 1]],
      },
    },
    {
      // Gaps and changes across varint byte boundaries (127/128, 16383/16384), both signs.
      name: 'large numbers',
      m: model(many, ['a', 'b', 'c'], {
        big: [
          [0, 63],
          [1, -64],
          [130, 8191],
          [299, -8192],
        ],
        bigger: [
          [5, 1_000_000],
          [6, -1_000_000],
        ],
      }),
      words: {
        big: [
          [0, 63],
          [1, -64],
          [130, 8191],
          [299, -8192],
        ],
        bigger: [
          [5, 1_000_000],
          [6, -1_000_000],
        ],
      },
    },
  ];
  for (const { name, m, words } of cases) {
    const bytes = encodeWordCounts(m);
    const c = parseWordCounts(bytes);
    assert.equal(c.docs, m.docPath.length, name);
    assert.deepEqual([...c.docPath], m.docPath, name);
    assert.deepEqual([...c.starts], m.starts.map(Number), name);
    assert.equal(
      c.anyFolds,
      [...m.words.keys()].some((w) => /[^\x00-\x7f]/.test(w)),
      name,
    );
    assert.deepEqual(c.paths, m.paths, name);
    assert.deepEqual(c.shards, m.shards, name);
    assert.deepEqual(entries(c), words, name);
    // Sorted by bytes, each followed by "\n".
    const listed = Object.keys(entries(c));
    assert.deepEqual(listed, [...listed].sort(), name);
    assert.ok(encodeWordCounts(modelOf(c)).equals(bytes), `${name}: read and written again, the same bytes`);
  }
});

test('an update appends after the stored entries as a model made whole would', () => {
  const whole = model(
    [
      { path: 0, start: true },
      { path: 0, start: false },
      { path: 1, start: true },
      { path: 0, start: true },
    ],
    ['a', 'b'],
    {
      alpha: [
        [0, 3],
        [1, -1],
        [3, 2],
      ],
      beta: [[2, 1]],
      gamma: [[3, 5]],
    },
  );
  const first = model(
    [
      { path: 0, start: true },
      { path: 0, start: false },
      { path: 1, start: true },
    ],
    ['a', 'b'],
    {
      alpha: [
        [0, 3],
        [1, -1],
      ],
      beta: [[2, 1]],
    },
  );
  const m = modelOf(parseWordCounts(encodeWordCounts(first)));
  m.docPath.push(0);
  m.blobs.push(oid(4));
  m.starts.push(true);
  m.words.get('alpha')!.docs.push(3);
  m.words.get('alpha')!.deltas.push(2);
  m.words.set('gamma', { last: -1, docs: [3], deltas: [5] });
  assert.ok(encodeWordCounts(m).equals(encodeWordCounts(whole)));
});

test('a body wrong in any way the reader checks is refused', () => {
  const good = model(
    [
      { path: 0, start: true },
      { path: 0, start: false },
    ],
    ['a'],
    {
      word: [
        [0, 1],
        [1, 1],
      ],
    },
  );
  const cases: Array<[string, WordCountsModel, RegExp]> = [
    ['a document naming a path it does not hold', { ...good, docPath: [0, 3] }, /names path 3/],
    ['a first document starting no chain', { ...good, starts: [false, false] }, /starts no chain/],
    [
      'a list naming a document past the end',
      model([{ path: 0, start: true }], ['a'], {
        word: [
          [0, 1],
          [5, 1],
        ],
      }),
      /names document 5 of 1/,
    ],
    [
      'a list naming a document twice',
      model(
        [
          { path: 0, start: true },
          { path: 0, start: false },
        ],
        ['a'],
        {
          word: [
            [1, 1],
            [1, 1],
          ],
        },
      ),
      /names document 1/,
    ],
    ['a word shorter than any kept', model([{ path: 0, start: true }], ['a'], { ab: [[0, 1]] }), /too short/],
  ];
  for (const [name, m, message] of cases) {
    const c = (() => {
      try {
        return parseWordCounts(encodeWordCounts(m));
      } catch (err) {
        assert.match((err as Error).message, message, name);
        return undefined;
      }
    })();
    // Lists are checked as they are read.
    if (c !== undefined) assert.throws(() => entries(c), message, name);
  }
});

test('words: runs of ASCII word bytes, K and ſ, of at least 3 bytes', () => {
  const latin1 = (w: string) => Buffer.from(w).toString('latin1');
  const cases: Array<[string, Record<string, number>]> = [
    ['foo bar foo', { foo: 2, bar: 1 }],
    ['ab abc a_b_c x9', { abc: 1, a_b_c: 1 }],
    ['foo.bar(baz)\nqux\r\nfoo', { foo: 2, bar: 1, baz: 1, qux: 1 }],
    // K and ſ are word characters (their case folding is an ASCII letter); é, Ş and a lone lead byte are not.
    ['the \u212Aey and \u017Fet', { the: 1, [latin1('\u212Aey')]: 1, and: 1, [latin1('\u017Fet')]: 1 }],
    ['\u212A\u212A caf\u00e9s \u015Eab x\u212A', { [latin1('\u212A\u212A')]: 1, caf: 1, [latin1('x\u212A')]: 1 }],
    ['\u017F', {}],
  ];
  for (const [text, want] of cases) {
    const got = new Map<string, number>();
    const buf = Buffer.from(text);
    countWords(buf, 0, buf.length, 1, got);
    assert.deepEqual([...got].sort(), Object.entries(want).sort(), JSON.stringify(text));
  }
  // A sequence cut by the end is no word character.
  const cut = new Map<string, number>();
  const bytes = Buffer.from([0x61, 0x62, 0xe2, 0x84]);
  countWords(bytes, 0, bytes.length, 1, cut);
  assert.deepEqual([...cut], []);
});

test('the change between two versions is what counting both whole gives', () => {
  const r = prng(20261128);
  const vocabulary = ['foo', 'fooBar', 'bar', 'x', 'aa', 'aaa', 'aaaa', 'Kelvin', '\u212Aelvin', '\u017Ftream', 'caf\u00e9', 'long_word_here', 'z9_'];
  const text = (lines: number): string =>
    Array.from({ length: lines }, () => Array.from({ length: r.int(5) }, () => r.pick(vocabulary)).join(r.pick([' ', '', '.', '_', '\r', '\u212A']))).join(
      '\n',
    ) + (r.chance(0.5) ? '\n' : '');
  let large = 0;
  for (let i = 0; i < 600; i++) {
    // Some versions large, edited near both ends: their middles are compared line by line.
    const big = i % 3 === 0;
    const old = text(big ? 400 + r.int(200) : r.int(12));
    // A few lines changed, added, removed or repeated, or a word cut by an edit inside it.
    const lines = old.split('\n');
    if (big) {
      lines[1] = text(1).replace('\n', '');
      lines.splice(lines.length - 2, 0, lines[3]!, text(1));
      large++;
    }
    for (let k = r.int(big ? 12 : 3); k >= 0; k--) {
      const at = r.int(lines.length + 1);
      const kind = r.int(4);
      if (kind === 0) lines.splice(at, 0, text(1));
      else if (kind === 1) lines.splice(at, 1);
      else if (kind === 2 && lines[at] !== undefined)
        lines[at] = lines[at]!.slice(0, r.int(lines[at]!.length + 1)) + r.pick(vocabulary) + lines[at]!.slice(r.int(lines[at]!.length + 1));
      else lines[at] = text(1).replace('\n', '');
    }
    const now = lines.join('\n');
    const whole = new Map<string, number>();
    countWords(Buffer.from(now), 0, Buffer.byteLength(now), 1, whole);
    countWords(Buffer.from(old), 0, Buffer.byteLength(old), -1, whole);
    const changes = new Map<string, number>();
    countChanges(Buffer.from(old), Buffer.from(now), changes);
    const nonzero = (m: Map<string, number>) => [...m].filter(([, n]) => n !== 0).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    assert.deepEqual(nonzero(changes), nonzero(whole), `${JSON.stringify(old)} -> ${JSON.stringify(now)}`);
  }
  assert.equal(large, 200);
});

test("the file's documents by the shards holding them, as each shard numbers them", () => {
  const shards = [
    { file: 'a', docs: 3 },
    { file: 'b', docs: 1 },
    { file: 'c', docs: 4 },
  ];
  const cases: Array<[number[], Record<string, number[]>]> = [
    [[], {}],
    [[0], { a: [0] }],
    [[2, 0], { a: [0, 2] }],
    [[3], { b: [0] }],
    [[7, 4, 3, 1], { a: [1], b: [0], c: [0, 3] }],
  ];
  for (const [docs, want] of cases) assert.deepEqual(Object.fromEntries(docsByShard(shards, docs)), want, `${docs}`);
  for (const bad of [-1, 8, 1.5]) assert.throws(() => docsByShard(shards, [bad]), /is not one of the 8/);
});
