// The commit records beside a history index (history/commit-records.ts): updated
// incrementally (git is asked for the new commits only; commits no longer reached are
// dropped), made again when missing while the history index is up to date, and counting
// the commits the history's limit left out, which makes a type:commit answer not
// exhaustive.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { commitRecordsPath, readCommitRecords, readCommitRecordsHead, updateCommitRecords } from '../../daemon/history/commit-records.ts';
import { historyBeside } from '../../daemon/history/history-search.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';

const dir = tempDir('commit-records');
const gen = join(dir.path, 'gen');

before(async () => {
  makeHistoryRepo(gen, 7, 20);
});

after(() => dir.cleanup());

test('an update asks git for the new commits only and drops the ones no longer reached', async () => {
  const path = join(dir.path, 'update.commits');
  const all = git(gen, 'rev-list', '--topo-order', 'main', '--').trim().split('\n');
  const older = git(gen, 'rev-list', '--topo-order', 'main~5', '--').trim().split('\n');
  const first = await updateCommitRecords(gen, path, { tips: [all[5]!], ids: older, leftOut: 0 });
  assert.deepEqual(first, { added: older.length, dropped: 0, commits: older.length });
  const grown = await updateCommitRecords(gen, path, { tips: [all[0]!], ids: all, leftOut: 0 });
  assert.deepEqual(grown, { added: all.length - older.length, dropped: 0, commits: all.length });
  assert.deepEqual(
    await updateCommitRecords(gen, path, { tips: [all[0]!], ids: all, leftOut: 0 }),
    { added: 0, dropped: 0, commits: all.length },
    'nothing new: nothing asked, nothing written',
  );
  const shrunk = await updateCommitRecords(gen, path, { tips: [all[5]!], ids: older, leftOut: 0 });
  assert.deepEqual(shrunk, { added: 0, dropped: all.length - older.length, commits: older.length });
  const held = readCommitRecords(path)!;
  assert.deepEqual(held.tips, [all[5]]);
  assert.deepEqual(readCommitRecordsHead(path), { tips: held.tips, leftOut: held.leftOut }, 'the header read alone');
  assert.equal(readCommitRecordsHead(join(dir.path, 'none.commits')), undefined);
  assert.deepEqual(held.commits.map((c) => c.id).sort(), [...older].sort());
  // Newest first by committer time.
  const times = held.commits.map((c) => Date.parse(c.committer.date));
  assert.deepEqual(
    times,
    [...times].sort((a, b) => b - a),
  );
});

test('records missing beside an up-to-date history are made again; the limit left-out commits make the answer not exhaustive', async () => {
  const data = join(dir.path, 'data');
  const summary = await indexLocal(gen, { dataDir: data, name: 'gen', workers: 1 });
  const reached = git(gen, 'rev-list', ...summary.refs.map((r) => r.commit), '--')
    .trim()
    .split('\n');
  await indexLocalHistory(summary, { dataDir: data, workers: 1, maxCommits: 5 });
  const path = commitRecordsPath(data, summary.repoId);
  const first = readCommitRecords(path)!;
  assert.equal(first.commits.length, 5);
  assert.equal(first.leftOut, reached.length - 5);
  rmSync(path);
  assert.equal(await indexLocalHistory(summary, { dataDir: data, workers: 1, maxCommits: 5 }), 'unchanged');
  const again = readCommitRecords(path)!;
  assert.deepEqual(again, first, 'the same records, made again');
  // A file of the first version (uncompressed) is not read as records: made again too.
  const v1 = [`${JSON.stringify({ format: 'trawl-commits', version: 1, tips: first.tips, leftOut: first.leftOut })}\n`];
  for (const c of first.commits)
    v1.push(
      `${[c.id, c.parents.join(' '), c.author.name, c.author.email, c.author.date, c.committer.name, c.committer.email, c.committer.date, c.message].join('\0')}\0`,
    );
  writeFileSync(path, v1.join(''));
  assert.throws(() => readCommitRecords(path), /another format version/);
  assert.equal(await indexLocalHistory(summary, { dataDir: data, workers: 1, maxCommits: 5 }), 'unchanged');
  assert.deepEqual(readCommitRecords(path), first, 'version 1 records made again as version 2');
  const live = new Searcher({ dataDir: data, workers: 0 });
  const service = historyBeside(live, { dataDir: data });
  try {
    const res = await service.search({
      query: 'type:commit regex:.',
      matches: 1000,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: false,
    });
    assert.equal(res.files.length, 5);
    assert.equal(res.isSearchExhaustive, false, 'commits left out by the limit are searched nowhere');
    // The file searcher alone (as a cluster's nodes search) refuses type:commit plainly.
    await assert.rejects(
      live.search({ query: 'type:commit widget author:x', matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false }),
      (err: Error & { errorCode?: string }) => err.errorCode === 'FAILED_TO_PARSE_QUERY' && /^type:commit searches the indexed histories/.test(err.message),
    );
  } finally {
    await service.close();
    await live.close();
  }
});
