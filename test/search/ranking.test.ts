// Ranking pinned on a small corpus: a symbol definition and whole-word matches above
// partial matches, a base-name match high, test and vendored files lower, shorter files
// above longer ones with the same matches (BM25's length normalisation), ties by path.
// Then the score's parts one by one, on score() itself (a pure function).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { WEIGHTS, score, textScore, type RankInput } from '../../daemon/search/rank.ts';
import { definitionsByLine, scoreHits } from '../../daemon/search/hit-score.ts';
import { definitionsConfined } from '../../daemon/search/definition-first.ts';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { tempDir } from '../helpers/corpus.ts';

const FILES: Record<string, string> = {
  'src/widget.c': 'int make_widget(void) {\n  return 1;\n}\n',
  'src/use.c': 'void use(void) {\n  make_widget();\n  make_widget();\n}\n',
  'tests/widget_test.c': 'void t(void) { make_widget(); }\n',
  'vendor/lib/widget.c': 'int make_widget(void) {\n  return 2;\n}\n',
  'src/make_widget.h': '/* declares the widget factory */\nint make_widget(void);\n',
  'src/partial.c': 'int remake_widgets;\n',
  'src/also.c': 'int remake_widgets;\n',
  'src/other.c': 'int remake_widget_x;\n',
};

test('files are ordered by the documented signals, ties by path', async () => {
  const dir = tempDir('rank');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
  try {
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(dir.path, 'src-tree', path)), { recursive: true });
      writeFileSync(join(dir.path, 'src-tree', path), text);
    }
    await indexLocal(join(dir.path, 'src-tree'), { dataDir: join(dir.path, 'data'), workers: 1 });
    searcher.refresh();
    const res = await searcher.search({
      query: 'make_widget',
      matches: 1000,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
    });
    assert.deepEqual(
      res.files.map((f) => f.fileName.text),
      [
        'src/widget.c', // definition (+5000), whole word (+300)
        'vendor/lib/widget.c', // definition, whole word, vendored (-1200), one directory deeper
        'src/make_widget.h', // the whole base name (+2000), whole word; a prototype is not a definition for ctags
        'src/use.c', // whole word, two matches
        'src/also.c', // partial matches only: tie with partial.c (same content), broken by path
        'src/partial.c',
        'src/other.c', // as partial.c, one byte longer: BM25's length normalisation puts it after
        'tests/widget_test.c', // whole word, test file (-800)
      ],
    );
    // The definition's chunk carries its symbol.
    assert.deepEqual(res.files[0]!.chunks[0]!.symbols, [{ symbol: 'make_widget', kind: 'function' }]);
    // The base-name match is highlighted in the path.
    assert.deepEqual(
      res.files[2]!.fileName.matchRanges.map((r) => [r.start.byteOffset, r.end.byteOffset]),
      [[4, 15]],
    );
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

function input(over: Partial<RankInput>): RankInput {
  const content = over.content ?? Buffer.from('x = make_widget();\n');
  return { path: 'src/a.c', content, ranges: [4, 15], nameRanges: [], definitions: [], ...over };
}

test('text score: saturating in the matches, lower for a longer file, terms weighed by idf', () => {
  const at = (tf: number, length = 1000, avg = 1000) =>
    textScore({ ranges: [], content: Buffer.alloc(length), terms: [{ tf, df: 10 }], docCount: 1000, avgDocLength: avg });
  // More matches score more, each one less than the one before; never above 500 × (k1 + 1).
  const s = [1, 2, 4, 8, 64].map((tf) => at(tf));
  for (let i = 1; i < s.length; i++) assert.ok(s[i]! > s[i - 1]!, `tf ${i}`);
  assert.ok(s[2]! - s[1]! < s[1]! - s[0]!, 'saturates');
  assert.ok(s[4]! < WEIGHTS.text * (WEIGHTS.k1 + 1));
  // One match in a file at the mean length: 500 × (k1 + 1) / (1 + k1), the weight of one term.
  assert.equal(Math.round(at(1)), WEIGHTS.text);
  // The same matches in a file four times as long as the mean score less.
  assert.ok(at(3, 4000) < at(3, 1000));
  // Two terms: a file matching only the rare one beats a file matching only the common one.
  const two = (tfRare: number, tfCommon: number) =>
    textScore({
      ranges: [],
      content: Buffer.alloc(1000),
      terms: [
        { tf: tfRare, df: 5 },
        { tf: tfCommon, df: 900 },
      ],
      docCount: 1000,
      avgDocLength: 1000,
    });
  assert.ok(two(1, 0) > two(0, 1));
  // The weights sum to one: matching both terms once equals one term matched once.
  assert.equal(Math.round(two(1, 1)), WEIGHTS.text);
  // A term's idf alone does not lift a file (it is rare in this shard, common in another).
  const alone = (df: number) => textScore({ ranges: [], content: Buffer.alloc(1000), terms: [{ tf: 2, df }], docCount: 1000, avgDocLength: 1000 });
  assert.equal(alone(3), alone(600));
  // Without terms given: the content ranges are one term's matches.
  assert.equal(
    textScore({ ranges: [0, 1, 2, 3], content: Buffer.alloc(10) }),
    textScore({ ranges: [], content: Buffer.alloc(10), terms: [{ tf: 2, df: -1 }] }),
  );
});

test('file signals: definitions by kind, the base name, path depth, test/vendored/generated', () => {
  const base = score(input({}));
  const def = (kind: string) => score(input({ definitions: [kind] })) - base;
  assert.equal(def('function'), WEIGHTS.symbolDefinition);
  assert.equal(def('struct'), WEIGHTS.symbolDefinition);
  assert.equal(def('property'), WEIGHTS.otherDefinition);
  assert.equal(def('number'), WEIGHTS.otherDefinition); // a JSON key
  // A primary kind counts once, whatever else is defined there.
  assert.equal(score(input({ definitions: ['variable', 'function'] })) - base, WEIGHTS.symbolDefinition);
  // Path matches: the whole base name before its extension, part of the base name, the directories.
  const named = (path: string, range: [number, number]) => score(input({ path, nameRanges: range })) - score(input({ path }));
  assert.equal(named('src/make_widget.c', [4, 15]), WEIGHTS.baseNameExact);
  assert.equal(named('src/make_widget', [4, 15]), WEIGHTS.baseNameExact);
  assert.equal(named('src/make_widget_x.c', [4, 15]), WEIGHTS.baseNameMatch);
  assert.equal(named('src/x.make_widget.c', [6, 17]), WEIGHTS.baseNameMatch);
  assert.equal(named('make_widget/a.c', [0, 11]), WEIGHTS.pathMatch);
  // Depth: each directory costs a little, up to ten.
  assert.equal(score(input({ path: 'a/b/c.c' })) - score(input({ path: 'a/c.c' })), WEIGHTS.perDirectory);
  assert.equal(score(input({ path: 'a/b/c/d/e/f/g/h/i/j/k/l/m.c' })) - score(input({ path: 'a/b/c/d/e/f/g/h/i/j/m.c' })), 0);
  // Demoted classes.
  assert.equal(score(input({ path: 'src/tests/a.c' })) - score(input({ path: 'src/other/a.c' })), WEIGHTS.test);
  assert.equal(score(input({ path: 'tools/testing/selftests/a.c' })) - score(input({ path: 'tools/other/other/a.c' })), WEIGHTS.test);
  assert.equal(score(input({ path: 'src/vendor/a.c' })) - score(input({ path: 'src/other/a.c' })), WEIGHTS.vendored);
  assert.equal(score(input({ path: 'src/a.pb.go' })) - score(input({ path: 'src/a.go' })), WEIGHTS.generated);
  // A whole-word match counts; a match inside a longer identifier does not.
  assert.equal(score(input({})) - score(input({ content: Buffer.from('x = make_widgetx()\n') })), WEIGHTS.wholeWord);
});

test("a match is a definition when it is the definition's name: found by the name's offset, as by its line", async () => {
  const dir = tempDir('rank-defs');
  try {
    const tree = join(dir.path, 'src-tree');
    mkdirSync(tree, { recursive: true });
    // make_widget defined on line 3 and called on line 7; a struct; a prefix of a name; a
    // name spelled twice on its definition's line (only the first is the definition).
    writeFileSync(
      join(tree, 'a.c'),
      '#include <x.h>\n\nint make_widget(int make_widget_n) {\n  return 1;\n}\n\nint use(void) { return make_widget(2); }\nstruct gadget { int g; };\nint make; int gadget_count = sizeof(struct gadget);\n',
    );
    const dataDir = join(dir.path, 'data');
    await indexLocal(tree, { dataDir, workers: 1 });
    const m = readAllManifests(dataDir)[0]!;
    const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
    const content = shard.contentOf(0);
    const text = content.toString();
    const at = (needle: string, from = 0): [number, number] => {
      const i = text.indexOf(needle, from);
      assert.ok(i >= 0, needle);
      return [i, i + Buffer.byteLength(needle)];
    };
    const def = at('make_widget');
    const call = at('make_widget', text.indexOf('return make_widget') + 1);
    const prefix = at('make_widget_n');
    const struct = at('gadget');
    const structUse = at('gadget', text.indexOf('sizeof'));
    const cases: Array<[string, number[], string[]]> = [
      ['the function at its definition', def, ['function']],
      ['a call', call, []],
      ['the start of a defined name', [def[0], def[0] + 4], []],
      ['a longer name holding it', [prefix[0], prefix[0] + 4], []],
      ['the struct at its definition', struct, ['struct']],
      ['the struct used', structUse, []],
    ];
    // All at once (the parameter make_widget_n is a definition too when ctags reports it).
    const all = [...def, ...prefix, ...call, ...struct].sort((a, b) => a - b);
    for (const [what, ranges, kinds] of cases) {
      const byOffset = shard.definitionsAt(0, ranges);
      assert.ok(byOffset, "a format 4 shard knows the names' offsets");
      assert.deepEqual(byOffset, kinds, what);
      assert.deepEqual(definitionsByLine(shard, 0, content, ranges), kinds, `${what}: by its line`);
    }
    const both = shard.definitionsAt(0, all)!;
    for (const k of ['function', 'struct']) assert.ok(both.includes(k), k);
    assert.deepEqual([...both].sort(), definitionsByLine(shard, 0, content, all).sort(), 'the offset and the line agree');
  } finally {
    dir.cleanup();
  }
});

/** `callers` shallow files calling frobnicate_widget (a/useNNN.c, with `filler` comment lines each), and its definition at `definition`. */
function writeCallersAndDefinition(tree: string, callers: number, filler: number, definition: string): void {
  mkdirSync(join(tree, 'a'), { recursive: true });
  for (let i = 0; i < callers; i++)
    writeFileSync(join(tree, 'a', `use${String(i).padStart(3, '0')}.c`), `void f${i}(void) { frobnicate_widget(${i}); }\n${'/* filler */\n'.repeat(filler)}`);
  mkdirSync(dirname(join(tree, definition)), { recursive: true });
  writeFileSync(join(tree, definition), 'int frobnicate_widget(int x)\n{\n  return x;\n}\n');
}

test('a shard examines the files defining a searched name first: the definition survives a small matches', async () => {
  const dir = tempDir('rank-defs-first');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
  try {
    const tree = join(dir.path, 'src-tree');
    // Twenty shallow callers come first in the static order; the definition is deep.
    writeCallersAndDefinition(tree, 20, 0, 'lib/core/deep/widget.c');
    await indexLocal(tree, { dataDir: join(dir.path, 'data'), workers: 1 });
    searcher.refresh();
    const req = { query: 'frobnicate_widget', matches: 3, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true };
    const res = await searcher.search(req);
    assert.equal(res.files[0]?.fileName.text, 'lib/core/deep/widget.c', 'the definition first');
    assert.equal(res.files.length, 3);
    // Case-insensitive alike; the brute-force oracle examines the same files in the same order.
    const ci = await searcher.search({ ...req, query: 'FROBNICATE_WIDGET', isCaseSensitivityEnabled: false });
    assert.equal(ci.files[0]?.fileName.text, 'lib/core/deep/widget.c');
    for (const r of [req, { ...req, query: 'FROBNICATE_WIDGET', isCaseSensitivityEnabled: false }]) {
      const brute = await searcher.search(r, { brute: true });
      const indexed = await searcher.search(r);
      assert.deepEqual(
        brute.files.map((f) => f.fileName.text),
        indexed.files.map((f) => f.fileName.text),
      );
    }
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test("past its cut a search still takes every shard's definitions of the name: a definition in the last shard comes first", async () => {
  const dir = tempDir('rank-defs-past-cut');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 2 });
  try {
    const tree = join(dir.path, 'src-tree');
    // 120 callers (2 KB each) fill the first shards: with matches 3 the search is past its
    // cut (ten times matches) long before the last shard, which holds the definition.
    writeCallersAndDefinition(tree, 120, 150, 'z/deep/widget.c');
    await indexLocal(tree, { dataDir: join(dir.path, 'data'), workers: 1, shardTargetBytes: 16 * 1024 });
    searcher.refresh();
    assert.ok(searcher.shardCount >= 12, `more shards than the cut takes (${searcher.shardCount})`);
    const req = { query: 'frobnicate_widget', matches: 3, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true };
    for (let round = 0; round < 3; round++) {
      const res = await searcher.search(req);
      assert.equal(res.files[0]?.fileName.text, 'z/deep/widget.c', 'the definition, from the last shard, first');
      assert.equal(res.isSearchExhaustive, false);
      const brute = await searcher.search(req, { brute: true });
      assert.deepEqual(
        brute.files.map((f) => f.fileName.text),
        res.files.map((f) => f.fileName.text),
        'the oracle agrees',
      );
    }
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test('the definition signal is looked up only in the documents defining a literal when the query allows, with the same scores', async () => {
  const dir = tempDir('rank-confined');
  try {
    const files: Record<string, string> = {
      ...FILES,
      // Definitions named like the literal in another case, or only up to case folding
      // (U+212A KELVIN SIGN folds to "k"), and one whose name is a longer word.
      'src/upper.c': 'int MAKE_WIDGET(void) {\n  return 3;\n}\nint x = MAKE_WIDGET();\n',
      'src/kelvin.c': 'int \u212Aelvin(void) {\n  return 4;\n}\nint y = kelvin + \u212Aelvin();\n',
      'src/longer.c': 'int make_widget_twice(void) {\n  return make_widget() + make_widget();\n}\n',
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir.path, 'src-tree', path)), { recursive: true });
      writeFileSync(join(dir.path, 'src-tree', path), text);
    }
    const dataDir = join(dir.path, 'data');
    await indexLocal(join(dir.path, 'src-tree'), { dataDir, workers: 1 });
    const m = readAllManifests(dataDir)[0]!;
    const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
    const cases: Array<[string, boolean, boolean, boolean]> = [
      // query, regex, case-sensitive, confined
      ['make_widget', false, true, true],
      ['make_widget', false, false, true],
      ['kelvin', false, false, true],
      ['make_widget or remake_widgets', false, false, true],
      ['make_widget -remake', false, false, true],
      ['make_w.dget', true, false, false],
      ['sym:make_widget', false, false, false],
      ['caf\u00e9', false, false, false],
    ];
    let scored = 0;
    let definitions = 0;
    for (const [query, regex, cs, confined] of cases) {
      const plan = planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: cs });
      assert.equal(definitionsConfined(plan), confined, query);
      const matchers = planTerms(plan).map((t) => new Matcher(t, 'indexed'));
      for (const locate of [undefined, { contextLines: 0 }]) {
        const result = searchShard(shard, { plan, matchers, limit: 1000, ...(locate ? { locate } : {}) });
        if (result.hits.length === 0) continue;
        const unconfined = scoreHits(shard, result.hits, result.termDocs, false);
        assert.deepEqual(
          result.hits.map((h) => h.score),
          unconfined,
          `${query}: the same scores`,
        );
        scored += result.hits.length;
        definitions += unconfined.filter((s) => s >= WEIGHTS.otherDefinition).length;
      }
    }
    assert.ok(scored > 20 && definitions >= 6, `hits scored (${scored}), some at a definition (${definitions})`);
  } finally {
    dir.cleanup();
  }
});
