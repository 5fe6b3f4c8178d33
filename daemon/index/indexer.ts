// Indexes one local path (a git repository or a plain directory) into the data dir:
// lists its files, cuts them into shards of about SHARD_TARGET_BYTES, builds the shards on
// a pool of worker threads, and commits them with the repository's manifest.

import { accessSync, constants, mkdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../runtime/ts-worker.ts';
import { isGitRepository, openGitSource, type GitSource } from '../repos/git.ts';
import { walkDirectory } from '../repos/walk.ts';
import type { BuildReply, BuildRequest } from './build-worker.ts';
import { commitManifest, readManifest, repoIdFor, shardsDir, syncFiles, type Manifest } from './data-dir.ts';
import type { ShardFile, ShardJob, ShardResult } from './shard-builder.ts';
import { SHARD_EXT, type ShardRepoMeta, type SkippedFile } from './shard-format.ts';

/**
 * Content per shard. Zoekt's measured sweet spot is ~100 MB: large enough that per-shard
 * costs (trigram tables, task dispatch) stay small, small enough that shards of a large
 * repository spread across the search pool's threads and build in bounded memory.
 */
export const SHARD_TARGET_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024;
/** Files with more distinct trigrams are almost always data, not code (zoekt uses the same cut). */
export const DEFAULT_MAX_TRIGRAMS = 20_000;

export interface IndexOptions {
  dataDir: string;
  name?: string;
  maxFileSize?: number;
  maxTrigrams?: number;
  workers?: number;
  shardTargetBytes?: number;
  /** Extract symbol definitions with universal-ctags (default true; skipped when ctags is missing). */
  symbols?: boolean;
  onProgress?: (p: { files: number; totalFiles: number; bytes: number }) => void;
}

export interface IndexSummary {
  repoId: number;
  repoName: string;
  source: string;
  kind: 'git' | 'directory';
  files: number;
  skipped: number;
  skippedByReason: Record<string, number>;
  contentBytes: number;
  totalBytes: number;
  shards: number;
  seconds: number;
  /** Symbol definitions extracted by universal-ctags. */
  symbols: number;
  /** Files ctags failed or timed out on: indexed, without symbols. */
  symbolFailures: number;
}

const BUILD_WORKER = new URL('./build-worker.ts', import.meta.url);

/**
 * Repositories indexed from a local path: never archived or forks as far as trawl knows,
 * and public (readable by whoever may use the daemon). Connections to code hosts set
 * these from the host.
 */
const LOCAL_FLAGS = { archived: false, fork: false, visibility: 'public' as const };

export async function indexPath(pathArg: string, options: IndexOptions): Promise<IndexSummary> {
  const started = performance.now();
  const root = resolve(pathArg);
  checkDirectory(pathArg, root);
  const maxFileSize = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
  const maxTrigrams = options.maxTrigrams ?? DEFAULT_MAX_TRIGRAMS;

  const target = options.shardTargetBytes ?? SHARD_TARGET_BYTES;
  // Threads start now, so that loading their code overlaps with listing the files.
  const workers = Array.from({ length: Math.max(1, options.workers ?? availableParallelism()) }, () => startTsWorker(BUILD_WORKER));
  try {
    return await indexWith(workers, { pathArg, root, options, maxFileSize, maxTrigrams, target, started });
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

interface Run {
  pathArg: string;
  root: string;
  options: IndexOptions;
  maxFileSize: number;
  maxTrigrams: number;
  target: number;
  started: number;
}

async function indexWith(workers: Worker[], run: Run): Promise<IndexSummary> {
  const { pathArg, root, options, maxFileSize, maxTrigrams, target, started } = run;
  let repo: Omit<ShardRepoMeta, 'id'>;
  let totalFiles: number;
  let groups: AsyncIterable<ShardFile[]>;
  let closeSource = (): void => {};
  const listErrors: string[] = [];
  if (isGitRepository(root)) {
    let git;
    try {
      git = await openGitSource(root);
    } catch (err) {
      throw new Error(`cannot index ${pathArg}: ${(err as Error).message}`);
    }
    const source = git;
    closeSource = () => source.close();
    repo = { name: options.name ?? git.name, codeHostType: git.codeHostType, source: root, kind: 'git', branch: git.branch, commit: git.commit, remoteUrl: git.remoteUrl ?? '', ...LOCAL_FLAGS };
    totalFiles = git.files.length;
    groups = gitShards(git, target, maxFileSize);
  } else {
    const listed = await walkDirectory(root, (path, err) => listErrors.push(`${path}: ${err.message}`));
    repo = { name: options.name ?? basename(root), codeHostType: 'genericGitHost', source: root, kind: 'directory', branch: 'HEAD', commit: '', remoteUrl: '', ...LOCAL_FLAGS };
    totalFiles = listed.length;
    groups = fromArray(cutShards(listed.map((f) => ({ path: f.path, size: f.size, absPath: f.absPath })), target, maxFileSize));
  }

  try {
    const repoId = repoIdFor(options.dataDir, repo.name);
    const previous = readManifest(options.dataDir, repoId);
    const generation = (previous?.generation ?? 0) + 1;
    const dir = shardsDir(options.dataDir, repoId);
    mkdirSync(dir, { recursive: true });
    const indexedAt = new Date().toISOString();
    const shardNames: string[] = [];
    async function* jobs(): AsyncIterable<ShardJob> {
      for await (const group of groups) {
        const name = `g${generation}-${shardNames.length}${SHARD_EXT}`;
        shardNames.push(name);
        yield { finalPath: join(dir, name), repo: { ...repo, id: repoId }, shardIndex: shardNames.length - 1, files: group, maxFileSize, maxTrigrams, indexedAt, symbols: options.symbols };
      }
    }

    let results: BuildResult[];
    try {
      results = await runBuildPool(jobs(), workers, (files, bytes) =>
        options.onProgress?.({ files, totalFiles, bytes }),
      );
      // The manifest may name only shards that are on disk (shard-writer.ts says why
      // this is done here, once for the run).
      await syncFiles(dir, shardNames);
    } catch (err) {
      for (const name of shardNames) rmSync(join(dir, name), { force: true });
      throw err;
    }

    const skipped: SkippedFile[] = results.flatMap((r) => r.skipped);
    const skippedByReason: Record<string, number> = {};
    for (const s of skipped) skippedByReason[s.reason] = (skippedByReason[s.reason] ?? 0) + 1;
    if (listErrors.length > 0) skippedByReason.unreadable = (skippedByReason.unreadable ?? 0) + listErrors.length;
    const summary: IndexSummary = {
      repoId,
      repoName: repo.name,
      source: root,
      kind: repo.kind,
      files: results.reduce((n, r) => n + r.docCount, 0),
      skipped: skipped.length + listErrors.length,
      skippedByReason,
      contentBytes: results.reduce((n, r) => n + r.contentBytes, 0),
      totalBytes: results.reduce((n, r) => n + r.totalBytes, 0),
      shards: shardNames.length,
      seconds: 0,
      symbols: results.reduce((n, r) => n + r.symbolCount, 0),
      symbolFailures: results.reduce((n, r) => n + r.symbolFailures, 0),
    };
    const manifest: Manifest = {
      version: 1,
      repoId,
      repoName: repo.name,
      generation,
      shards: shardNames,
      indexedAt,
      files: summary.files,
      contentBytes: summary.contentBytes,
      skipped: summary.skipped,
    };
    commitManifest(options.dataDir, manifest);
    summary.seconds = (performance.now() - started) / 1000;
    return summary;
  } finally {
    closeSource();
  }
}

async function* fromArray<T>(xs: T[]): AsyncIterable<T> {
  yield* xs;
}

/**
 * The blobs of a git tree, read once each, in path order, cut into shards of about
 * `target` bytes as their sizes become known (nodegit can only learn a blob's size by
 * reading it). Blobs over `maxFileSize` travel without their bytes, to be recorded as
 * skipped. Reads run ahead of the build by at most one shard.
 */
async function* gitShards(git: GitSource, target: number, maxFileSize: number): AsyncIterable<ShardFile[]> {
  const READ_AHEAD = 64;
  const reads: Array<Promise<Buffer>> = [];
  let next = 0;
  const fill = () => {
    while (reads.length < READ_AHEAD && next < git.files.length) {
      const read = git.readBlob(git.files[next++]!.oid);
      read.catch(() => {}); // awaited below in order; this only keeps a later failure handled
      reads.push(read);
    }
  };
  let group: ShardFile[] = [];
  let bytes = 0;
  for (const f of git.files) {
    fill();
    const blob = await reads.shift()!;
    const counted = blob.length <= maxFileSize ? blob.length : 0;
    if (group.length > 0 && bytes + counted > target) {
      yield group;
      group = [];
      bytes = 0;
    }
    // A copy the pool can transfer to a worker (nodegit's buffers are not detachable).
    group.push({ path: f.path, size: blob.length, data: counted > 0 || blob.length === 0 ? new Uint8Array(blob) : undefined });
    bytes += counted;
  }
  yield group;
}

function checkDirectory(pathArg: string, root: string): void {
  let st;
  try {
    st = statSync(root);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot index ${pathArg}: ${code === 'ENOENT' ? 'no such file or directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message}`);
  }
  if (!st.isDirectory()) throw new Error(`cannot index ${pathArg}: not a directory`);
  try {
    accessSync(root, constants.R_OK | constants.X_OK);
  } catch {
    throw new Error(`cannot index ${pathArg}: permission denied`);
  }
}

/**
 * Consecutive runs of files (in path order, so results come back in path order) of about
 * `target` bytes of indexable content. An empty repository still gets one (empty) shard,
 * so that it is known to the searcher.
 */
export function cutShards(files: ShardFile[], target: number, maxFileSize: number): ShardFile[][] {
  const groups: ShardFile[][] = [];
  let current: ShardFile[] = [];
  let bytes = 0;
  for (const f of files) {
    const counted = f.size <= maxFileSize ? f.size : 0;
    if (current.length > 0 && bytes + counted > target) {
      groups.push(current);
      current = [];
      bytes = 0;
    }
    current.push(f);
    bytes += counted;
  }
  if (current.length > 0 || groups.length === 0) groups.push(current);
  return groups;
}

type BuildResult = Omit<ShardResult, 'path'>;

/**
 * Builds the jobs on `workerCount` threads, taking the next job when a thread is free,
 * so that producing a job (reading git blobs) overlaps building the previous ones.
 */
async function runBuildPool(jobs: AsyncIterable<ShardJob>, workers: Worker[], onProgress: (files: number, bytes: number) => void): Promise<BuildResult[]> {
  const results: BuildResult[] = [];
  const progress: Array<{ files: number; bytes: number }> = [];
  const report = () => onProgress(progress.reduce((n, p) => n + p.files, 0), progress.reduce((n, p) => n + p.bytes, 0));
  const iterator = jobs[Symbol.asyncIterator]();
  let nextId = 0;
  let producing: Promise<void> = Promise.resolve();
  try {
    await new Promise<void>((resolvePool, rejectPool) => {
      let active = 0;
      let exhausted = false;
      let failed = false;
      const fail = (err: Error) => {
        if (failed) return;
        failed = true;
        rejectPool(err);
      };
      // One producer at a time: an iterator must not be advanced concurrently.
      const dispatch = (worker: Worker): void => {
        producing = producing.then(async () => {
          if (failed) return;
          const next = exhausted ? { done: true as const, value: undefined } : await iterator.next();
          if (next.done) {
            exhausted = true;
            if (active === 0) resolvePool();
            return;
          }
          const id = nextId++;
          const job = next.value;
          progress[id] = { files: 0, bytes: 0 };
          active++;
          const transfer = job.files.flatMap((f) => (f.data ? [f.data.buffer as ArrayBuffer] : []));
          worker.postMessage({ id, job } satisfies BuildRequest, transfer);
        }).catch(fail);
      };
      for (const worker of workers) {
        worker.removeAllListeners('message').removeAllListeners('error');
        worker.on('error', (err) => fail(err));
        worker.on('message', (msg: BuildReply) => {
          if (msg.type === 'progress') {
            progress[msg.id] = { files: msg.files, bytes: msg.bytes };
            report();
            return;
          }
          active--;
          if (msg.type === 'error') {
            fail(new Error(msg.message));
            return;
          }
          const { id, type: _type, ...result } = msg;
          results[id] = result;
          if (exhausted && active === 0) resolvePool();
          else dispatch(worker);
        });
        dispatch(worker);
      }
    });
  } finally {
    await iterator.return?.();
  }
  return results;
}
