// Search at any commit of an indexed history. A query's `rev:` (`branch:`, `b:`) value that
// names no indexed ref of a repository with a history index, but a commit of it (a full or
// abbreviated id, a tag, `main~3`: repos/revision.ts), and `at:<time>` (the default branch's
// commit at that time), are resolved here, per repository, to commit ids; the query is then
// searched in the history indexes (history-index.ts), whose refs are those ids, besides the
// tip indexes. A file found at a commit names it in `branches` by its full id.
//
// A commit the repository holds but its history index does not (left out by
// settings.history.maxCommits, or made since the last sync) is searched nowhere: the answer
// is then not exhaustive.
//
// A `type:diff` query searches the histories' diffs instead (diff-service.ts), a
// `type:commit` query their commit records (commit-search.ts), never the files; `history:yes`
// answers where the matches lived in the default branches' histories (history-spans.ts).

import { ServiceError } from '../errors.ts';
import { AT_PREFIX } from '../query/ast.ts';
import type { Plan, PlanNode } from '../query/plan.ts';
import { historyDataDir } from '../index/data-dir.ts';
import { indexVersionStamp } from '../index/index-stamp.ts';
import { loadManifest, manifestVisibility, readAllManifests, type ManifestRepo } from '../index/manifest.ts';
import { runGit } from '../repos/git-command.ts';
import { withRepository } from '../repos/git-repo-cache.ts';
import type { GitRef } from '../repos/git.ts';
import { parseHistoryDate } from '../repos/history-dates.ts';
import { resolveCommit, type RevisionScope } from '../repos/revision.ts';
import { MIN_ID_DIGITS } from '../repos/revision-syntax.ts';
import { literalRef } from '../search/match-tree.ts';
import { derivedPlan } from '../search/plan-cache.ts';
import { compareRanked } from '../search/rank-order.ts';
import type { PlannedSearch } from '../search/plan-cache.ts';
import type { SearchOptions, SearchService, WireResponse } from '../search/search-options.ts';
import type { SearchRequest, SearchResponse, SearchStats } from '../search/types.ts';
import { planSearch } from '../search/plan-cache.ts';
import { parseFile, Searcher } from '../search/searcher.ts';
import { DEFAULT_BASE_URL } from '../repos/web-urls.ts';
import { CommitCatalog } from './commit-catalog.ts';
import { commitRecordsPath } from './commit-records.ts';
import { CommitSearch, commitWire, type CommitAnswer } from './commit-search.ts';
import { DiffSearch } from './diff-service.ts';
import { searchSpans } from './history-spans.ts';
import { WordCountFiles } from './word-count-files.ts';
import { countedShards } from './word-counts.ts';

/**
 * The daemon's search service: `live` (the tip indexes' searcher), and a searcher of the
 * history data dir with one worker thread of its own, started by the first search at a
 * commit of an indexed history.
 */
export function historyBeside(live: Searcher, o: { dataDir: string; baseUrl?: string; maxWholeBytes?: number; wordCounts?: boolean }): HistorySearch {
  const open = () =>
    new Searcher({
      dataDir: historyDataDir(o.dataDir),
      workers: 1,
      ...(o.baseUrl !== undefined ? { baseUrl: o.baseUrl } : {}),
      ...(o.maxWholeBytes !== undefined ? { maxWholeBytes: o.maxWholeBytes } : {}),
    });
  const search = new HistorySearch(live, open, o.dataDir, Date.now, o.baseUrl);
  if (o.wordCounts === false) search.wordCounts = undefined;
  return search;
}

/** A repository whose history is indexed, as the resolution needs it. */
interface Indexed {
  repoId: number;
  /** The repository git reads. */
  source: string;
  /** The ids of the commits its history index holds. */
  commits: ReadonlySet<string>;
  /** The same, sorted: an abbreviated id is looked up here before git is asked. */
  sorted: readonly string[];
  /** Its tip index's refs and generation: the names a revision may start from. */
  scope: RevisionScope;
  /** As its tip index lists it now. */
  repo: ManifestRepo;
  /** Its history's shard files holding documents, with their numbers of documents (manifest order: word-counts.ts countedShards), and its visibility as the history's searcher has it. */
  shards: ReadonlyArray<{ file: string; docs: number }>;
  visibility: 'public' | 'private';
}

/** How a query's revisions resolved: the history plan to search, if any commit was found. */
export interface HistoryRoute {
  planned: PlannedSearch;
  /** Commits the repositories hold whose history index does not: the search misses them. */
  missing: number;
}

/** What searches a history data dir: a Searcher (search/searcher.ts) over it. */
export interface HistorySearcher extends SearchService {
  close(): Promise<void>;
}

export class HistorySearch implements SearchService {
  private known: { stamp: string; indexed: Indexed[] } | undefined;
  private opened: HistorySearcher | undefined;
  private readonly diffs: DiffSearch;
  private readonly commits: CommitSearch;
  /**
   * The histories' word counts, from which `history:yes` of one identifier takes its
   * versions' counts instead of searching them (history-spans.ts); undefined: always searched.
   */
  wordCounts: WordCountFiles | undefined;

  /**
   * `live` searches the tip indexes; `open` makes the searcher of the history data dir, on
   * the first search that needs it (a daemon without histories never starts one).
   */
  constructor(
    private readonly live: SearchService,
    private readonly open: () => HistorySearcher,
    private readonly dataDir: string,
    private readonly now: () => number = Date.now,
    baseUrl: string = DEFAULT_BASE_URL,
  ) {
    // One catalog of commit records for both: type:diff joins its records to them.
    const records = new CommitCatalog();
    this.diffs = new DiffSearch(dataDir, baseUrl, records);
    this.commits = new CommitSearch(now, records);
    this.wordCounts = new WordCountFiles(dataDir);
  }

  /** Closes the history searcher, if one was opened. */
  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    await opened?.close();
  }

  private get history(): HistorySearcher {
    this.opened ??= this.open();
    return this.opened;
  }

  shapeOptions(req: Required<SearchRequest>): ReturnType<SearchService['shapeOptions']> {
    return this.live.shapeOptions(req);
  }

  async search(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<SearchResponse> {
    const planned = options.planned ?? planSearch(req);
    if (planned.plan.type === 'diff') return this.diffs.search(req, planned.plan, options, this.indexed());
    if (planned.plan.type === 'commit') {
      const a = await this.searchCommits(req, options, planned);
      return { stats: a.stats, files: a.results, repositoryInfo: a.repositoryInfo, isSearchExhaustive: a.isSearchExhaustive };
    }
    if (planned.plan.history) {
      const { onChunk, ...rest } = options;
      const wire = await this.spans(req, rest, planned.plan);
      // A stream gets the answer as one batch.
      if (onChunk) await onChunk({ stats: wire.stats, files: wire.files, repositoryInfo: wire.repositoryInfo });
      return { ...wire, files: onChunk ? [] : wire.files.map(parseFile) };
    }
    const route = await this.route(planned.plan, options.repoFilter);
    if (route === undefined) return this.live.search(req, { ...options, planned });
    // The tips and the history are searched by searchers of their own, at the same time;
    // a stream's batches are sent from one search after the other.
    const tips = () => this.live.search(req, { ...options, planned });
    // (One repository's few shards at a few commits: its candidates are found here, and a
    // few of them examined here too, sparing a worker's round trip: search/searcher.ts.)
    const inHistory = () => this.history.search(req, { ...options, planned: route.planned, candidatesHere: true });
    const [live, past] = options.onChunk ? [await tips(), await inHistory()] : await Promise.all([tips(), inHistory()]);
    const files = [...live.files, ...past.files];
    return {
      ...live,
      stats: sumStats(live.stats, past.stats),
      files,
      repositoryInfo: mergeInfo(live.repositoryInfo, past.repositoryInfo),
      isSearchExhaustive: live.isSearchExhaustive && past.isSearchExhaustive && route.missing === 0,
    };
  }

  async searchWire(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<WireResponse> {
    const planned = options.planned ?? planSearch(req);
    if (planned.plan.type === 'diff') return this.diffs.searchWire(req, planned.plan, options, this.indexed());
    if (planned.plan.history) return this.spans(req, options, planned.plan);
    if (planned.plan.type === 'commit') {
      const a = await this.searchCommits(req, options, planned);
      return { stats: a.stats, files: commitWire(a.results), repositoryInfo: a.repositoryInfo, isSearchExhaustive: a.isSearchExhaustive };
    }
    const route = await this.route(planned.plan, options.repoFilter);
    if (route === undefined) return this.live.searchWire(req, { ...options, planned });
    const [live, past] = await Promise.all([
      this.live.searchWire(req, { ...options, planned }),
      this.history.searchWire(req, { ...options, planned: route.planned, candidatesHere: true }),
    ]);
    const files = [...live.files, ...past.files].sort((a, b) => compareRanked(a, b));
    const out: WireResponse = {
      stats: sumStats(live.stats, past.stats),
      files,
      repositoryInfo: mergeInfo(live.repositoryInfo, past.repositoryInfo),
      isSearchExhaustive: live.isSearchExhaustive && past.isSearchExhaustive && route.missing === 0,
    };
    if (live.unavailableShards) out.unavailableShards = live.unavailableShards;
    return out;
  }

  /** A `history:yes` query: where its matches lived in the indexed histories (history-spans.ts). */
  private spans(req: Required<SearchRequest>, options: SearchOptions, plan: Plan): Promise<WireResponse> {
    const repos = this.indexed().map((r) => ({
      repoId: r.repoId,
      source: r.source,
      tip: r.scope.indexed.refs[0]!.commit,
      commits: r.commits,
      shards: r.shards,
      visibility: r.visibility,
    }));
    return searchSpans(req, options, plan, { repos, history: this.history, parse: parseFile, ...(this.wordCounts ? { words: this.wordCounts } : {}) });
  }

  /** A type:commit query over the repositories with a history. */
  private searchCommits(req: Required<SearchRequest>, options: SearchOptions, planned: PlannedSearch): Promise<CommitAnswer> {
    const sources = this.indexed().map((r) => ({ repoId: r.repoId, repo: r.repo, path: commitRecordsPath(this.dataDir, r.repoId) }));
    return this.commits.search({ plan: planned.plan, matches: req.matches, shape: this.live.shapeOptions(req), planNs: planned.planNs }, sources, options);
  }

  /**
   * The history search a plan's revisions call for: each branch glob without `*` that is
   * no indexed ref of a repository with a history, resolved there; undefined when none
   * resolves to a commit of an indexed history.
   */
  async route(plan: Plan, repoFilter?: SearchOptions['repoFilter']): Promise<HistoryRoute | undefined> {
    // HEAD is the default branch, which the tips answer (match-tree.ts literalRef).
    const globs = [...new Set(plan.branches)].filter((g) => literalRef(g) !== undefined);
    if (globs.length === 0) return undefined;
    // Only the repositories the caller may see: whether a revision resolves elsewhere is not theirs to learn.
    const indexed = this.indexed().filter((r) => repoFilter === undefined || repoFilter({ repoId: r.repoId, visibility: r.repo.visibility }));
    if (indexed.length === 0) return undefined;
    const ids = new Map<string, Set<string>>();
    let missing = 0;
    for (const glob of globs) {
      const found = new Set<string>();
      for (const repo of indexed) {
        const id = await this.resolve(repo, glob);
        if (id === undefined) continue;
        if (repo.commits.has(id)) found.add(id);
        else missing++;
      }
      if (found.size > 0) ids.set(glob, found);
    }
    if (ids.size === 0 && missing === 0) return undefined;
    // Only the commits resolved: a negated revision must not open the rest of the history.
    const branches = [...new Set([...ids.values()].flatMap((s) => [...s]))];
    const variant = JSON.stringify([...ids].map(([glob, found]) => [glob, [...found]]));
    const planned = derivedPlan(plan, `rev ${variant}`, () => {
      const commits: PlanNode[] = branches.map((id) => ({ op: 'branch', glob: id }));
      const root: PlanNode = { op: 'and', children: [rewrite(plan.root, ids), { op: 'or', children: commits }] };
      return { ...plan, root, branches };
    });
    return { planned, missing };
  }

  /** The commit `glob` names in `repo`, unless it names an indexed ref there (the tip index answers) or nothing. */
  private async resolve(repo: Indexed, glob: string): Promise<string | undefined> {
    if (glob.startsWith(AT_PREFIX)) return this.commitAt(repo, glob.slice(AT_PREFIX.length));
    if (repo.scope.indexed.refs.some((r) => r.name === glob)) return undefined;
    // A commit id the history holds, full or abbreviated (git's shortest is 4 digits; ours
    // MIN_ID_DIGITS), needs no git: the history holds only commits the refs reach.
    if (HEX_ID.test(glob)) {
      const id = uniquePrefix(repo.sorted, glob.toLowerCase());
      if (id !== undefined) return id;
    }
    try {
      return await withRepository(repo.source, async (git) => (await resolveCommit(git, glob, repo.scope)).sha());
    } catch (err) {
      if (err instanceof ServiceError) return undefined; // not a revision of this repository
      throw err;
    }
  }

  /** The default branch's commit at `time` (its first-parent line: the newest committed at or before it), if any. */
  private async commitAt(repo: Indexed, time: string): Promise<string | undefined> {
    const at = parseHistoryDate(time, 'at:', this.now());
    const tip = repo.scope.indexed.refs[0]!.commit;
    const out = await runGit(repo.source, ['rev-list', '-1', '--first-parent', `--before=${Math.floor(at / 1000)}`, tip, '--'], 1024);
    const id = out.toString('utf8').trim();
    return id === '' ? undefined : id;
  }

  /** The repositories with a history index, read again when either data dir's index changes. */
  private indexed(): Indexed[] {
    const root = historyDataDir(this.dataDir);
    // Each data dir's stamp, which every change moves (index-stamp.ts): no read of the manifests per search.
    const stamp = `${indexVersionStamp(root)}/${indexVersionStamp(this.dataDir)}`;
    if (this.known?.stamp === stamp) return this.known.indexed;
    const indexed: Indexed[] = [];
    for (const m of readAllManifests(root)) {
      if (m.version !== 2 || m.shards.length === 0 || m.repo === undefined) continue;
      const tip = loadManifest(this.dataDir, m.repoId);
      if (tip === undefined || 'unreadable' in tip || tip.version !== 2 || tip.refs.length === 0) continue;
      const refs: readonly GitRef[] = tip.refs;
      indexed.push({
        repoId: m.repoId,
        source: tip.repo?.source ?? m.repo.source,
        commits: new Set(m.refs.map((r) => r.commit)),
        sorted: m.refs.map((r) => r.commit).sort(),
        scope: { defaultRef: refs[0]!.name, label: m.repo.name, indexed: { refs, generation: tip.generation } },
        repo: tip.repo ?? m.repo,
        shards: countedShards(m.shards),
        visibility: manifestVisibility(m),
      });
    }
    this.known = { stamp, indexed };
    return indexed;
  }
}

const HEX_ID = new RegExp(`^[0-9a-fA-F]{${MIN_ID_DIGITS},40}$`);

/** The one id of `sorted` that starts with `prefix`; undefined when none or several do. */
function uniquePrefix(sorted: readonly string[], prefix: string): string | undefined {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < prefix) lo = mid + 1;
    else hi = mid;
  }
  const found = sorted[lo];
  if (found === undefined || !found.startsWith(prefix)) return undefined;
  return sorted[lo + 1]?.startsWith(prefix) ? undefined : found;
}

/** The plan's branch nodes with their resolved commits: a glob resolved nowhere matches nothing in a history. */
function rewrite(n: PlanNode, ids: ReadonlyMap<string, ReadonlySet<string>>): PlanNode {
  switch (n.op) {
    case 'and':
    case 'or':
      return { op: n.op, children: n.children.map((c) => rewrite(c, ids)) };
    case 'not':
      return { op: 'not', child: rewrite(n.child, ids) };
    case 'branch': {
      const found = ids.get(n.glob);
      if (found === undefined) return { op: 'const', value: false };
      return { op: 'or', children: [...found].map((id) => ({ op: 'branch', glob: id })) };
    }
    default:
      return n;
  }
}

function sumStats(a: SearchStats, b: SearchStats): SearchStats {
  const out = { ...a };
  for (const k of Object.keys(a) as Array<keyof SearchStats>) {
    if (k === 'flushReason') continue;
    (out as Record<string, unknown>)[k] = (a[k] as number) + (b[k] as number);
  }
  return out;
}

function mergeInfo<T extends { id: number }>(a: T[], b: T[]): T[] {
  const seen = new Set(a.map((r) => r.id));
  return [...a, ...b.filter((r) => !seen.has(r.id))];
}
