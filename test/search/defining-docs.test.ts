// The documents defining a query's names, asked among named documents (a search told which
// to examine: a history's search at a commit names a few versions of hundreds that define
// the name) are exactly those of the whole shard's that are named, by the symbol index and
// by the reference's reading of each document alike; and a search past its cut, told to
// examine its definitions only, examines none that is not named.

import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { definingDocs, positiveLiterals } from '../../daemon/search/definition-first.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('defining-docs');
let shard: Shard;

before(async () => {
  const tree = join(dir.path, 'tree');
  mkdirSync(tree, { recursive: true });
  // Every third file defines the name; the others use it.
  for (let i = 0; i < 24; i++) {
    const body =
      i % 3 === 0
        ? `int frobnicate_widget_${i % 2}(int x) { return x; }\nint frobnicate_widget(int x)\n{\n  return x + ${i};\n}\n`
        : `void f${i}(void) { frobnicate_widget(${i}); }\n`;
    writeFileSync(join(tree, `f${String(i).padStart(2, '0')}.c`), body);
  }
  const dataDir = join(dir.path, 'data');
  await indexLocal(tree, { dataDir, workers: 1, symbols: true });
  const m = readAllManifests(dataDir)[0]!;
  shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
});

after(() => dir.cleanup());

const literals = () => positiveLiterals(planQuery({ query: 'frobnicate_widget', isRegexEnabled: false, isCaseSensitivityEnabled: true }));

test('among named documents: the whole shard’s defining documents that are named, by the index and by reading each', () => {
  const all = [...definingDocs(shard, literals(), true)];
  assert.equal(all.length, 8, 'eight files define the name');
  assert.deepEqual([...definingDocs(shard, literals(), false)], all, 'the reference reads the same');
  const every = Array.from({ length: shard.docCount }, (_, d) => d);
  for (const within of [[], [all[0]!], every.filter((d) => d % 2 === 0), every.filter((d) => !all.includes(d)), every]) {
    const named = Uint32Array.from(within);
    const expected = all.filter((d) => within.includes(d));
    assert.deepEqual([...definingDocs(shard, literals(), true, named)], expected, `index, named ${within.join(',')}`);
    assert.deepEqual([...definingDocs(shard, literals(), false, named)], expected, `reference, named ${within.join(',')}`);
  }
});

test('a search of named documents told to examine definitions only examines none that is not named', () => {
  const plan = planQuery({ query: 'frobnicate_widget', isRegexEnabled: false, isCaseSensitivityEnabled: true });
  const matchers = planTerms(plan).map((t) => new Matcher(t, 'indexed'));
  const all = [...definingDocs(shard, literals(), true)];
  const named = Uint32Array.from(
    [
      all[1]!,
      all[3]!,
      ...Array.from({ length: shard.docCount }, (_, d) => d)
        .filter((d) => !all.includes(d))
        .slice(0, 4),
    ].sort((a, b) => a - b),
  );
  const r = searchShard(shard, { plan, matchers, limit: 100, docs: named, definitionsOnly: () => true });
  assert.deepEqual(
    r.hits.map((h) => h.doc),
    [all[1]!, all[3]!],
  );
});
