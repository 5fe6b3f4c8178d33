// Builds one generation of a repository's shards from its files, cut into groups (one
// group a shard, `g<generation>-<n>` in the repository's directory): on build threads, or
// on this thread when the build is small, each shard flushed to disk as soon as it is
// built. With the symbols after the content, each shard's symbols job is queued as the
// shard is written, and the threads are handed back for the symbols pass.

import { basename, dirname, join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { BuildPool, startBuildThreads, symbolsCost, type BuildResult } from './build-pool.ts';
import { syncFiles } from './data-dir.ts';
import { readJobBlobs } from './job-blobs.ts';
import { buildShard, type ShardFile, type ShardJob } from './shard-builder.ts';
import { SHARD_EXT, type ShardRepoMeta } from './shard-format.ts';
import type { SymbolsJob } from './symbols-pass.ts';

/** Builds at most this many files on the calling thread instead of the pool (see buildShards). */
export const INLINE_BUILD_FILES = 256;

/** One generation's build: its files, where its shards go, and how they are built. */
export interface ShardsBuild {
  /** The repository's directory, and the generation its shards' names carry. */
  dir: string;
  generation: number;
  /** The repository as each shard records it. */
  repo: ShardRepoMeta;
  /** Branch and tag names the files' `branches` refer to; [0] is the default branch. */
  branches: string[];
  /** The files, a group per shard. */
  groups: AsyncIterable<ShardFile[]>;
  /** The files listed so far. */
  totalFiles: () => number;
  /** Whether totalFiles() is all of them (a directory being walked is not, until its walk ends). */
  counted: boolean;
  /** A delta build: no shard when there is no file (a full build writes one empty shard). */
  delta?: boolean;
  maxFileSize: number;
  maxTrigrams: number;
  indexedAt: string;
  /** Extract symbols in the build (ShardJob.symbols). */
  symbols: boolean | undefined;
  /** Postings over groups of versions of one path (ShardJob.grouped). */
  grouped?: boolean;
  /** Store versions of a path as deltas (ShardJob.versionDeltas). */
  versionDeltas?: boolean;
  /** Store the compressible sections compressed (ShardJob.compressed). */
  compressed?: boolean;
  /** The git repository the files' blobs are read from. */
  gitDir?: string;
  /**
   * The symbols come after the content (ShardJob.later): the symbols pass's job of the
   * shard written at `path`, number `index`, queued on the pool as the shard is written.
   */
  symbolsJob?: (path: string, index: number) => SymbolsJob;
  /** Build threads to start, unless the build is small. */
  threads: number;
  onProgress: (files: number, bytes: number) => void;
}

/** The shards built: their file names (in the repository's directory) and results, in order. */
export interface BuiltShards {
  names: string[];
  results: BuildResult[];
  /** With symbolsJob: the build threads and their pool, holding the symbols jobs, for the symbols pass to end. */
  kept?: { threads: Worker[]; pool: BuildPool | undefined };
}

/**
 * Builds the groups into shards; every shard is on disk (flushed) when it returns. On
 * failure, what was written is left for the caller to remove (IndexRun.discard).
 */
export async function buildShards(b: ShardsBuild): Promise<BuiltShards> {
  const names: string[] = [];
  const { dir, generation, maxFileSize, maxTrigrams, indexedAt, symbols, branches, repo } = b;
  const later = b.symbolsJob !== undefined;
  async function* jobs(): AsyncIterable<ShardJob> {
    for await (const group of b.groups) {
      const name = `g${generation}-${names.length}${SHARD_EXT}`;
      names.push(name);
      yield {
        finalPath: join(dir, name),
        repo,
        shardIndex: names.length - 1,
        files: group,
        maxFileSize,
        maxTrigrams,
        indexedAt,
        symbols,
        later,
        branches,
        ...(b.grouped === true ? { grouped: true } : {}),
        ...(b.gitDir !== undefined ? { gitDir: b.gitDir } : {}),
        ...(b.versionDeltas ? { versionDeltas: true } : {}),
        ...(b.compressed ? { compressed: true } : {}),
      };
    }
    // An empty repository still gets one (empty) shard, so that it is known to the searcher.
    if (names.length === 0 && b.delta !== true) {
      names.push(`g${generation}-0${SHARD_EXT}`);
      yield { finalPath: join(dir, names[0]!), repo, shardIndex: 0, files: [], maxFileSize, maxTrigrams, indexedAt, symbols, later, branches };
    }
  }
  // Small builds (a delta of a few files) run on this thread: starting build threads
  // costs far more than building a few files.
  const inline = b.counted && b.totalFiles() <= INLINE_BUILD_FILES;
  // Threads start now, so that loading their code overlaps with reading the first files.
  const workers = inline ? [] : startBuildThreads(b.threads);
  // The manifest may name only shards that are on disk (shard-writer.ts says why not in
  // the build): each shard is flushed from this thread (libuv's pool) as soon as it is
  // built, so that its writing overlaps the others' building instead of all of it
  // following the last.
  const flushed = new Map<string, Promise<void>>();
  const flush = (job: ShardJob) => {
    const p = syncFiles(dirname(job.finalPath), [basename(job.finalPath)]);
    p.catch(() => {}); // awaited below; this only keeps a failure before then handled
    flushed.set(job.finalPath, p);
  };
  let keep = false;
  const pool = inline ? undefined : new BuildPool(workers);
  // A build whose symbols come after its content queues each shard's symbols job as the
  // shard is written: a thread with no shard left to build starts on them (BuildPool).
  const built = (job: ShardJob) => {
    flush(job);
    if (b.symbolsJob) pool!.addSymbols(b.symbolsJob(job.finalPath, job.shardIndex), symbolsCost(job.files, job.maxFileSize));
  };
  try {
    const results = inline ? await buildInline(jobs(), b.onProgress) : await pool!.content(readAhead(jobs()), b.onProgress, built);
    await Promise.all(flushed.values());
    await syncFiles(
      dir,
      names.filter((n) => !flushed.has(join(dir, n))),
    );
    // The symbols pass runs on the same threads: their code is loaded and compiled, their
    // memory mapped (new threads would start again, and zero their memory anew).
    keep = later && workers.length > 0;
    return keep ? { names, results, kept: { threads: workers, pool } } : { names, results };
  } finally {
    await pool?.close();
    if (!keep) await Promise.all(workers.map((w: Worker) => w.terminate()));
  }
}

async function buildInline(jobs: AsyncIterable<ShardJob>, onProgress: (files: number, bytes: number) => void): Promise<BuildResult[]> {
  const results: BuildResult[] = [];
  for await (const job of jobs) {
    await readJobBlobs(job);
    const { path: _path, ...result } = buildShard(job, onProgress);
    results.push(result);
  }
  return results;
}

/**
 * The items of `it`, the next one always being produced while the consumer holds the last:
 * the pool asks for a job only when a thread is free, and a directory's next shard is
 * listed meanwhile rather than then.
 */
async function* readAhead<T>(it: AsyncIterable<T>): AsyncIterable<T> {
  const source = it[Symbol.asyncIterator]();
  let next = source.next();
  try {
    for (;;) {
      next.catch(() => {}); // awaited below; this only keeps a failure before then handled
      const r = await next;
      if (r.done) return;
      next = source.next();
      yield r.value;
    }
  } finally {
    await source.return?.();
  }
}
