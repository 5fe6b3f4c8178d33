// Differential test of type:commit against git itself: for random words drawn from the
// commit messages (one, or two with AND, OR or NOT), alone or with author:, committer:,
// after: and before:, the commits a search finds must be exactly those `git log -F -i
// --grep=WORD [--author=..] [--committer=..] [--after=..] [--before=..] <indexed refs>`
// lists. Zero differences is the only pass. Two repositories: a generated one with merges (helpers/history-repo.ts),
// searched through the daemon's path (the history indexed as `trawl index --history` does,
// HistorySearch routing the query), and a clone of the hono corpus (about 2,800 commits by
// many people), whose commit records are searched directly. TRAWL_DIFF_SEED /
// TRAWL_DIFF_QUERIES vary it.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { commitRecordsPath, readCommitRecords, updateCommitRecords, type CommitRecord } from '../../daemon/history/commit-records.ts';
import type { CommitResult } from '../../daemon/history/commit-results.ts';
import { CommitSearch, type CommitSource } from '../../daemon/history/commit-search.ts';
import { historyBeside, type HistorySearch } from '../../daemon/history/history-search.ts';
import type { ManifestRepo } from '../../daemon/index/manifest.ts';
import { escapeRegex } from '../../daemon/query/terms.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest } from '../../daemon/search/types.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';
import { cloneCorpus, corpusSkip } from '../helpers/real-history.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261128);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 60);

const dir = tempDir('commit-diff');
const gen = join(dir.path, 'gen');
const genData = join(dir.path, 'gen-data');
const hono = join(dir.path, 'hono');
const honoRecords = join(dir.path, 'hono.commits');
let live: Searcher;
let service: HistorySearch;
let genRefs: string[];
let genRepoId: number;

before(async () => {
  makeHistoryRepo(gen, SEED, 40);
  const summary = await indexLocal(gen, { dataDir: genData, name: 'gen', workers: 1 });
  genRefs = summary.refs.map((r) => r.commit);
  genRepoId = summary.repoId;
  await indexLocalHistory(summary, { dataDir: genData, workers: 1 });
  live = new Searcher({ dataDir: genData, workers: 0 });
  service = historyBeside(live, { dataDir: genData });
});

after(async () => {
  await service?.close();
  await live?.close();
  dir.cleanup();
});

function request(query: string): Required<SearchRequest> {
  return { query, matches: 1_000_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false };
}

/** git's answer: the ids `git log` lists for the word and filters, over `refs`. */
function gitLog(repo: string, refs: readonly string[], word: string, filters: Filters, more: string[] = []): string[] {
  const args = ['log', '--format=%H', '-F', '-i', `--grep=${word}`, ...more];
  if (filters.author !== undefined) args.push(`--author=${filters.author}`);
  if (filters.committer !== undefined) args.push(`--committer=${filters.committer}`);
  if (filters.after !== undefined) args.push(`--after=${gitDate(filters.after)}`);
  if (filters.before !== undefined) args.push(`--before=${gitDate(filters.before)}`);
  return git(repo, ...args, ...refs, '--')
    .split('\n')
    .filter((l) => l !== '');
}

interface Filters {
  author?: string;
  committer?: string;
  /** Epoch seconds. */
  after?: number;
  before?: number;
}

function gitDate(s: number): string {
  return `${new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ')} +0000`;
}

/** The query for the word and filters: the same conditions in the query language. */
function commitQuery(word: string, f: Filters, content = `"${word}"`): string {
  const parts = ['type:commit', content];
  if (f.author !== undefined) parts.push(`author:"${escapeRegex(f.author)}"`);
  if (f.committer !== undefined) parts.push(`committer:"${escapeRegex(f.committer)}"`);
  if (f.after !== undefined) parts.push(`after:${new Date(f.after * 1000).toISOString()}`);
  if (f.before !== undefined) parts.push(`before:${new Date(f.before * 1000).toISOString()}`);
  return parts.join(' ');
}

/** Words of the messages (identifiers of 3 or more characters), and the people and times to filter by. */
function vocabulary(commits: readonly CommitRecord[]): { words: string[]; people: string[]; times: number[] } {
  const words = new Set<string>();
  const people = new Set<string>();
  for (const c of commits) {
    for (const w of c.message.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) ?? []) words.add(w);
    for (const p of [c.author, c.committer]) {
      // Names and emails as git's fixed strings and quoted regexes read them alike.
      if (/^[\w .@+-]+$/.test(p.name)) people.add(p.name);
      if (/^[\w.@+-]+$/.test(p.email)) people.add(p.email);
    }
  }
  const times = commits.map((c) => Date.parse(c.committer.date) / 1000);
  return { words: [...words].sort(), people: [...people].sort(), times };
}

/**
 * Random filters: each present with some chance; people and times mostly those of commits
 * the word finds (`found`), so that the filters decide something; a time often exactly a
 * commit's (the bounds are inclusive), else near one.
 */
function randomFilters(r: ReturnType<typeof prng>, v: { people: string[]; times: number[] }, found: readonly CommitRecord[]): Filters {
  const f: Filters = {};
  const some = found.length > 0 && r.chance(0.8);
  const person = (): string => {
    if (!some) return r.pick(v.people);
    const c = r.pick(found);
    const p = r.chance(0.5) ? c.author : c.committer;
    const candidates = [p.name, p.email].filter((x) => v.people.includes(x));
    return candidates.length > 0 ? r.pick(candidates) : r.pick(v.people);
  };
  const time = (): number => {
    const t = some ? Date.parse(r.pick(found).committer.date) / 1000 : r.pick(v.times);
    return t + (r.chance(0.5) ? 0 : r.int(172_800) - 86_400);
  };
  if (r.chance(0.3)) f.author = person();
  if (r.chance(0.2)) f.committer = person();
  if (r.chance(0.35)) f.after = time();
  if (r.chance(0.35)) f.before = time();
  return f;
}

async function differential(
  label: string,
  repo: string,
  refs: readonly string[],
  commits: readonly CommitRecord[],
  search: (query: string) => Promise<string[]>,
  seed: number,
): Promise<void> {
  const r = prng(seed);
  const v = vocabulary(commits);
  assert.ok(v.words.length > 5, `${label}: the messages hold words`);
  const byId = new Map(commits.map((c) => [c.id, c]));
  const differences: string[] = [];
  let nonEmpty = 0;
  for (let q = 0; q < QUERIES; q++) {
    const word = r.pick(v.words);
    const found = gitLog(repo, refs, word, {}).map((id) => byId.get(id)!);
    const filters = q < QUERIES / 3 ? {} : randomFilters(r, v, found);
    // A second word in a third of the queries: both (git's --all-match), either (two
    // --grep), or the first without the second, or without either of two more (git's
    // answers subtracted).
    const shape = q % 3 === 2 ? r.pick(['and', 'or', 'not', 'nor'] as const) : undefined;
    const other = r.chance(0.5) && found.length > 0 ? r.pick(r.pick(found).message.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) ?? [word]) : r.pick(v.words);
    let want: string[];
    let query: string;
    if (shape === undefined) {
      want = gitLog(repo, refs, word, filters);
      query = commitQuery(word, filters);
    } else if (shape === 'not') {
      const without = new Set(gitLog(repo, refs, other, filters));
      want = gitLog(repo, refs, word, filters).filter((id) => !without.has(id));
      query = commitQuery(word, filters, `"${word}" -"${other}"`);
    } else if (shape === 'nor') {
      // Neither of two others: a negated OR.
      const third = r.pick(v.words);
      const without = new Set(gitLog(repo, refs, other, filters, [`--grep=${third}`]));
      want = gitLog(repo, refs, word, filters).filter((id) => !without.has(id));
      query = commitQuery(word, filters, `"${word}" -("${other}" or "${third}")`);
    } else {
      want = gitLog(repo, refs, word, filters, [`--grep=${other}`, ...(shape === 'and' ? ['--all-match'] : [])]);
      query = commitQuery(word, filters, shape === 'and' ? `"${word}" "${other}"` : `("${word}" or "${other}")`);
    }
    want.sort();
    const got = (await search(query)).sort();
    if (want.length > 0) nonEmpty++;
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      differences.push(
        `${label} ${query}: git ${want.length} commits, trawl ${got.length}; only git: ${want.filter((id) => !got.includes(id)).slice(0, 3)}; only trawl: ${got.filter((id) => !want.includes(id)).slice(0, 3)}`,
      );
    }
  }
  assert.deepEqual(differences, []);
  assert.ok(nonEmpty >= QUERIES / 3, `${label}: most queries find something (${nonEmpty} of ${QUERIES})`);
}

test('type:commit over a generated history finds what git log --grep finds', async () => {
  const records = readCommitRecords(commitRecordsPath(genData, genRepoId));
  assert.ok(records, 'the history build wrote the commit records');
  const reached = git(gen, 'rev-list', ...genRefs, '--')
    .trim()
    .split('\n')
    .sort();
  assert.deepEqual(records.commits.map((c) => c.id).sort(), reached, 'the records hold every commit the refs reach');
  await differential(
    'gen',
    gen,
    genRefs,
    records.commits,
    async (query) => (await service.search(request(query))).files.map((f) => (f as CommitResult).commit.id),
    SEED,
  );
});

test('type:commit over a clone of hono finds what git log --grep finds', { skip: corpusSkip('hono') }, async () => {
  assert.equal(cloneCorpus('hono', dir.path), hono);
  const tips = [git(hono, 'rev-parse', 'HEAD').trim()];
  const ids = git(hono, 'rev-list', '--topo-order', ...tips, '--')
    .trim()
    .split('\n');
  const t = performance.now();
  const made = await updateCommitRecords(hono, honoRecords, { tips, ids, leftOut: 0 });
  const ms = performance.now() - t;
  assert.equal(made.added, ids.length);
  // The records must be git's: a sample compared field by field.
  const records = readCommitRecords(honoRecords)!;
  const r = prng(SEED);
  for (let i = 0; i < 20; i++) {
    const c = r.pick(records.commits);
    const shown = git(hono, 'show', '-s', '--format=%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B', c.id).split('\0');
    assert.deepEqual(
      [c.parents.join(' '), c.author.name, c.author.email, c.author.date, c.committer.name, c.committer.email, c.committer.date, c.message],
      [...shown.slice(0, 7), shown[7]!.replace(/\n+$/, '')],
    );
  }
  process.stderr.write(`hono: ${ids.length} commit records made in ${ms.toFixed(0)} ms\n`);
  const repo: ManifestRepo = {
    name: 'hono',
    displayName: 'hono',
    codeHostType: 'genericGitHost',
    archived: false,
    fork: false,
    visibility: 'public',
    kind: 'git',
    source: hono,
  };
  const sources: CommitSource[] = [{ repoId: 1, repo, path: honoRecords }];
  const commits = new CommitSearch();
  const shape = { contextLines: 0, whole: false, maxWholeBytes: Infinity, baseUrl: 'http://127.0.0.1:3000' };
  await differential(
    'hono',
    hono,
    tips,
    records.commits,
    async (query) => {
      const planned = planSearch(request(query));
      const a = await commits.search({ plan: planned.plan, matches: 1_000_000, shape }, sources, {});
      return a.results.map((f) => f.commit.id);
    },
    SEED + 1,
  );
});
