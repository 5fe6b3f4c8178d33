// A counting semaphore: at most `count` turns held at once, the others wait in order.
// Used where work that waits on threads or processes must not all start together (builds
// and fetches of a sync pass, ctags runs of outlines).

/** Why a wait for a turn ended without one: its signal aborted. */
export type Cancelled = () => Error;

export class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(count: number) {
    this.#free = count;
  }

  /**
   * A turn, once one is free: its release (calling it again does nothing). With a signal,
   * a wait it aborts first is rejected with `cancelled()` and takes no turn.
   */
  readonly take = (signal?: AbortSignal, cancelled?: Cancelled): Promise<() => void> => {
    const reason = () => (cancelled ? cancelled() : new Error('the wait for a turn was cancelled'));
    if (signal?.aborted) return Promise.reject(reason());
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(this.#release());
      };
      const onAbort = () => {
        const i = this.#waiting.indexOf(grant);
        if (i !== -1) this.#waiting.splice(i, 1);
        reject(reason());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(grant);
    });
  };

  /** A turn's release: handed straight to the next waiter, else counted free. */
  #release(): () => void {
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
