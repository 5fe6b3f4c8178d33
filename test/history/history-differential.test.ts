// Differential test of search at a commit: for random commits of a repository with merges,
// renames, deletions, binary files and a symbolic link (helpers/history-repo.ts), a query
// with `rev:<that commit>` (spelled as a full id, an abbreviated one, `main~N` or `at:` its
// time) over the history index must answer exactly what the same query answers over a fresh
// index of a checkout of that commit: the same files, chunks, lines and ranges. Zero
// differences is the only pass. TRAWL_DIFF_SEED / TRAWL_DIFF_QUERIES vary it.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { indexLocalHistory, indexLocal } from '../../daemon/sync/local-repos.ts';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest, SearchResponse } from '../../daemon/search/types.ts';
import { prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo, type HistoryRepo } from '../helpers/history-repo.ts';
import { randomRequest } from '../helpers/random-queries.ts';
import { parseSearchQuery } from '../../daemon/query/parser.ts';
import { queryToString } from '../../daemon/query/ast.ts';
import { planQuery } from '../../daemon/query/plan.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 30);
const COMMITS = 6;

const dir = tempDir('history-diff');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let made: HistoryRepo;
let live: Searcher;
let service: HistorySearch;

before(async () => {
  made = makeHistoryRepo(src, SEED, 30);
  const summary = await indexLocal(src, { dataDir: data, name: 'gen', workers: 1 });
  const h = await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  assert.notEqual(h, 'unchanged');
  live = new Searcher({ dataDir: data, workers: 0 });
  // One searcher per process may search in its own thread (the search worker's module state is the thread's): the others get a worker thread.
  service = historyBeside(live, { dataDir: data });
});

after(async () => {
  await service?.close();
  await live?.close();
  dir.cleanup();
});

/** What must agree: each file's name, language, chunks and content; not where it was indexed from (branches, URLs, ids). */
function comparable(res: SearchResponse): unknown {
  return {
    files: res.files
      .map((f) => ({ fileName: f.fileName, language: f.language, chunks: f.chunks, content: f.content }))
      .sort((a, b) => (a.fileName.text < b.fileName.text ? -1 : a.fileName.text > b.fileName.text ? 1 : 0)),
    matches: res.stats.actualMatchCount,
    exhaustive: res.isSearchExhaustive,
  };
}

async function answer(s: { search(req: Required<SearchRequest>): Promise<SearchResponse> }, req: Required<SearchRequest>): Promise<unknown> {
  try {
    return comparable(await s.search(req));
  } catch (err) {
    return { error: (err as Error).message.replace(/ at column \d+/g, '') };
  }
}

/** Whether the query in parentheses parses to the same tree (or fails alike). */
function sameInParentheses(req: Required<SearchRequest>): boolean {
  const tree = (query: string): string => {
    try {
      return queryToString(parseSearchQuery(query, { regex: req.isRegexEnabled, caseSensitive: req.isCaseSensitivityEnabled }).root);
    } catch {
      return 'error';
    }
  };
  return tree(req.query) === tree(`(${req.query})`);
}

/** A query over words the commit's files hold. */
function wordQuery(r: ReturnType<typeof prng>): string {
  const w = r.pick(WORDS);
  switch (r.int(4)) {
    case 0:
      return w;
    case 1:
      return `${w} -file:\\.md$`;
    case 2:
      return `${w} or ${r.pick(WORDS)}`;
    default:
      return `file:${r.pick(['src/', '\\.c$', 'moved', 'side/'])} ${w}`;
  }
}

test('search at a commit answers as a fresh index of that commit, however the commit is named', async () => {
  const r = prng(SEED);
  const mainLine = git(src, 'rev-list', '--first-parent', 'main').trim().split('\n');
  let compared = 0;
  for (let k = 0; k < COMMITS; k++) {
    // A commit of the first-parent line (it has a main~N and an at: name too), or any commit.
    const onLine = r.chance(0.6);
    const steps = r.int(mainLine.length);
    const commit = onLine ? mainLine[steps]! : r.pick(made.commits);
    const fresh = join(dir.path, `fresh-${k}`);
    git(dir.path, 'clone', '-q', src, fresh);
    git(fresh, 'checkout', '-q', '--detach', commit);
    const freshData = join(dir.path, `fresh-data-${k}`);
    await indexLocal(fresh, { dataDir: freshData, name: 'gen', workers: 1 });
    const reference = new Searcher({ dataDir: freshData, workers: 1 });
    try {
      const spellings = [commit, commit.slice(0, 7), commit.slice(0, 12)];
      if (onLine) spellings.push(`main~${steps}`);
      for (let q = 0; q < QUERIES; q++) {
        const base = r.chance(0.5) ? randomRequest(r) : { ...randomRequest(r), query: wordQuery(r), isRegexEnabled: false };
        const req = { ...base, matches: 100_000 };
        const rev = r.pick(spellings);
        const atCommit = { ...req, query: `(${req.query}) rev:${rev}` };
        // A query that reads otherwise in parentheses (`a or )`) is not this test's to compare.
        if (!sameInParentheses(req)) continue;
        const got = await answer(service, atCommit);
        const want = await answer(reference, req);
        assert.deepEqual(
          got,
          want,
          `commit ${commit} as rev:${rev}, query ${JSON.stringify(req.query)} (regex ${req.isRegexEnabled}, case ${req.isCaseSensitivityEnabled})`,
        );
        compared++;
      }
    } finally {
      await reference.close();
    }
  }
  assert.ok(compared >= (COMMITS * QUERIES * 3) / 4, `${compared} of ${COMMITS * QUERIES} compared`);
});

test('at:<time> searches the default branch as it was then', async () => {
  const line = git(src, 'log', '--first-parent', '--format=%H %cI', 'main').trim().split('\n');
  const [commit, time] = line[Math.floor(line.length / 2)]!.split(' ');
  const req = {
    query: `(${WORDS[3]} or ${WORDS[5]}) at:${time}`,
    matches: 100_000,
    contextLines: 0,
    whole: false,
    isRegexEnabled: false,
    isCaseSensitivityEnabled: false,
  };
  const byTime = await service.search(req);
  const byId = await service.search({ ...req, query: `(${WORDS[3]} or ${WORDS[5]}) rev:${commit}` });
  assert.deepEqual(comparable(byTime), comparable(byId));
  for (const f of byTime.files) assert.deepEqual(f.branches, [commit]);
});

test('a file found at a commit names the commit; a commit no indexed ref reaches finds nothing', async () => {
  const old = made.commits[1]!;
  const req = {
    query: `${WORDS[0]} or ${WORDS[1]} or ${WORDS[2]} or ${WORDS[4]}`,
    matches: 100_000,
    contextLines: 0,
    whole: false,
    isRegexEnabled: false,
    isCaseSensitivityEnabled: false,
  };
  const res = await service.search({ ...req, query: `(${req.query}) rev:${old.slice(0, 10)}` });
  assert.ok(res.files.length > 0, 'the words are in the first commits');
  for (const f of res.files) assert.deepEqual(f.branches, [old]);
  const dropped = await service.search({ ...req, query: `(${req.query}) rev:${made.dropped}` });
  assert.equal(dropped.files.length, 0);
  // A repository the caller may not see is not asked: its commits resolve to nothing, its answer is not theirs.
  const hidden = await service.search({ ...req, query: `(${req.query}) rev:${old.slice(0, 10)}` }, { repoFilter: () => false });
  assert.deepEqual([hidden.files.length, hidden.isSearchExhaustive], [0, true]);
  assert.equal(await service.route(planQuery({ query: `x rev:${old}` }), () => false), undefined);
  // The tip index still answers its own refs.
  const tip = await service.search({ ...req, query: `(${req.query}) rev:main` });
  for (const f of tip.files) assert.deepEqual(f.branches, ['main']);
  // HEAD is the default branch: the tips answer it, each file once, as rev:main (not again from the history at the tip's commit).
  const head = await service.search({ ...req, query: `(${req.query}) rev:HEAD` });
  assert.ok(head.files.length > 0);
  assert.deepEqual(comparable(head), comparable(tip));
});
