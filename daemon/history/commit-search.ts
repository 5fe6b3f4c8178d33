// type:commit: the commit messages of the indexed histories searched (their records:
// commit-records.ts), one result per matching commit (commit-results.ts), newest first by
// committer time across repositories. `matches` bounds the match ranges returned (a commit
// matched by its author or time alone counts one); past it, or past the time budget, the
// answer is not exhaustive; so it is when a repository's history left commits out (its
// limit) or has no records yet. A stream gets the results in batches, in the same order, each
// file's `score` its committer time in seconds (so that ordering by score, as a client of
// streams does, keeps it).
//
// The records are read once and kept while their file is unchanged (commit-catalog.ts,
// shared with type:diff). The search runs on
// the thread that serves requests, so it gives the event loop a turn every YIELD_EVERY
// commits, and stops there when the budget or the client is gone.

import type { ManifestRepo } from '../index/manifest.ts';
import type { Plan } from '../query/plan.ts';
import { displayName, repoWebUrl } from '../repos/web-urls.ts';
import type { ShapedFile, ShapeOptions } from '../search/file-json.ts';
import { repoVerdict, type RepoFlags } from '../search/match-tree.ts';
import type { SearchOptions } from '../search/search-options.ts';
import { emptyStats, type RepositoryInfo, type SearchStats } from '../search/types.ts';
import { commitTest, searchedCommit, type SearchedCommit } from './commit-match.ts';
import { CommitCatalog } from './commit-catalog.ts';
import type { CommitRecords } from './commit-records.ts';
import { commitResult, type CommitResult } from './commit-results.ts';

/** Commits tested between two turns of the event loop. */
const YIELD_EVERY = 2000;
/** Results per streamed batch. */
const CHUNK_FILES = 100;

/** A repository whose commits are searched. */
export interface CommitSource {
  repoId: number;
  repo: ManifestRepo;
  /** Its records file (commit-records.ts commitRecordsPath). */
  path: string;
}

export interface CommitAnswer {
  /** Newest first; empty for a stream (its batches had them). */
  results: CommitResult[];
  stats: SearchStats;
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/** What a search asks: the query's plan, the match ranges wanted, how results are shaped; planNs: how long planning took. */
export interface CommitQuery {
  plan: Plan;
  matches: number;
  shape: ShapeOptions;
  planNs?: number;
}

/** A repository's records as searched. */
interface Held {
  commits: SearchedCommit[];
  leftOut: number;
}

interface Found {
  source: CommitSource;
  commit: SearchedCommit;
  ranges: number[];
}

export class CommitSearch {
  /** The records as searched, made once per records read. */
  private readonly searched = new WeakMap<CommitRecords, Held>();

  /** `catalog` holds the records files read (the history service shares it with type:diff). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly catalog: CommitCatalog = new CommitCatalog(),
  ) {}

  async search(q: CommitQuery, sources: readonly CommitSource[], options: SearchOptions): Promise<CommitAnswer> {
    const { plan, matches, shape, planNs = 0 } = q;
    const started = process.hrtime.bigint();
    const deadline = options.timeoutMs === undefined ? Infinity : performance.now() + options.timeoutMs;
    const stats = emptyStats();
    stats.matchTreeConstruction = planNs;
    const now = this.now();
    let complete = true;
    let stopped = false;
    let tested = 0;
    const found: Found[] = [];
    search: for (const source of sources) {
      if (options.repoFilter && !options.repoFilter({ repoId: source.repoId, visibility: source.repo.visibility })) continue;
      const flags: RepoFlags = { repoName: source.repo.name, archived: source.repo.archived, fork: source.repo.fork, visibility: source.repo.visibility };
      if (repoVerdict(plan.root, flags) === false) {
        stats.shardsSkippedFilter++;
        continue;
      }
      const held = this.commitsOf(source);
      if (held === undefined) {
        complete = false; // its history is indexed, its records not (yet)
        continue;
      }
      // Commits the history's limit left out are searched nowhere.
      if (held.leftOut > 0) complete = false;
      const commits = held.commits;
      stats.shardsScanned++;
      const test = commitTest(plan.root, flags, now);
      for (const c of commits) {
        if (++tested % YIELD_EVERY === 0) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (options.signal?.aborted || performance.now() > deadline) {
            complete = false;
            stopped = true;
            break search;
          }
        }
        stats.filesConsidered++;
        stats.contentBytesLoaded += c.message.length;
        const ranges = test(c);
        if (ranges !== undefined) found.push({ source, commit: c, ranges });
      }
    }
    found.sort(newestFirst);
    // The budget of match ranges, over the commits in order.
    const kept: Found[] = [];
    let budget = matches;
    for (const f of found) {
      const count = Math.max(1, f.ranges.length / 2);
      stats.totalMatchCount += count;
      if (budget <= 0) {
        complete = false;
        continue;
      }
      if (count > budget) {
        complete = false;
        kept.push({ ...f, ranges: f.ranges.slice(0, 2 * budget) });
        stats.actualMatchCount += budget;
        budget = 0;
      } else {
        kept.push(f);
        stats.actualMatchCount += count;
        budget -= count;
      }
    }
    const repos = new Map<number, RepositoryInfo>();
    const results = kept.map((f) => {
      if (!repos.has(f.source.repoId)) repos.set(f.source.repoId, repositoryInfo(f.source, shape.baseUrl));
      return commitResult({ id: f.source.repoId, name: f.source.repo.name }, f.commit, f.ranges, shape.contextLines, shape.baseUrl);
    });
    stats.fileCount = results.length;
    stats.filesLoaded = results.length;
    stats.flushReason = stopped ? 'FLUSH_REASON_TIMER_EXPIRED' : 'FLUSH_REASON_FINAL_FLUSH';
    const answer = { stats, repositoryInfo: [...repos.values()], isSearchExhaustive: complete };
    if (options.onChunk) {
      await streamResults(results, answer.repositoryInfo, options);
      stats.duration = Number(process.hrtime.bigint() - started);
      return { ...answer, results: [] };
    }
    stats.duration = Number(process.hrtime.bigint() - started);
    return { ...answer, results };
  }

  /** A repository's commits, newest first; undefined when it has no readable records. */
  private commitsOf(source: CommitSource): Held | undefined {
    const records = this.catalog.records(source.path);
    if (records === undefined) return undefined;
    let held = this.searched.get(records);
    if (held === undefined) {
      held = { commits: records.commits.map(searchedCommit), leftOut: records.leftOut };
      this.searched.set(records, held);
    }
    return held;
  }
}

function newestFirst(a: Found, b: Found): number {
  return (
    b.commit.time - a.commit.time ||
    (a.source.repo.name < b.source.repo.name ? -1 : a.source.repo.name > b.source.repo.name ? 1 : 0) ||
    (a.commit.record.id < b.commit.record.id ? -1 : a.commit.record.id > b.commit.record.id ? 1 : 0)
  );
}

function repositoryInfo(source: CommitSource, baseUrl: string): RepositoryInfo {
  const name = source.repo.name;
  return {
    id: source.repoId,
    codeHostType: source.repo.codeHostType,
    name,
    displayName: source.repo.displayName || displayName(name),
    webUrl: repoWebUrl(baseUrl, name),
  };
}

/** The results in their wire form (search/file-json.ts ShapedFile), each scored by its committer time in seconds. */
export function commitWire(results: readonly CommitResult[]): ShapedFile[] {
  return results.map((r) => {
    const json = Buffer.from(JSON.stringify(r), 'utf8');
    const ranges = r.chunks.reduce((n, c) => n + c.matchRanges.length, 0);
    const count = Math.max(1, ranges);
    const score = Math.floor(Date.parse(r.commit.committer.date) / 1000);
    return {
      json,
      count,
      total: count,
      score,
      repositoryId: r.repositoryId,
      repository: r.repository,
      path: '',
      hit: { doc: 0, member: 0, ranges: [], nameRanges: [], branches: [], termFreqs: [], score, definition: false },
      shard: 0,
    };
  });
}

/** Sends the results to a stream in batches; stops when its client says so. */
async function streamResults(results: readonly CommitResult[], repositoryInfo: RepositoryInfo[], options: SearchOptions): Promise<void> {
  const onChunk = options.onChunk!;
  for (let at = 0; at < results.length; at += CHUNK_FILES) {
    const batch = results.slice(at, at + CHUNK_FILES);
    const stats = emptyStats();
    stats.fileCount = batch.length;
    stats.actualMatchCount = batch.reduce(
      (n, r) =>
        n +
        Math.max(
          1,
          r.chunks.reduce((k, c) => k + c.matchRanges.length, 0),
        ),
      0,
    );
    stats.flushReason = at + CHUNK_FILES < results.length ? 'FLUSH_REASON_MAX_SIZE' : 'FLUSH_REASON_FINAL_FLUSH';
    const ids = new Set(batch.map((r) => r.repositoryId));
    const more = await onChunk({ stats, files: commitWire(batch), repositoryInfo: repositoryInfo.filter((r) => ids.has(r.id)) });
    if (more === false) return;
  }
}
