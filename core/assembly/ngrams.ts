// Trigram extraction over folded bytes. A trigram id is (b0 << 16) | (b1 << 8) | b2, a
// 24-bit number; the indexing path works on byte-reversed keys (see below). The query
// side takes its trigrams in TypeScript (daemon/query, through core/index.ts trigramId).

/** Size in bytes of the `seen` bitset used by distinctTrigrams: one bit per trigram id. */
export const SEEN_BYTES: u32 = (1 << 24) >> 3; // 2 MiB

export function seenBytes(): u32 {
  return SEEN_BYTES;
}

/**
 * Indexing path: appends the distinct trigrams of folded[0, n) to `out` (u32 each, in
 * order of first occurrence) and returns how many, or -1 as soon as there are more than
 * `limit` of them.
 *
 * Keys, not ids: each entry is the *byte-reversed* key r = b0 | b1 << 8 | b2 << 16, which
 * is simply the little-endian u32 at the trigram's position masked to 24 bits. One
 * unaligned load per position and no loop-carried shift chain make this loop about 10-20%
 * faster than rolling `h = (h << 8 | b) & 0xFFFFFF`. postings.countTrigrams turns keys
 * into ids (trigramIdOfKey), once per distinct pair rather than once per byte.
 * Because of the u32 load, one readable byte must follow folded + n.
 *
 * Dedup uses `seen`, a 2^24-bit bitset (SEEN_BYTES = 2 MiB) indexed by key. It must be
 * all zero on entry and is all zero again on return (also on the -1 path): every set bit
 * belongs to a key that was appended to `out`, so zeroing the byte of each appended key
 * clears them all, at a cost proportional to the distinct count rather than to 2 MiB.
 * A 2 MiB bitset stays in L2/L3 where a 64 MiB per-trigram stamp table would miss cache
 * on most rare trigrams. (Measured: byte-granular bit access beat 32-bit words, and the
 * branch-free update beat a branch on "already seen".)
 *
 * `out` needs room for min(n - 2, limit + 1) + 1 entries: the loop stores every key
 * unconditionally and advances the count only for new ones.
 */
export function distinctTrigrams(folded: usize, n: u32, seen: usize, out: usize, limit: u32): i32 {
  if (n < 3) return 0;
  let cnt: u32 = 0;
  let p = folded;
  const end = folded + n - 2; // one past the last trigram start
  while (p < end) {
    // Each position adds at most one distinct trigram, so running at most
    // limit + 1 - cnt positions between checks overshoots the limit by one at most.
    let run = <u32>(end - p);
    const room = limit + 1 - cnt;
    if (room < run) run = room;
    const stop = p + run;
    for (; p < stop; p++) {
      const r = load<u32>(p) & 0xFFFFFF;
      const w = seen + (<usize>r >> 3);
      const bit: u32 = 1 << (r & 7);
      const x = <u32>load<u8>(w);
      store<u8>(w, x | bit);
      store<u32>(out + (<usize>cnt << 2), r);
      cnt += <u32>((x & bit) == 0);
    }
    if (cnt > limit) {
      clearSeen(seen, out, cnt);
      return -1;
    }
  }
  clearSeen(seen, out, cnt);
  return <i32>cnt;
}

/** Trigram id (b0 << 16 | b1 << 8 | b2) of a byte-reversed key (b0 | b1 << 8 | b2 << 16). */
// @ts-ignore: decorator
@inline
export function trigramIdOfKey(r: u32): u32 {
  return ((r & 0xFF) << 16) | (r & 0xFF00) | (r >> 16);
}

// @ts-ignore: decorator
@inline
function clearSeen(seen: usize, list: usize, cnt: u32): void {
  for (let k: u32 = 0; k < cnt; k++) {
    store<u8>(seen + (<usize>load<u32>(list + (<usize>k << 2)) >> 3), 0);
  }
}
