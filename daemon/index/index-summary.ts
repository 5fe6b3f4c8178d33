// What an index run tells its caller when it ends (IndexSummary): which way it built
// (full, delta, or nothing: unchanged), what it built, and what the index holds afterwards.
// The indexer makes one from each run's outcome (runSummary); a sync that finds a
// repository unchanged from its manifest alone, without a run, makes one from the manifest
// (unchangedSummary).

import type { GitRef } from '../repos/git.ts';
import type { BuildResult } from './build-pool.ts';
import type { Manifest, ManifestRepo } from './manifest.ts';
import type { SkippedFile } from './shard-format.ts';

export type IndexMode = 'full' | 'delta' | 'unchanged';

export interface IndexSummary {
  repoId: number;
  repoName: string;
  source: string;
  kind: 'git' | 'directory';
  mode: IndexMode;
  /** Why a full build ran although an incremental one was allowed. */
  fullReason?: string;
  refs: GitRef[];
  /** Live documents after the run. */
  files: number;
  /** File versions built by this run. */
  builtFiles: number;
  skipped: number;
  skippedByReason: Record<string, number>;
  contentBytes: number;
  /** Bytes of every file this run read. */
  totalBytes: number;
  /** Shards written by this run, and shards in the index afterwards. */
  shards: number;
  totalShards: number;
  seconds: number;
  /**
   * A full build whose symbols came after its content (indexer.ts symbolsLater): when the
   * content was committed, and searchable, in seconds from the run's start.
   */
  contentSeconds?: number;
  /** Symbol definitions extracted by universal-ctags in this run. */
  symbols: number;
  /** Files ctags failed or timed out on: indexed, without symbols. */
  symbolFailures: number;
  /** Files whose definitions the symbols pass took from the previous index (same path and blob) instead of from ctags. */
  symbolsReused?: number;
}

/** The run a summary is of: its repository, and when it started (performance.now()). */
export interface SummarizedRun {
  readonly repoId: number;
  readonly repo: ManifestRepo;
  readonly started: number;
}

/** What a run's summary tells (runSummary). */
export interface RunOutcome {
  mode: IndexMode;
  refs: GitRef[];
  /** The shards the run built; none when unchanged. */
  results?: BuildResult[];
  /** The manifest the run leaves. */
  manifest: Pick<Manifest, 'files' | 'contentBytes' | 'shards'>;
  fullReason?: string | undefined;
  /** File versions built (IndexSummary.builtFiles); 0 when unchanged. */
  builtFiles?: number;
}

/** The summary of `run`, ending now, from its outcome. */
export function runSummary(run: SummarizedRun, outcome: RunOutcome): IndexSummary {
  const { mode, refs, results = [], manifest, fullReason, builtFiles = 0 } = outcome;
  const skipped: SkippedFile[] = results.flatMap((r) => r.skipped);
  const skippedByReason: Record<string, number> = {};
  for (const s of skipped) skippedByReason[s.reason] = (skippedByReason[s.reason] ?? 0) + 1;
  const summary: IndexSummary = {
    repoId: run.repoId,
    repoName: run.repo.name,
    source: run.repo.source,
    kind: run.repo.kind,
    mode,
    refs,
    files: manifest.files,
    builtFiles,
    skipped: skipped.length,
    skippedByReason,
    contentBytes: manifest.contentBytes,
    totalBytes: results.reduce((n, r) => n + r.totalBytes, 0),
    shards: results.length,
    totalShards: manifest.shards.length,
    seconds: (performance.now() - run.started) / 1000,
    symbols: results.reduce((n, r) => n + r.symbolCount, 0),
    symbolFailures: results.reduce((n, r) => n + r.symbolFailures, 0),
  };
  if (fullReason !== undefined) summary.fullReason = fullReason;
  return summary;
}

/** The summary of a repository found unchanged from its manifest alone (a sync's ref stamp matched). */
export function unchangedSummary(m: Manifest, started: number): IndexSummary {
  return {
    repoId: m.repoId,
    repoName: m.repo.name,
    source: m.repo.source,
    kind: m.repo.kind,
    mode: 'unchanged',
    refs: m.refs,
    files: m.files,
    builtFiles: 0,
    skipped: m.skipped,
    skippedByReason: {},
    contentBytes: m.contentBytes,
    totalBytes: 0,
    shards: 0,
    totalShards: m.shards.length,
    seconds: (performance.now() - started) / 1000,
    symbols: 0,
    symbolFailures: 0,
  };
}
