// Cutting files into shards and building the shards on a pool of worker threads.

import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../runtime/ts-worker.ts';
import type { BuildReply, BuildRequest } from './build-worker.ts';
import type { ShardFile, ShardJob, ShardResult } from './shard-builder.ts';
import type { SymbolsJob, SymbolsResult } from './symbols-pass.ts';
import { scannerReads } from '../symbols/extract.ts';

/** The module a build thread runs. */
const BUILD_WORKER = 'daemon/index/build-worker.ts';

/** Starts `count` build threads (at least one). */
export function startBuildThreads(count: number): Worker[] {
  return Array.from({ length: Math.max(1, count) }, () => startTsWorker(BUILD_WORKER));
}

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
    const counted = countedSize(f, this.maxFileSize);
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

/**
 * What a shard's symbols pass will cost, roughly, from its files: bytes, those of the
 * files that ctags reads counted 3 times (ctags takes about that much longer a byte than
 * the C scanners; JSON, mostly data that gets no symbols, once). BuildPool only compares
 * these.
 */
export function symbolsCost(files: readonly ShardFile[], maxFileSize: number): number {
  let cost = 0;
  for (const f of files) if (f.size <= maxFileSize) cost += scannerReads(f.path) || f.path.endsWith('.json') ? f.size : 3 * f.size;
  return cost;
}

/** ShardCutter over a list. */
export function cutShards(files: ShardFile[], target: number, maxFileSize: number, foldRunt = false): ShardFile[][] {
  const cutter = new ShardCutter(target, maxFileSize);
  const groups: ShardFile[][] = [];
  for (const f of files) {
    const g = cutter.add(f);
    if (g) groups.push(g);
  }
  const last = cutter.end();
  if (last) groups.push(last);
  // With `foldRunt`, a last group under RUNT_SHARE of the target joins the one before (a
  // shard at most that much over the target): every search pays for each shard it reads,
  // whatever it holds, and a history's searches read all of its shards.
  if (foldRunt && groups.length >= 2 && countedBytes(groups.at(-1)!, maxFileSize) < target * RUNT_SHARE)
    groups.splice(-2, 2, [...groups.at(-2)!, ...groups.at(-1)!]);
  return groups;
}

/** The share of the target under which cutShards may fold a last group into the one before. */
const RUNT_SHARE = 0.25;

/** What a file counts toward its shard's target: its size, nothing over the size limit (it is skipped). */
function countedSize(f: ShardFile, maxFileSize: number): number {
  return f.size <= maxFileSize ? f.size : 0;
}

function countedBytes(files: readonly ShardFile[], maxFileSize: number): number {
  let n = 0;
  for (const f of files) n += countedSize(f, maxFileSize);
  return n;
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
 * The build threads of one run, with two queues: shard jobs (content, in the order they
 * come) and, taken only by a thread that finds no shard job left, symbols jobs (the
 * symbols pass of shards already built: symbols-pass.ts). A full build thus starts its
 * symbols pass on a thread that would otherwise wait for the other threads' last shards,
 * and its content is committed no later for it. Results
 * come back in job order. A failing shard job fails `content`; a failing symbols job fails
 * `symbols` only (the content stays to be committed).
 */
export class BuildPool {
  private readonly idle: Worker[] = [];
  /** What each busy thread is doing: its job kind and number. */
  private readonly busy = new Map<Worker, { kind: 'content' | 'symbols'; id: number }>();
  private contentJobs: AsyncIterator<ShardJob> | undefined;
  private contentExhausted = false;
  /** A pull from the content jobs in progress: one at a time (an iterator is not advanced concurrently). */
  private pulling = false;
  private readonly contentResults: BuildResult[] = [];
  private contentSent = 0;
  private contentDone = 0;
  private readonly progress: Array<{ files: number; bytes: number }> = [];
  private contentFinished?: { resolve: (r: BuildResult[]) => void; reject: (e: Error) => void };
  private contentFailed: Error | undefined;
  /** Symbols jobs waiting, the costliest taken first: the last to end are then the cheapest, and the threads end close together. */
  private readonly symbolsQueue: Array<{ id: number; job: SymbolsJob; cost: number }> = [];
  private readonly symbolsJobs: SymbolsJob[] = [];
  private readonly symbolsResults: SymbolsResult[] = [];
  private symbolsCount = 0;
  private symbolsFailed: Error | undefined;
  private symbolsWaiter?: { resolve: (r: SymbolsResult[]) => void; reject: (e: Error) => void };
  private symbolsClosed = false;
  private onProgress: (files: number, bytes: number) => void = () => {};
  private onBuilt: ((job: ShardJob) => void) | undefined;
  private onSymbolsBuilt: ((job: SymbolsJob, done: number) => void) | undefined;
  private readonly sentContent: ShardJob[] = [];

  constructor(workers: Worker[]) {
    for (const worker of workers) {
      worker.removeAllListeners('message').removeAllListeners('error');
      worker.on('error', (err) => this.threadFailed(worker, err));
      worker.on('message', (msg: BuildReply) => this.answer(worker, msg));
      this.idle.push(worker);
    }
  }

  /** Builds the shard jobs; `onBuilt` hears of each shard written, in the order they are. */
  content(jobs: AsyncIterable<ShardJob>, onProgress: (files: number, bytes: number) => void, onBuilt?: (job: ShardJob) => void): Promise<BuildResult[]> {
    this.contentJobs = jobs[Symbol.asyncIterator]();
    this.onProgress = onProgress;
    this.onBuilt = onBuilt;
    const finished = new Promise<BuildResult[]>((resolve, reject) => (this.contentFinished = { resolve, reject }));
    this.schedule();
    return finished;
  }

  /** Queues a symbols job (taken once no shard job is left, the costliest of those waiting first: `cost`, symbolsCost). */
  addSymbols(job: SymbolsJob, cost = 0): void {
    if (this.symbolsClosed) throw new Error('build pool: symbols jobs added after the last was awaited');
    let at = this.symbolsQueue.length;
    while (at > 0 && this.symbolsQueue[at - 1]!.cost < cost) at--;
    this.symbolsQueue.splice(at, 0, { id: this.symbolsJobs.length, job, cost });
    this.symbolsJobs.push(job);
    this.schedule();
  }

  /** The queued symbols jobs' results, once all are done; `onShard` hears of each (also of those done already). */
  symbols(onShard?: (job: SymbolsJob, done: number) => void): Promise<SymbolsResult[]> {
    this.symbolsClosed = true;
    this.onSymbolsBuilt = onShard;
    let done = 0;
    for (let i = 0; i < this.symbolsJobs.length; i++) if (this.symbolsResults[i]) onShard?.(this.symbolsJobs[i]!, ++done);
    const finished = new Promise<SymbolsResult[]>((resolve, reject) => (this.symbolsWaiter = { resolve, reject }));
    this.settleSymbols();
    this.schedule();
    return finished;
  }

  /** Gives idle threads work: a shard job while there is one, else a symbols job. */
  private schedule(): void {
    while (this.idle.length > 0) {
      if (this.contentJobs && !this.contentExhausted && !this.contentFailed) {
        if (this.pulling) return; // the next shard job is being produced
        this.pull();
        return;
      }
      const next = this.symbolsQueue.shift();
      if (!next || this.symbolsFailed) return;
      const worker = this.idle.pop()!;
      this.busy.set(worker, { kind: 'symbols', id: next.id });
      worker.postMessage({ id: next.id, symbols: next.job } satisfies BuildRequest);
    }
  }

  /** Produces the next shard job for an idle thread. */
  private pull(): void {
    this.pulling = true;
    this.contentJobs!.next().then(
      (next) => {
        this.pulling = false;
        if (this.contentFailed) return;
        if (next.done) {
          this.contentExhausted = true;
          this.settleContent();
        } else {
          const worker = this.idle.pop();
          const id = this.contentSent++;
          this.sentContent[id] = next.value;
          this.progress[id] = { files: 0, bytes: 0 };
          if (!worker) throw new Error('build pool: a shard job without a free thread');
          this.busy.set(worker, { kind: 'content', id });
          worker.postMessage({ id, job: next.value } satisfies BuildRequest);
        }
        this.schedule();
      },
      (err: Error) => {
        this.pulling = false;
        this.failContent(err);
      },
    );
  }

  private answer(worker: Worker, msg: BuildReply): void {
    const doing = this.busy.get(worker);
    if (!doing) return;
    if (msg.type === 'progress') {
      this.progress[msg.id] = { files: msg.files, bytes: msg.bytes };
      this.reportProgress();
      return;
    }
    this.busy.delete(worker);
    this.idle.push(worker);
    if (doing.kind === 'content') {
      if (msg.type === 'error') this.failContent(new Error(msg.message));
      else if (msg.type !== 'done') this.failContent(new Error(`build worker answered a shard job with ${msg.type}`));
      else {
        const { id: _id, type: _type, ...result } = msg;
        this.contentResults[doing.id] = result;
        this.contentDone++;
        try {
          this.onBuilt?.(this.sentContent[doing.id]!);
        } catch (err) {
          this.failContent(err as Error);
        }
        this.settleContent();
      }
    } else {
      if (msg.type === 'error') this.failSymbols(new Error(msg.message));
      else if (msg.type !== 'symbols-done') this.failSymbols(new Error(`build worker answered a symbols job with ${msg.type}`));
      else {
        const { id: _id, type: _type, ...result } = msg;
        this.symbolsResults[doing.id] = result;
        this.symbolsCount++;
        this.onSymbolsBuilt?.(this.symbolsJobs[doing.id]!, this.symbolsCount);
        this.settleSymbols();
      }
    }
    this.schedule();
  }

  private reportProgress(): void {
    this.onProgress(
      this.progress.reduce((n, p) => n + p.files, 0),
      this.progress.reduce((n, p) => n + p.bytes, 0),
    );
  }

  private settleContent(): void {
    if (this.contentExhausted && this.contentDone === this.contentSent && !this.contentFailed) this.contentFinished?.resolve(this.contentResults);
  }

  private settleSymbols(): void {
    if (!this.symbolsWaiter) return;
    if (this.symbolsFailed) this.symbolsWaiter.reject(this.symbolsFailed);
    else if (this.symbolsClosed && this.symbolsCount === this.symbolsJobs.length) this.symbolsWaiter.resolve(this.symbolsResults);
  }

  private failContent(err: Error): void {
    if (this.contentFailed) return;
    this.contentFailed = err;
    this.contentFinished?.reject(err);
  }

  private failSymbols(err: Error): void {
    if (this.symbolsFailed) return;
    this.symbolsFailed = err;
    this.settleSymbols();
  }

  /** A thread's error (it ends): whatever it was doing fails. */
  private threadFailed(worker: Worker, err: Error): void {
    const doing = this.busy.get(worker);
    this.busy.delete(worker);
    if (doing?.kind === 'symbols') this.failSymbols(err);
    else this.failContent(err);
    if (!this.symbolsFailed) this.failSymbols(err);
  }

  /** Stops producing shard jobs (after a failure, or when the caller is done). */
  async close(): Promise<void> {
    await this.contentJobs?.return?.();
  }
}

/**
 * Adds the symbols to shards built without them (symbols-pass.ts) on the worker threads, a
 * shard at a time per thread (BuildPool); `onShard` hears how many are done, `onBuilt` of
 * each shard written.
 */
export function runSymbolsPool(
  jobs: SymbolsJob[],
  workers: Worker[],
  onShard?: (done: number) => void,
  onBuilt?: (job: SymbolsJob) => void,
): Promise<SymbolsResult[]> {
  const pool = new BuildPool(workers);
  for (const job of jobs) pool.addSymbols(job);
  return pool.symbols((job, done) => {
    onBuilt?.(job);
    onShard?.(done);
  });
}
