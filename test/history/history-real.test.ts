// The history index on real histories (hono, ripgrep: helpers/real-history.ts; skipped
// without TRAWL_CORPORA): a search at random commits answers exactly what a fresh index of a
// checkout of that commit answers, for identifiers found at that commit; and `history:yes`
// lists exactly the commits `git log --first-parent --no-renames -S` lists. Zero differences
// is the only pass. TRAWL_DIFF_SEED varies it.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { historyBeside } from '../../daemon/history/history-search.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest, SearchResponse } from '../../daemon/search/types.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { cloneCorpus, corpusSkip, type CorpusName } from '../helpers/real-history.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const COMMITS = 3;
const QUERIES = 12;
const SPANS = 6;

const dir = tempDir('history-real');
after(() => dir.cleanup());

const request = (query: string, caseSensitive: boolean): Required<SearchRequest> => ({
  query,
  matches: 100_000,
  contextLines: 1,
  whole: false,
  isRegexEnabled: false,
  isCaseSensitivityEnabled: caseSensitive,
});

function comparable(res: SearchResponse): unknown {
  return res.files
    .map((f) => ({ path: f.fileName.text, language: f.language, chunks: f.chunks }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Identifiers of some files of `commit` (8 to 30 characters, with an underscore or a capital inside). */
function identifiersAt(repo: string, commit: string, r: ReturnType<typeof prng>): string[] {
  const files = git(repo, 'ls-tree', '-r', '--name-only', commit)
    .trim()
    .split('\n')
    .filter((f) => /\.(ts|tsx|js|rs)$/.test(f));
  const found = new Set<string>();
  for (let i = 0; i < 8 && files.length > 0; i++) {
    const text = git(repo, 'show', `${commit}:${r.pick(files)}`);
    for (const m of text.matchAll(/\b[A-Za-z][A-Za-z0-9_]{7,29}\b/g)) if (/[a-z][A-Z_]|_[a-z]/.test(m[0])) found.add(m[0]);
  }
  return [...found];
}

for (const name of ['hono', 'ripgrep'] as CorpusName[]) {
  test(`${name}: a search at any commit answers as a fresh index of it; history:yes lists git log -S's commits`, {
    skip: corpusSkip(name),
    timeout: 900_000,
  }, async () => {
    const root = join(dir.path, name);
    const repo = cloneCorpus(name, dir.path);
    const data = join(root, 'data');
    const summary = await indexLocal(repo, { dataDir: data, name, symbols: false, workers: 2 });
    await indexLocalHistory(summary, { dataDir: data, symbols: false, workers: 2 });
    const live = new Searcher({ dataDir: data, workers: 0 });
    const service = historyBeside(live, { dataDir: data });
    try {
      const r = prng(SEED);
      const commits = git(repo, 'rev-list', 'HEAD').trim().split('\n');
      for (let k = 0; k < COMMITS; k++) {
        const commit = r.pick(commits);
        const checkout = join(root, `at-${k}`);
        git(dir.path, 'clone', '-q', '--no-hardlinks', repo, checkout);
        git(checkout, 'checkout', '-q', '--detach', commit);
        const fresh = join(root, `fresh-${k}`);
        await indexLocal(checkout, { dataDir: fresh, name, symbols: false, workers: 2 });
        const reference = new Searcher({ dataDir: fresh, workers: 1 });
        try {
          const idents = identifiersAt(repo, commit, r);
          for (let q = 0; q < QUERIES && idents.length > 0; q++) {
            const ident = r.pick(idents);
            const caseSensitive = r.chance(0.5);
            const got = comparable(await service.search(request(`${ident} rev:${commit.slice(0, 10)}`, caseSensitive)));
            const want = comparable(await reference.search(request(ident, caseSensitive)));
            assert.deepEqual(got, want, `${name} at ${commit}: ${ident} (case ${caseSensitive})`);
          }
        } finally {
          await reference.close();
        }
      }
      const idents = identifiersAt(repo, 'HEAD', r);
      for (let i = 0; i < SPANS; i++) {
        const ident = r.pick(idents);
        const res = await service.search(request(`history:yes ${ident}`, true));
        const ours = new Set(res.files.flatMap((f) => f.history!.changes.map((c) => c.id)));
        const theirs = git(repo, 'log', '--first-parent', '--no-renames', `-S${ident}`, '--format=%H', 'HEAD')
          .trim()
          .split('\n')
          .filter((l) => l !== '');
        assert.deepEqual([...ours].sort(), [...new Set(theirs)].sort(), `${name}: history:yes ${ident} against git log -S`);
      }
      // Case-sensitive identifiers: every one is answered from the word counts (history/word-count-query.ts).
      assert.equal(service.wordCounts!.answered, SPANS, `${name}: history:yes answered from the word counts`);
      // And those answers, case-sensitive or not (ripgrep's history holds K and ſ, which a
      // case-insensitive k and s match), are the search of every version's.
      const searched = historyBeside(live, { dataDir: data, wordCounts: false });
      try {
        for (let i = 0; i < SPANS; i++) {
          const ident = r.pick(idents);
          for (const caseSensitive of [true, false]) {
            const q = `history:yes ${ident}`;
            const a = await service.search(request(q, caseSensitive));
            const b = await searched.search(request(q, caseSensitive));
            const same = (x: SearchResponse) => ({ files: x.files, exhaustive: x.isSearchExhaustive, repositories: x.repositoryInfo });
            assert.deepEqual(same(a), same(b), `${name}: ${q} (case-sensitive: ${caseSensitive}) from the word counts and searched`);
          }
        }
        assert.equal(service.wordCounts!.answered, 3 * SPANS, `${name}: answered from the word counts`);
      } finally {
        await searched.close();
      }
    } finally {
      await service.close();
      await live.close();
    }
  });
}
