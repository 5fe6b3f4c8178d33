// `history:yes` against git: for random words of a generated repository's history (merges,
// renames, deletions, binary files), the commits at which some file's number of matches
// changed are exactly `git log --first-parent --no-renames -S<word>`'s, and each file's
// spans start and end at such commits and agree with git's own count at each end. Zero
// differences is the only pass.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import { historyDataDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchResponse } from '../../daemon/search/types.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const WORD_COUNT = Number(process.env.TRAWL_DIFF_QUERIES ?? 12);

const dir = tempDir('history-spans');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let live: Searcher;
let service: HistorySearch;

before(async () => {
  makeHistoryRepo(src, SEED, 40);
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  live = new Searcher({ dataDir: data, workers: 0 });
  service = historyBeside(live, { dataDir: data });
});

after(async () => {
  await service?.close();
  await live?.close();
  dir.cleanup();
});

const search = (query: string): Promise<SearchResponse> =>
  service.search({ query, matches: 1_000_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });

function count(commit: string, path: string, word: string): number {
  if (git(src, 'ls-tree', commit, '--', path).trim() === '') return 0; // not in that commit
  return git(src, 'show', `${commit}:${path}`).split(word).length - 1;
}

test('history:yes lists the commits git log -S lists, and spans that begin and end where the count does', async () => {
  const r = prng(SEED);
  const words = WORDS.filter((w) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(w));
  const line = git(src, 'rev-list', '--first-parent', 'main').trim().split('\n');
  for (let i = 0; i < WORD_COUNT; i++) {
    const word = r.pick(words);
    const res = await search(`history:yes ${word}`);
    assert.equal(res.isSearchExhaustive, true, word);
    const ours = new Set<string>();
    for (const f of res.files) {
      const h = f.history!;
      assert.ok(h.spans.length > 0 && h.changes.length > 0, `${f.fileName.text} has a span`);
      // (Which of the random .bin files look binary is the index's rule: they are compared on neither side.)
      if (!f.fileName.text.endsWith('.bin')) for (const c of h.changes) ours.add(c.id);
      for (const span of h.spans) {
        // At `appeared` the file holds the word and its first parent on the line does not; at `gone`, none.
        const at = line.indexOf(span.appeared.id);
        assert.ok(at >= 0, 'a span starts on the first-parent line');
        assert.ok(count(span.appeared.id, f.fileName.text, word) > 0, `${word} in ${f.fileName.text} at ${span.appeared.id}`);
        const before = line[at + 1];
        if (before !== undefined) assert.equal(count(before, f.fileName.text, word), 0, `${word} not in ${f.fileName.text} before ${span.appeared.id}`);
        if (span.gone !== null) assert.equal(count(span.gone.id, f.fileName.text, word), 0, `${word} gone from ${f.fileName.text} at ${span.gone.id}`);
      }
      if (h.spans[h.spans.length - 1]!.gone === null) assert.ok(count('main', f.fileName.text, word) > 0, `${word} still in ${f.fileName.text}`);
      // The result is the file at the newest commit of the line that held a match: the tip
      // while it still does, else the last commit before its last span ended; links name it.
      const last = h.spans[h.spans.length - 1]!;
      const newest = last.gone === null ? line[0]! : line[line.indexOf(last.gone.id) + 1]!;
      assert.deepEqual(f.branches, [newest], `${f.fileName.text}: the newest commit holding ${word}`);
      assert.ok(f.webUrl.includes(`/${newest}/`), `${f.webUrl} names ${newest}`);
      for (const chunk of f.chunks)
        assert.ok(git(src, 'show', `${newest}:${f.fileName.text}`).includes(chunk.content.split('\n')[0]!), "its lines are that version's");
    }
    const theirs = new Set(
      // (The symbolic link's target is text to git; to the index it is no file, as at the tips.)
      git(src, 'log', '--first-parent', '--no-renames', `-S${word}`, '--format=%H', 'main', '--', '.', ':!link-to-a', ':!*.bin')
        .trim()
        .split('\n')
        .filter((l) => l !== ''),
    );
    assert.deepEqual([...ours].sort(), [...theirs].sort(), `history:yes ${word} against git log --first-parent --no-renames -S${word}`);
  }
  // (Each of these queries is one literal of word bytes: the word counts answer those whose
  // case-insensitive k or s cannot match outside a word; test/history/word-counts.test.ts.)
  assert.ok(service.wordCounts!.answered > 0, 'some were answered from the word counts');
});

test('history:yes is one filter of the whole query', async () => {
  for (const [query, message] of [
    ['(a history:yes)', /inside parentheses/],
    ['a -history:yes', /cannot be negated/],
    ['a history:yes history:yes', /at most one history:/],
    ['a history:maybe', /expected yes or no/],
  ] as const) {
    await assert.rejects(search(query), message, query);
  }
  // history:no is a plain search of the tips.
  const plain = await search(`${WORDS[0]} history:no`);
  for (const f of plain.files) assert.equal(f.history, undefined);
});

test('a history cut short by historyMaxCommits says so, and is exact from its oldest commit on', async () => {
  const cut = tempDir('history-spans-cut');
  const cutLive = new Searcher({ dataDir: cut.path, workers: 1 });
  let cutService: HistorySearch | undefined;
  try {
    const summary = await indexLocal(src, { dataDir: cut.path, name: 'gen', workers: 1 });
    await indexLocalHistory(summary, { dataDir: cut.path, workers: 1, maxCommits: 25 });
    const opened = historyBeside(cutLive, { dataDir: cut.path });
    cutService = opened;
    const held = new Set((readManifest(historyDataDir(cut.path), summary.repoId)?.refs ?? []).map((r) => r.name));
    const line = git(src, 'rev-list', '--first-parent', 'main').trim().split('\n');
    const oldest = line.findLastIndex((c) => held.has(c));
    assert.ok(oldest > 0 && oldest < line.length - 1, 'the cut falls inside the first-parent line');
    const newer = new Set(line.slice(0, oldest));
    const r = prng(SEED + 1);
    const words = WORDS.filter((w) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(w));
    for (let i = 0; i < 6; i++) {
      const word = r.pick(words);
      const res: SearchResponse = await opened.search({
        query: `history:yes ${word}`,
        matches: 1_000_000,
        contextLines: 0,
        whole: false,
        isRegexEnabled: false,
        isCaseSensitivityEnabled: true,
      });
      const ours = new Set(res.files.filter((f) => !f.fileName.text.endsWith('.bin')).flatMap((f) => f.history!.changes.map((c) => c.id)));
      for (const c of ours) assert.ok(held.has(c), `${c} is a commit the history holds`);
      if (ours.size > 0) assert.equal(res.isSearchExhaustive, false, 'older commits were not searched');
      const theirs = git(src, 'log', '--first-parent', '--no-renames', `-S${word}`, '--format=%H', 'main', '--', '.', ':!link-to-a', ':!*.bin')
        .trim()
        .split('\n')
        .filter((c) => newer.has(c));
      assert.deepEqual([...ours].filter((c) => newer.has(c)).sort(), theirs.sort(), `history:yes ${word} after the cut`);
    }
  } finally {
    await cutService?.close();
    await cutLive.close();
    cut.cleanup();
  }
});
