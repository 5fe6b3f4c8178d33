// A git connection with `history: true`, synced: the history index holds every commit the
// indexed refs reach and follows them (a new commit is added by a delta build, a
// force-pushed branch's old commits leave, turning history off retires it), and a daemon
// serves searches at any of those commits over HTTP.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { historyDataDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call } from '../helpers/daemon.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo, type HistoryRepo } from '../helpers/history-repo.ts';

const dir = tempDir('history-sync');
const repoPath = join(dir.path, 'repos', 'app');
const dataDir = join(dir.path, 'data');
let store: Store;
let made: HistoryRepo;

function config(history: boolean) {
  return parseConfig(
    JSON.stringify({
      settings: { symbols: false, anonymousAccess: true },
      connections: { local: { type: 'git', url: repoPath, revisions: { branches: ['feature'] }, ...(history ? { history: true } : {}) } },
    }),
    join(dir.path, 'trawl.json'),
  );
}

/** The commits the history index holds, or undefined when it has none. */
async function historyCommits(): Promise<Set<string> | undefined> {
  const [record] = await store.listRepos();
  assert.ok(record, 'the repository is registered');
  const m = readManifest(historyDataDir(dataDir), record.repoId);
  return m === undefined || m.version !== 2 || m.shards.length === 0 ? undefined : new Set(m.refs.map((r) => r.commit));
}

function reachable(): string[] {
  return git(repoPath, 'rev-list', 'main', 'feature').trim().split('\n');
}

before(async () => {
  made = makeHistoryRepo(repoPath, 5, 16);
  made.repo.checkout('feature', true);
  made.repo.commit({ 'feature/one.c': 'int feature_only_one(void);\n' }, 'feature one');
  made.repo.commit({ 'feature/two.c': 'int feature_only_two(void);\n' }, 'feature two');
  made.repo.checkout('main');
  store = openStore(dataDir);
});

after(async () => {
  await store?.close();
  dir.cleanup();
});

test('a sync builds the history of every commit the indexed refs reach, and follows them', async () => {
  await syncOnce({ config: config(true), dataDir, store });
  assert.deepEqual([...(await historyCommits())!].sort(), reachable().sort());

  // A new commit on main: added by a delta build.
  const added = made.repo.commit({ 'src/new.c': 'int brand_new_function(void);\n' }, 'new');
  await syncOnce({ config: config(true), dataDir, store });
  const held = (await historyCommits())!;
  assert.ok(held.has(added));
  assert.deepEqual([...held].sort(), reachable().sort());

  // feature force-pushed back to main: its two commits are no longer reachable.
  const featureTip = git(repoPath, 'rev-parse', 'feature').trim();
  const featureParent = git(repoPath, 'rev-parse', 'feature~1').trim();
  git(repoPath, 'branch', '-q', '-f', 'feature', 'main');
  await syncOnce({ config: config(true), dataDir, store });
  const after = (await historyCommits())!;
  assert.ok(!after.has(featureTip) && !after.has(featureParent));
  assert.deepEqual([...after].sort(), reachable().sort());
});

test('a daemon searches at any commit of the synced history over HTTP', async () => {
  const daemon = await startDaemon({ config: config(true), dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false });
  try {
    const first = made.commits[0]!;
    const search = (query: string) => call(`${daemon.url}/api/search`, { json: { query, matches: 1000 } });
    const atFirst = await call(`${daemon.url}/api/search`, { json: { query: `file:^README\\.md$ rev:${first.slice(0, 9)}`, matches: 10, whole: true } });
    assert.equal(atFirst.status, 200, atFirst.text);
    assert.equal(atFirst.json.files.length, 1);
    const [readme] = atFirst.json.files;
    assert.deepEqual(readme.branches, [first]);
    // The file as it was then: git's blob.
    assert.equal(readme.content, git(repoPath, 'show', `${first}:README.md`));
    // A new line is not in the past.
    const now = await search('brand_new_function');
    assert.equal(now.json.files.length, 1);
    const past = await search(`brand_new_function rev:${first}`);
    assert.equal(past.json.files.length, 0);
    // main~1 names a commit: searched in the history, named by its id.
    const parent = git(repoPath, 'rev-parse', 'main~1').trim();
    const stepped = await search('rev:main~1 file:.');
    assert.ok(stepped.json.files.length > 0);
    for (const f of stepped.json.files) assert.deepEqual(f.branches, [parent]);
    // A time that is none: a 400 naming the filter.
    const bad = await search('x at:someday');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.errorCode, 'FAILED_TO_PARSE_QUERY');
    assert.match(bad.json.message, /^at: must be an ISO 8601 date/);
  } finally {
    await daemon.close();
  }
});

test('turning history off retires the history index', async () => {
  await syncOnce({ config: config(false), dataDir, store });
  assert.equal(await historyCommits(), undefined);
});
