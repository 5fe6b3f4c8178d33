// Admission of searches: at most `concurrent` run at once and at most `queued` wait; one
// more is refused at once with 503 SERVICE_UNAVAILABLE and Retry-After, so that a burst
// degrades into quick refusals instead of a growing backlog that times out for everyone.
//
// Admission is fair between callers (http/caller.ts: a user, or an anonymous client's
// address). One caller runs at most `perCaller` searches at once and has at most
// `perCallerQueued` waiting, so that however expensive their searches are, a slot is left
// for somebody else and the queue is never theirs alone; a freed slot goes to the next
// caller in turn (runtime/fair-queue.ts), so one caller's searches wait behind their own,
// not in front of everybody's.

import { ServiceError } from '../errors.ts';
import { FairQueue } from '../runtime/fair-queue.ts';

export interface GateLimits {
  /** Searches running at once, in all. */
  concurrent: number;
  /** Searches waiting, in all. */
  queued: number;
  /** Searches one caller runs at once; default: all but one of `concurrent` (at least one). */
  perCaller?: number;
  /** Searches one caller has waiting; default: half of `queued`. */
  perCallerQueued?: number;
}

interface Waiting {
  resolve: () => void;
  reject: (e: Error) => void;
}

export class SearchGate {
  readonly concurrent: number;
  readonly queued: number;
  readonly perCaller: number;
  readonly perCallerQueued: number;
  private running = 0;
  private readonly runningBy = new Map<string, number>();
  private readonly waiting = new FairQueue<Waiting>();

  constructor(
    limits: GateLimits,
    private readonly onChange: (running: number, waiting: number) => void = () => {},
    private readonly onReject: () => void = () => {},
  ) {
    this.concurrent = limits.concurrent;
    this.queued = limits.queued;
    this.perCaller = Math.min(limits.concurrent, limits.perCaller ?? Math.max(1, limits.concurrent - 1));
    this.perCallerQueued = Math.min(limits.queued, limits.perCallerQueued ?? Math.ceil(limits.queued / 2));
  }

  /**
   * A turn for `caller`: resolves with the function that gives it back (call it exactly
   * once). Throws 503 SERVICE_UNAVAILABLE at once, synchronously, when the queue (all of it,
   * or the caller's share) is full, so a caller can refuse before it starts answering.
   */
  enter(caller: string, signal?: AbortSignal): Promise<() => void> {
    // A free slot is taken at once unless a search that may have it is waiting for it (a
    // turn being passed on, or the caller's own earlier ones).
    if (this.running < this.concurrent && this.runningOf(caller) < this.perCaller && !this.waiting.any(this.eligible)) {
      this.start(caller);
      return Promise.resolve(this.leave(caller));
    }
    if (this.waiting.size >= this.queued) {
      this.onReject();
      throw new ServiceError('SERVICE_UNAVAILABLE', `too many searches at once (${this.running} running, ${this.waiting.size} waiting); retry shortly`);
    }
    if (this.waiting.countOf(caller) >= this.perCallerQueued) {
      this.onReject();
      throw new ServiceError('SERVICE_UNAVAILABLE', `too many searches of yours at once (${this.runningOf(caller)} running, ${this.waiting.countOf(caller)} waiting); retry when one has finished`);
    }
    return new Promise<() => void>((resolve, reject) => {
      const entry: Waiting = { resolve: () => resolve(this.leave(caller)), reject };
      this.waiting.push(caller, entry);
      this.onChange(this.running, this.waiting.size);
      signal?.addEventListener(
        'abort',
        () => {
          if (this.waiting.remove(caller, entry)) {
            this.onChange(this.running, this.waiting.size);
            // The server's shutdown deadline gives its reason (503); a client that left, none.
            const reason: unknown = signal.reason;
            reject(reason instanceof ServiceError ? reason : new Error('the client went away while the search was queued'));
          }
        },
        { once: true },
      );
    });
  }

  private readonly eligible = (caller: string): boolean => this.runningOf(caller) < this.perCaller;

  private runningOf(caller: string): number {
    return this.runningBy.get(caller) ?? 0;
  }

  private start(caller: string): void {
    this.running++;
    this.runningBy.set(caller, this.runningOf(caller) + 1);
    this.onChange(this.running, this.waiting.size);
  }

  private leave(caller: string): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running--;
      const left = this.runningOf(caller) - 1;
      if (left > 0) this.runningBy.set(caller, left);
      else this.runningBy.delete(caller);
      this.onChange(this.running, this.waiting.size);
      // The turn passes on once the I/O events already in hand are handled, not now: when
      // many clients go away at once, the disconnects behind this one take their searches
      // out of the queue first, instead of each being handed a turn to start a search for
      // nobody.
      if (this.waiting.size > 0) setImmediate(() => this.passOn());
    };
  }

  /** Starts waiting searches while there are free slots, taking callers by turns. */
  private passOn(): void {
    while (this.running < this.concurrent) {
      const next = this.waiting.shift(this.eligible);
      if (!next) return;
      this.start(next.owner);
      next.entry.resolve();
    }
  }
}
