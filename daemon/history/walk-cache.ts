// The last history walk of each repository (history-walk.ts), kept in memory so that the
// next update of its history extends it with the commits its refs added (extendWalk)
// instead of listing and deriving every commit again: on hono, 2,800 commits, the whole
// walk is most of a one-commit update's time before the index is written. A daemon's syncs
// and a bench's updates run in one process and share the process's cache (`walks`); a
// `trawl index --history` walks once and gains nothing from it.
//
// A walk depends only on the repository's commits, which git never changes under an id, so
// a walk held is right for as long as its tips are in the repository (when they are not,
// git fails and the history is walked whole). Bounded by the commits the walks' versions list in all (an entry is a number in a
// version's commits: 4 to 8 bytes): past MAX_ENTRIES the least recently used walks are
// dropped, and a walk larger than that alone is not kept.

import { extendWalk, walkHistory, type HistoryLimits, type HistoryWalk } from './history-walk.ts';

/** The most version-commit entries the cache holds (tens of MB). */
export const MAX_ENTRIES = 16_000_000;

interface Held {
  tips: string[];
  maxCommits: number;
  walk: HistoryWalk;
  entries: number;
}

export class WalkCache {
  /** By the repository's git dir, least recently used first. */
  private readonly held = new Map<string, Held>();
  private entries = 0;

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /**
   * The walk of `tips` in the repository at `gitDir`: the one held when it was made for the
   * same tips and limit, extended from it when the tips moved on, else walked whole; it is
   * then the one held. `extended` says whether a held walk was used.
   */
  async walk(gitDir: string, tips: readonly string[], limits: HistoryLimits): Promise<{ walk: HistoryWalk; extended: boolean }> {
    const unique = [...new Set(tips)].sort();
    const held = this.take(gitDir);
    let walk: HistoryWalk | undefined;
    if (held !== undefined && held.maxCommits === limits.maxCommits) {
      if (held.tips.length === unique.length && held.tips.every((t, i) => t === unique[i])) walk = held.walk;
      // (A git error here, as for a tip git no longer has, means walking the whole history instead.)
      else walk = await extendWalk(gitDir, held.walk, held.tips, unique, limits).catch(() => undefined);
    }
    const extended = walk !== undefined;
    walk ??= await walkHistory(gitDir, unique, limits);
    this.keep(gitDir, { tips: unique, maxCommits: limits.maxCommits, walk, entries: entriesOf(walk) });
    return { walk, extended };
  }

  private take(gitDir: string): Held | undefined {
    const held = this.held.get(gitDir);
    if (held !== undefined) {
      this.held.delete(gitDir);
      this.entries -= held.entries;
    }
    return held;
  }

  private keep(gitDir: string, held: Held): void {
    if (held.entries > this.maxEntries) return;
    this.held.set(gitDir, held);
    this.entries += held.entries;
    for (const [dir, h] of this.held) {
      if (this.entries <= this.maxEntries) break;
      this.held.delete(dir);
      this.entries -= h.entries;
    }
  }
}

function entriesOf(walk: HistoryWalk): number {
  let n = 0;
  for (const v of walk.versions) n += v.commits.length;
  return n;
}

/** The process's walks. */
export const walks = new WalkCache();
