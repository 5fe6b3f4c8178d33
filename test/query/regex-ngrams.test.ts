import { test } from 'node:test';
import assert from 'node:assert/strict';
import RE2 from 're2';
import { foldBytes, trigramId } from '../../core/index.ts';
import { bytesToBinary, caseFoldOrbit, foldCp, foldedBinary, foldString } from '../../daemon/query/case-fold.ts';
import { evalNgramQuery, ngramQueryToString, qAnd, stringQuery, tri, type NgramQuery } from '../../daemon/query/ngram-query.ts';
import { literalNgramQuery, regexNgramQuery } from '../../daemon/query/regex-ngrams.ts';
import { parseNodeRe2Pattern } from '../../daemon/query/re2-syntax.ts';

// ---------------------------------------------------------------------------------------
// The index side, as the index computes it: the core's folding (core/index.ts), then the
// trigrams of the folded bytes.

interface DocTrigrams {
  size: number;
  /** Whether the document holds the trigram followed by bytes of every bit of `next` (as the follow masks record it). */
  has(id: number, next?: number): boolean;
}

function docTrigrams(doc: string): DocTrigrams {
  const folded = foldBytes(Buffer.from(doc, 'utf8'));
  const masks = new Map<number, number>();
  for (let i = 0; i + 2 < folded.length; i++) {
    const id = trigramId(folded[i]!, folded[i + 1]!, folded[i + 2]!);
    // The builder reads a zero past the last trigram (core/index.ts addContent).
    masks.set(id, (masks.get(id) ?? 0) | (1 << ((folded[i + 3] ?? 0) & 7)));
  }
  return { size: masks.size, has: (id, next = 0) => masks.has(id) && (masks.get(id)! & next) === next };
}

function re2Matches(pattern: string, ci: boolean, doc: string): boolean {
  // The flags the daemon compiles with (daemon/query/plan.ts).
  const re = new RE2(pattern, `gm${ci ? 'i' : ''}`);
  return re.test(Buffer.from(doc, 'utf8'));
}

const show = (pattern: string, ci: boolean): string => ngramQueryToString(regexNgramQuery(pattern, { caseInsensitive: ci }));

// ---------------------------------------------------------------------------------------
// (a) Table of simple cases.

const TABLE: Array<[pattern: string, ci: boolean, expected: string]> = [
  ['hello', false, 'and("ell","hel","llo")'],
  ['Hello', false, 'and("ell","hel","llo")'],
  ['HELLO', true, 'and("ell","hel","llo")'],
  ['abc', false, '"abc"'],
  ['ab', false, 'all'],
  ['', false, 'all'],
  ['.*', false, 'all'],
  ['(foo|bar)baz', false, 'and("baz",or(and("arb","bar","rba"),and("foo","oba","oob")))'],
  ['abc|abd', false, 'or("abc","abd")'],
  ['abc|x', false, 'all'],
  ['a[bc]d', false, 'or("abd","acd")'],
  ['a[Bb]d', false, '"abd"'],
  ['abc.*def', false, 'and("abc","def")'],
  ['foo[^\\n]*bar', false, 'and("bar","foo")'],
  ['foo\\w+', false, '"foo"'],
  ['^abc$', false, '"abc"'],
  ['\\Aabc\\z', false, '"abc"'],
  ['ab\\bcd', false, 'and("abc","bcd")'],
  ['x{3}', false, '"xxx"'],
  ['a{2}b{2}', false, 'and("aab","abb")'],
  ['abcd{0}e', false, 'and("abc","bce")'],
  ['(ab){2,}', false, 'and("aba","bab")'],
  ['(abc)+', false, '"abc"'],
  ['(abc)*x', false, 'all'],
  ['abc?d', false, 'or("abd",and("abc","bcd"))'],
  ['(?:foo|)bar', false, '"bar"'],
  ['(?P<word>foo)(?<n>bar)', false, 'and("bar","foo","oba","oob")'],
  ['\\Qa.b*c\\E', false, 'and(".b*","a.b","b*c")'],
  ['a\\nb', false, '"a\\x0ab"'],
  ['\\x41BC', false, '"abc"'],
  ['\\101bc', false, '"abc"'],
  ['\\u0041bc', false, '"abc"'],
  ['\\x{212A}elvin', false, 'and("elv","kel","lvi","vin")'],
  ['\u017Ftop', false, 'and("sto","top")'],
  ['caf\u00e9', false, 'and("af\\xc3","caf","f\\xc3\\xa9")'],
  ['caf\u00e9', true, 'and("af\\xc3","caf",or("f\\xc3\\x89","f\\xc3\\xa9"))'],
  ['(?i)caf\u00c9', false, 'and("af\\xc3","caf",or("f\\xc3\\x89","f\\xc3\\xa9"))'],
  ['(?-i:CAF\u00c9)', true, 'and("af\\xc3","caf","f\\xc3\\x89")'],
  ['kelvin', true, 'and("elv","kel","lvi","vin")'],
  ['[^\\x00-\\x{10FFFF}]', false, 'none'],
  ['ab[^\\x00-\\x{10FFFF}]|cde', false, '"cde"'],
  ['a|b', false, 'all'],
  ['[[:digit:]]xy', false, 'or("0xy","1xy","2xy","3xy","4xy","5xy","6xy","7xy","8xy","9xy")'],
  ['\\pLabc\\PL', false, '"abc"'],
  ['foo(bar|baz)?qux', false, 'and("foo","qux",or(and("arq","bar","oba","oob","rqu"),and("azq","baz","oba","oob","zqu"),and("ooq","oqu")))'],
];

test('table: pattern -> query', () => {
  for (const [pattern, ci, expected] of TABLE) {
    assert.equal(show(pattern, ci), expected, `pattern ${JSON.stringify(pattern)} ci=${ci}`);
  }
});

test('selectivity: literals and required pieces are used', () => {
  assert.notEqual(regexNgramQuery('hello', { caseInsensitive: false }).op, 'all');
  assert.notEqual(regexNgramQuery('hello', { caseInsensitive: true }).op, 'all');
  const q = regexNgramQuery('(foo|bar)baz', { caseInsensitive: false });
  const baz = (0x62 << 16) | (0x61 << 8) | 0x7a;
  // "baz" is required: a document with every trigram but "baz" is rejected.
  assert.equal(
    evalNgramQuery(q, (id) => id !== baz),
    false,
  );
  assert.equal(
    evalNgramQuery(q, () => true),
    true,
  );
  assert.notEqual(show('func\\s+\\w+\\(', false), 'all');
  assert.notEqual(show('(?i)StraSSe', false), 'all');
});

test('foldString and literal queries', () => {
  assert.deepEqual([...foldString('AbZ\u212A\u017F\u00C9')], [0x61, 0x62, 0x7a, 0x6b, 0x73, 0xc3, 0x89]);
  assert.equal(ngramQueryToString(literalNgramQuery('Hello', { caseInsensitive: false })), 'and("ell","hel","llo")');
  assert.equal(ngramQueryToString(literalNgramQuery('a.b*c', { caseInsensitive: false })), 'and(".b*","a.b","b*c")');
  assert.equal(ngramQueryToString(literalNgramQuery('ab', { caseInsensitive: true })), 'all');
  assert.equal(ngramQueryToString(literalNgramQuery('KELVIN', { caseInsensitive: true })), 'and("elv","kel","lvi","vin")');
  assert.equal(ngramQueryToString(literalNgramQuery('caf\u00e9', { caseInsensitive: true })), 'and("af\\xc3","caf",or("f\\xc3\\x89","f\\xc3\\xa9"))');
  // Each trigram says which byte follows it: "help yellow" holds "hel", "ell" and "llo"
  // but no "hel" followed by "l" (the index's follow masks), so it cannot hold "hello".
  const hello = literalNgramQuery('Hello', { caseInsensitive: true });
  assert.equal(
    evalNgramQuery(hello, (id) => docTrigrams('help yellow').has(id)),
    true,
  );
  assert.equal(
    evalNgramQuery(hello, (id, next) => docTrigrams('help yellow').has(id, next)),
    false,
  );
  assert.equal(
    evalNgramQuery(hello, (id, next) => docTrigrams('say HELLO').has(id, next)),
    true,
  );
  // Equivalent to the regex path on an escaped literal.
  for (const lit of ['Hello world', 'caf\u00e9 cr\u00e8me', 'x.y(z)', '\u212Aelvin']) {
    for (const ci of [false, true]) {
      const esc = lit.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
      assert.equal(ngramQueryToString(literalNgramQuery(lit, { caseInsensitive: ci })), show(esc, ci), `${lit} ci=${ci}`);
    }
  }
});

function countTrigrams(q: NgramQuery): number {
  return q.op === 'tri' ? 1 : q.op === 'and' || q.op === 'or' ? q.args.reduce((n, a) => n + countTrigrams(a), 0) : 0;
}

test('limits keep queries small and sound', () => {
  const r = new Rng(5);
  const words = Array.from({ length: 600 }, () => Array.from({ length: 4 + r.int(6) }, () => r.pick([...'abcdefghijklmnopqrstuvwxyz'])).join(''));
  const long = words.join(' ');
  for (const ci of [false, true]) {
    // A long literal: capped for the regex path, complete for the literal path.
    const q = regexNgramQuery(long.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&'), { caseInsensitive: ci });
    assert.ok(countTrigrams(q) > 0 && countTrigrams(q) <= 128, `regex trigrams ${countTrigrams(q)}`);
    const tris = docTrigrams(`>${long.toUpperCase()}<`);
    assert.ok(evalNgramQuery(q, (id, next) => tris.has(id, next)));
    const lq = literalNgramQuery(long, { caseInsensitive: ci });
    assert.equal(countTrigrams(lq), docTrigrams(long).size);
    // A wide alternation stays sound for every branch.
    const alt = words.slice(0, 300).join('|');
    const aq = regexNgramQuery(`(?:${alt})\\d`, { caseInsensitive: ci });
    assert.ok(countTrigrams(aq) <= 128);
    for (const w of words.slice(0, 300)) {
      const t = docTrigrams(`x ${w}7 y`);
      assert.ok(
        evalNgramQuery(aq, (id, next) => t.has(id, next)),
        w,
      );
    }
  }
});

test('evalNgramQuery', () => {
  const q: NgramQuery = {
    op: 'and',
    args: [
      { op: 'tri', id: 1 },
      {
        op: 'or',
        args: [
          { op: 'tri', id: 2 },
          { op: 'tri', id: 3 },
        ],
      },
    ],
  };
  assert.equal(
    evalNgramQuery(q, (id) => id === 1 || id === 3),
    true,
  );
  assert.equal(
    evalNgramQuery(q, (id) => id === 1),
    false,
  );
  assert.equal(
    evalNgramQuery({ op: 'all' }, () => false),
    true,
  );
  assert.equal(
    evalNgramQuery({ op: 'none' }, () => true),
    false,
  );
});

test('the planner folds every code point as the index folds it', () => {
  // Soundness rests on this (regex-ngrams.ts): the planner folds a pattern character by
  // character, the index folds a document's bytes in one pass; for any text, the
  // characters' folded forms put together must be the folded text. Every code point and so
  // every byte value of UTF-8 (surrogates are not characters: the planner gives them no
  // trigrams), in runs that put each next to its neighbours.
  const enc = new TextEncoder();
  let checked = 0;
  for (let lo = 0; lo <= 0x10ffff; lo += 0x1000) {
    const cps: number[] = [];
    for (let cp = lo; cp < lo + 0x1000; cp++) if (cp < 0xd800 || cp > 0xdfff) cps.push(cp);
    if (cps.length === 0) continue;
    const text = String.fromCodePoint(...cps);
    const planner = cps.map(foldCp).join('');
    const index = bytesToBinary(foldBytes(enc.encode(text)));
    if (planner !== index) {
      const at = cps.find((cp) => foldCp(cp) !== bytesToBinary(foldBytes(enc.encode(String.fromCodePoint(cp)))));
      assert.fail(`U+${(at ?? lo).toString(16)}: the planner's folding differs from the index's`);
    }
    assert.equal(bytesToBinary(foldString(text)), index);
    checked += cps.length;
  }
  assert.equal(checked, 0x110000 - 0x800);
});

test('case-fold orbits agree with RE2 (?i)', () => {
  assert.deepEqual([...caseFoldOrbit(0x6b)], [0x4b, 0x6b, 0x212a]);
  assert.deepEqual([...caseFoldOrbit(0x53)], [0x53, 0x73, 0x17f]);
  assert.deepEqual([...caseFoldOrbit(0x69)], [0x49, 0x69]); // dotless ı is not in RE2's orbit
  assert.deepEqual([...caseFoldOrbit(0xe9)], [0xc9, 0xe9]);
  // Every code point of a haystack that RE2's (?i)c matches is in the orbit, and vice versa.
  const ranges: Array<[number, number]> = [
    [0, 0x250],
    [0x370, 0x530],
    [0x1e00, 0x2200],
    [0x2c00, 0x2d30],
    [0xa640, 0xa800],
    [0xff00, 0xff60],
  ];
  const hay: number[] = [];
  for (const [lo, hi] of ranges) for (let c = lo; c < hi; c++) hay.push(c);
  const hayStr = String.fromCodePoint(...hay.filter((c) => c !== 0x0a));
  const inHay = new Set(hay);
  const probes = [...'azAZkKsSiIé\u00ff\u00b5\u03a3\u03c2\u0399\u0345\u1e9e\u00df\u0130\u0131\u212a\u2126\u017f\u01c5\u1fbe\u03f4'].map(
    (c) => c.codePointAt(0)!,
  );
  for (let c = 0x370; c < 0x400; c += 7) probes.push(c);
  for (const cp of probes) {
    const re = new RE2(`(?i)\\x{${cp.toString(16)}}`, 'gu');
    const found = new Set<number>();
    for (const m of hayStr.matchAll(re)) found.add(m[0].codePointAt(0)!);
    if (cp !== 0x0a) found.add(cp);
    const expected = [...found].sort((a, b) => a - b);
    const orbit = caseFoldOrbit(cp).filter((c) => inHay.has(c) || c === cp);
    assert.deepEqual(orbit, expected, `orbit of U+${cp.toString(16)}`);
  }
});

// ---------------------------------------------------------------------------------------
// (b) Randomized soundness.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

const SMALL_ALPHABET = ['a', 'b', 'c', 'A', 'B', 'x', '\u00e9', '\u00c9', 'k', 'K', '\u212A', 's', 'S', '\u017F', '\n', '0', '1', '9', ' ', '.', '_'];
// Characters with unusual case-fold orbits, multi-byte encodings of every length.
const WIDE_ALPHABET = [
  'a',
  'i',
  'I',
  '\u0130',
  '\u0131',
  'k',
  '\u212A',
  's',
  '\u017F',
  '\u00df',
  '\u1E9E',
  '\u03c3',
  '\u03c2',
  '\u03a3',
  '\u00b5',
  '\u03bc',
  '\u039c',
  '\u03b9',
  '\u0399',
  '\u0345',
  '\u1FBE',
  '\u01c4',
  '\u01c5',
  '\u01c6',
  '\u0436',
  '\u0416',
  '\u4e2d',
  '\u{1F600}',
  '\u{10428}',
  '\u{10400}',
  '\n',
  ' ',
  '0',
];
let ALPHABET = SMALL_ALPHABET;
// Case variants under RE2's (?i) for the letters of the alphabet (written out by hand).
const VARIANTS: Record<string, string[]> = {
  i: ['i', 'I'],
  I: ['i', 'I'],
  '\u00df': ['\u00df', '\u1E9E'],
  '\u1E9E': ['\u00df', '\u1E9E'],
  '\u03c3': ['\u03c3', '\u03c2', '\u03a3'],
  '\u03c2': ['\u03c3', '\u03c2', '\u03a3'],
  '\u03a3': ['\u03c3', '\u03c2', '\u03a3'],
  '\u00b5': ['\u00b5', '\u03bc', '\u039c'],
  '\u03bc': ['\u00b5', '\u03bc', '\u039c'],
  '\u039c': ['\u00b5', '\u03bc', '\u039c'],
  '\u03b9': ['\u03b9', '\u0399', '\u0345', '\u1FBE'],
  '\u0399': ['\u03b9', '\u0399', '\u0345', '\u1FBE'],
  '\u0345': ['\u03b9', '\u0399', '\u0345', '\u1FBE'],
  '\u1FBE': ['\u03b9', '\u0399', '\u0345', '\u1FBE'],
  '\u01c4': ['\u01c4', '\u01c5', '\u01c6'],
  '\u01c5': ['\u01c4', '\u01c5', '\u01c6'],
  '\u01c6': ['\u01c4', '\u01c5', '\u01c6'],
  '\u0436': ['\u0436', '\u0416'],
  '\u0416': ['\u0436', '\u0416'],
  '\u{10428}': ['\u{10428}', '\u{10400}'],
  '\u{10400}': ['\u{10428}', '\u{10400}'],
  a: ['a', 'A'],
  A: ['a', 'A'],
  b: ['b', 'B'],
  B: ['b', 'B'],
  c: ['c', 'C'],
  x: ['x', 'X'],
  '\u00e9': ['\u00e9', '\u00c9'],
  '\u00c9': ['\u00e9', '\u00c9'],
  k: ['k', 'K', '\u212A'],
  K: ['k', 'K', '\u212A'],
  '\u212A': ['k', 'K', '\u212A'],
  s: ['s', 'S', '\u017F'],
  S: ['s', 'S', '\u017F'],
  '\u017F': ['s', 'S', '\u017F'],
};

interface Gen {
  src: string;
  /** Whether src can take a repetition operator directly. */
  atomic: boolean;
  sample: (r: Rng) => string;
}

function encodeLiteral(r: Rng, c: string): string {
  const cp = c.codePointAt(0)!;
  if (c === '.') return r.chance(0.5) ? '\\.' : '[.]';
  if (c === '\n') return r.pick(['\\n', '\n', '\\x0a', '\\x{a}', '\\012']);
  switch (r.int(6)) {
    case 0:
      return `\\x{${cp.toString(16)}}`;
    case 1:
      return cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : c;
    case 2:
      return cp <= 0xffff ? `\\u${cp.toString(16).padStart(4, '0')}` : c;
    case 3:
      return cp < 0x80 ? `\\${cp.toString(8).padStart(3, '0')}` : c;
    default:
      return c;
  }
}

function sampleChar(r: Rng, c: string, ci: boolean): string {
  return ci && VARIANTS[c] ? r.pick(VARIANTS[c]) : c;
}

function genRegex(r: Rng, depth: number, ci: boolean): Gen {
  const k = depth <= 0 ? r.pick([0, 1, 2, 3, 4, 13, 13]) : r.int(15);
  switch (k) {
    case 13:
    case 14: {
      // A run of literal characters, so that queries have trigrams to require.
      const n = 2 + r.int(4);
      const chars = Array.from({ length: n }, () => r.pick(ALPHABET));
      return {
        src: chars.map((c) => encodeLiteral(r, c)).join(''),
        atomic: false,
        sample: (rr) => chars.map((c) => sampleChar(rr, c, ci)).join(''),
      };
    }
    case 0:
    case 1: {
      const c = r.pick(ALPHABET);
      return { src: encodeLiteral(r, c), atomic: true, sample: (rr) => sampleChar(rr, c, ci) };
    }
    case 2: {
      const n = 1 + r.int(3);
      const members: string[] = [];
      for (let i = 0; i < n; i++) members.push(r.pick(ALPHABET.filter((c) => c !== '.')));
      const negated = r.chance(0.25);
      let body = members.map((c) => (c === '\n' ? '\\n' : encodeLiteral(r, c))).join('');
      if (r.chance(0.2)) body += r.pick(['a-c', '0-9', 'A-Z', '\\x{e0}-\\x{ff}', 'j-l', 'r-t', '\\x{3c0}-\\x{3c5}', '\u0430-\u0437', '\\x{1F5FF}-\\x{1F601}']);
      if (r.chance(0.1)) body += r.pick(['\\d', '\\s', '\\w', '[:alpha:]', '[:^digit:]', '\\W', '\\pL', '\\p{Greek}']);
      const src = `[${negated ? '^' : ''}${body}]`;
      return {
        src,
        atomic: true,
        sample: negated ? (rr) => rr.pick(ALPHABET) : (rr) => sampleChar(rr, rr.pick(members), ci),
      };
    }
    case 3: {
      const src = r.pick([
        '.',
        '\\d',
        '\\w',
        '\\s',
        '\\S',
        '\\W',
        '\\D',
        '[[:alpha:]]',
        '[[:upper:]]',
        '\\pL',
        '\\p{Lu}',
        '\\PL',
        '(?s:.)',
        '[^\\n]',
        '[^a]',
        '[^\\x00-\\x{10FFFF}]',
        '\\C',
      ]);
      return { src, atomic: true, sample: (rr) => rr.pick(ALPHABET) };
    }
    case 4: {
      const src = r.pick(['^', '$', '\\b', '\\B', '\\A', '\\z']);
      return { src, atomic: true, sample: () => '' };
    }
    case 5:
    case 6: {
      const n = 2 + r.int(3);
      const parts = Array.from({ length: n }, () => genRegex(r, depth - 1, ci));
      return { src: parts.map((p) => p.src).join(''), atomic: false, sample: (rr) => parts.map((p) => p.sample(rr)).join('') };
    }
    case 7: {
      const n = 2 + r.int(2);
      const parts = Array.from({ length: n }, () => genRegex(r, depth - 1, ci));
      return { src: parts.map((p) => p.src).join('|'), atomic: false, sample: (rr) => rr.pick(parts).sample(rr) };
    }
    case 8:
    case 9: {
      const kind = r.int(6);
      const innerCi = kind === 3 ? true : kind === 4 ? false : ci;
      const inner = genRegex(r, depth - 1, innerCi);
      const open = ['(', '(?:', `(?P<g${r.int(1000)}>`, '(?i:', '(?-i:', `(?<n${r.int(1000)}>`][kind];
      return { src: `${open + inner.src})`, atomic: true, sample: inner.sample };
    }
    case 10: {
      const inner = genRegex(r, depth - 1, ci);
      const base = inner.atomic ? inner.src : `(?:${inner.src})`;
      const [op, lo, hi] = r.pick<[string, number, number]>([
        ['*', 0, 3],
        ['+', 1, 3],
        ['?', 0, 1],
        ['{2}', 2, 2],
        ['{1,3}', 1, 3],
        ['{0,2}', 0, 2],
        ['{2,}', 2, 4],
        ['{0}', 0, 0],
        ['{3,5}', 3, 5],
        ['{6}', 6, 6],
      ]);
      const lazy = r.chance(0.2) ? '?' : '';
      return {
        src: base + op + lazy,
        atomic: false,
        sample: (rr) => {
          const n = lo + rr.int(hi - lo + 1);
          let s = '';
          for (let i = 0; i < n; i++) s += inner.sample(rr);
          return s;
        },
      };
    }
    case 11: {
      const inner = genRegex(r, depth - 1, true);
      return { src: `(?:(?i)${inner.src})`, atomic: true, sample: inner.sample };
    }
    default: {
      const n = 1 + r.int(4);
      const chars = Array.from({ length: n }, () => r.pick(ALPHABET));
      return { src: `\\Q${chars.join('')}\\E`, atomic: false, sample: (rr) => chars.map((c) => sampleChar(rr, c, ci)).join('') };
    }
  }
}

function randomText(r: Rng, maxLen: number): string {
  const n = r.int(maxLen + 1);
  let s = '';
  for (let i = 0; i < n; i++) s += r.pick([...ALPHABET, 'C', 'X', '\u00c9']);
  return s;
}

function makeDocs(r: Rng, g: Gen): string[] {
  const docs: string[] = [];
  for (let i = 0; i < 6; i++) {
    let doc = randomText(r, 12);
    const inserts = i === 0 ? 1 : r.int(3);
    for (let j = 0; j < inserts; j++) {
      const at = r.int(doc.length + 1);
      const piece = g.sample(r);
      const wrap = r.chance(0.3) ? '\n' : '';
      doc = doc.slice(0, at) + wrap + piece + wrap + doc.slice(at);
    }
    docs.push(doc);
  }
  return docs;
}

// REGEX_FUZZ_ITERATIONS / REGEX_FUZZ_SEED widen the search when run by hand.
const FUZZ_ITERATIONS = Number(process.env.REGEX_FUZZ_ITERATIONS ?? 3000);
const FUZZ_SEED = Number(process.env.REGEX_FUZZ_SEED ?? 20240611);

test('randomized soundness against RE2', (t) => {
  const r = new Rng(FUZZ_SEED);
  let matched = 0;
  let matchedFiltered = 0;
  let rejected = 0;
  let patterns = 0;
  for (let iter = 0; iter < FUZZ_ITERATIONS; iter++) {
    ALPHABET = r.chance(0.25) ? WIDE_ALPHABET : SMALL_ALPHABET;
    const ci = r.chance(0.35);
    const g = genRegex(r, 1 + r.int(4), ci);
    const pattern = g.src;
    try {
      new RE2(pattern, `gm${ci ? 'i' : ''}`);
    } catch {
      rejected++;
      continue;
    }
    patterns++;
    // The parser must accept every pattern RE2 accepts.
    assert.doesNotThrow(() => parseNodeRe2Pattern(pattern, { foldCase: ci }), `parse ${JSON.stringify(pattern)}`);
    const query = regexNgramQuery(pattern, { caseInsensitive: ci });
    for (const doc of makeDocs(r, g)) {
      if (!re2Matches(pattern, ci, doc)) continue;
      matched++;
      if (query.op !== 'all') matchedFiltered++;
      const tris = docTrigrams(doc);
      assert.ok(
        evalNgramQuery(query, (id, next) => tris.has(id, next)),
        `UNSOUND: pattern ${JSON.stringify(pattern)} ci=${ci} matches ${JSON.stringify(doc)} but query ${ngramQueryToString(query)} rejects it`,
      );
    }
  }
  t.diagnostic(`${patterns} patterns (${rejected} rejected by RE2), ${matched} matching documents, ${matchedFiltered} with a non-trivial query`);
  // The test has teeth: many matching documents were checked against non-trivial queries.
  const scale = FUZZ_ITERATIONS / 3000;
  assert.ok(patterns > 2500 * scale, `only ${patterns} patterns accepted (${rejected} rejected)`);
  assert.ok(matched > 5000 * scale, `only ${matched} matches`);
  assert.ok(matchedFiltered > 2500 * scale, `only ${matchedFiltered} matches with a non-trivial query`);
});

test('randomized soundness of literal queries (RE2 (?i) semantics)', () => {
  const r = new Rng(77);
  let checked = 0;
  for (let iter = 0; iter < 1500; iter++) {
    ALPHABET = r.chance(0.3) ? WIDE_ALPHABET : SMALL_ALPHABET;
    const ci = r.chance(0.5);
    const lit = randomText(r, 8) || 'abc';
    const esc = lit.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
    const q = literalNgramQuery(lit, { caseInsensitive: ci });
    for (let i = 0; i < 4; i++) {
      const variant = [...lit].map((c) => sampleChar(r, c, ci)).join('');
      const doc = randomText(r, 6) + variant + randomText(r, 6);
      if (!new RE2(esc, ci ? 'gi' : 'g').test(Buffer.from(doc))) continue;
      checked++;
      const tris = docTrigrams(doc);
      assert.ok(
        evalNgramQuery(q, (id, next) => tris.has(id, next)),
        `UNSOUND literal ${JSON.stringify(lit)} ci=${ci} in ${JSON.stringify(doc)}: ${ngramQueryToString(q)}`,
      );
    }
  }
  assert.ok(checked > 3000);
});

test('parser accepts every random token soup RE2 accepts, and stays sound on it', () => {
  const r = new Rng(4242);
  const TOKENS = [
    '(',
    ')',
    '[',
    ']',
    '^',
    '$',
    '-',
    '{',
    '}',
    ',',
    '0',
    '1',
    '2',
    '*',
    '+',
    '?',
    '|',
    '.',
    '\\',
    'd',
    'D',
    'w',
    'p',
    'P',
    'L',
    'Q',
    'E',
    'x',
    'u',
    'c',
    'A',
    'b',
    'B',
    'z',
    'C',
    'n',
    ':',
    '<',
    '>',
    '=',
    '!',
    '/',
    'a',
    'k',
    'K',
    's',
    '\u017F',
    '\u00e9',
    '(?i)',
    '(?-i)',
    '(?s:',
    '(?P<',
    '[:alpha:]',
    '[:^space:]',
    '\\x{',
    '\\Q',
    '\\E',
    '\\p{Greek}',
    '\\pN',
    '\\u00e9',
    '\\x4',
    'abc',
  ];
  let accepted = 0;
  for (let iter = 0; iter < 20000; iter++) {
    let pattern = '';
    const n = 1 + r.int(10);
    for (let i = 0; i < n; i++) pattern += r.pick(TOKENS);
    const ci = r.chance(0.3);
    try {
      new RE2(pattern, `gm${ci ? 'i' : ''}`);
    } catch {
      // RE2 refuses it: ours may refuse it too or accept it (harmless, RE2 refuses it later);
      // either way it returns.
      try {
        parseNodeRe2Pattern(pattern, { foldCase: ci });
      } catch {
        // refused by both
      }
      continue;
    }
    accepted++;
    assert.doesNotThrow(() => parseNodeRe2Pattern(pattern, { foldCase: ci }), `parse ${JSON.stringify(pattern)}`);
    const query = regexNgramQuery(pattern, { caseInsensitive: ci });
    for (let d = 0; d < 3; d++) {
      let doc = '';
      const len = r.int(12);
      for (let i = 0; i < len; i++) doc += r.pick(TOKENS);
      if (!re2Matches(pattern, ci, doc)) continue;
      const tris = docTrigrams(doc);
      assert.ok(
        evalNgramQuery(query, (id, next) => tris.has(id, next)),
        `UNSOUND: ${JSON.stringify(pattern)} ci=${ci} in ${JSON.stringify(doc)}: ${ngramQueryToString(query)}`,
      );
    }
  }
  assert.ok(accepted > 2000, `only ${accepted} accepted`);
});

test('groups nested deeper than RE2 allows are refused as RE2 refuses them, not with an exhausted stack', () => {
  const nested = (n: number) => `${'('.repeat(n)}a${')'.repeat(n)}`;
  assert.doesNotThrow(() => parseNodeRe2Pattern(nested(1000)));
  for (const n of [1001, 20_000]) assert.throws(() => parseNodeRe2Pattern(nested(n)), /expression nests too deeply/);
  // Flag groups and closed groups do not count towards the depth.
  assert.doesNotThrow(() => parseNodeRe2Pattern('(?i)(a)'.repeat(2000)));
});

test('stringQuery makes the canonical form qAnd makes of its trigrams', () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
  const alphabet = 'abAB_x0.';
  for (let n = 0; n < 300; n++) {
    const s = Array.from({ length: 3 + (next() % 12) }, () => alphabet[next() % alphabet.length]).join('');
    const ids = new Map<number, number>();
    for (let i = 0; i + 3 <= s.length; i++) {
      const id = trigramId(s.charCodeAt(i), s.charCodeAt(i + 1), s.charCodeAt(i + 2));
      ids.set(id, (ids.get(id) ?? 0) | (i + 3 < s.length ? 1 << (s.charCodeAt(i + 3) & 7) : 0));
    }
    assert.deepEqual(stringQuery(s), qAnd([...ids].map(([id, bits]) => tri(id, bits))), s);
  }
});

test("foldedBinary is the core's folding of the literal's UTF-8, ASCII or not", () => {
  const cases = [
    String.fromCharCode(...Array.from({ length: 0x80 }, (_, i) => i)),
    'spin_lock_irqsave',
    'readFileSync',
    'HTTP_Status_CODE',
    'straße ÄÖÜ',
    'K\u212aelvin \u017f',
    '\ud800 lone surrogate',
    '',
  ];
  for (const s of cases) assert.equal(foldedBinary(s), bytesToBinary(foldString(s)), JSON.stringify(s));
});
