// The scrub: verifies, in the background, the sections of the index files that a search
// does not check when it opens them (section-checks.ts says which and why), once per
// process per file. One thread (scrub-thread.ts), one file at a time, reading through its
// own descriptor in slices and pausing while searches run (SearchPool.activity), at the
// lowest scheduling priority: a search never waits for more than one slice of its reads.
// What it finds is recorded in the file's shared checks, which every thread reads, and
// handed to `onDamage` (the searcher reports the repository broken: index-health.ts).

import type { Worker } from 'node:worker_threads';
import { startTsWorker } from '../runtime/ts-worker.ts';

/** The counters of the activity buffer the scrub yields to (SearchPool.activity): two Int32. */
export const ACTIVE_SEARCHES = 0;
export const STARTED_SEARCHES = 1;

/** The thread's module (started by path: an entry point of the compiled build). */
const THREAD = 'daemon/index/scrub-thread.ts';

/** An index file to scrub, and whose it is. */
export interface ScrubFile {
  path: string;
  /** A shard, or a symbols file (shard-format.ts). */
  kind: 'shard' | 'symbols';
  /** Its shared checks (section-checks.ts). */
  checks: SharedArrayBuffer;
}

/** Main thread → scrub thread: scrub one file. */
export interface ScrubRequest {
  path: string;
  kind: ScrubFile['kind'];
  checks: SharedArrayBuffer;
}

/** Scrub thread → main thread: the file is done; `damage` is why it cannot be used. */
export interface ScrubReply {
  path: string;
  damage?: string;
}

export interface ScrubOptions {
  /** The searches' activity counters (ACTIVE_SEARCHES, STARTED_SEARCHES). */
  activity: SharedArrayBuffer;
  /** A file failed a check: `message` says which section (as a ShardError's). */
  onDamage(file: ScrubFile, message: string): void;
}

export class SectionScrub {
  private readonly options: ScrubOptions;
  /** Files to scrub, in order, by path. */
  private readonly pending = new Map<string, ScrubFile>();
  /** Files scrubbed, or being scrubbed (`running`), by path: not queued again while listed. */
  private readonly seen = new Set<string>();
  private running: ScrubFile | undefined;
  private thread: Worker | undefined;
  private closed = false;
  private waiters: Array<() => void> = [];

  constructor(options: ScrubOptions) {
    this.options = options;
  }

  /**
   * The files the index holds now: those never scrubbed are queued (in this order), and
   * those no longer listed are dropped from the queue and forgotten.
   */
  set(files: readonly ScrubFile[]): void {
    const listed = new Set(files.map((f) => f.path));
    for (const path of this.pending.keys()) if (!listed.has(path)) this.pending.delete(path);
    for (const path of this.seen) if (!listed.has(path) && path !== this.running?.path) this.seen.delete(path);
    for (const f of files) {
      if (this.seen.has(f.path) || this.pending.has(f.path)) continue;
      this.pending.set(f.path, f);
    }
    this.next();
  }

  /** Resolves once every file queued so far has been scrubbed. */
  idle(): Promise<void> {
    if (this.running === undefined && this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending.clear();
    const thread = this.thread;
    this.thread = undefined;
    this.running = undefined;
    this.wake();
    if (thread) await thread.terminate();
  }

  private next(): void {
    if (this.closed || this.running !== undefined) return;
    const first = this.pending.values().next();
    if (first.done) {
      this.wake();
      return;
    }
    const file = first.value;
    this.pending.delete(file.path);
    this.seen.add(file.path);
    this.running = file;
    this.start().postMessage({ path: file.path, kind: file.kind, checks: file.checks } satisfies ScrubRequest);
  }

  private start(): Worker {
    if (this.thread) return this.thread;
    // A small young generation: the thread checks mapped sections and keeps little of its own.
    const thread = startTsWorker(THREAD, { activity: this.options.activity }, { maxYoungGenerationSizeMb: 4 });
    thread.unref();
    thread.on('message', (reply: ScrubReply) => {
      const file = this.running;
      if (!file || file.path !== reply.path) return;
      this.running = undefined;
      if (reply.damage !== undefined) this.options.onDamage(file, reply.damage);
      this.next();
    });
    // A thread that dies (out of memory, a fault of its own) is not restarted for the file
    // it was on, which stays unverified; the next file gets a new thread.
    const lost = (): void => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      this.running = undefined;
      this.next();
    };
    thread.on('error', lost);
    thread.on('exit', lost);
    this.thread = thread;
    return thread;
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
