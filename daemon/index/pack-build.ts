// Compound shards ("packs"): many small repositories built together into shards of
// about SHARD_TARGET_BYTES each, in the data dir's packs directory, so that a search
// costs per shard rather than per repository.
//
//   <dataDir>/packs/p<gen>-<n>.trawl     compound shards built by pack generation <gen>
//   <dataDir>/packs/generation           the last pack generation used (never used again)
//   <dataDir>/packs/lock                 held while packs are built or collected
//   <dataDir>/packs/<file>.unreferenced  when a pack was first found named by no manifest
//
// A compound shard holds each repository's documents as a contiguous range (shard format
// 7: shard-reader.ts members). Each repository's manifest is its commit point, as for any
// repository: it names the pack and its member number there (ManifestShard.member). When a
// repository changes it is built anew (into the next pack, with the others that changed),
// and its commit moves it there: its range in the old pack is then named by no manifest,
// which is what a tombstone is here. There is no second record of which ranges are live
// that could disagree with the manifests: the searcher's snapshot of the manifests is the
// tombstone list (searcher.ts), and a repository is served from exactly one pack at every
// moment, whatever was killed when. The commits of a build are one batch: index-version is
// bumped once, after the last (manifest.ts startBatch).
//
// A pack file is deleted once no manifest has named it for RETIRE_GRACE_MS (collectPacks):
// searches that began before the last repository left it may still open it.

import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { readBoundedText } from '../bounded-read.ts';
import { acquireLock, tryLock } from '../runtime/lock-file.ts';
import { removeLeftoverTemps } from '../runtime/left-behind.ts';
import { BuildPool, startBuildThreads, type BuildResult } from './build-pool.ts';
import { packsDir, syncFiles, writeFileAtomic } from './data-dir.ts';
import {
  endBatch,
  namedPacks,
  PACK_NAME,
  PACK_SYMBOLS_NAME,
  readAllManifests,
  RETIRE_GRACE_MS,
  startBatch,
  type CommitBatch,
  type ManifestRepo,
} from './manifest.ts';
import { shardRepoMeta, type PackCandidate } from './indexer.ts';
import type { IndexSummary } from './index-summary.ts';
import { readJobBlobs } from './job-blobs.ts';
import { buildShard, type JobMember, type MemberResult, type ShardFile, type ShardJob } from './shard-builder.ts';
import { SHARD_EXT, type SkippedFile } from './shard-format.ts';
import type { GitRef } from '../repos/git.ts';

/** The build worker's module (indexer.ts starts the same). */

/** The largest generation file read: one number. */
const GENERATION_MAX_BYTES = 64;

/** Builds of at most this many files run on the calling thread (threads cost more to start). */
const INLINE_FILES = 256;

export interface PackOptions {
  dataDir: string;
  /** Content per compound shard. */
  target: number;
  maxFileSize: number;
  maxTrigrams: number;
  symbols?: boolean;
  workers?: number;
  /**
   * The caller's build threads, kept from one build to the next (a sync builds a few packs
   * at a time while it reads repositories): used instead of threads of the build's own,
   * and left running.
   */
  threads?: () => Worker[];
  /**
   * The generation of the packs to build, at least `least` (the one after the last used
   * here): a cluster's, from a counter all its nodes share, so that a pack's name stands for
   * one content on every node. Default: `least`.
   */
  generation?: (least: number) => Promise<number>;
  onProgress?: (files: number, totalFiles: number, bytes: number) => void;
}

/**
 * A repository to build into a compound shard: one whose sync handed it back
 * (PackCandidate, indexer.ts), or one a merge moves (pack-merge.ts).
 */
export interface PackItem {
  readonly repoId: number;
  readonly repo: ManifestRepo;
  readonly refs: GitRef[];
  /** The git repository its files' blobs are read from; absent when every file brings its bytes (ShardFile.data or .from). */
  readonly gitDir?: string;
  readonly files: ShardFile[];
  /** Bytes of its files that are indexed (what fills a pack). */
  readonly bytes: number;
  /** Files its earlier build skipped, kept on its record (a merge). */
  readonly skipped?: SkippedFile[];
  /** Commits it as member `member` of pack `file`, as `built` holds it; throws when it cannot (its previous index serves). */
  commit(file: string, member: number, built: MemberResult, batch: CommitBatch): IndexSummary | undefined;
}

/** What became of an item: its summary once committed, or the error that kept it out (its previous index serves). */
export type PackOutcome<T extends PackItem = PackCandidate> = { candidate: T; summary: ReturnType<T['commit']> } | { candidate: T; error: string };

/**
 * Builds the items into compound shards and commits each repository as a member of one.
 * A sync's candidates hold their locks, theirs to release. A pack that fails to build (a
 * blob that cannot be read, a full disk) fails its members only; what it wrote is removed.
 */
export async function buildPacks<T extends PackItem>(candidates: readonly T[], options: PackOptions): Promise<Array<PackOutcome<T>>> {
  if (candidates.length === 0) return [];
  const dir = packsDir(options.dataDir);
  mkdirSync(dir, { recursive: true });
  const release = await acquireLock(join(dir, 'lock'), 'the packs directory');
  try {
    removeLeftoverTemps(dir);
    const least = readGeneration(dir) + 1;
    const generation = options.generation ? await options.generation(least) : least;
    // Recorded before any file of it exists: a name is never used twice, whatever is killed when.
    writeFileAtomic(join(dir, 'generation'), `${generation}\n`);
    const groups = groupsOf(candidates, options.target);
    const indexedAt = new Date().toISOString();
    const jobs: ShardJob[] = groups.map((group, n) => {
      const members: JobMember[] = group.map((c) => ({
        repo: shardRepoMeta(c.repoId, c.repo, c.refs),
        branches: c.refs.map((r) => r.name),
        ...(c.gitDir !== undefined ? { gitDir: c.gitDir } : {}),
        ...(c.skipped ? { skipped: c.skipped } : {}),
      }));
      const files: ShardFile[] = group.flatMap((c, member) => c.files.map((f) => ({ ...f, member })));
      return {
        finalPath: join(dir, `p${generation}-${n}${SHARD_EXT}`),
        repo: members[0]!.repo,
        branches: members[0]!.branches,
        shardIndex: n,
        files,
        maxFileSize: options.maxFileSize,
        maxTrigrams: options.maxTrigrams,
        indexedAt,
        members,
        ...(options.symbols !== undefined ? { symbols: options.symbols } : {}),
      };
    });
    const totalFiles = jobs.reduce((n, j) => n + j.files.length, 0);
    const onProgress = (files: number, bytes: number) => options.onProgress?.(files, totalFiles, bytes);
    let results: BuildResult[];
    try {
      results =
        totalFiles <= INLINE_FILES
          ? await buildInline(jobs, onProgress)
          : await buildOnThreads(jobs, options.workers ?? availableParallelism(), onProgress, options.threads?.());
      await syncFiles(
        dir,
        jobs.map((j) => j.finalPath.slice(dir.length + 1)),
      );
    } catch (err) {
      removeGeneration(dir, generation);
      const error = (err as Error).message;
      return candidates.map((candidate) => ({ candidate, error }));
    }
    const outcomes: Array<PackOutcome<T>> = [];
    const batch = startBatch();
    try {
      groups.forEach((group, n) => {
        const built = results[n]!;
        const file = jobs[n]!.finalPath.slice(dir.length + 1);
        group.forEach((candidate, member) => {
          try {
            outcomes.push({ candidate, summary: candidate.commit(file, member, built.members[member]!, batch) as ReturnType<T['commit']> });
          } catch (err) {
            outcomes.push({ candidate, error: (err as Error).message });
          }
        });
        // A pack none of whose members committed is named by nobody: it goes now.
        if (group.every((c) => outcomes.some((o) => o.candidate === c && 'error' in o))) rmSync(jobs[n]!.finalPath, { force: true });
      });
    } finally {
      endBatch(options.dataDir, batch);
    }
    return outcomes;
  } finally {
    release();
  }
}

/**
 * The candidates in groups of about `target` bytes each, by repository name (so that a
 * pack's members are neighbours in the searcher's order too).
 */
export function groupsOf<T extends PackItem>(candidates: readonly T[], target: number): T[][] {
  const sorted = [...candidates].sort((a, b) => (a.repo.name < b.repo.name ? -1 : a.repo.name > b.repo.name ? 1 : a.repoId - b.repoId));
  const groups: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const c of sorted) {
    if (current.length > 0 && bytes + c.bytes > target) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(c);
    bytes += c.bytes;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

async function buildInline(jobs: ShardJob[], onProgress: (files: number, bytes: number) => void): Promise<BuildResult[]> {
  const results: BuildResult[] = [];
  let done = 0;
  let doneBytes = 0;
  for (const job of jobs) {
    await readJobBlobs(job);
    const { path: _path, ...result } = buildShard(job, (files, bytes) => onProgress(done + files, doneBytes + bytes));
    done += job.files.length;
    doneBytes += result.totalBytes;
    results.push(result);
  }
  return results;
}

async function buildOnThreads(jobs: ShardJob[], threads: number, onProgress: (files: number, bytes: number) => void, given?: Worker[]): Promise<BuildResult[]> {
  const workers: Worker[] = given ?? startBuildThreads(Math.min(threads, jobs.length));
  const pool = new BuildPool(workers);
  try {
    return await pool.content(
      (async function* () {
        yield* jobs;
      })(),
      onProgress,
    );
  } finally {
    await pool.close();
    if (!given) await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** The last pack generation used (0: none). */
function readGeneration(dir: string): number {
  let recorded = 0;
  try {
    const n = Number(readBoundedText(join(dir, 'generation'), GENERATION_MAX_BYTES).trim());
    if (Number.isSafeInteger(n) && n > 0) recorded = n;
  } catch {
    // No record (a new data dir) or a damaged one: the files say how far it went.
  }
  for (const name of readdirSync(dir)) {
    const m = /^p(\d+)-/.exec(name);
    if (m) recorded = Math.max(recorded, Number(m[1]));
  }
  return recorded;
}

/** Removes the files of a pack generation that failed (named by no manifest). */
function removeGeneration(dir: string, generation: number): void {
  const mine = `p${generation}-`;
  for (const name of readdirSync(dir)) if (name.startsWith(mine)) rmSync(join(dir, name), { force: true });
}

const UNREFERENCED = '.unreferenced';

/**
 * Deletes the packs no manifest has named for RETIRE_GRACE_MS (`inUse`, absolute paths a
 * search of this process still reads, are kept regardless). A pack first found unnamed
 * gets a marker with the time; one named again (never, by design: names are not reused)
 * loses it. Skipped while another process builds packs: its new files are not named yet.
 */
export function collectPacks(dataDir: string, inUse: ReadonlySet<string> = new Set(), now = Date.now()): void {
  const dir = packsDir(dataDir);
  if (!existsSync(dir)) return;
  const lock = join(dir, 'lock');
  if (!tryLock(lock)) return;
  try {
    removeLeftoverTemps(dir);
    const named = new Set<string>();
    for (const m of readAllManifests(dataDir)) for (const f of namedPacks(m)) named.add(f);
    const names = readdirSync(dir);
    for (const name of names) {
      if (!PACK_NAME.test(name) && !PACK_SYMBOLS_NAME.test(name)) continue;
      const path = join(dir, name);
      const marker = `${path}${UNREFERENCED}`;
      if (named.has(name)) {
        rmSync(marker, { force: true });
        continue;
      }
      const since = markedAt(marker);
      if (since === undefined) writeFileAtomic(marker, `${now}\n`);
      else if (now - since >= RETIRE_GRACE_MS && !inUse.has(path)) {
        rmSync(path, { force: true });
        rmSync(marker, { force: true });
      }
    }
    // Markers whose pack is gone.
    for (const name of names)
      if (name.endsWith(UNREFERENCED) && !existsSync(join(dir, name.slice(0, -UNREFERENCED.length)))) rmSync(join(dir, name), { force: true });
  } finally {
    rmSync(lock, { force: true });
  }
}

/** The time in a marker (ms), or undefined when there is none (or it cannot be read: then it is written again). */
function markedAt(marker: string): number | undefined {
  try {
    if (!statSync(marker).isFile()) return undefined;
    const at = Number(readBoundedText(marker, GENERATION_MAX_BYTES).trim());
    return Number.isFinite(at) ? at : undefined;
  } catch {
    return undefined;
  }
}
