// The sync scheduler: a pass at start, then one per interval, never two at once; changes
// committed upstream become searchable without anyone asking; stop() ends the schedule.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { SyncScheduler } from '../../daemon/sync/scheduler.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

test('passes run on the interval and pick up new commits; runNow joins a running pass', async () => {
  const dir = tempDir('sched');
  const data = join(dir.path, 'data');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  const repo = TestRepo.init(join(dir.path, 'repos', 'app'));
  repo.commit({ 'a.c': 'int first_marker;\n' });
  const config = parseConfig(
    JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } } }),
    join(dir.path, 'trawl.json'),
  );
  const scheduler = new SyncScheduler({ config, dataDir: data, store, intervalMs: 30, inUse: () => searcher.inUse() });
  const count = async (q: string) =>
    (await searcher.search({ query: q, matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false })).files.length;
  const until = async (cond: () => Promise<boolean>) => {
    const deadline = Date.now() + 20_000;
    while (!(await cond())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    scheduler.start();
    await until(async () => (await count('first_marker')) === 1);
    repo.commit({ 'a.c': 'int second_marker;\n' });
    await until(async () => (await count('second_marker')) === 1);
    assert.equal(await count('first_marker'), 0);
    const [a, b] = [scheduler.runNow(), scheduler.runNow()];
    assert.equal(a, b, 'a second request joins the running pass');
    await a;
    await scheduler.stop();
    const passes = scheduler.passes;
    assert.ok(passes >= 2);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(scheduler.passes, passes, 'no pass after stop()');
  } finally {
    await scheduler.stop();
    await searcher.close();
    await store.close();
    dir.cleanup();
  }
});
