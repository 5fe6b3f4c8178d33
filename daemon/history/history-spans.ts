// `history:yes`: where in the default branch's history a query's matches lived. For each
// file (path) of a repository whose history is indexed, the commits of the default branch's
// first-parent line at which the number of matches in that file changed (`changes`), and
// the spans in which it held any (`spans`: the commit from which on it did, and the first
// commit at which it no longer did, or none when it still does). The changes are exactly
// the commits `git log --first-parent --no-renames -S<literal>` lists for a literal: a
// commit compared with its first parent, a renamed file counting as one path removed and
// another added, and symbolic links being no files here, as at the tips
// (test/history/history-spans.test.ts holds it to that).
//
// How: the query is searched in every version the history index holds at once (`branch:*`
// there, each file written as its version: its blob id and its number of matches, without
// its lines or the thousands of commits holding it: Plan.versions), and the default
// branch's first-parent line replayed from its oldest commit with the files each commit
// changed against its first parent (one `git log --raw`, kept per tip): a path's count
// changes only where its blob does. Each path's answer is its newest matching version, at
// the newest commit of the line that held it (`branches`), with `history` its spans and
// changes: a second search, of those commits only, gives those versions' lines.
//
// A query that is one literal of word bytes (an identifier) takes its versions' counts from
// the repositories' word counts instead of the first search, when they are current
// (word-count-query.ts: why the counts are the same, and when the search is used instead).

import { runGit } from '../repos/git-command.ts';
import type { PlanNode, Plan } from '../query/plan.ts';
import { derivedPlan } from '../search/plan-cache.ts';
import { loneLiteralBytes } from '../search/version-matches.ts';
import type { SearchOptions, SearchService, WireResponse } from '../search/search-options.ts';
import { emptyStats, type CommitRef, type FileResult, type MatchHistory, type SearchRequest } from '../search/types.ts';
import type { WordCountFiles } from './word-count-files.ts';
import { wordTerm, wordVersions } from './word-count-query.ts';
import { docsByShard } from './word-counts.ts';

/** A repository whose history is indexed, as the spans need it. */
export interface SpanRepo {
  repoId: number;
  source: string;
  /** The default branch's commit. */
  tip: string;
  /** The commits its history index holds. */
  commits: ReadonlySet<string>;
  /**
   * Its history's shard files holding documents, with their numbers of documents, in
   * manifest order (word-counts.ts countedShards), and who may see it (as the history's
   * searcher asks repoFilter).
   */
  shards: ReadonlyArray<{ file: string; docs: number }>;
  visibility: 'public' | 'private';
}

/**
 * Matches counted over all versions: past this many the answer is cut (not exhaustive);
 * a version's count is what decides its spans, so the versions are searched whole.
 */
const SPAN_MATCHES = 1_000_000;

/**
 * A default branch's first-parent line, oldest first, and per path the commits of the line
 * that changed it against their first parent (ascending indexes into `commits`), each with
 * its new blob, or null where it is no file any more.
 */
interface Line {
  commits: CommitRef[];
  byPath: Map<string, Array<{ at: number; blob: string | null }>>;
}

/** First-parent lines read recently, by tip, up to this many commits and changes in all. */
const lines = new Map<string, { line: Line; weight: number }>();
const LINES_WEIGHT = 4_000_000;
let linesWeight = 0;

/** Modes of the entries that are files here (symbolic links and submodules are not, as at the tips). */
const FILE_MODES = new Set(['100644', '100755']);

/**
 * The default branch's first-parent line from `tip`, each commit compared with its first
 * parent (a root commit with nothing; renames as a removal and an addition, as `git log
 * --no-renames -S` sees them). `git log -z --raw` writes, newest first, a commit's header,
 * then per changed entry its `:modes blobs status` and its path, all NUL-separated.
 */
async function firstParentLine(repo: SpanRepo): Promise<Line> {
  const key = `${repo.source}\0${repo.tip}`;
  const kept = lines.get(key);
  if (kept !== undefined) {
    lines.delete(key);
    lines.set(key, kept);
    return kept.line;
  }
  const out = await runGit(
    repo.source,
    ['log', '--first-parent', '--diff-merges=first-parent', '--root', '--raw', '--no-renames', '--no-abbrev', '-z', '--format=%H %cI', repo.tip, '--'],
    1024 * 1024 * 1024,
  );
  const tokens = out.toString('utf8').split('\0');
  // Newest first as git writes them; each change by the index of its commit in that order.
  const commits: CommitRef[] = [];
  const changes: Array<{ at: number; path: string; blob: string | null }> = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!.replace(/^\n+/, '');
    if (token === '') continue;
    if (token.startsWith(':')) {
      // ":<old mode> <new mode> <old blob> <new blob> <status>", then the path.
      const [, mode, , blob] = token.slice(1).split(' ');
      const path = tokens[++i];
      if (path === undefined || commits.length === 0 || mode === undefined || blob === undefined)
        throw new Error(`unexpected git log output near ${JSON.stringify(token)}`);
      changes.push({ at: commits.length - 1, path, blob: FILE_MODES.has(mode) ? blob : null });
    } else {
      const [id, date] = token.split(' ');
      if (id === undefined || date === undefined) throw new Error(`unexpected git log output near ${JSON.stringify(token)}`);
      commits.push({ id, date });
    }
  }
  const last = commits.length - 1;
  commits.reverse();
  const byPath = new Map<string, Array<{ at: number; blob: string | null }>>();
  for (let i = changes.length - 1; i >= 0; i--) {
    const { at, path, blob } = changes[i]!;
    let list = byPath.get(path);
    if (list === undefined) byPath.set(path, (list = []));
    list.push({ at: last - at, blob });
  }
  const line = { commits, byPath };
  const weight = commits.length + changes.length;
  lines.set(key, { line, weight });
  linesWeight += weight;
  while (linesWeight > LINES_WEIGHT && lines.size > 1) {
    const [oldest, entry] = lines.entries().next().value!;
    lines.delete(oldest);
    linesWeight -= entry.weight;
  }
  return line;
}

/**
 * A version that matched (by its blob, in the maps that hold it): its number of matches
 * (Plan.versions), and when read from the word counts, the documents holding it (numbered
 * as they number them: word-counts.ts docsByShard).
 */
interface Version {
  count: number;
  docs?: number[];
}

/** A path's spans and changes, and its newest matching version with the newest commit of the line that held it. */
interface PathSpans {
  spans: MatchHistory['spans'];
  changes: CommitRef[];
  newest: { commit: CommitRef; version: Version } | undefined;
}

/**
 * Which commits of the line the history holds. A commit it does not hold (older than
 * settings.historyMaxCommits keeps) is not known to have held anything: it is skipped, and
 * the first held commit after it (a *start*) compares every path with what it last was.
 */
interface Held {
  held: Uint8Array;
  starts: number[];
  /** Per commit, the newest held commit before it (-1: none). */
  before: Int32Array;
  /** Whether every commit of the line is held. */
  whole: boolean;
}

/** heldOf's answers, by line, for the set of commits they were made for (a set kept until the history changes). */
const helds = new WeakMap<Line, { commits: ReadonlySet<string>; held: Held }>();

function heldOf(line: Line, commits: ReadonlySet<string>): Held {
  const kept = helds.get(line);
  if (kept?.commits === commits) return kept.held;
  const held = heldAnew(line, commits);
  helds.set(line, { commits, held });
  return held;
}

function heldAnew(line: Line, commits: ReadonlySet<string>): Held {
  const n = line.commits.length;
  const held = new Uint8Array(n);
  const starts: number[] = [];
  const before = new Int32Array(n);
  let last = -1;
  for (let i = 0; i < n; i++) {
    before[i] = last;
    if (!commits.has(line.commits[i]!.id)) continue;
    held[i] = 1;
    if (i === 0 || held[i - 1] === 0) starts.push(i);
    last = i;
  }
  return { held, starts, before, whole: starts.length === 1 && starts[0] === 0 && last === n - 1 };
}

/**
 * Replays one path along the line: its blob after each of its changes and at each start,
 * compared (as counts of matches: a version not found holds none) where the commit is held.
 */
function replayPath(line: Line, h: Held, changed: ReadonlyArray<{ at: number; blob: string | null }>, versions: ReadonlyMap<string, Version>): PathSpans {
  const out: PathSpans = { spans: [], changes: [], newest: undefined };
  let blob: string | null = null;
  let count = 0;
  let open: CommitRef | undefined;
  let holding: Version | undefined;
  let c = 0;
  let s = 0;
  for (;;) {
    const at = Math.min(changed[c]?.at ?? Infinity, h.starts[s] ?? Infinity);
    if (at === Infinity) break;
    while (c < changed.length && changed[c]!.at === at) blob = changed[c++]!.blob;
    if (h.starts[s] === at) s++;
    if (h.held[at] === 0) continue;
    const commit = line.commits[at]!;
    const v = blob === null ? undefined : versions.get(blob);
    const n = v?.count ?? 0;
    if (holding !== undefined && holding !== v && h.before[at]! >= 0) out.newest = { commit: line.commits[h.before[at]!]!, version: holding };
    holding = v;
    if (n === count) continue;
    out.changes.push(commit);
    if (count === 0) open = commit;
    if (n === 0) out.spans.push({ appeared: open!, gone: commit });
    count = n;
  }
  if (count > 0) out.spans.push({ appeared: open!, gone: null });
  const lastHeld = h.held[line.commits.length - 1] === 1 ? line.commits.length - 1 : h.before[line.commits.length - 1]!;
  if (holding !== undefined && lastHeld >= 0) out.newest = { commit: line.commits[lastHeld]!, version: holding };
  return out;
}

/** The history answer to a `history:yes` query (plan.history), in the wire form. */
export async function searchSpans(
  req: Required<SearchRequest>,
  options: SearchOptions,
  plan: Plan,
  at: { repos: readonly SpanRepo[]; history: SearchService; parse: (f: WireResponse['files'][number]) => FileResult; words?: WordCountFiles },
): Promise<WireResponse> {
  const { repos, history, parse } = at;
  const { history: _history, ...rest } = plan;
  const { onChunk: _onChunk, ...quiet } = options;
  // Per repository, per path, per blob: the version found, from the word counts or a search.
  const everywhere: Plan = { ...rest, root: { op: 'and', children: [plan.root, { op: 'branch', glob: '*' }] }, branches: ['*'], versions: true };
  // (Counted by the rule that search would count by: search/version-matches.ts, given what it gives it.)
  let byRepo = at.words !== undefined ? countedVersions(plan, loneLiteralBytes(everywhere), options, repos, at.words) : undefined;
  let found: WireResponse | undefined;
  if (byRepo === undefined) {
    found = await history.searchWire({ ...req, matches: SPAN_MATCHES }, { ...quiet, planned: derivedPlan(plan, 'everywhere', () => everywhere) });
    byRepo = searchedVersions(found, parse);
  }
  const byId = new Map(repos.map((r) => [r.repoId, r]));
  let exhaustive = found?.isSearchExhaustive ?? true;
  // Each file that held matches: its spans, and its newest matching version with the newest commit holding it.
  const answers: Array<{ repoId: number; path: string; commit: CommitRef; version: Version; spans: MatchHistory['spans']; changes: CommitRef[] }> = [];
  for (const [repoId, paths] of byRepo) {
    const repo = byId.get(repoId);
    if (repo === undefined) continue;
    const line = await firstParentLine(repo);
    const h = heldOf(line, repo.commits);
    exhaustive &&= h.whole;
    for (const [path, versions] of paths) {
      const { spans, changes, newest } = replayPath(line, h, line.byPath.get(path) ?? [], versions);
      if (newest !== undefined && spans.length > 0) answers.push({ repoId, path, ...newest, spans, changes });
    }
  }
  // Those versions' lines: the query at the commits named, each file kept at its own.
  const wanted = new Map(answers.map((a) => [`${a.repoId}\0${a.path}\0${a.commit.id}`, a]));
  const commits = [...new Set(answers.map((a) => a.commit.id))];
  const out: Array<{ wire: WireResponse['files'][number]; key: string; last: string; matches: number }> = [];
  let shown: WireResponse | undefined;
  if (commits.length > 0) {
    const atCommits: PlanNode = { op: 'and', children: [plan.root, { op: 'or', children: commits.map((glob) => ({ op: 'branch', glob })) }] };
    const docs = found === undefined ? shownDocs(answers, byId) : undefined;
    shown = await history.searchWire(
      { ...req, matches: SPAN_MATCHES },
      {
        ...quiet,
        planned: derivedPlan(plan, `at ${commits.join(' ')}`, () => ({ ...rest, root: atCommits, branches: commits })),
        ...(docs !== undefined ? { docs } : {}),
      },
    );
    for (const wire of shown.files) {
      const file = parse(wire);
      const path = file.fileName.text;
      for (const commit of file.branches) {
        // (A path has one version at a commit: the one the replay chose there.)
        const key = `${file.repositoryId}\0${path}\0${commit}`;
        const a = wanted.get(key);
        if (a === undefined) continue;
        wanted.delete(key);
        // Its links name the commit it is shown at (it was found on that commit among others).
        const first = file.branches[0]!;
        const shaped: FileResult = {
          ...file,
          webUrl: file.webUrl.replace(first, commit),
          ...(file.externalWebUrl !== undefined ? { externalWebUrl: file.externalWebUrl.replace(first, commit) } : {}),
          branches: [commit],
          history: { spans: a.spans, changes: a.changes } satisfies MatchHistory,
        };
        out.push({
          wire: { ...wire, json: Buffer.from(JSON.stringify(shaped)) },
          key: `${shaped.repository}\0${path}`,
          last: a.changes[a.changes.length - 1]!.date,
          matches: a.version.count,
        });
        break;
      }
    }
    // A version found by the first search and not by the second: the index changed between the two.
    if (wanted.size > 0) exhaustive = false;
  }
  // The most recent change first.
  out.sort((a, b) => (a.last < b.last ? 1 : a.last > b.last ? -1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  let matches = 0;
  let kept = out.length;
  for (let i = 0; i < out.length; i++) {
    matches += out[i]!.matches;
    if (matches > req.matches) {
      kept = i + 1;
      exhaustive = exhaustive && kept === out.length;
      break;
    }
  }
  const files = out.slice(0, kept);
  // The stats are those of the search of every version; counted from the words, of the
  // search of the commits shown (the only one made), and the repositories are those it found.
  const stated = found ?? shown ?? { stats: emptyStats(), repositoryInfo: [] };
  const repositoryInfo = stated.repositoryInfo.filter((r) => files.some((f) => f.wire.repositoryId === r.id));
  // In the order the search of every version gives them (unranked: its shards', by
  // repository name then id, search/searcher.ts), not the ranked second search's.
  if (found === undefined) repositoryInfo.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  return {
    stats: { ...stated.stats, fileCount: files.length, actualMatchCount: files.reduce((n, f) => n + f.matches, 0) },
    files: files.map((f) => f.wire),
    repositoryInfo,
    isSearchExhaustive: exhaustive,
  };
}

/**
 * The documents of the versions shown, by shard (SearchOptions.docs), when the word counts
 * named them all: the search of the commits shown then examines only those, with no posting
 * list read (its answer is the same: each is still examined whole, on the commits asked).
 */
function shownDocs(answers: ReadonlyArray<{ repoId: number; version: Version }>, byId: ReadonlyMap<number, SpanRepo>): Map<string, number[]> | undefined {
  const byRepo = new Map<number, number[]>();
  for (const a of answers) {
    if (a.version.docs === undefined) return undefined;
    let list = byRepo.get(a.repoId);
    if (list === undefined) byRepo.set(a.repoId, (list = []));
    list.push(...a.version.docs);
  }
  const out = new Map<string, number[]>();
  for (const [repoId, list] of byRepo) for (const [file, docs] of docsByShard(byId.get(repoId)!.shards, list)) out.set(`${repoId}/${file}`, docs);
  return out;
}

/** The versions a search of every version found (Plan.versions), per repository, per path, per blob. */
function searchedVersions(found: WireResponse, parse: (f: WireResponse['files'][number]) => FileResult): Map<number, Map<string, Map<string, Version>>> {
  const byRepo = new Map<number, Map<string, Map<string, Version>>>();
  for (const wire of found.files) {
    const file = parse(wire);
    if (file.version === undefined) throw new Error('a search of versions answered a file without its version');
    let paths = byRepo.get(file.repositoryId);
    if (paths === undefined) byRepo.set(file.repositoryId, (paths = new Map()));
    let versions = paths.get(file.fileName.text);
    if (versions === undefined) paths.set(file.fileName.text, (versions = new Map()));
    versions.set(file.version.blob, { count: file.version.matches });
  }
  return byRepo;
}

/**
 * The same versions read from the repositories' word counts (word-count-query.ts), when the
 * query is one literal of word bytes, every repository the caller may see has its file
 * current, the budget of the thread serving requests holds, and the search would not have
 * been cut at its limit; else undefined (the search answers).
 */
function countedVersions(
  plan: Plan,
  literalBytes: number,
  options: SearchOptions,
  repos: readonly SpanRepo[],
  words: WordCountFiles,
): Map<number, Map<string, Map<string, Version>>> | undefined {
  const term = wordTerm(plan);
  if (term === undefined || options.brute === true) return undefined;
  const budget = { ...words.limits };
  const byRepo = new Map<number, Map<string, Map<string, Version>>>();
  let found = 0;
  for (const repo of repos) {
    if (options.repoFilter !== undefined && !options.repoFilter({ repoId: repo.repoId, visibility: repo.visibility })) continue;
    const c = words.current(repo.repoId, repo.shards);
    if (c === undefined) return undefined;
    let v: ReturnType<typeof wordVersions>;
    try {
      v = wordVersions(c, term, literalBytes, budget);
    } catch {
      return undefined; // a damaged list: the search answers
    }
    if (v === undefined) return undefined;
    found += v.found;
    if (v.paths.size === 0) continue;
    const paths = new Map<string, Map<string, Version>>();
    for (const [path, blobs] of v.paths) paths.set(path, blobs);
    byRepo.set(repo.repoId, paths);
  }
  if (found > SPAN_MATCHES) return undefined;
  words.answered++;
  return byRepo;
}
