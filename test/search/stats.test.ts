// Stats are measurements: queries whose work is known in advance assert the counters.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest } from '../../daemon/search/types.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('stats');
let searcher: Searcher;
let alphaShards = 0;
let betaShards = 0;

before(async () => {
  for (const repo of ['alpha', 'beta']) {
    const root = join(dir.path, repo);
    mkdirSync(root);
    for (let i = 0; i < 40; i++)
      writeFileSync(join(root, `f${String(i).padStart(2, '0')}.c`), `int common_${repo}_${i}(void) { return shared_value; }\n`.repeat(40));
  }
  writeFileSync(join(dir.path, 'beta', 'unique.c'), 'the one and only needle_xyzzy here\n');
  writeFileSync(join(dir.path, 'beta', 'shout.c'), 'THE SHARED_VALUE IN CAPITALS\n');
  const data = join(dir.path, 'data');
  alphaShards = (await indexLocal(join(dir.path, 'alpha'), { dataDir: data, shardTargetBytes: 16 * 1024, workers: 2 })).shards;
  betaShards = (await indexLocal(join(dir.path, 'beta'), { dataDir: data, shardTargetBytes: 16 * 1024, workers: 2 })).shards;
  searcher = new Searcher({ dataDir: data, workers: 2 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

const req = (query: string, more: Partial<SearchRequest> = {}) =>
  ({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true, ...more }) as Required<SearchRequest>;

test('a literal absent from every shard is ruled out by the n-grams: no document is read', async () => {
  const { stats, files, isSearchExhaustive } = await searcher.search(req('qqzzjjxxabsent'));
  assert.equal(files.length, 0);
  assert.equal(isSearchExhaustive, true);
  assert.equal(stats.shardsSkippedFilter, alphaShards + betaShards);
  assert.equal(stats.shardsScanned, 0);
  assert.equal(stats.filesConsidered, 0);
  assert.equal(stats.filesLoaded, 0);
  assert.equal(stats.contentBytesLoaded, 0);
  assert.ok(stats.ngramLookups >= alphaShards + betaShards, 'each shard looked up at least one trigram');
  assert.equal(stats.flushReason, 'FLUSH_REASON_FINAL_FLUSH');
  assert.ok(stats.duration > 0);
});

test('a unique literal: exact counts, one file, exhaustive', async () => {
  const { stats, files, isSearchExhaustive } = await searcher.search(req('needle_xyzzy'));
  assert.deepEqual(
    files.map((f) => f.fileName.text),
    ['unique.c'],
  );
  assert.equal(stats.actualMatchCount, 1);
  assert.equal(stats.totalMatchCount, 1);
  assert.equal(stats.fileCount, 1);
  assert.equal(isSearchExhaustive, true);
  assert.equal(stats.filesLoaded, 1, 'the n-grams leave only the one candidate');
  assert.equal(stats.regexpsConsidered, 0, 'a case-sensitive literal never runs a regex');
  assert.ok(stats.indexBytesLoaded > 0);
});

test("a repo: filter skips the other repository's shards before any posting is read, and costs less", async () => {
  const all = await searcher.search(req('shared_value', { matches: 100000 }));
  const filtered = await searcher.search(req('repo:^beta$ shared_value', { matches: 100000 }));
  assert.equal(filtered.stats.shardsSkippedFilter, alphaShards);
  assert.ok(filtered.files.every((f) => f.repository === 'beta'));
  assert.equal(filtered.files.length, 40);
  assert.ok(filtered.stats.contentBytesLoaded < all.stats.contentBytesLoaded);
  assert.ok(filtered.stats.ngramLookups < all.stats.ngramLookups);
});

test('a query of filters alone that returns every match is exhaustive (a file without ranges counts one)', async () => {
  const { stats, files, isSearchExhaustive } = await searcher.search(req('repo:^beta$', { matches: 100000 }));
  assert.ok(files.length > 0);
  assert.equal(stats.actualMatchCount, files.length);
  assert.equal(stats.totalMatchCount, files.length);
  assert.equal(isSearchExhaustive, true);
});

test('a limit that truncates says so', async () => {
  const { stats, isSearchExhaustive } = await searcher.search(req('shared_value', { matches: 5 }));
  assert.equal(stats.actualMatchCount, 5);
  assert.ok(stats.totalMatchCount > 5);
  assert.equal(isSearchExhaustive, false);
  assert.ok(stats.filesSkipped > 0 || stats.shardsSkipped > 0);
});

test('regex executions are counted', async () => {
  const { stats } = await searcher.search(req('needle_x[a-z]+', { isRegexEnabled: true }));
  // One over the candidate's content; its path (searched to highlight the term there) does
  // not hold the required literal "needle_x", so RE2 does not run on it.
  assert.equal(stats.regexpsConsidered, 1);
  assert.equal(stats.fileCount, 1);
});

test('a case-sensitive regex runs RE2 only on the candidates holding its required literal', async () => {
  const { stats, files } = await searcher.search(req('[A-Z]+_VALUE', { isRegexEnabled: true }));
  assert.deepEqual(
    files.map((f) => f.fileName.text),
    ['shout.c'],
  );
  // The trigrams are case-folded: every file saying "shared_value" is a candidate and is
  // read, but only shout.c holds "_VALUE" as written.
  assert.equal(stats.filesLoaded, 81);
  assert.equal(stats.regexpsConsidered, 1);
});
