// Runs a collection once work has gone quiet: `busy()` when work starts or ends, and
// `quiet()` when none is left; `collect` runs after `quietMs` with no work, once per burst
// (a daemon idle for hours collects once, not every `quietMs`). Work that starts again
// before then puts it off.

export class IdleCollector {
  private timer: NodeJS.Timeout | undefined;
  /** Work happened since the last collection. */
  private dirty = false;

  constructor(
    private readonly quietMs: number,
    private readonly collect: () => void,
  ) {}

  /** Work is running (it will be collected after, once quiet). */
  busy(): void {
    this.dirty = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  /** No work is running now. */
  quiet(): void {
    if (!this.dirty || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.dirty = false;
      this.collect();
    }, this.quietMs);
    // An idle daemon stops when asked to; a pending collection does not hold it.
    this.timer.unref();
  }

  /** Drops a pending collection (the daemon is stopping). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.dirty = false;
  }
}
