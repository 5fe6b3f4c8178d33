// Entries waiting for a shared resource, kept per owner (a caller) and taken by turns across
// owners: one owner's hundred entries wait behind their own, and another owner's first
// entry is taken after at most one of theirs. Within an owner, first come, first served.
//
// The turn goes to the owner who had one longest ago (never, first), so an owner whose
// entry was just taken waits behind the others even when it had emptied its list and
// queued again. When were turns last had is remembered for owners with entries waiting,
// and for the REMEMBERED owners served last without.

const REMEMBERED = 1024;

export class FairQueue<T> {
  /** Each owner's entries, in arrival order; the map's order breaks ties between owners never served. */
  private readonly byOwner = new Map<string, T[]>();
  /** The turn each owner last had (a counter), the oldest first. */
  private readonly lastTurn = new Map<string, number>();
  private turn = 0;
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
   * The oldest entry of the owner whose turn it is among those `eligible` accepts (every
   * owner when it is absent), taken out. Undefined when no owner with entries is eligible.
   */
  shift(eligible: (owner: string) => boolean = () => true): { owner: string; entry: T } | undefined {
    let best: string | undefined;
    let bestTurn = Infinity;
    for (const owner of this.byOwner.keys()) {
      const had = this.lastTurn.get(owner) ?? -1;
      if (had < bestTurn && eligible(owner)) {
        best = owner;
        bestTurn = had;
      }
    }
    if (best === undefined) return undefined;
    const list = this.byOwner.get(best)!;
    const entry = list.shift()!;
    if (list.length === 0) this.byOwner.delete(best);
    this.count--;
    this.lastTurn.delete(best);
    this.lastTurn.set(best, this.turn++);
    this.forgetOld();
    return { owner: best, entry };
  }

  /** Forgets the turns of owners with nothing waiting beyond the REMEMBERED served last. */
  private forgetOld(): void {
    let excess = this.lastTurn.size - REMEMBERED - this.byOwner.size;
    if (excess <= 0) return;
    for (const owner of this.lastTurn.keys()) {
      if (excess <= 0) return;
      if (this.byOwner.has(owner)) continue;
      this.lastTurn.delete(owner);
      excess--;
    }
  }
}
