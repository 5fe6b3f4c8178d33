// A watch whose search after a change does not finish (shards no node could search then) is
// checked again on the same change, its repository's state held back meanwhile: the change
// is reported once the search finishes; the watches that did finish are not searched again;
// after RETRY_FOR_MS the change is given up for it, and the state moves on.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ServiceError } from '../../daemon/errors.ts';
import { IndexView } from '../../daemon/index/index-health.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { RETRY_FOR_MS, WatchEvaluator } from '../../daemon/watches/watch-evaluator.ts';
import { WatchFeed } from '../../daemon/watches/watch-feed.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

test('a watch whose search did not finish is checked again on the same change, alone, until it finishes or its time runs out', async (t) => {
  const dir = tempDir('unfinished-search');
  t.after(() => dir.cleanup());
  const repo = TestRepo.init(join(dir.path, 'repo'));
  repo.commit({ 'a.txt': 'alpha\nbeta\n' });
  const dataDir = join(dir.path, 'data');
  await indexLocal(repo.path, { dataDir, symbols: false });
  const view = new IndexView(dataDir);
  const searcher = new Searcher({ dataDir, workers: 0, view });
  t.after(() => searcher.close());
  const store = openSqliteStore(':memory:');
  t.after(() => store.close());
  const change = async (text: string) => {
    repo.commit({ 'a.txt': text });
    await indexLocal(repo.path, { dataDir, symbols: false });
    searcher.refresh();
  };

  // How each watch's search ends, by query: whole, not exhaustive, or refused as a cluster
  // without a live holder refuses.
  const ends = new Map<string, 'whole' | 'unfinished' | 'unavailable'>();
  const searched: string[] = [];
  let clock = Date.parse('2026-12-01T00:00:00Z');
  const warnings: string[] = [];
  const evaluator = new WatchEvaluator({
    store,
    search: async (req, options) => {
      searched.push(req.query);
      const end = ends.get(req.query) ?? 'whole';
      if (end === 'unavailable') throw new ServiceError('SERVICE_UNAVAILABLE', 'no live node holds the shard');
      const res = await searcher.search(req, options);
      return end === 'unfinished' ? { ...res, isSearchExhaustive: false } : res;
    },
    plan: planSearch,
    index: { manifests: () => view.current().manifests, visibility: (m) => view.visibility(m) },
    repoName: async () => 'repo',
    owner: async () => () => true,
    feed: new WatchFeed(),
    settings: () => ({ maxPerUser: 10, maxMatches: 100, deliveryAttempts: 1, retryBaseMs: 1, retryMaxMs: 1, allowPrivateUrls: true, eventRetentionDays: 1 }),
    now: () => new Date(clock),
    log: { info() {}, error() {}, warn: (_fields, message) => void warnings.push(message) },
  });
  const user = await store.createUser({ email: 'w@example.com', name: 'W', role: 'member' }, new Date().toISOString());
  const watch = (query: string) =>
    evaluator.create({ userId: user.id, name: query, query, isRegexEnabled: false, isCaseSensitivityEnabled: false }, () => true);
  const alpha = await watch('alpha');
  const beta = await watch('beta');
  const generation = async () => (await store.watches.repoStates())[0]!.generation;
  const events = async (id: number) =>
    (await store.watches.eventsAfter(id, 0, 100)).map((e) => JSON.parse(e.payload) as { added: unknown[]; removed: unknown[] });
  const startedAt = await generation();

  // Both lines change; alpha's search does not finish.
  await change('alpha 2\nbeta 2\n');
  ends.set('alpha', 'unfinished');
  searched.length = 0;
  const first = await evaluator.check();
  assert.deepEqual([first.repos, first.deferred, first.searched, first.events], [1, 1, 2, 1], 'beta recorded, alpha left');
  assert.equal(await generation(), startedAt, 'the state stays while a watch is left');
  assert.equal((await events(beta.id)).length, 1);
  assert.equal((await events(alpha.id)).length, 0);

  // Refused now: still left; only alpha is searched again.
  ends.set('alpha', 'unavailable');
  searched.length = 0;
  const second = await evaluator.check();
  assert.deepEqual(searched, ['alpha'], 'only the watch left is searched again');
  assert.deepEqual([second.deferred, second.events], [1, 0]);

  // It finishes: its change is reported, once, and the state moves.
  ends.delete('alpha');
  const third = await evaluator.check();
  assert.deepEqual([third.deferred, third.events], [0, 1]);
  assert.notEqual(await generation(), startedAt, 'the state moved');
  const reported = await events(alpha.id);
  assert.equal(reported.length, 1);
  assert.deepEqual(reported[0]!.added, [{ path: 'a.txt', line: 1, text: 'alpha 2' }]);
  assert.deepEqual(reported[0]!.removed, [{ path: 'a.txt', line: 1, text: 'alpha' }]);
  assert.equal((await events(beta.id)).length, 1, 'beta not reported again');
  assert.equal((await evaluator.check()).repos, 0, 'nothing left');

  // A search that never finishes: given up after RETRY_FOR_MS, the state moves, it is logged.
  const before = await generation();
  await change('alpha 3\nbeta 2\n');
  ends.set('alpha', 'unfinished');
  assert.equal((await evaluator.check()).deferred, 1);
  clock += RETRY_FOR_MS - 1;
  assert.equal((await evaluator.check()).deferred, 1, 'still tried within its time');
  assert.equal(warnings.length, 0);
  clock += 1;
  const last = await evaluator.check();
  assert.deepEqual([last.deferred, last.events], [0, 0]);
  assert.notEqual(await generation(), before, 'given up: the state moved');
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.equal((await events(alpha.id)).length, 1, 'the change given up is not reported');
});
