// A shard searched speculatively (shard-search.ts `speculate`: a cluster's coordinator bets
// that its search will be past the cut before the shard, cluster/fan-out.ts): searched for
// its definitions only, exactly what the shard gives a search past its cut, unless so few of
// its documents can match (term-stats.ts planMaxDocs) that it is searched whole; the result
// says which, and the coordinator asks again whole only a speculative one.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchShard, type ShardSearchResult } from '../../daemon/search/shard-search.ts';
import { planMaxDocs, planReadsContent } from '../../daemon/search/term-stats.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

const docs = (r: ShardSearchResult) => r.hits.map((h) => h.doc);

test('a speculative shard gives its definitions only, as past the cut, unless few enough documents can match', async () => {
  const dir = tempDir('speculate');
  try {
    const tree = join(dir.path, 'tree');
    mkdirSync(join(tree, 'a'), { recursive: true });
    for (let i = 0; i < 30; i++) writeFileSync(join(tree, 'a', `use${String(i).padStart(2, '0')}.c`), `void f${i}(void) { frobnicate_widget(${i}); }\n`);
    writeFileSync(join(tree, 'widget.c'), 'int frobnicate_widget(int x)\n{\n  return x;\n}\n');
    writeFileSync(join(tree, 'rare1.c'), 'int zanzibar_quux;\n');
    writeFileSync(join(tree, 'rare2.c'), 'extern int zanzibar_quux;\n');
    // Every trigram of zanzibar_quux in 22 documents, all of them together in 2.
    for (let i = 0; i < 20; i++) writeFileSync(join(tree, 'a', `half${String(i).padStart(2, '0')}.c`), i % 2 === 0 ? 'int zanzibar_x;\n' : 'int r_quux;\n');
    const dataDir = join(dir.path, 'data');
    await indexLocal(tree, { dataDir, workers: 1, symbols: true });
    const m = readAllManifests(dataDir)[0]!;
    assert.equal(m.shards.length, 1);
    const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
    const search = (query: string, o: { speculate?: number; definitionsOnly?: boolean; regex?: boolean } = {}) => {
      const plan = planQuery({ query, isRegexEnabled: o.regex === true, isCaseSensitivityEnabled: true });
      const matchers = planTerms(plan).map((t) => new Matcher(t, 'indexed'));
      return searchShard(shard, {
        plan,
        matchers,
        limit: 100,
        definitionsOnly: () => o.definitionsOnly === true,
        ...(o.speculate !== undefined ? { speculate: o.speculate } : {}),
      });
    };

    const whole = search('frobnicate_widget');
    assert.equal(whole.hits.length, 31);
    assert.equal(whole.speculative, false);
    const past = search('frobnicate_widget', { definitionsOnly: true });
    assert.equal(past.speculative, false, 'told it is past the cut: final, not a bet');
    assert.equal(past.hits.length, 1);

    // 31 documents may match: more than 8, a bet; the definitions, as past the cut.
    const bet = search('frobnicate_widget', { speculate: 8 });
    assert.equal(bet.speculative, true);
    assert.deepEqual(docs(bet), docs(past));
    assert.ok(bet.hits.every((h) => h.definition));
    assert.equal(bet.more, true, 'not exhaustive');
    assert.deepEqual(
      bet.hits.map((h) => h.ranges),
      past.hits.map((h) => h.ranges),
    );

    // With a bound above what may match, or a rare word: searched whole, no bet.
    const cheap = search('frobnicate_widget', { speculate: 1000 });
    assert.equal(cheap.speculative, false);
    assert.deepEqual(docs(cheap), docs(whole));
    // The tables bound each trigram alone (here 11 or 22 documents, more than 8): the
    // candidates, read from the postings, are 2; searched whole.
    const rarePlan = planQuery({ query: 'zanzibar_quux', isRegexEnabled: false, isCaseSensitivityEnabled: true });
    assert.ok(planMaxDocs(shard, rarePlan) > 8, `bound ${planMaxDocs(shard, rarePlan)}`);
    const rare = search('zanzibar_quux', { speculate: 8 });
    assert.equal(rare.speculative, false);
    assert.deepEqual(docs(rare), docs(search('zanzibar_quux')));
    assert.equal(rare.hits.length, 2);
    // A search with no term a table bounds (a regex without trigrams) always bets.
    assert.equal(search('\\d+', { speculate: 8, regex: true }).speculative, true);
  } finally {
    dir.cleanup();
  }
});

test('planMaxDocs bounds the documents a plan can match, from the trigram tables', async () => {
  const dir = tempDir('plan-max-docs');
  try {
    const tree = join(dir.path, 'tree');
    mkdirSync(tree, { recursive: true });
    const words = ['alpha_one', 'beta_two', 'gamma_three', 'delta_four'];
    for (let i = 0; i < 40; i++) writeFileSync(join(tree, `f${i}.txt`), `${words[i % 4]} ${i % 3 === 0 ? words[(i + 1) % 4] : ''}\n`);
    const dataDir = join(dir.path, 'data');
    await indexLocal(tree, { dataDir, workers: 1 });
    const m = readAllManifests(dataDir)[0]!;
    const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
    const cases: Array<[string, boolean]> = [
      ['alpha_one', false],
      ['alpha_one beta_two', false],
      ['alpha_one or gamma_three', false],
      ['-alpha_one', false],
      ['alpha_one -beta_two', false],
      ['file:f1 beta_two', false],
      ['file:f1', false],
      ['nothing_like_it', false],
      ['(alpha|delta)_[a-z]+', true],
    ];
    for (const [query, regex] of cases) {
      const plan = planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: true });
      const found = searchShard(shard, { plan, matchers: planTerms(plan).map((t) => new Matcher(t, 'indexed')), limit: 1000 }).hits.length;
      const bound = planMaxDocs(shard, plan);
      assert.ok(bound >= found && bound <= shard.docCount, `${query}: bound ${bound}, found ${found}`);
    }
    const none = planQuery({ query: 'nothing_like_it', isRegexEnabled: false, isCaseSensitivityEnabled: true });
    assert.equal(planMaxDocs(shard, none), 0, 'a literal with a trigram in no document');
  } finally {
    dir.cleanup();
  }
});

test('planReadsContent: whether some term outside a negation reads file contents', () => {
  const cases: Array<[string, boolean]> = [
    ['alpha_one', true],
    ['file:f1', false],
    ['sym:alpha', false],
    ['sym:alpha file:f1', false],
    ['-alpha_one file:f1', false],
    ['alpha_one or file:f1', true],
    ['sym:alpha beta', true],
  ];
  for (const [query, want] of cases) assert.equal(planReadsContent(planQuery({ query, isRegexEnabled: false, isCaseSensitivityEnabled: true })), want, query);
});
