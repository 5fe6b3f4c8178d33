// The symbol name index (index/symbol-index.ts) and sym:/negation answered from the index
// (search/symbol-search.ts, candidates.ts, examine-doc.ts): every way of finding names
// gives RE2's answer over every distinct name, and the index saves the reads it promises.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import RE2 from 're2';
import { encodeSymbolIndex, foldKey, type RecordNames, NAMES_PER_BLOCK, REC_NAME_OFF, REC_START, SymbolIndex } from '../../daemon/index/symbol-index.ts';
import { SYMBOL_RECORD_SIZE } from '../../daemon/index/shard-format.ts';
import { compileTerm } from '../../daemon/query/plan.ts';
import { regexFlags } from '../../daemon/query/terms.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { analyzeSymbolPattern, matchingNames } from '../../daemon/search/symbol-search.ts';
import type { SearchRequest } from '../../daemon/search/types.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { seededRandom } from '../../bench/suite/stats.ts';

// Case variants, shared prefixes, the two non-ASCII letters that fold to ASCII (U+212A
// KELVIN SIGN, U+017F LONG S), other non-ASCII, one-letter names, repeated definitions.
const NAMES = [
  'make_widget',
  'Make_Widget',
  'MAKE_WIDGET',
  'make_widget',
  'make_widget_fast',
  'widget_make',
  'make',
  '\u212Aelvin_scale',
  'kelvin_scale',
  'Kelvin',
  'cla\u017F\u017F',
  'class',
  'CLASS',
  'café',
  'CAFÉ',
  'a',
  'x',
  'X',
  'tcp_v4_rcv',
  'tcp_v4_connect',
  'tcp_v6_rcv',
  'Tcp_V4_init',
  'mutex_lock',
  'mutex_unlock',
  'mutex_lock',
  ...Array.from({ length: 80 }, (_, i) => `fill_${i.toString(36)}_name`),
];

const PATTERNS = [
  '^make',
  '^make_widget$',
  '^MAKE',
  'widget',
  'WIDGET',
  'get$',
  '^kelvin',
  'Kelvin',
  'kelvin_scale$',
  'ss$',
  '^class$',
  'ſ',
  'café',
  '^caf',
  'a',
  'x',
  '^x$',
  '^tcp_v4_',
  'tcp_v4',
  '_lock$',
  'mak.*get',
  '^(make|widget)',
  '(?i)make',
  '(?-i)Make',
  '^$',
  'x*',
  '^fill_1',
  '[0-9]_name$',
  '^',
  'k',
  '_',
  '\\Amake\\z',
];

function indexOf(names: string[]): SymbolIndex {
  const { section, nameOffOf } = encodeSymbolIndex(recordNames(names));
  const records = Buffer.alloc(names.length * SYMBOL_RECORD_SIZE);
  names.forEach((_, r) => {
    records.writeUInt32LE(nameOffOf[r]!, r * SYMBOL_RECORD_SIZE + REC_NAME_OFF);
    records.writeUInt32LE(1000 + r, r * SYMBOL_RECORD_SIZE + REC_START);
  });
  // Aligned copy, as a section in a shard is.
  const aligned = Buffer.from(new Uint8Array(section));
  return new SymbolIndex(aligned, records, SYMBOL_RECORD_SIZE);
}

/** Names given as strings, in record order, as the encoder takes them: one buffer of their UTF-8. */
function recordNames(names: readonly string[]): RecordNames {
  const encoded = names.map((x) => Buffer.from(x, 'utf8'));
  const start = new Uint32Array(names.length);
  const length = new Uint32Array(names.length);
  let at = 0;
  encoded.forEach((b, i) => {
    start[i] = at;
    length[i] = b.length;
    at += b.length;
  });
  return { bytes: Buffer.concat(encoded), start, length };
}

/**
 * The section as its layout (symbol-index.ts) describes it, spelled the plain way: distinct
 * names by a Map, sorted by foldKey then bytes with a comparator, records by name then
 * number. The encoder's typed-array version must give the same bytes.
 */
function oracleSection(names: readonly string[]): { section: Buffer; nameOffOf: number[] } {
  const distinct = [...new Set(names)];
  const bytesOf = (x: string) => Buffer.from(x, 'utf8');
  const bin = (x: string) => bytesOf(x).toString('latin1');
  const key = (x: string) => foldKey(bytesOf(x));
  distinct.sort((a, b) => (key(a) !== key(b) ? (key(a) < key(b) ? -1 : 1) : bin(a) < bin(b) ? -1 : bin(a) > bin(b) ? 1 : 0));
  const strings = Buffer.concat(distinct.map((x) => Buffer.concat([bytesOf(x), Buffer.from('\n')])));
  const nameOff: number[] = [];
  let at = 0;
  for (const x of distinct) {
    nameOff.push(at);
    at += bytesOf(x).length + 1;
  }
  nameOff.push(at);
  const rank = new Map(distinct.map((x, r) => [x, r]));
  const defRecord = names.map((_, i) => i).sort((a, b) => rank.get(names[a]!)! - rank.get(names[b]!)! || a - b);
  const head = [distinct.length, names.length, names.some((x) => x.includes('\n')) ? 1 : 0, NAMES_PER_BLOCK];
  const words = Buffer.from(new Uint32Array([...head, ...nameOff, ...defRecord]).buffer);
  return { section: Buffer.concat([words, strings]), nameOffOf: names.map((x) => nameOff[rank.get(x)!]!) };
}

test('the encoder gives the bytes of the layout, over random names (against a plain oracle)', () => {
  const random = seededRandom(21);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const pieces = [
    'a',
    'A',
    'b',
    'z',
    'Z',
    '_',
    '0',
    'CONFIG_',
    'snd_soc_',
    '__',
    'x\n',
    'é',
    'É',
    '\u212A',
    'k',
    'K',
    '\u017F',
    's',
    'S',
    '\u{1F600}',
    '\u00ff',
    '[',
    '`',
    '@',
    '\x7f',
  ];
  // Half the rounds without the two letters that fold from several bytes: the encoder then
  // folds as it sorts instead of writing the keys out.
  const plain = pieces.filter((p) => p !== '\u212A' && p !== '\u017F');
  for (let round = 0; round < 60; round++) {
    const from = round % 2 === 0 ? pieces : plain;
    const count = 1 + Math.floor(random() * (round < 50 ? 60 : 3000));
    const pool: string[] = [];
    const names = Array.from({ length: count }, () => {
      if (pool.length > 0 && random() < 0.3) return pick(pool);
      let x = '';
      const len = Math.floor(random() * (random() < 0.05 ? 80 : 9));
      for (let k = 0; k < len; k++) x += pick(from);
      if (random() < 0.2 && pool.length > 0) x = pick(pool) + x;
      pool.push(x);
      return x;
    });
    const want = oracleSection(names);
    const got = encodeSymbolIndex(recordNames(names));
    assert.ok(Buffer.from(got.section).equals(want.section), `round ${round}: ${JSON.stringify(names.slice(0, 8))}`);
    assert.deepEqual([...got.nameOffOf], want.nameOffOf, `round ${round}`);
  }
  // Names given as views into one buffer, in any place and order, as the symbols pass gives them.
  const bytes = Buffer.from('xxFooyyfoozzFOO\u212Aelvin');
  const start = Uint32Array.from([12, 2, 7, 2, 15]);
  const length = Uint32Array.from([3, 3, 3, 3, 8]);
  const want = oracleSection(['FOO', 'Foo', 'foo', 'Foo', '\u212Aelvin']);
  const got = encodeSymbolIndex({ bytes, start, length });
  assert.ok(Buffer.from(got.section).equals(want.section));
  assert.deepEqual([...got.nameOffOf], want.nameOffOf);
});

test('many names that fold to one key are ordered by their bytes (against a plain oracle)', () => {
  // All 64 case variants of "widget" (and of "\u212Aelvin"'s folded twin), shuffled, among
  // other names: a large run of equal folded keys, which the encoder sorts by bytes apart.
  const random = seededRandom(8);
  const variants = (word: string) =>
    Array.from({ length: 1 << word.length }, (_, m) => [...word].map((ch, i) => ((m >> i) & 1 ? ch.toUpperCase() : ch)).join(''));
  const names = [...variants('widget'), ...variants('kelvin'), '\u212Aelvin', 'widgets', 'widge', 'x', ...variants('ab')];
  for (let i = names.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [names[i], names[j]] = [names[j]!, names[i]!];
  }
  const want = oracleSection(names);
  const got = encodeSymbolIndex(recordNames(names));
  assert.ok(Buffer.from(got.section).equals(want.section));
  assert.deepEqual([...got.nameOffOf], want.nameOffOf);
});

test('prefixRange is every name whose folded key starts with the prefix (against a scan)', () => {
  const index = indexOf([...NAMES, 'mak', 'ma', 'MAKE_', '\u212A', 'k', 'kA', 'K\u212A', 's\u017F', '\u017Fs', 'é', 'e\u0301']);
  const keys = Array.from({ length: index.nameCount }, (_, n) => foldKey(index.name(n)));
  const prefixes = [
    '',
    'm',
    'ma',
    'mak',
    'make',
    'make_',
    'make_widget',
    'make_widget_fast_and_more',
    'k',
    'ke',
    'kelvin',
    's',
    'ss',
    'cla',
    'class',
    'caf',
    'café',
    'z',
    '\x00',
    '\xff',
    'tcp_v4_',
    'fill_1',
    'fill_1z',
  ];
  for (const text of prefixes) {
    const prefix = foldKey(Buffer.from(text, 'utf8'));
    const inside = keys.flatMap((k, n) => (k.startsWith(prefix) ? [n] : []));
    const [from, to] = index.prefixRange(prefix);
    assert.deepEqual(
      Array.from({ length: to - from }, (_, i) => from + i),
      inside,
      JSON.stringify(text),
    );
    if (inside.length === 0) assert.equal(from, keys.filter((k) => k.slice(0, prefix.length) < prefix).length, `${JSON.stringify(text)}: where it would be`);
  }
});

test('the name table is sorted by folded name, and each name lists its definitions', () => {
  const index = indexOf(NAMES);
  const distinct = new Set(NAMES);
  assert.equal(index.nameCount, distinct.size);
  assert.equal(index.defCount, NAMES.length);
  const names = Array.from({ length: index.nameCount }, (_, n) => index.name(n).toString());
  assert.deepEqual(new Set(names), distinct);
  for (let n = 0; n < index.nameCount; n++) {
    const defs = [...index.defsOf(n)];
    assert.deepEqual(
      defs,
      NAMES.flatMap((x, r) => (x === names[n] ? [r] : [])),
      names[n],
    );
    for (const r of defs) assert.equal(index.start(r), 1000 + r);
    assert.equal(index.nameAt(index.strings.indexOf(`${names[n]}\n`)), n);
  }
  // Names that fold alike are neighbours: the prefix search relies on it.
  const i = names.indexOf('kelvin_scale');
  assert.equal(Math.abs(names.indexOf('\u212Aelvin_scale') - i), 1);
});

test('every way of finding names agrees with RE2 over every distinct name', () => {
  const index = indexOf(NAMES);
  const all = Uint32Array.from({ length: Math.ceil(index.nameCount / NAMES_PER_BLOCK) }, (_, b) => b);
  let fast = 0;
  for (const pattern of PATTERNS) {
    for (const caseSensitive of [true, false]) {
      const term = compileTerm(pattern, true, caseSensitive);
      const re = new RE2(pattern, regexFlags(caseSensitive));
      const expected: number[] = [];
      for (let n = 0; n < index.nameCount; n++) {
        re.lastIndex = 0;
        if (re.test(index.name(n))) expected.push(n);
      }
      const shape = analyzeSymbolPattern(term);
      if (shape.exact || shape.prefix) fast++;
      const label = `${pattern} (case-sensitive: ${caseSensitive})`;
      // No trigram information (scan or prefix search), and every block a candidate.
      assert.deepEqual(
        matchingNames(index, term, new Matcher(term), () => null),
        expected,
        `${label}, no trigrams`,
      );
      assert.deepEqual(
        matchingNames(index, term, new Matcher(term), () => all),
        expected,
        `${label}, all blocks`,
      );
    }
  }
  assert.ok(fast >= 20, `the byte comparisons and prefix search were exercised (${fast})`);
});

test('a name with a newline turns the anchored shortcuts off', () => {
  const index = indexOf(['ab', 'x\nabc', 'abd']);
  assert.equal(index.newlineInName, true);
  for (const pattern of ['^ab', '^abc$', 'c$']) {
    const term = compileTerm(pattern, true, true);
    const re = new RE2(pattern, regexFlags(true));
    const expected = [0, 1, 2].filter((n) => ((re.lastIndex = 0), re.test(index.name(n))));
    assert.deepEqual(
      matchingNames(index, term, new Matcher(term), () => null),
      expected,
      pattern,
    );
  }
});

const dir = tempDir('symidx');
let searcher: Searcher;

before(async () => {
  const root = join(dir.path, 'repo');
  mkdirSync(root);
  for (let i = 0; i < 12; i++) {
    const body = i < 3 ? 'return needle_qq;' : 'return 0;';
    writeFileSync(join(root, `f${i}.c`), `int helper_${i}(void) {\n  ${body}\n}\n\nint make_widget_${i % 2}(int x) {\n  return x;\n}\n`);
  }
  await indexLocal(root, { dataDir: join(dir.path, 'data'), workers: 1 });
  searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

const req = (query: string): Required<SearchRequest> =>
  ({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true }) as Required<SearchRequest>;

test('sym: reads no file: candidates and ranges come from the index', async () => {
  const res = await searcher.search(req('sym:^make_widget_1$'));
  assert.equal(res.files.length, 6);
  assert.equal(res.stats.filesLoaded, 0);
  assert.equal(res.stats.filesConsidered, 6, 'the candidates are exactly the defining files');
  for (const f of res.files)
    assert.deepEqual(
      f.chunks.map((c) => c.matchRanges.map((r) => [r.start.lineNumber, r.start.column, r.end.column])),
      [[[5, 5, 18]]],
    );
});

test('a NOT reads only the documents its trigrams allow', async () => {
  // Every C file is a candidate of lang:C; only the three holding needle_qq are read.
  const res = await searcher.search(req('lang:C -needle_qq'));
  assert.equal(res.files.length, 9);
  assert.equal(res.stats.filesConsidered, 12);
  assert.equal(res.stats.filesLoaded, 3);
});
