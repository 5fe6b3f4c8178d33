// `history:yes` answered from the word counts (history/word-counts.ts) against the same
// query answered by searching every version (the word counts switched off): for random
// identifiers and random substrings of the history's words (inside very long words, at
// word starts and ends, repeated side by side), case-sensitive and not, the answers are
// identical; zero differences is the only pass. Then queries the word counts must leave
// to the search (two-byte literals, phrases, filters), K and ſ matching a case-insensitive
// k and s, an update by
// a new commit (the same file as a build from scratch), and damaged files (read as absent:
// the search answers, and the next update makes the file again).

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import { updateWordCounts } from '../../daemon/history/word-count-build.ts';
import { modelOf, readWordCounts, wordCountsPath } from '../../daemon/history/word-counts.ts';
import { historyDataDir } from '../../daemon/index/data-dir.ts';
import type { IndexSummary } from '../../daemon/index/index-summary.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchResponse } from '../../daemon/search/types.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { makeHistoryRepo, type HistoryRepo } from '../helpers/history-repo.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 40);

const dir = tempDir('word-counts');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let made: HistoryRepo;
let summary: IndexSummary;
let live: Searcher;
let fast: HistorySearch;
let slow: HistorySearch;

/** A long run of word bytes (base64-like), seeded. */
function longRun(r: ReturnType<typeof prng>, n: number): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_';
  return Array.from({ length: n }, () => abc[r.int(abc.length)]).join('');
}

before(async () => {
  made = makeHistoryRepo(src, SEED, 30);
  const r = prng(SEED + 1);
  const blob = longRun(r, 3000);
  // Long words, repeated letters, one-line files changed inside a word (the shared start
  // and end of two versions then cut a word), CRLF lines, a file changed at both ends.
  made.repo.commit(
    {
      'data/blob.txt': `key = "${blob}"\n`,
      'data/rep.txt': 'aaaaaaa xaaaaax aaa\naa a aaaa\n',
      'one.txt': 'fooBarBaz quxQuux',
      // A path holding a word some versions hold too (a content term highlights it there, and counts only content).
      'notes/fooBarBaz.md': 'nothing here\n',
      'crlf.txt': 'alpha_one beta_two\r\ngamma_three\r\n',
      'ends.txt': `${'head_word '.repeat(50)}\n${'body_line middle\n'.repeat(200)}${'tail_word '.repeat(50)}\n`,
    },
    'words',
  );
  made.repo.commit(
    {
      'data/blob.txt': `key = "${blob.slice(0, 1500)}Z${blob.slice(1501)}"\n`,
      'data/rep.txt': 'aaaaaaaa xaaaaax\naa a aaaaa\n',
      'one.txt': 'fooBarBaz quxQuux fooBarBaz',
      'notes/fooBarBaz.md': 'fooBarBaz once, notes twice: notes\n',
      'crlf.txt': 'alpha_one beta_two\r\ngamma_three gamma_three\r\n',
      'ends.txt': `${'head_word '.repeat(49)}head\n${'body_line middle\n'.repeat(200)}${'tail_word '.repeat(51)}\n`,
    },
    'words changed',
  );
  made.repo.commit({ 'one.txt': 'quxQuux', 'data/rep.txt': null }, 'words gone');
  summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  assert.ok(h !== 'unchanged' && h.words.action === 'built', 'the history build makes the word counts');
  live = new Searcher({ dataDir: data, workers: 0 });
  fast = historyBeside(live, { dataDir: data });
  slow = historyBeside(live, { dataDir: data, wordCounts: false });
});

after(async () => {
  await fast?.close();
  await slow?.close();
  await live?.close();
  dir.cleanup();
});

const request = (query: string) => ({ query, matches: 1_000_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
const ask = (s: HistorySearch, query: string): Promise<SearchResponse> => s.search(request(query));

/** What must be the same either way: the files with their spans, exhaustiveness, repositories, counts. */
function answer(res: SearchResponse) {
  return {
    files: res.files,
    exhaustive: res.isSearchExhaustive,
    repositories: res.repositoryInfo,
    fileCount: res.stats.fileCount,
    matches: res.stats.actualMatchCount,
  };
}

/** Asks both; asserts the same answer, and whether the word counts answered. */
async function same(query: string, counted: boolean): Promise<SearchResponse> {
  const before = fast.wordCounts!.answered;
  const a = await ask(fast, query);
  assert.equal(fast.wordCounts!.answered - before, counted ? 1 : 0, `${query}: answered from the word counts: ${!counted ? 'not ' : ''}expected`);
  const b = await ask(slow, query);
  assert.deepEqual(answer(a), answer(b), query);
  return a;
}

/** The history's words of ASCII bytes (those holding K or ſ are no literal the counts answer). */
function historyWords(): string[] {
  const c = readWordCounts(wordCountsPath(data, summary.repoId));
  assert.ok(c?.anyFolds, 'the history holds K or ſ');
  return [...modelOf(c).words.keys()].filter((w) => /^[A-Za-z0-9_]+$/.test(w));
}

test('history:yes from the word counts equals the search of every version: identifiers and substrings of words', async () => {
  const r = prng(SEED);
  const words = historyWords();
  const long = words.filter((w) => w.length > 100);
  assert.ok(long.length > 0, 'the history holds long words');
  const queries = new Set<string>([
    'aaa',
    'aaaa',
    'aaaaa',
    'xaaa',
    'aaax',
    'fooBarBaz',
    'BarBa',
    'head_word',
    'tail_word',
    'gamma_three',
    'body_line',
    'never_there_at_all',
  ]);
  for (let i = 0; i < QUERIES; i++) {
    queries.add(r.pick(words));
    const w = r.pick(r.chance(0.2) ? long : words);
    if (w.length < 3) continue;
    const len = 3 + r.int(Math.min(w.length, 12) - 2);
    const at = r.pick([0, w.length - len, r.int(w.length - len + 1)]);
    queries.add(w.slice(at, at + len));
  }
  let found = 0;
  for (const q of queries) {
    for (const c of ['case:yes', 'case:no']) {
      // (This history holds K and ſ: the tests' vocabulary has them.)
      const res = await same(`history:yes ${c} ${q}`, true);
      found += res.files.length;
    }
  }
  assert.ok(found > queries.size, `the queries find files (${found})`);
});

test('queries the word counts do not answer are searched, with the same answers', async () => {
  for (const q of [
    'history:yes aa',
    'history:yes "foo bar"',
    'history:yes fooBar file:one',
    'history:yes /foo.ar/',
    'history:yes fooBar -file:x',
    'history:yes foo-bar',
    'history:yes fooBar rev:main',
  ]) {
    await same(q, false);
  }
});

test('past its budget of list entries or words a query is searched, with the same answer', async () => {
  const counts = fast.wordCounts!;
  const limits = counts.limits;
  try {
    // fooBarBaz's list holds a handful of entries; "aaa" is in several words.
    counts.limits = { entries: 1, words: 1000 };
    await same('history:yes case:yes fooBarBaz', false);
    counts.limits = { entries: 1_000_000, words: 1 };
    await same('history:yes case:yes aaa', false);
    counts.limits = { entries: 1_000_000, words: 1000 };
    await same('history:yes case:yes aaa', true);
  } finally {
    counts.limits = limits;
  }
});

test('a case-insensitive k or s matches K and ſ, from the counts as searched', async () => {
  const d = tempDir('word-counts-fold');
  const root = join(d.path, 'src');
  const dataDir = join(d.path, 'data');
  const repo = TestRepo.init(root);
  repo.commit({ 'a.txt': 'key set Key SET kestrel\n', 'b.txt': 'nothing\n' }, 'one');
  repo.commit({ 'a.txt': 'key set\nKEY sets\n', 'b.txt': 'a key\n' }, 'two');
  const l = new Searcher({ dataDir, workers: 1 });
  const f = historyBeside(l, { dataDir });
  const g = historyBeside(l, { dataDir, wordCounts: false });
  const check = async (q: string, counted: boolean): Promise<SearchResponse> => {
    const n = f.wordCounts!.answered;
    const a = await ask(f, q);
    assert.equal(f.wordCounts!.answered - n, counted ? 1 : 0, `${q}: from the counts`);
    assert.deepEqual(answer(a), answer(await ask(g, q)), q);
    return a;
  };
  try {
    const index = async () => indexLocalHistory(await indexLocal(root, { dataDir, name: 'fold', workers: 1 }), { dataDir, workers: 1 });
    await index();
    for (const q of ['key', 'set', 'KEY', 'kestrel']) {
      const a = await check(`history:yes case:no ${q}`, true);
      assert.ok(a.files.length > 0, q);
    }
    // K and ſ inside words, side by side (a match of "sss" over three ſ is six bytes: the
    // search counts it as two), next to ASCII letters, and ends of words.
    repo.commit({ 'fold.txt': 'the \u212Aey and the \u017Fet\n\u017F\u017F\u017F sss \u212A\u212A\u212A kkk x\u212Aeyx key\u212Aey\n' }, 'folds');
    repo.commit({ 'fold.txt': 'the \u212Aey\n\u017F\u017F\u017F\u017F\u017F\u017F kkkk\n', 'a.txt': 'key\n' }, 'folds changed');
    await index();
    for (const q of ['key', 'set', 'sss', 'kkk', 'eyk', 'the', 'KEY', 'SsS']) {
      for (const c of ['case:no', 'case:yes']) {
        const a = await check(`history:yes ${c} ${q}`, true);
        if (c === 'case:no' && q === 'key')
          assert.ok(
            a.files.some((x) => x.fileName.text === 'fold.txt'),
            'the Kelvin sign matches key',
          );
      }
    }
  } finally {
    await f.close();
    await g.close();
    await l.close();
    d.cleanup();
  }
});

test('a new commit updates the word counts to the file a build from scratch makes', async () => {
  // data/rep.txt comes back as it first was: the commit shown holds its first version again.
  made.repo.commit(
    { 'one.txt': 'quxQuux newWordHere fooBarBaz', 'data/fresh.txt': 'fresh_word fresh_word aaaa\n', 'data/rep.txt': 'aaaaaaa xaaaaax aaa\naa a aaaa\n' },
    'one more',
  );
  summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  assert.ok(h !== 'unchanged' && h.words.action === 'updated', `the update appends (${h === 'unchanged' ? h : h.words.action})`);
  const path = wordCountsPath(data, summary.repoId);
  const updated = readFileSync(path);
  rmSync(path);
  const built = updateWordCounts(historyDataDir(data), summary.repoId, path);
  assert.equal(built.action, 'built');
  assert.ok(readFileSync(path).equals(updated), 'the same bytes');
  for (const q of ['fresh_word', 'newWordHere', 'fooBarBaz', 'aaaa', 'quxQuux', 'xaaaaax']) await same(`history:yes case:yes ${q}`, true);
});

test('a damaged or missing word counts file is read as absent: the search answers, the next update makes it again', async () => {
  const path = wordCountsPath(data, summary.repoId);
  const good = readFileSync(path);
  const nl = good.indexOf(0x0a);
  const head = JSON.parse(good.toString('utf8', 0, nl)) as Record<string, unknown>;
  const withHead = (h: Record<string, unknown>, rest = good.subarray(nl + 1)) => Buffer.concat([Buffer.from(`${JSON.stringify(h)}\n`), rest]);
  const flipped = Buffer.from(good);
  flipped[nl + 1 + Math.floor((good.length - nl) / 2)]! ^= 0x40;
  const cases: Array<[string, Buffer | null]> = [
    ['missing', null],
    ['empty', Buffer.alloc(0)],
    ['cut short', good.subarray(0, good.length - 100)],
    ['cut in its header', good.subarray(0, nl - 3)],
    ['another version', withHead({ ...head, version: 99 })],
    ['another format', withHead({ ...head, format: 'trawl-other' })],
    ['its body larger than it says', withHead({ ...head, bytes: (head.bytes as number) - 1 })],
    ['its body smaller than it says', withHead({ ...head, bytes: (head.bytes as number) + 1 })],
    ['its frame longer than it says', withHead({ ...head, compressed: (head.compressed as number) + 1 })],
    ['a size past any bound', withHead({ ...head, bytes: 2 ** 40 })],
    ['a flipped byte in its frame', flipped],
    ['not zstd', withHead(head, Buffer.alloc(head.compressed as number, 0x55))],
    ['other shards', withHead({ ...head, shards: ['g999-0.trawl'] })],
  ];
  for (const [what, bytes] of cases) {
    if (bytes === null) rmSync(path, { force: true });
    else writeFileSync(path, bytes);
    await same('history:yes case:yes fooBarBaz', false);
    if (bytes === null) assert.equal(readWordCounts(path), undefined);
    else if (what !== 'other shards') assert.throws(() => readWordCounts(path), Error, what);
    const again = updateWordCounts(historyDataDir(data), summary.repoId, path);
    assert.equal(again.action, 'built', what);
    assert.ok(readFileSync(path).equals(good), `${what}: made again`);
    await same('history:yes case:yes fooBarBaz', true);
  }
});

test('several repositories, and a caller who may see only some of them: the same answers', async () => {
  const other = join(dir.path, 'other');
  makeHistoryRepo(other, SEED + 7, 12);
  const s2 = await indexLocal(other, { dataDir: data, name: 'gen2', workers: 1 });
  await indexLocalHistory(s2, { dataDir: data, workers: 1 });
  const ids = [summary.repoId, s2.repoId];
  const words = historyWords();
  const r = prng(SEED + 2);
  let both = 0;
  for (let i = 0; i < 12; i++) {
    const query = `history:yes case:yes ${r.pick(words)}`;
    for (const only of [undefined, ...ids]) {
      const options = only === undefined ? {} : { repoFilter: (x: { repoId: number }) => x.repoId === only };
      const before = fast.wordCounts!.answered;
      const a = await fast.search(request(query), options);
      assert.equal(fast.wordCounts!.answered - before, 1, query);
      const b = await slow.search(request(query), options);
      assert.deepEqual(answer(a), answer(b), `${query} seen by ${only ?? 'all'}`);
      if (only !== undefined)
        assert.ok(
          a.files.every((f) => f.repositoryId === only),
          'only the repositories the caller may see',
        );
      else if (new Set(a.files.map((f) => f.repositoryId)).size === 2) both++;
    }
  }
  assert.ok(both > 0, 'some answers hold both repositories');
});
