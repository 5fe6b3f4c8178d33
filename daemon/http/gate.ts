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
            // The server's shutdown deadline gives its reason (503); a client that left, none.
            const reason: unknown = signal.reason;
            reject(reason instanceof ServiceError ? reason : new Error('the client went away while the search was queued'));
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
      // The turn passes on (running stays the same) once the I/O events already in hand
      // are handled, not now: when many clients go away at once, the disconnects behind
      // this one take their searches out of the queue first, instead of each being handed
      // a turn to start a search for nobody (planning a regular expression alone can take
      // tens of ms).
      if (this.waiting.length > 0) setImmediate(() => this.passOn());
      else this.passOn();
    };
  }

  private passOn(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.running--;
    this.onChange(this.running, this.waiting.length);
  }
}
