// A fixed pool of search worker threads with a FIFO queue of shard tasks. Each worker
// runs one task at a time; `wait` in the stats is the time a task spent queued. A search
// queues all its shards up front, so when it stops (client gone, time budget, enough
// matches) `drop` takes its tasks out of the queue at once: they never run, and nothing
// of a search whose client left stays queued behind other searches' work.

import type { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { startTsWorker } from '../runtime/ts-worker.ts';
import { SEARCH_WORKER_LIMITS } from './worker-limits.ts';
import { packr, type Envelope, type ShardReply, type ShardTask } from './protocol.ts';

const WORKER = new URL('./search-worker.ts', import.meta.url);

interface Pending {
  task: ShardTask;
  cancel: SharedArrayBuffer;
  resolve: (r: ShardReply) => void;
  /** Wall-clock ms when queued: the worker reports the time to its start as `wait`. */
  queuedAt: number;
}

interface Slot {
  worker: Worker;
  busy: Pending | undefined;
  seq: number;
}

export class SearchPool {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private closed = false;
  private seq = 0;

  constructor(size = availableParallelism()) {
    this.size = Math.max(1, size);
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Runs a shard task; `cancel` is an Int32Array's buffer, non-zero meaning "stop". */
  run(task: ShardTask, cancel: SharedArrayBuffer): Promise<ShardReply> {
    if (this.closed) return Promise.reject(new Error('search pool is closed'));
    if (cancelled(cancel)) return Promise.resolve({ status: 'skipped' });
    return new Promise((resolve) => {
      this.queue.push({ task, cancel, resolve, queuedAt: performance.timeOrigin + performance.now() });
      this.pump();
    });
  }

  /**
   * A search stopped (its `cancel` flag is set): its queued tasks resolve as skipped now
   * instead of waiting for a free worker; its running ones stop at their next check.
   */
  drop(cancel: SharedArrayBuffer): void {
    let kept = 0;
    for (const pending of this.queue) {
      if (pending.cancel === cancel) pending.resolve({ status: 'skipped' });
      else this.queue[kept++] = pending;
    }
    this.queue.length = kept;
  }

  /** Work in hand now: workers running a task, and tasks waiting for one (the metrics). */
  load(): { busy: number; queued: number } {
    return { busy: this.slots.filter((s) => s.busy).length, queued: this.queue.length };
  }

  /** Tells every worker to drop its mapping of these shard files (after a re-index). */
  forget(paths: string[]): void {
    for (const s of this.slots) s.worker.postMessage({ forget: paths });
  }

  /**
   * Stops the workers. Tasks still queued or running fail, so that a search waiting for
   * them ends (and the process can exit) instead of hanging on a worker that is gone.
   */
  async close(): Promise<void> {
    this.closed = true;
    const closed: ShardReply = { status: 'failed', error: 'search pool is closed', queuedNs: 0 };
    for (const p of this.queue.splice(0)) p.resolve(closed);
    for (const s of this.slots) {
      s.busy?.resolve(closed);
      s.busy = undefined;
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private spawn(): Slot {
    const slot: Slot = { worker: startTsWorker(WORKER, {}, SEARCH_WORKER_LIMITS), busy: undefined, seq: -1 };
    slot.worker.unref();
    slot.worker.on('message', (msg: Envelope) => {
      const pending = slot.busy;
      if (!pending || msg.seq !== slot.seq) return;
      slot.busy = undefined;
      pending.resolve(packr.unpack(msg.body) as ShardReply);
      this.pump();
    });
    slot.worker.on('error', (err) => this.replace(slot, err));
    slot.worker.on('exit', (code) => {
      if (!this.closed) this.replace(slot, new Error(`search worker exited with code ${code}`));
    });
    return slot;
  }

  /** A worker died (a crash in native code, out of memory): fail its task, start another. */
  private replace(slot: Slot, err: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0 || this.closed) return;
    slot.busy?.resolve({ status: 'failed', error: `search worker failed: ${err.message}`, queuedNs: 0 });
    slot.busy = undefined;
    void slot.worker.terminate();
    this.slots[i] = this.spawn();
    this.pump();
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const pending = this.nextLive();
      if (!pending) return;
      slot.busy = pending;
      slot.seq = this.seq++;
      const env: Envelope = {
        seq: slot.seq,
        body: packr.pack(pending.task),
        cancel: pending.cancel,
        sentAt: pending.queuedAt,
      };
      slot.worker.postMessage(env);
    }
  }

  /** The next queued task whose search still wants it; cancelled ones resolve as skipped. */
  private nextLive(): Pending | undefined {
    for (;;) {
      const pending = this.queue.shift();
      if (!pending) return undefined;
      if (!cancelled(pending.cancel)) return pending;
      pending.resolve({ status: 'skipped' });
    }
  }
}

function cancelled(cancel: SharedArrayBuffer): boolean {
  return Atomics.load(new Int32Array(cancel), 0) !== 0;
}
