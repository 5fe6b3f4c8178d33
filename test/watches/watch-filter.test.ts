// The change filter (watches/watch-filter.ts) against its oracle: evaluators over one index,
// some skipping the watches the changed lines rule out, one searching every watch after
// every change, must record the same changes for every watch. The changed lines are read
// both ways: from the state of the index held since the last check (index-change.ts) and
// from git (repos/changed-text.ts). A git repository made here gets random commits (lines added,
// removed and moved, `#!` lines that decide an unnamed file's language, files added and
// deleted), indexed after each, as a repository of its own and as a member of compound
// shards (merged now and then); the queries mix literals, regular expressions, negations,
// file and language filters, case and anchors. Zero differences is the only pass.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { IndexView } from '../../daemon/index/index-health.ts';
import { DEFAULT_MAX_TRIGRAMS } from '../../daemon/index/indexer.ts';
import { mergePacks } from '../../daemon/index/pack-merge.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
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
  '#!/usr/bin/env python3',
  '#!/bin/sh',
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
const NAMES = ['a.go', 'b.py', 'notes.md', 'src/c.go', 'src/d.txt', 'bin/run'];

/** How an evaluator learns what changed: from the index held since its last check, from git, or not at all (every watch searched). */
type Reading = 'index' | 'git' | 'none';

function evaluator(store: Store, searcher: Searcher, view: IndexView, reading: Reading): WatchEvaluator {
  return new WatchEvaluator({
    store,
    search: (req, options) => searcher.search(req, options),
    plan: planSearch,
    index: {
      manifests: () => view.current().manifests,
      visibility: (m) => view.visibility(m),
      ...(reading === 'index' ? { hold: () => searcher.hold() } : {}),
    },
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
    filterByChange: reading !== 'none',
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

/** How the repository at `path` is indexed into `dataDir` after each commit. */
type Indexer = (path: string, dataDir: string, step: number) => Promise<void>;

async function scenario(t: { after(fn: () => unknown): void; diagnostic(s: string): void }, seed: number, index: Indexer): Promise<void> {
  const dir = tempDir('watch-filter');
  t.after(() => dir.cleanup());
  const rand = prng(seed);
  const repo = TestRepo.init(join(dir.path, 'repos', 'repo'));
  const files = new Map<string, string[]>();
  const write = () => repo.commit(Object.fromEntries(NAMES.map((n) => [n, files.has(n) ? `${files.get(n)!.join('\n')}\n` : null])));
  for (const n of NAMES.slice(0, 3))
    files.set(
      n,
      Array.from({ length: 6 }, () => rand.pick(LINES)),
    );
  write();
  const dataDir = join(dir.path, 'data');
  await index(repo.path, dataDir, 0);
  const view = new IndexView(dataDir);
  const searcher = new Searcher({ dataDir, workers: 0, view });
  t.after(() => searcher.close());
  const readings: Reading[] = ['index', 'git', 'none'];
  const stores = readings.map(() => openSqliteStore(':memory:'));
  t.after(async () => {
    for (const s of stores) await s.close();
  });
  const evaluators = readings.map((r, i) => evaluator(stores[i]!, searcher, view, r));
  t.after(() => {
    for (const ev of evaluators) ev.release();
  });
  for (const [i, ev] of evaluators.entries()) {
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
  const skipped = readings.map(() => 0);
  let fromIndex = 0;
  let events = 0;
  let searches = 0;
  const steps = 25;
  for (let step = 1; step <= steps; step++) {
    const edits = 1 + rand.int(3);
    for (let e = 0; e < edits; e++) {
      const name = rand.pick(NAMES);
      const lines = files.get(name);
      const roll = rand.int(12);
      if (!lines)
        files.set(
          name,
          Array.from({ length: 1 + rand.int(5) }, () => rand.pick(LINES)),
        );
      else if (roll === 0) files.delete(name);
      else if (roll < 4) lines.splice(rand.int(lines.length + 1), 0, rand.pick(LINES));
      else if (roll < 7 && lines.length > 1) lines.splice(rand.int(lines.length), 1);
      // A line moved: no line added or removed, in another order (a `#!` line moved off the first line changes the file's language).
      else if (roll < 9 && lines.length > 1) lines.splice(rand.int(lines.length), 0, ...lines.splice(rand.int(lines.length), 1));
      else lines[rand.int(lines.length)] = rand.pick(LINES);
    }
    write();
    await index(repo.path, dataDir, step);
    searcher.refresh();
    const reports = [];
    for (const ev of evaluators) reports.push(await ev.check());
    reports.forEach((r, i) => (skipped[i]! += r.skipped));
    fromIndex += reports[0]!.fromIndex;
    assert.equal(reports[0]!.fromIndex, reports[0]!.repos, 'each repository changed since the last check: read from the held index');
    events += reports[2]!.events;
    searches += reports[2]!.searched;
    assert.equal(reports[1]!.fromIndex, 0, 'an evaluator without a hold reads git');
    assert.equal(reports[1]!.fromGit, reports[1]!.repos, '... every change');
    assert.equal(reports[2]!.fromGit + reports[2]!.fromIndex + reports[2]!.unread, 0, 'the oracle reads no change');
    assert.equal(reports[2]!.skipped, 0);
  }
  const oracle = await changes(stores[2]!);
  assert.deepEqual(await changes(stores[0]!), oracle, 'read from the index');
  assert.deepEqual(await changes(stores[1]!), oracle, 'read from git');
  t.diagnostic(`${events} changes recorded; the filter spared ${skipped[0]} (index) and ${skipped[1]} (git) of ${searches} watch searches`);
  assert.ok(events > 10, `the commits changed matches (${events})`);
  assert.ok(skipped[0]! > 0 && skipped[1]! > 0, 'the filter ruled some watches out');
  assert.ok(fromIndex >= steps, 'the commits were read from the held index');
}

test('the change filter records exactly what searching every watch after every change records: a repository of its own', async (t) => {
  await scenario(t, 61, (path, dataDir) => indexLocal(path, { dataDir, symbols: false }).then(() => {}));
});

test('... and a repository in compound shards, merged with others now and then', async (t) => {
  let store: Store | undefined;
  t.after(() => store?.close());
  await scenario(t, 62, async (path, dataDir, step) => {
    const reposDir = join(path, '..');
    if (step === 0) {
      // Others to share its compound shards with.
      for (const other of ['other-a', 'other-b']) TestRepo.init(join(reposDir, other)).commit({ 'x.txt': `${other} alpha\n` });
      mkdirSync(dataDir, { recursive: true });
      store = openSqliteStore(join(dataDir, 'trawl.db'));
    }
    const config = parseConfig(
      JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: `${reposDir}/*` } } }),
      join(dataDir, '..', 'trawl.json'),
    );
    await syncOnce({ config, dataDir, store: store! });
    if (step % 4 === 3) await mergePacks({ dataDir, target: 1 << 20, maxFileSize: 2 << 20, maxTrigrams: DEFAULT_MAX_TRIGRAMS, symbols: false });
  });
});
