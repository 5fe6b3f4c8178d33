// Entries waiting for a shared resource, kept per owner (a caller) and taken by turns across
// owners: one owner's hundred entries wait behind their own, and the next owner's first
// entry is taken after at most one of theirs. Within an owner, first come, first served.

export class FairQueue<T> {
  /** Each owner's entries, in arrival order; the map's order is the owners' turn order. */
  private readonly byOwner = new Map<string, T[]>();
  private count = 0;

  /** Entries waiting in all. */
  get size(): number {
    return this.count;
  }

  /** Entries `owner` has waiting. */
  countOf(owner: string): number {
    return this.byOwner.get(owner)?.length ?? 0;
  }

  push(owner: string, entry: T): void {
    const list = this.byOwner.get(owner);
    if (list) list.push(entry);
    else this.byOwner.set(owner, [entry]);
    this.count++;
  }

  /** Takes `entry` of `owner` out of the queue (it stopped waiting); false when it was not in it. */
  remove(owner: string, entry: T): boolean {
    const list = this.byOwner.get(owner);
    const i = list ? list.indexOf(entry) : -1;
    if (i < 0) return false;
    list!.splice(i, 1);
    if (list!.length === 0) this.byOwner.delete(owner);
    this.count--;
    return true;
  }

  /** Whether an owner with entries waiting is one `eligible` accepts. */
  any(eligible: (owner: string) => boolean): boolean {
    for (const owner of this.byOwner.keys()) if (eligible(owner)) return true;
    return false;
  }

  /**
   * The oldest entry of the first owner in turn that `eligible` accepts (every owner when
   * it is absent), taken out; that owner's turn moves to the back. Undefined when no owner
   * with entries is eligible.
   */
  shift(eligible: (owner: string) => boolean = () => true): { owner: string; entry: T } | undefined {
    for (const [owner, list] of this.byOwner) {
      if (!eligible(owner)) continue;
      const entry = list.shift()!;
      this.byOwner.delete(owner);
      if (list.length > 0) this.byOwner.set(owner, list);
      this.count--;
      return { owner, entry };
    }
    return undefined;
  }
}
