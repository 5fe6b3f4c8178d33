// Builds a repository's history index: every commit reachable from its indexed refs, each a
// ref of an index kept in the history data dir (index/data-dir.ts historyDataDir), built by
// the same indexer as the tip index and so with the same guarantees (atomic manifests, a
// killed run leaving the previous history serving, incremental runs that build only the
// file versions a new commit brings). Search at a commit: history-search.ts. Beside it, the
// same commits' records (commit-records.ts), which `type:commit` searches.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { indexOpened, type IndexOptions } from '../index/indexer.ts';
import type { IndexSummary } from '../index/index-summary.ts';
import { historyDataDir, shardsDir } from '../index/data-dir.ts';
import { loadManifest, retireRepository, type ManifestRepo } from '../index/manifest.ts';
import type { GitRef } from '../repos/git.ts';
import { runGit } from '../repos/git-command.ts';
import { commitRecordsPath, readCommitRecordsHead, removeCommitRecords, updateCommitRecords } from './commit-records.ts';
import { indexDiffs, type DiffIndexSummary } from './diff-index.ts';
import { recordedCommits, removeRecords } from './diff-store.ts';
import { historySource } from './history-source.ts';
import { walks } from './walk-cache.ts';
import { updateWordCountsInThread, type WordCountsSummary } from './word-count-build.ts';
import { removeWordCounts, wordCountsPath } from './word-counts.ts';

/** Commits a history holds by default (the newest; settings.historyMaxCommits). */
export const DEFAULT_HISTORY_MAX_COMMITS = 20_000;

export interface HistoryIndexOptions extends Pick<IndexOptions, 'maxFileSize' | 'maxTrigrams' | 'symbols' | 'workers' | 'buildSlot'> {
  dataDir: string;
  repoId: number;
  repo: ManifestRepo;
  /** The repository git reads. */
  gitDir: string;
  /** The tip index's refs (refs[0] the default branch): the history is what they reach. */
  refs: readonly GitRef[];
  maxCommits?: number;
}

export interface HistorySummary extends IndexSummary {
  /** Commits in the history index. */
  commits: number;
  /** Commits the refs reach that the limit left out. */
  leftOut: number;
  /** The diff records (diff-store.ts) brought up to date with it. */
  diffs: DiffIndexSummary;
  /** The word counts (word-counts.ts) brought up to date with it. */
  words: WordCountsSummary;
}

/** Builds (or brings up to date) the history index of one repository. */
export async function indexHistory(o: HistoryIndexOptions): Promise<HistorySummary> {
  const started = performance.now();
  // The walk of the refs: the last one of this repository extended when this process made it (walk-cache.ts).
  const { walk } = await walks.walk(
    o.gitDir,
    o.refs.map((r) => r.commit),
    { maxCommits: o.maxCommits ?? DEFAULT_HISTORY_MAX_COMMITS },
  );
  const git = historySource(o.gitDir, walk, o.refs[0]!.commit, o.repo.committedAt);
  const summary = await indexOpened(
    { root: o.gitDir, git },
    {
      dataDir: historyDataDir(o.dataDir),
      register: async () => ({ repoId: o.repoId, repo: o.repo }),
      sourceStamp: historyStamp(o),
      // A history holds many versions of each path: its postings are over the groups of them (shard-reader.ts, doc-groups).
      groupVersions: true,
      // A path's versions are mostly the same bytes: each is stored as a delta against the one before it (history-source.ts gives them newest first).
      versionDeltas: true,
      // And most of its records repeat from one version to the next: stored compressed
      // (index/compressed-section.ts).
      compressSections: true,
      // Its searches read every one of its shards (a search at a commit, `history:yes`): a
      // last shard of a few versions would cost them what a full one does.
      foldRunt: true,
      ...(o.maxFileSize !== undefined ? { maxFileSize: o.maxFileSize } : {}),
      ...(o.maxTrigrams !== undefined ? { maxTrigrams: o.maxTrigrams } : {}),
      ...(o.symbols !== undefined ? { symbols: o.symbols } : {}),
      ...(o.workers !== undefined ? { workers: o.workers } : {}),
      ...(o.buildSlot !== undefined ? { buildSlot: o.buildSlot } : {}),
    },
    started,
  );
  if ('commit' in summary) throw new Error('a history index is never packed');
  // The word counts of its documents (word-counts.ts), which `history:yes` reads, are
  // counted in a thread of their own while the records type:commit and type:diff search
  // (commit-records.ts, diff-index.ts), of the same commits, are made here.
  const counted = updateWordCountsInThread({ historyRoot: historyDataDir(o.dataDir), repoId: o.repoId, path: wordCountsPath(o.dataDir, o.repoId) });
  // (A failure of the counts is reported by the await below, after the records: not as an unhandled rejection meanwhile.)
  counted.catch(() => {});
  await updateCommitRecords(o.gitDir, commitRecordsPath(o.dataDir, o.repoId), { tips: tipsOf(o), ids: walk.commits, leftOut: walk.leftOut });
  const diffs = await indexDiffs({ dataDir: o.dataDir, repoId: o.repoId, gitDir: o.gitDir, commits: walk.commits, leftOut: walk.leftOut });
  const words = await counted;
  return { ...summary, commits: walk.commits.length, leftOut: walk.leftOut, diffs, words };
}

function tipsOf(o: HistoryIndexOptions): string[] {
  return o.refs.map((r) => r.commit);
}

/**
 * The commit records of a history index that is up to date, made when they are missing or
 * were made for other tips (a run stopped between the index and its records, or records
 * from before they were kept): the same commits as the walk's (git's topological order,
 * the newest up to the limit).
 */
async function recordsUpToDate(o: HistoryIndexOptions): Promise<void> {
  const path = commitRecordsPath(o.dataDir, o.repoId);
  const tips = tipsOf(o);
  let held: string[] | undefined;
  try {
    held = readCommitRecordsHead(path)?.tips;
  } catch {
    held = undefined;
  }
  if (held !== undefined && held.length === tips.length && held.every((t, i) => t === tips[i])) return;
  const unique = [...new Set(tips)];
  const max = o.maxCommits ?? DEFAULT_HISTORY_MAX_COMMITS;
  const total = Number((await runGit(o.gitDir, ['rev-list', '--count', ...unique, '--'], 1024)).toString('utf8').trim());
  const out = await runGit(o.gitDir, ['rev-list', '--topo-order', `--max-count=${max}`, ...unique, '--'], 64 * 1024 * 1024);
  const ids = out
    .toString('latin1')
    .split('\n')
    .filter((l) => l !== '');
  await updateCommitRecords(o.gitDir, path, { tips, ids, leftOut: total - ids.length });
}

/**
 * Brings a repository's history index in line with its tip index after a sync of it: built
 * when history is on and its refs reach a commit the history does not hold (or it has none),
 * retired when history is off. 'unchanged' when nothing was to do.
 */
export async function syncHistory(o: HistoryIndexOptions & { enabled: boolean }): Promise<HistorySummary | 'unchanged' | 'retired'> {
  const root = historyDataDir(o.dataDir);
  const present = existsSync(join(shardsDir(root, o.repoId), 'manifest.json'));
  if (!o.enabled) {
    if (!present) return 'unchanged';
    retireHistory(o.dataDir, o.repoId);
    return 'retired';
  }
  if (present) {
    const m = loadManifest(root, o.repoId);
    if (m !== undefined && !('unreadable' in m) && m.version === 2 && m.shards.length > 0 && m.sourceStamp === historyStamp(o)) {
      // The diff records too: a run that failed after the index was built left them behind.
      if (sameSet(recordedCommits(o.dataDir, o.repoId), new Set(m.refs.map((r) => r.commit)))) {
        await recordsUpToDate(o);
        // The word counts too (lost, damaged, or left behind by a run that failed after the index): made again from the shards.
        await updateWordCountsInThread({ historyRoot: root, repoId: o.repoId, path: wordCountsPath(o.dataDir, o.repoId) });
        return 'unchanged';
      }
    }
  }
  return indexHistory(o);
}

/**
 * What a history is built from, as its manifest records it (sourceStamp): the tips' commits
 * and the limit. The same stamp, the same history: nothing to walk.
 */
function historyStamp(o: Pick<HistoryIndexOptions, 'refs' | 'maxCommits'>): string {
  const tips = [...new Set(o.refs.map((r) => r.commit))].sort();
  const hash = createHash('sha256').update(tips.join('\n')).digest('hex').slice(0, 32);
  return `history:${o.refs[0]?.commit ?? ''}:${o.maxCommits ?? DEFAULT_HISTORY_MAX_COMMITS}:${hash}`;
}

/** Whether the diff records cover exactly the history's commits. */
function sameSet(a: ReadonlySet<string> | undefined, b: ReadonlySet<string>): boolean {
  return a !== undefined && a.size === b.size && [...b].every((c) => a.has(c));
}

/** Removes a repository's history index (its files go after the grace, like a retired repository's). */
export function retireHistory(dataDir: string, repoId: number): void {
  if (existsSync(shardsDir(historyDataDir(dataDir), repoId))) retireRepository(historyDataDir(dataDir), repoId);
  removeRecords(dataDir, repoId);
  removeCommitRecords(commitRecordsPath(dataDir, repoId));
  removeWordCounts(wordCountsPath(dataDir, repoId));
}
