// The state of the index a watches' check ran on stays held for the next check, and no
// longer than its bound: each hold is released once, the next change after the bound is
// read from git, and nothing stays held once the evaluator is released (the replaced shard
// files are no longer in use).

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { IndexView } from '../../daemon/index/index-health.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { WatchEvaluator } from '../../daemon/watches/watch-evaluator.ts';
import { WatchFeed } from '../../daemon/watches/watch-feed.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

test('a held state: none where the watches are not checked; kept until the next check, let go after its bound, every hold released once', async (t) => {
  const dir = tempDir('held-index');
  t.after(() => dir.cleanup());
  const repo = TestRepo.init(join(dir.path, 'repo'));
  repo.commit({ 'a.txt': 'alpha\n' });
  const dataDir = join(dir.path, 'data');
  const index = async () => {
    await indexLocal(repo.path, { dataDir, symbols: false });
    searcher.refresh();
  };
  await indexLocal(repo.path, { dataDir, symbols: false });
  const view = new IndexView(dataDir);
  const searcher = new Searcher({ dataDir, workers: 0, view });
  t.after(() => searcher.close());
  const store = openSqliteStore(':memory:');
  t.after(() => store.close());
  let held = 0;
  let released = 0;
  // (Long while the first change is indexed, which may take seconds on a loaded machine; short after it.)
  const heldIndex = {
    manifests: () => view.current().manifests,
    visibility: (m: Parameters<IndexView['visibility']>[0]) => view.visibility(m),
    hold: () => {
      held++;
      const h = searcher.hold();
      return { manifest: h.manifest, parts: h.parts, release: () => (released++, h.release()) };
    },
    holdMs: 60_000,
  };
  let evaluates = false;
  const evaluator = new WatchEvaluator({
    evaluates: () => evaluates,
    store,
    search: (req, options) => searcher.search(req, options),
    plan: planSearch,
    index: heldIndex,
    repoName: async () => 'repo',
    owner: async () => () => true,
    feed: new WatchFeed(),
    settings: () => ({ maxPerUser: 10, maxMatches: 100, deliveryAttempts: 1, retryBaseMs: 1, retryMaxMs: 1, allowPrivateUrls: true, eventRetentionDays: 1 }),
  });
  const user = await store.createUser({ email: 'w@example.com', name: 'W', role: 'member' }, new Date().toISOString());
  const watch = (name: string) =>
    evaluator.create({ userId: user.id, name, query: 'alpha', isRegexEnabled: false, isCaseSensitivityEnabled: false }, () => true);
  // A process that does not check the watches (a node of a cluster that does not lead) holds nothing.
  await watch('made elsewhere');
  assert.equal((await evaluator.check()).repos, 0);
  assert.equal(held, 0, 'nothing held where the watches are not checked');
  evaluates = true;
  await watch('alpha');
  assert.equal(held - released, 1, 'the watch made where they are checked holds the index');

  repo.commit({ 'a.txt': 'alpha\nalpha again\n' });
  await index();
  heldIndex.holdMs = 100;
  const first = await evaluator.check();
  assert.deepEqual([first.fromIndex, first.fromGit, first.events], [1, 0, 2], 'read from the held state');
  assert.equal(held - released, 1, 'the state before let go, this one held');

  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(held, released, 'let go after its bound');
  repo.commit({ 'a.txt': 'alpha\n' });
  await index();
  const second = await evaluator.check();
  assert.deepEqual([second.fromIndex, second.fromGit, second.events], [0, 1, 2], 'read from git');
  assert.equal(held - released, 1);
  evaluator.release();
  assert.equal(held, released, 'released with the evaluator');
  const current = new Set(view.current().manifests.flatMap((m) => m.shards.map((s) => s.file)));
  for (const path of searcher.inUse()) assert.ok(current.has(path.split('/').pop()!), `${path}: in use, but not a file of the index now`);
});
