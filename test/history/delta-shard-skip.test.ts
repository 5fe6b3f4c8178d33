// A history updated by delta builds has a shard per update, and every shard lists every
// commit of the history as a ref. A search at an older commit must not examine a delta
// shard that holds nothing at that commit: its branch classes are none
// (search/branch-classes.ts), shardCandidates says so (null), and the searcher counts the
// shard as skipped by the filters without searching it. The answer itself is unchanged.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { historyBeside } from '../../daemon/history/history-search.ts';
import { historyDataDir, shardsDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { everyMember } from '../../daemon/search/branch-classes.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { derivedPlan, planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { shardCandidates } from '../../daemon/search/shard-search.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const dir = tempDir('delta-shard-skip');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let first = '';
let added = '';
let deltaShard = '';

before(async () => {
  const repo = TestRepo.init(src);
  first = repo.commit({ 'src/a.c': 'int shared_name(void);\n', 'src/b.c': 'int other(void);\n' }, 'first');
  repo.commit({ 'src/a.c': 'int shared_name(void);\nint more(void);\n' }, 'second');
  const tip = await indexLocal(src, { dataDir: data, name: 'skip', workers: 1, symbols: false });
  assert.notEqual(await indexLocalHistory(tip, { dataDir: data, workers: 1, symbols: false }), 'unchanged');
  // One more commit: a delta build adds a shard holding the new version of src/b.c only.
  added = repo.commit({ 'src/b.c': 'int other(void);\nint shared_name_too(void);\n' }, 'third');
  const next = await indexLocal(src, { dataDir: data, name: 'skip', workers: 1, symbols: false });
  assert.notEqual(await indexLocalHistory(next, { dataDir: data, workers: 1, symbols: false }), 'unchanged');
  const root = historyDataDir(data);
  const m = readManifest(root, next.repoId);
  assert.ok(m?.version === 2);
  const delta = m.shards.filter((s) => s.delta === true);
  assert.equal(delta.length, 1, 'the update made one delta shard');
  deltaShard = join(shardsDir(root, next.repoId), delta[0]!.file);
});

after(() => dir.cleanup());

/** The plan of `query` at `commit`, as the history search rewrites a revision (history-search.ts route). */
function atCommit(query: string, commit: string) {
  const plan = planSearch({ query, isRegexEnabled: false, isCaseSensitivityEnabled: true }).plan;
  return derivedPlan(plan, `test ${commit}`, () => ({
    ...plan,
    root: { op: 'and', children: [plan.root, { op: 'branch', glob: commit }] },
    branches: [commit],
  })).plan;
}

test('a delta shard holding nothing at a commit gives no candidates list there (null), and its documents where it does', () => {
  const shard = Shard.open(deltaShard);
  assert.ok(shard.branches.names.includes(first), 'the delta shard lists the old commit as a ref');
  for (const [commit, expected] of [
    [first, null],
    [added, 1],
  ] as const) {
    const plan = atCommit('shared_name', commit);
    const matchers = planTerms(plan).map((t) => new Matcher(t, 'indexed'));
    const found = shardCandidates(shard, plan, matchers, everyMember(shard));
    if (expected === null) assert.equal(found, null, 'no branch class at the old commit');
    else assert.equal(found?.length, expected, 'the new version is a candidate at the new commit');
  }
});

test('a search at the old commit skips the delta shard by its filters and finds what the commit holds', async () => {
  const live = new Searcher({ dataDir: data, workers: 1 });
  const service = historyBeside(live, { dataDir: data });
  try {
    const req = (query: string) => ({ query, matches: 100, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
    const old = await service.search(req(`shared_name rev:${first}`));
    assert.deepEqual(
      old.files.map((f) => f.fileName.text),
      ['src/a.c'],
    );
    // The tip index's shard and the delta shard are ruled out; only the full build's shard is read.
    assert.equal(old.stats.shardsScanned, 1);
    assert.ok(old.stats.shardsSkippedFilter >= 2, `skipped by filters: ${old.stats.shardsSkippedFilter}`);
    // Nothing at the old commit holds the new name: no shard has a candidate, and the one
    // that has documents there is counted as ruled out, as a shard whose candidates lie in
    // another shard is, without a run of its own; no file counts as considered.
    const none = await service.search(req(`shared_name_too rev:${first}`));
    assert.deepEqual(none.files, []);
    assert.equal(none.stats.shardsScanned, 0);
    assert.equal(none.stats.shardsSkippedFilter, old.stats.shardsSkippedFilter + 1);
    assert.equal(none.stats.shardFilesConsidered, 0);
    assert.equal(none.isSearchExhaustive, true);
    const now = await service.search(req(`shared_name_too rev:${added}`));
    assert.deepEqual(
      now.files.map((f) => f.fileName.text),
      ['src/b.c'],
    );
  } finally {
    await service.close();
    await live.close();
  }
});
