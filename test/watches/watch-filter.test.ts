// The change filter (watches/watch-filter.ts) against its oracle: two evaluators over one
// index, one skipping the watches the changed lines rule out, the other searching every
// watch after every change, must record the same changes for every watch. A git
// repository made here gets random commits (lines added, removed, moved, files added and
// deleted), indexed after each; the queries mix literals, regular expressions, negations,
// file and language filters, case and anchors. Zero differences is the only pass.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import { IndexView } from '../../daemon/index/index-health.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { WatchEvaluator } from '../../daemon/watches/watch-evaluator.ts';
import { WatchFeed } from '../../daemon/watches/watch-feed.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const LINES = [
  'alpha beta',
  'x = alpha(1);',
  'gamma();',
  'TODO fix this',
  'todo: later',
  '-- sql comment',
  '--- not a header',
  '+++ neither',
  'return beta;',
  'Delta delta',
  '',
  '}',
];
const QUERIES: Array<{ query: string; isRegexEnabled?: boolean; isCaseSensitivityEnabled?: boolean }> = [
  { query: 'alpha' },
  { query: 'TODO', isCaseSensitivityEnabled: true },
  { query: 'todo' },
  { query: 'beta -gamma' },
  { query: 'alpha or delta' },
  { query: 'file:\\.go$ beta' },
  { query: 'lang:python alpha' },
  { query: '-- sql' },
  { query: 'not a header' },
  { query: '^return', isRegexEnabled: true },
  { query: 'alpha\\(\\d\\)', isRegexEnabled: true },
  { query: '\\Aalpha', isRegexEnabled: true },
  { query: 'file:notes' },
  { query: 'lang:go' },
  { query: 'delta case:yes' },
  { query: 'beta -file:\\.py$' },
];
const NAMES = ['a.go', 'b.py', 'notes.md', 'src/c.go', 'src/d.txt'];

function evaluator(store: Store, searcher: Searcher, view: IndexView, filterByChange: boolean): WatchEvaluator {
  return new WatchEvaluator({
    store,
    search: (req, options) => searcher.search(req, options),
    plan: planSearch,
    index: { manifests: () => view.current().manifests, visibility: (m) => view.visibility(m) },
    repoName: async () => 'repo',
    owner: async () => () => true,
    feed: new WatchFeed(),
    settings: () => ({
      maxPerUser: 100,
      maxMatches: 10_000,
      deliveryAttempts: 1,
      retryBaseMs: 1,
      retryMaxMs: 1,
      allowPrivateUrls: true,
      eventRetentionDays: 1,
    }),
    filterByChange,
  });
}

/** Every watch's events, as what they added and removed (ids and times differ between the two). */
async function changes(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const w of await store.watches.list()) {
    for (const e of await store.watches.eventsAfter(w.id, 0, 10_000)) {
      const body = JSON.parse(e.payload) as { added: unknown; removed: unknown };
      out.push(`${w.query} ${JSON.stringify(body.added)} ${JSON.stringify(body.removed)}`);
    }
  }
  return out;
}

test('the change filter records exactly what searching every watch after every change records', async (t) => {
  const dir = tempDir('watch-filter');
  t.after(() => dir.cleanup());
  const rand = prng(61);
  const repo = TestRepo.init(join(dir.path, 'repo'));
  const files = new Map<string, string[]>();
  const write = () => repo.commit(Object.fromEntries(NAMES.map((n) => [n, files.has(n) ? `${files.get(n)!.join('\n')}\n` : null])));
  for (const n of NAMES.slice(0, 3))
    files.set(
      n,
      Array.from({ length: 6 }, () => rand.pick(LINES)),
    );
  write();
  const dataDir = join(dir.path, 'data');
  await indexLocal(repo.path, { dataDir, symbols: false });
  const view = new IndexView(dataDir);
  const searcher = new Searcher({ dataDir, workers: 0, view });
  t.after(() => searcher.close());
  const stores = [openSqliteStore(':memory:'), openSqliteStore(':memory:')];
  t.after(async () => {
    for (const s of stores) await s.close();
  });
  const [filtered, everything] = [evaluator(stores[0]!, searcher, view, true), evaluator(stores[1]!, searcher, view, false)];
  for (const [i, ev] of [filtered, everything].entries()) {
    const user = await stores[i]!.createUser({ email: 'w@example.com', name: 'W', role: 'member' }, new Date().toISOString());
    for (const q of QUERIES) {
      await ev.create(
        {
          userId: user.id,
          name: q.query,
          query: q.query,
          isRegexEnabled: q.isRegexEnabled ?? false,
          isCaseSensitivityEnabled: q.isCaseSensitivityEnabled ?? false,
        },
        () => true,
      );
    }
  }
  let skipped = 0;
  let events = 0;
  for (let step = 0; step < 25; step++) {
    const edits = 1 + rand.int(3);
    for (let e = 0; e < edits; e++) {
      const name = rand.pick(NAMES);
      const lines = files.get(name);
      const roll = rand.int(10);
      if (!lines)
        files.set(
          name,
          Array.from({ length: 1 + rand.int(5) }, () => rand.pick(LINES)),
        );
      else if (roll === 0) files.delete(name);
      else if (roll < 4) lines.splice(rand.int(lines.length + 1), 0, rand.pick(LINES));
      else if (roll < 7 && lines.length > 1) lines.splice(rand.int(lines.length), 1);
      else lines[rand.int(lines.length)] = rand.pick(LINES);
    }
    write();
    await indexLocal(repo.path, { dataDir, symbols: false });
    searcher.refresh();
    const a = await filtered.check();
    const b = await everything.check();
    skipped += a.skipped;
    events += b.events;
    assert.equal(b.skipped, 0);
  }
  assert.deepEqual(await changes(stores[0]!), await changes(stores[1]!));
  t.diagnostic(`${events} changes recorded; the filter spared ${skipped} of ${25 * QUERIES.length} watch searches`);
  assert.ok(events > 10, `the commits changed matches (${events})`);
  assert.ok(skipped > 0, 'the filter ruled some watches out');
});
