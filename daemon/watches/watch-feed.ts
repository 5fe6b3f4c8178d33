// The changes of watches as they are recorded, to whoever listens in this process: the SSE
// streams (http/handlers/watches.ts) and the tool server's sessions (mcp/). A listener is
// told of a watch's change once it is stored (its id is the SSE event id); what it may show
// is its own to check (the owner's visibility, at delivery).

import type { WatchEventRecord } from '../store/store.ts';

export type WatchListener = (event: WatchEventRecord) => void;

export class WatchFeed {
  readonly #listeners = new Map<number, Set<WatchListener>>();

  /** Listens to one watch's changes; the function returned stops listening. */
  subscribe(watchId: number, listener: WatchListener): () => void {
    let set = this.#listeners.get(watchId);
    if (!set) this.#listeners.set(watchId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(watchId) === set) this.#listeners.delete(watchId);
    };
  }

  publish(event: WatchEventRecord): void {
    const set = this.#listeners.get(event.watchId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(event);
      } catch {
        // A listener's failure is its own (a stream that closed); the others are still told.
      }
    }
  }

  /** The watches listened to now. */
  watched(): number[] {
    return [...this.#listeners.keys()];
  }

  /** Listeners of every watch (a metric). */
  get listeners(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }
}
