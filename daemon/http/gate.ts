// Admission of searches: at most `concurrent` run at once and at most `queued` wait; one
// more is refused at once with 503 SERVICE_UNAVAILABLE and Retry-After, so that a burst
// degrades into quick refusals instead of a growing backlog that times out for everyone.

import { ServiceError } from '../errors.ts';

export class SearchGate {
  private running = 0;
  private readonly waiting: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];

  constructor(
    readonly concurrent: number,
    readonly queued: number,
    private readonly onChange: (running: number, waiting: number) => void = () => {},
    private readonly onReject: () => void = () => {},
  ) {}

  /**
   * A turn: resolves with the function that gives it back (call it exactly once). Throws
   * 503 SERVICE_UNAVAILABLE at once, synchronously, when the queue is full, so a caller
   * can refuse before it starts answering.
   */
  enter(signal?: AbortSignal): Promise<() => void> {
    if (this.running < this.concurrent) {
      this.running++;
      this.onChange(this.running, this.waiting.length);
      return Promise.resolve(this.leave());
    }
    if (this.waiting.length >= this.queued) {
      this.onReject();
      throw new ServiceError('SERVICE_UNAVAILABLE', `too many searches at once (${this.concurrent} running, ${this.queued} waiting); retry shortly`);
    }
    return new Promise<() => void>((resolve, reject) => {
      const entry = { resolve: () => resolve(this.leave()), reject };
      this.waiting.push(entry);
      this.onChange(this.running, this.waiting.length);
      signal?.addEventListener(
        'abort',
        () => {
          const i = this.waiting.indexOf(entry);
          if (i >= 0) {
            this.waiting.splice(i, 1);
            this.onChange(this.running, this.waiting.length);
            reject(new Error('the client went away while the search was queued'));
          }
        },
        { once: true },
      );
    });
  }

  private leave(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next.resolve(); // the turn passes on: running stays the same
      else this.running--;
      this.onChange(this.running, this.waiting.length);
    };
  }
}
