// A fixed pool of search worker threads. A search is started once on every worker
// (protocol.ts): the workers claim its shards one at a time from a shared control block,
// each shard's reply coming back as soon as it is done. A worker works on one caller's
// searches in the order they were started, and shares its time between callers
// (search-worker.ts): posting a search to a worker that holds another caller's also tells
// it, through its attention counter, that somebody may be waiting. `wait` in the stats is
// the time from a search's start to a shard's.
//
// Stopping a search (it had enough, its time was up, its client left) claims every shard
// not yet claimed at once: they resolve as skipped and never run, and a running shard sees
// the cancel flag at its next check. A worker that dies fails the shards it had claimed
// and not answered; a replacement joins the searches still running.

import { availableParallelism } from 'node:os';
import { InThreadWorker, type WorkerLike } from '../runtime/in-thread-worker.ts';
import { startTsWorker } from '../runtime/ts-worker.ts';
import { ACTIVE_SEARCHES, STARTED_SEARCHES } from '../index/section-scrub.ts';
import { SEARCH_WORKER_LIMITS } from './worker-limits.ts';
import { unpackMessage, unpackValue } from './file-codec.ts';
import {
  CONTROL_CLAIMS,
  CONTROL_DEFS_ONLY,
  CONTROL_GRANTED,
  CONTROL_NEXT,
  pack,
  type CatalogItem,
  type FromWorker,
  type PartialReply,
  type SearchTask,
  type ShardRef,
  type ShardReply,
  type ToWorker,
} from './protocol.ts';

/** The worker thread's module (started by path: an entry point of the compiled build). */
const WORKER = 'daemon/search/search-thread.ts';

/** The smallest message buffer given back to its worker (below it, a new one costs less than the message). */
const RECYCLE_MIN_BYTES = 64 << 10;

interface Slot {
  worker: WorkerLike;
  /** This worker's id in the control blocks' claims (never reused, so a replacement's claims are its own). */
  id: number;
  /** Searches posted to it that have not ended: 0, it has nothing to do. */
  runs: number;
  /** Its attention counter (protocol.ts): one more when a search or resume reaches it while it holds another caller's. */
  attention: Int32Array;
  /** The catalog it was sent last (a new one is sent to it as changes to that one). */
  lastCatalog?: number;
}

/** A search started on the pool: one reply per shard, in the order of its task's shards. */
export interface PoolRun {
  readonly replies: Array<Promise<ShardReply>>;
  /** Lets the workers claim shards [0, upTo) (a stream's backpressure; start() grants `grant`). */
  grant(upTo: number): void;
  /** Stops the search: the shards not yet claimed resolve as skipped now. Idempotent. */
  stop(): void;
  /** From now on the workers search each shard for its definitions only (protocol.ts, DEFS_ONLY). */
  definitionsOnly(): void;
  /** Gets a stream's files of a shard sent before its reply (protocol.ts, PartialReply). */
  onPartial?: (shard: number, reply: PartialReply) => void;
  /**
   * Gets each worker message of replies as the worker packed it (file-codec.ts), before
   * its shards resolve: those replies then resolve without their files (`files` empty),
   * which are in `message` only, to be copied before this returns (its buffer goes back to
   * the worker). A cluster node forwards them so to the coordinator (cluster/link-server.ts).
   */
  onMessage?: (shards: readonly number[], message: Uint8Array) => void;
  /**
   * The merge is at shard `shard`, before its cut, having taken `ranges` match ranges and
   * read `readKiB` of content from the shards before it: it needs this shard's whole
   * answer, and those of as many after it as the cut needs at that rate (a cluster's
   * coordinator asks again, whole, those it had searched speculatively: cluster/fan-out.ts).
   * A run of this pool searches no shard speculatively.
   */
  need?(shard: number, ranges: number, readKiB: number): void;
}

/** What a search started on the pool is made of (SearchPool.start). */
interface StartedSearchParts {
  id: number;
  /** Its shards. */
  size: number;
  controlBuffer: SharedArrayBuffer;
  cancel: SharedArrayBuffer;
  /** The packed SearchTask, kept for a worker that replaces one that died. */
  body: Uint8Array;
  /**
   * A stream's (task.batch false): posted to all workers, not only to those with the
   * least to do (SearchPool.start).
   */
  stream: boolean;
  /**
   * Its messages' buffers go back to the workers once every file of them is released
   * (file-codec.ts): a stream's, whose sink releases each file it has written, and a
   * cluster node's part, which releases them once copied into its link's frames. A
   * blocking search here keeps its files to the end: their buffers are left to the collector.
   */
  recycles: boolean;
  /** Who asked (SearchTask.caller). */
  caller: string;
}

/**
 * A search started on the pool, as the pool keeps it: its shards' replies to resolve, its
 * control block and cancel flag, and the workers it was posted to.
 */
class StartedSearch implements PoolRun {
  readonly replies: Array<Promise<ShardReply>>;
  onPartial?: (shard: number, reply: PartialReply) => void;
  onMessage?: (shards: readonly number[], message: Uint8Array) => void;
  readonly id: number;
  readonly size: number;
  readonly controlBuffer: SharedArrayBuffer;
  readonly cancel: SharedArrayBuffer;
  readonly body: Uint8Array;
  readonly stream: boolean;
  readonly recycles: boolean;
  readonly caller: string;
  private readonly resolvers: Array<((r: ShardReply) => void) | undefined>;
  private readonly control: Int32Array;
  private readonly flag: Int32Array;
  private open: number;
  /** The workers it was posted to. */
  readonly posted = new Set<Slot>();

  constructor(
    parts: StartedSearchParts,
    private readonly pool: SearchPool,
  ) {
    this.id = parts.id;
    this.size = parts.size;
    this.controlBuffer = parts.controlBuffer;
    this.cancel = parts.cancel;
    this.body = parts.body;
    this.stream = parts.stream;
    this.recycles = parts.recycles;
    this.caller = parts.caller;
    this.control = new Int32Array(this.controlBuffer);
    this.flag = new Int32Array(this.cancel);
    this.resolvers = new Array(this.size);
    this.replies = Array.from({ length: this.size }, (_, i) => new Promise<ShardReply>((resolve) => (this.resolvers[i] = resolve)));
    this.open = this.size;
  }

  get done(): boolean {
    return this.open === 0;
  }

  get stopped(): boolean {
    return Atomics.load(this.flag, 0) !== 0;
  }

  /** Shards granted and not yet claimed. */
  get queued(): number {
    if (this.stopped) return 0;
    const granted = Math.min(this.size, Atomics.load(this.control, CONTROL_GRANTED));
    return Math.max(0, granted - Atomics.load(this.control, CONTROL_NEXT));
  }

  claimant(shard: number): number {
    return Atomics.load(this.control, CONTROL_CLAIMS + shard);
  }

  resolve(shard: number, reply: ShardReply): void {
    const r = this.resolvers[shard];
    if (!r) return;
    this.resolvers[shard] = undefined;
    this.open--;
    r(reply);
    if (this.open === 0) this.pool.finished(this);
  }

  /** Whether shard `i` has been answered (or given up). */
  settled(shard: number): boolean {
    return this.resolvers[shard] === undefined;
  }

  grant(upTo: number): void {
    const to = Math.min(this.size, upTo);
    if (this.stopped || to <= Atomics.load(this.control, CONTROL_GRANTED)) return;
    Atomics.store(this.control, CONTROL_GRANTED, to);
    this.pool.resume(this);
  }

  definitionsOnly(): void {
    Atomics.store(this.control, CONTROL_DEFS_ONLY, 1);
  }

  stop(): void {
    Atomics.store(this.flag, 0, 1);
    this.skipUnclaimed();
    // Workers that left this search for lack of a grant hear of the stop and forget it.
    if (!this.done) this.pool.resume(this);
  }

  /** Claims every shard no worker has claimed (moving NEXT to the end) and resolves them as skipped. */
  skipUnclaimed(): void {
    let next = Atomics.load(this.control, CONTROL_NEXT);
    for (;;) {
      if (next >= this.size) return;
      const seen = Atomics.compareExchange(this.control, CONTROL_NEXT, next, this.size);
      if (seen === next) break;
      next = seen;
    }
    for (let i = next; i < this.size; i++) this.resolve(i, { status: 'skipped' });
  }
}

export class SearchPool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly runs = new Map<number, StartedSearch>();
  /** The bitmaps shared so far (shareVerified), for workers started later. */
  private readonly verified = new Map<string, SharedArrayBuffer>();
  /** The catalogs the workers hold (catalog()), for workers started later. */
  private readonly catalogs = new Map<number, ShardRef[]>();
  private nextCatalog = 1;
  /** The catalog made last, and where each of its shards is in it (kept after it is dropped: the next is sent as changes to it). */
  private lastCatalog: { id: number; places: Map<ShardRef, number> } | undefined;
  /**
   * Two Int32 counters another thread may read to leave the disk and the cores to searches
   * (the scrub, index/section-scrub.ts): [ACTIVE_SEARCHES] searches running, and
   * [STARTED_SEARCHES] searches started so far (it wraps).
   */
  readonly activity = new SharedArrayBuffer(8);
  private readonly active = new Int32Array(this.activity);
  private closed = false;
  private nextRun = 1;
  private nextWorker = 1;

  /** True when the one worker is this thread (size 0: InThreadWorker). */
  readonly inThread: boolean;

  /**
   * `size` worker threads; 0: one worker in this thread, for a command on a small index,
   * where starting a thread costs more than the search (its searches block this thread).
   */
  constructor(size = availableParallelism()) {
    this.inThread = size === 0;
    this.size = Math.max(1, size);
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /**
   * Starts a search over `task.shards`; `cancel` is an Int32Array's buffer, non-zero meaning
   * "stop" (the searcher's flag: setting it stops the workers between two documents; call
   * the run's stop() to also skip the shards not started). `grant`: shards the workers may
   * claim before grant() is called again (default: all of them). `releasesFiles`: the
   * caller releases every file of the replies once it has copied it (file-codec.ts
   * releaseFile), so their messages' buffers go back to the workers (StartedSearch.recycles).
   */
  start(task: SearchTask, cancel: SharedArrayBuffer, grant = task.shards.length, releasesFiles = false): PoolRun {
    const n = task.shards.length;
    const control = new SharedArrayBuffer(4 * (CONTROL_CLAIMS + n));
    const body = n > 0 && !this.closed ? pack(task) : new Uint8Array(0);
    const run = new StartedSearch(
      { id: this.nextRun++, size: n, controlBuffer: control, cancel, body, stream: !task.batch, recycles: !task.batch || releasesFiles, caller: task.caller },
      this,
    );
    if (this.closed) {
      for (let i = 0; i < n; i++) run.resolve(i, { status: 'failed', error: 'search pool is closed', queuedNs: 0 });
      return run;
    }
    if (n === 0) return run;
    Atomics.store(new Int32Array(control), CONTROL_GRANTED, Math.min(n, grant));
    if (run.stopped) {
      run.skipUnclaimed();
      return run;
    }
    this.runs.set(run.id, run);
    Atomics.add(this.active, ACTIVE_SEARCHES, 1);
    Atomics.add(this.active, STARTED_SEARCHES, 1);
    for (const s of this.targets(run)) this.join(s, run);
    return run;
  }

  /**
   * The workers a search is posted to. A blocking search goes to the idle workers, all of
   * them when every one is idle (one client: its shards are searched in parallel); when
   * none is idle, to those that hold no search of its caller (each shares its time between
   * callers, search-worker.ts, so the search gets a share of every such worker rather than
   * waiting for one), else to the one with the fewest searches. Under load each search costs
   * one message each way and one worker's start-up, not one per worker: the searches in
   * flight keep every worker busy anyway (as many clients of a rare literal at once
   * showed). A worker that runs out of searches joins those with shards left (finished()).
   * A stream goes to every worker: its throughput is the point, and it paces itself.
   */
  private targets(run: StartedSearch): Slot[] {
    if (run.stream) return this.slots;
    const idle = this.slots.filter((s) => s.runs === 0);
    if (idle.length > 0) return idle;
    const mine = new Set<Slot>();
    for (const other of this.runs.values()) if (other !== run && other.caller === run.caller) for (const s of other.posted) mine.add(s);
    const others = this.slots.filter((s) => !mine.has(s));
    if (others.length > 0) return others;
    return [this.slots.reduce((a, b) => (b.runs < a.runs ? b : a))];
  }

  /** Posts a search to a worker (it claims shards from it until none is left to claim). */
  private join(slot: Slot, run: StartedSearch): void {
    this.alert(slot, run);
    run.posted.add(slot);
    slot.runs++;
    this.post(slot, {
      kind: 'search',
      run: run.id,
      body: run.body,
      control: run.controlBuffer,
      cancel: run.cancel,
      sentAt: performance.timeOrigin + performance.now(),
    });
  }

  /** Work in hand now: workers running a shard, and shards granted that none has claimed yet (the metrics). */
  load(): { busy: number; queued: number } {
    const busy = new Set<number>();
    let queued = 0;
    for (const run of this.runs.values()) {
      queued += run.queued;
      for (let i = 0; i < run.size; i++) {
        const w = run.claimant(i);
        if (w !== 0 && !run.settled(i)) busy.add(w);
      }
    }
    return { busy: busy.size, queued };
  }

  /**
   * Gives every worker (and any started later) the shards of an index version: searches
   * name them by their place in it (SearchTask.catalog, shards), so a search's message does
   * not carry thousands of them. Its id; dropCatalog() once no search will name it.
   */
  catalog(refs: ShardRef[]): number {
    const id = this.nextCatalog++;
    this.catalogs.set(id, refs);
    // Sent as changes to the last one (the same ShardRef objects are unchanged shards, as
    // the searcher keeps them): the workers keep what they worked out for the others, and
    // the message carries only the new shards.
    const base = this.lastCatalog;
    let whole: Uint8Array | undefined;
    let changes: Uint8Array | undefined;
    for (const s of this.slots) {
      if (base !== undefined && s.lastCatalog === base.id) {
        changes ??= pack(refs.map((r): CatalogItem => base.places.get(r) ?? r));
        this.post(s, { kind: 'catalog', id, body: changes, base: base.id });
      } else this.post(s, { kind: 'catalog', id, body: (whole ??= pack(refs)) });
      s.lastCatalog = id;
    }
    this.lastCatalog = { id, places: new Map(refs.map((r, i) => [r, i])) };
    return id;
  }

  /** No search will name the catalog again: the workers forget it. */
  dropCatalog(id: number): void {
    if (!this.catalogs.delete(id)) return;
    for (const s of this.slots) this.post(s, { kind: 'drop-catalog', id });
  }

  /**
   * Shares documents-checked bitmaps of shard files with every worker, now and with any
   * worker started later (protocol.ts, 'verified'); `gone` are dropped.
   */
  shareVerified(add: Array<[string, SharedArrayBuffer]>, gone: string[]): void {
    for (const [path, bitmap] of add) this.verified.set(path, bitmap);
    for (const path of gone) this.verified.delete(path);
    for (const s of this.slots) this.post(s, { kind: 'verified', add, gone });
  }

  /** Asks every worker thread to collect its heap (searches have gone quiet); an in-thread worker's heap is its starter's. */
  collectHeaps(): void {
    if (this.inThread) return;
    for (const s of this.slots) this.post(s, { kind: 'collect' });
  }

  /** Tells every worker to drop its mapping of these shard files (after a re-index). */
  forget(keys: string[]): void {
    for (const s of this.slots) this.post(s, { kind: 'forget', keys });
  }

  /**
   * Stops the workers. Shards still queued or running fail, so that a search waiting for
   * them ends (and the process can exit) instead of hanging on a worker that is gone.
   */
  async close(): Promise<void> {
    this.closed = true;
    const closed: ShardReply = { status: 'failed', error: 'search pool is closed', queuedNs: 0 };
    for (const run of [...this.runs.values()]) for (let i = 0; i < run.size; i++) run.resolve(i, closed);
    this.runs.clear();
    Atomics.store(this.active, ACTIVE_SEARCHES, 0);
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  /** @internal (StartedSearch) every shard of the run is answered: a worker left with nothing to do joins the searches with shards to claim. */
  finished(run: StartedSearch): void {
    if (this.runs.delete(run.id)) Atomics.sub(this.active, ACTIVE_SEARCHES, 1);
    for (const s of run.posted) s.runs--;
    run.posted.clear();
    for (const s of this.slots) {
      if (s.runs > 0) continue;
      for (const other of this.runs.values()) if (!other.posted.has(s) && other.queued > 0) this.join(s, other);
    }
  }

  /** @internal (StartedSearch) wakes the workers of a run for its new grant or its stop. */
  resume(run: StartedSearch): void {
    if (!this.runs.has(run.id)) return;
    for (const s of run.posted) {
      this.alert(s, run);
      this.post(s, { kind: 'resume', run: run.id });
    }
  }

  /**
   * Tells a worker that `run` may be waiting for it (its attention counter), when it holds
   * a search of another caller: a worker takes one caller's searches in order anyway, and
   * a worker asked to yield reads the clock before every document.
   */
  private alert(slot: Slot, run: StartedSearch): void {
    for (const other of this.runs.values()) {
      if (other.caller !== run.caller && other.posted.has(slot)) {
        Atomics.add(slot.attention, 0, 1);
        return;
      }
    }
  }

  private post(slot: Slot, msg: ToWorker): void {
    slot.worker.postMessage(msg);
  }

  private spawn(): Slot {
    const id = this.nextWorker++;
    const attention = new SharedArrayBuffer(4);
    const worker = this.inThread
      ? new InThreadWorker(async (port) => (await import('./search-worker.ts')).serveSearches(port, id, attention))
      : startTsWorker(WORKER, { workerId: id, attention }, SEARCH_WORKER_LIMITS);
    const slot: Slot = { worker, id, runs: 0, attention: new Int32Array(attention) };
    slot.worker.unref();
    // A message's buffer goes back to its worker once every file of it is released (a
    // stream's sink, a cluster part's frames: StartedSearch.recycles), or at once when it has none.
    const giveBack = (buffer: ArrayBuffer): void => {
      // Handing a buffer back is a message to the worker: worth it for a big one (a
      // stream's are ≥ 256 KB), not for the few KB of most blocking replies.
      if (buffer.byteLength < RECYCLE_MIN_BYTES) return;
      if (this.slots.includes(slot)) slot.worker.postMessage({ kind: 'recycle', buffer } satisfies ToWorker, [buffer]);
    };
    slot.worker.on('message', (msg: FromWorker) => {
      const run = this.runs.get(msg.run);
      if (!run) return;
      if (msg.partial) {
        // Dropped once the shard is answered (a reply that overtook it: the search stopped).
        if (run.settled(msg.shards[0]!) || !run.onPartial) return;
        const { value, groups } = unpackMessage(msg.body, giveBack);
        const part = value as PartialReply;
        part.files = groups[0]!;
        run.onPartial(msg.shards[0]!, part);
        return;
      }
      if (run.onMessage && msg.shards.every((shard) => !run.settled(shard))) {
        // Its files stay packed: the hook copies the message whole.
        const replies = unpackValue(msg.body) as ShardReply[];
        run.onMessage(msg.shards, msg.body);
        giveBack(msg.body.buffer as ArrayBuffer);
        msg.shards.forEach((shard, k) => run.resolve(shard, replies[k]!));
        return;
      }
      const { value, groups: files } = unpackMessage(msg.body, run.recycles ? giveBack : undefined);
      const replies = value as ShardReply[];
      replies.forEach((r, k) => {
        if (r.status === 'done') r.files = files[k]!;
      });
      msg.shards.forEach((shard, k) => run.resolve(shard, replies[k]!));
    });
    slot.worker.on('error', (err) => this.replace(slot, err));
    slot.worker.on('exit', (code) => {
      if (!this.closed) this.replace(slot, new Error(`search worker exited with code ${code}`));
    });
    return slot;
  }

  /**
   * A worker died (a crash in native code, out of memory): the shards it had claimed and
   * not answered fail; a new worker takes its place and joins the searches still running.
   * (A worker records its claim right after winning it; dying between the two, a window of
   * a few instructions with no allocation in it, would leave that shard unanswered.)
   */
  private replace(slot: Slot, err: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0 || this.closed) return;
    void slot.worker.terminate();
    const fresh = this.spawn();
    this.slots[i] = fresh;
    if (this.verified.size > 0) this.post(fresh, { kind: 'verified', add: [...this.verified], gone: [] });
    for (const [id, refs] of this.catalogs) {
      this.post(fresh, { kind: 'catalog', id, body: pack(refs) });
      fresh.lastCatalog = id;
    }
    for (const run of [...this.runs.values()]) {
      for (let s = 0; s < run.size; s++) {
        if (run.claimant(s) === slot.id && !run.settled(s)) run.resolve(s, { status: 'failed', error: `search worker failed: ${err.message}`, queuedNs: 0 });
      }
    }
    for (const run of this.runs.values()) {
      if (run.posted.delete(slot)) slot.runs--;
      // With no worker left on it (a one-worker pool's stream waiting for its next grant),
      // the fresh one takes it even with nothing to claim now: grants wake only its workers.
      if (run.queued > 0 || run.posted.size === 0) this.join(fresh, run);
    }
  }
}
