// Cutting files into shards and building the shards on a pool of worker threads.

import type { Worker } from 'node:worker_threads';
import type { BuildReply, BuildRequest } from './build-worker.ts';
import type { ShardFile, ShardJob, ShardResult } from './shard-builder.ts';
import type { SymbolsJob, SymbolsResult } from './symbols-pass.ts';

export type BuildResult = Omit<ShardResult, 'path'>;

/**
 * Consecutive runs of files (in path order, so results come back in path order) of about
 * `target` bytes of indexable content, cut as the files arrive: add() gives a finished
 * group, end() the last one. An empty repository still gets one (empty) shard, so that it
 * is known to the searcher.
 */
export class ShardCutter {
  private current: ShardFile[] = [];
  private bytes = 0;
  private groups = 0;

  constructor(
    private readonly target: number,
    private readonly maxFileSize: number,
  ) {}

  add(f: ShardFile): ShardFile[] | undefined {
    const counted = f.size <= this.maxFileSize ? f.size : 0;
    let done: ShardFile[] | undefined;
    if (this.current.length > 0 && this.bytes + counted > this.target) {
      done = this.current;
      this.groups++;
      this.current = [];
      this.bytes = 0;
    }
    this.current.push(f);
    this.bytes += counted;
    return done;
  }

  end(): ShardFile[] | undefined {
    if (this.current.length === 0 && this.groups > 0) return undefined;
    this.groups++;
    return this.current;
  }
}

/** ShardCutter over a list. */
export function cutShards(files: ShardFile[], target: number, maxFileSize: number): ShardFile[][] {
  const cutter = new ShardCutter(target, maxFileSize);
  const groups: ShardFile[][] = [];
  for (const f of files) {
    const g = cutter.add(f);
    if (g) groups.push(g);
  }
  const last = cutter.end();
  if (last) groups.push(last);
  return groups;
}

/** ShardCutter over files as they come (a directory being walked). */
export async function* cutShardsAsync(files: AsyncIterable<ShardFile>, target: number, maxFileSize: number): AsyncIterable<ShardFile[]> {
  const cutter = new ShardCutter(target, maxFileSize);
  for await (const f of files) {
    const g = cutter.add(f);
    if (g) yield g;
  }
  const last = cutter.end();
  if (last) yield last;
}

/** A file version to read from git: its path, blob and the branch indexes holding it. */
export interface BlobFile {
  path: string;
  oid: string;
  branches: number[];
}

/**
 * Runs `jobs` on the worker threads, taking the next job when a thread is free, so that
 * producing a job overlaps running the previous ones; the results in job order. `request`
 * makes a job's message, `reply` takes a thread's answer to it (undefined: a progress
 * report, handled there), `onDone` hears of each job done. The first failure (a thread's
 * error, an error answer, an answer of the wrong kind) rejects.
 */
async function runPool<J, R>(
  jobs: AsyncIterable<J>,
  workers: Worker[],
  request: (id: number, job: J) => BuildRequest,
  reply: (msg: BuildReply) => R | undefined,
  onDone?: (job: J, done: number) => void,
): Promise<R[]> {
  const results: R[] = [];
  const iterator = jobs[Symbol.asyncIterator]();
  let nextId = 0;
  let done = 0;
  let producing: Promise<void> = Promise.resolve();
  const sent: J[] = [];
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
          sent[id] = next.value;
          active++;
          worker.postMessage(request(id, next.value));
        }).catch(fail);
      };
      for (const worker of workers) {
        worker.removeAllListeners('message').removeAllListeners('error');
        worker.on('error', (err) => fail(err));
        worker.on('message', (msg: BuildReply) => {
          if (failed) return;
          if (msg.type === 'error') {
            active--;
            fail(new Error(msg.message));
            return;
          }
          let result: R | undefined;
          try {
            result = reply(msg);
          } catch (err) {
            active--;
            fail(err as Error);
            return;
          }
          if (result === undefined) return;
          active--;
          results[msg.id] = result;
          onDone?.(sent[msg.id]!, ++done);
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

/** Builds the shard jobs on the worker threads (runPool); `onBuilt` hears of each shard written. */
export function runBuildPool(jobs: AsyncIterable<ShardJob>, workers: Worker[], onProgress: (files: number, bytes: number) => void, onBuilt?: (job: ShardJob) => void): Promise<BuildResult[]> {
  const progress: Array<{ files: number; bytes: number }> = [];
  const report = () => onProgress(progress.reduce((n, p) => n + p.files, 0), progress.reduce((n, p) => n + p.bytes, 0));
  return runPool<ShardJob, BuildResult>(
    jobs,
    workers,
    (id, job) => {
      progress[id] = { files: 0, bytes: 0 };
      return { id, job };
    },
    (msg) => {
      if (msg.type === 'progress') {
        progress[msg.id] = { files: msg.files, bytes: msg.bytes };
        report();
        return undefined;
      }
      if (msg.type !== 'done') throw new Error(`build worker answered a shard job with ${msg.type}`);
      const { id: _id, type: _type, ...result } = msg;
      return result;
    },
    onBuilt && ((job) => onBuilt(job)),
  );
}

/**
 * Adds the symbols to shards built without them (symbols-pass.ts) on the worker threads, a
 * shard at a time per thread (runPool); `onShard` hears how many are done, `onBuilt` of
 * each shard written.
 */
export function runSymbolsPool(jobs: SymbolsJob[], workers: Worker[], onShard?: (done: number) => void, onBuilt?: (job: SymbolsJob) => void): Promise<SymbolsResult[]> {
  return runPool<SymbolsJob, SymbolsResult>(
    listed(jobs),
    workers,
    (id, symbols) => ({ id, symbols }),
    (msg) => {
      if (msg.type !== 'symbols-done') throw new Error(`build worker answered a symbols job with ${msg.type}`);
      const { id: _id, type: _type, ...result } = msg;
      return result;
    },
    (job, done) => {
      onBuilt?.(job);
      onShard?.(done);
    },
  );
}

async function* listed<T>(items: readonly T[]): AsyncIterable<T> {
  yield* items;
}
