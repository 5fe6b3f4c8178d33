// The deliveries taken lately, by id, so that one sent again (a replay, or the host's
// redelivery of one already acted on) is not acted on twice. Bounded: at most `max` ids,
// each kept for `ttlMs`; past the bound the oldest is forgotten first. Kept in memory: a
// delivery replayed after a restart is acted on again, which syncs a repository whose refs
// did not move and so changes nothing.

export const SEEN_TTL_MS = 24 * 3_600_000;
export const SEEN_MAX = 100_000;

export class SeenDeliveries {
  /** id → when it was first seen; in that order (a Map keeps insertion order). */
  readonly #seen = new Map<string, number>();

  constructor(
    private readonly max = SEEN_MAX,
    private readonly ttlMs = SEEN_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** True the first time `id` is offered within the window; false for a repeat. */
  firstTime(id: string): boolean {
    const now = this.now();
    // Forget what expired, oldest first: each id is removed once, so this costs what it removes.
    for (const [old, at] of this.#seen) {
      if (now - at < this.ttlMs) break;
      this.#seen.delete(old);
    }
    if (this.#seen.has(id)) return false;
    this.#seen.set(id, now);
    if (this.#seen.size > this.max) this.#seen.delete(this.#seen.keys().next().value!);
    return true;
  }

  get size(): number {
    return this.#seen.size;
  }
}
