// Admission of searches: at most `concurrent` run at once (callers' first searches aside,
// below) and at most `queued` wait; one more is refused at once with 503 SERVICE_UNAVAILABLE and Retry-After, so that a burst
// degrades into quick refusals instead of a growing backlog that times out for everyone.
//
// Admission is fair between callers (http/caller.ts: a user, or an anonymous client's
// address). A caller with no search running is let in at once, even when the slots are
// full (up to twice `concurrent` in all): one caller's searches, however many and however
// expensive, never make another's first one wait (the search workers then share their time
// between the two: search-worker.ts). Beyond that, one caller runs at most `perCaller`
// searches at once and has at most `perCallerQueued` waiting, so the queue is never theirs
// alone, and a freed slot goes to the next caller in turn (runtime/fair-queue.ts): a
// caller's searches wait behind their own, not in front of everybody's.

import { ServiceError } from '../errors.ts';
import { FairQueue } from '../runtime/fair-queue.ts';

export interface GateLimits {
  /** Searches running at once, in all. */
  concurrent: number;
  /** Searches waiting, in all. */
  queued: number;
  /** Searches one caller runs at once; default: `concurrent`. */
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
    this.perCaller = Math.min(limits.concurrent, limits.perCaller ?? limits.concurrent);
    this.perCallerQueued = Math.min(limits.queued, limits.perCallerQueued ?? Math.ceil(limits.queued / 2));
  }

  /**
   * A turn for `caller`: resolves with the function that gives it back (call it exactly
   * once). Throws 503 SERVICE_UNAVAILABLE at once, synchronously, when the queue (all of it,
   * or the caller's share) is full, so a caller can refuse before it starts answering.
   */
  enter(caller: string, signal?: AbortSignal): Promise<() => void> {
    // A caller's first search runs at once while the slots are not twice over full; else a
    // free slot is taken at once unless a search that may have it is waiting for it (a
    // turn being passed on, or the caller's own earlier ones).
    const first = this.runningOf(caller) === 0 && this.waiting.countOf(caller) === 0;
    if (this.mayStart(caller) && (first || !this.waiting.any(this.mayStart))) {
      this.start(caller);
      return Promise.resolve(this.leave(caller));
    }
    if (this.waiting.size >= this.queued) {
      this.onReject();
      throw new ServiceError('SERVICE_UNAVAILABLE', `too many searches at once (${this.running} running, ${this.waiting.size} waiting); retry shortly`);
    }
    if (this.waiting.countOf(caller) >= this.perCallerQueued) {
      this.onReject();
      throw new ServiceError(
        'SERVICE_UNAVAILABLE',
        `too many searches of yours at once (${this.runningOf(caller)} running, ${this.waiting.countOf(caller)} waiting); retry when one has finished`,
      );
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

  /** Whether a search of `caller` may start now: its first while fewer than twice the slots run, else one within the slots and its share. */
  private readonly mayStart = (caller: string): boolean => {
    const mine = this.runningOf(caller);
    return mine === 0 ? this.running < 2 * this.concurrent : this.running < this.concurrent && mine < this.perCaller;
  };

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

  /** Starts waiting searches while any may start, taking callers by turns. */
  private passOn(): void {
    for (;;) {
      const next = this.waiting.shift(this.mayStart);
      if (!next) return;
      this.start(next.owner);
      next.entry.resolve();
    }
  }
}
