// Trigram extraction over folded bytes. A trigram id is (b0 << 16) | (b1 << 8) | b2, a
// 24-bit number; the indexing path works on byte-reversed keys (see below). The query
// side takes its trigrams in TypeScript (daemon/query, through core/fold.ts trigramId).

/**
 * Size in bytes of the `seen` table used by distinctTrigrams: one byte per trigram key,
 * which collects the trigram's follow mask while it is non-zero.
 */
export const SEEN_BYTES: u32 = 1 << 24; // 16 MiB

export function seenBytes(): u32 {
  return SEEN_BYTES;
}

/**
 * Indexing path: appends the distinct trigrams of folded[0, n) to `out` (u32 each, in
 * order of first occurrence) and each one's follow mask to `masks` (u8 each, same
 * order), and returns how many, or -1 as soon as there are more than `limit` of them.
 *
 * Keys, not ids: each entry is the *byte-reversed* key r = b0 | b1 << 8 | b2 << 16, which
 * is simply the little-endian u32 at the trigram's position masked to 24 bits. One
 * unaligned load per position and no loop-carried shift chain make this loop faster than
 * rolling `h = (h << 8 | b) & 0xFFFFFF`. postings.countTrigrams turns keys
 * into ids (trigramIdOfKey), once per distinct pair rather than once per byte.
 * Because of the u32 load, one readable byte must follow folded + n.
 *
 * Follow mask: bit (b & 7) for every byte b that follows an occurrence of the trigram (the
 * load's fourth byte, so no second load). It lets a search rule out a document holding
 * every trigram of a literal but never one of them followed by the literal's next byte
 * (shard-reader.ts, content-follow). The last trigram's "next" byte is the one past the
 * end (whatever it holds): an extra bit only makes the filter weaker, never wrong.
 *
 * Dedup uses `seen`, a 2^24-byte table (SEEN_BYTES = 16 MiB) indexed by key that
 * accumulates the mask; a key is new while its byte is zero (every occurrence sets a bit).
 * It must be all zero on entry and is all zero again on return (also on the -1 path):
 * each appended key's byte is read out and cleared, at a cost proportional to the
 * distinct count rather than to 16 MiB. A document's distinct trigrams touch a few
 * thousand of its cache lines, which stay in L2 whatever the table's size.
 *
 * `out` needs room for min(n - 2, limit + 1) + 1 entries (the loop stores every key
 * unconditionally and advances the count only for new ones); `masks` as many bytes.
 */
export function distinctTrigrams(folded: usize, n: u32, seen: usize, out: usize, masks: usize, limit: u32): i32 {
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
      const v = load<u32>(p);
      const r = v & 0xFFFFFF;
      const w = seen + <usize>r;
      const x = <u32>load<u8>(w);
      store<u8>(w, x | (1 << ((v >> 24) & 7)));
      store<u32>(out + (<usize>cnt << 2), r);
      cnt += <u32>(x == 0);
    }
    if (cnt > limit) {
      takeMasks(seen, out, masks, cnt);
      return -1;
    }
  }
  takeMasks(seen, out, masks, cnt);
  return <i32>cnt;
}

/** Trigram id (b0 << 16 | b1 << 8 | b2) of a byte-reversed key (b0 | b1 << 8 | b2 << 16). */
// @ts-ignore: decorator
@inline
export function trigramIdOfKey(r: u32): u32 {
  return ((r & 0xFF) << 16) | (r & 0xFF00) | (r >> 16);
}

/** Copies the masks of the keys list[0, cnt) out of `seen` and clears their bytes. */
// @ts-ignore: decorator
@inline
function takeMasks(seen: usize, list: usize, masks: usize, cnt: u32): void {
  for (let k: u32 = 0; k < cnt; k++) {
    const w = seen + <usize>load<u32>(list + (<usize>k << 2));
    store<u8>(masks + <usize>k, load<u8>(w));
    store<u8>(w, 0);
  }
}

/**
 * Grouped postings (a history shard's versions of one path share one posting): folds the
 * `cnt` keys just appended at out[at, at + cnt) (distinctTrigrams' output, with their masks
 * at masks[at, ...)) into the group whose keys are out[start, at). A key the group holds
 * already is dropped and its mask ORed into the group's; a new key moves down to the end
 * of the group's keys. Returns the group's distinct count after the merge.
 *
 * `seen` (distinctTrigrams' table, all zero on entry and again on return) holds each group
 * key's mask while merging: every mask is non-zero, so a zero byte means "not in the group".
 * Costs one pass over the group's keys and one over the new ones.
 */
export function mergeIntoGroup(out: usize, masks: usize, start: u32, at: u32, cnt: u32, seen: usize): u32 {
  for (let k = start; k < at; k++) {
    store<u8>(seen + <usize>load<u32>(out + (<usize>k << 2)), load<u8>(masks + <usize>k));
  }
  let end = at;
  for (let k = at; k < at + cnt; k++) {
    const r = load<u32>(out + (<usize>k << 2));
    const m = load<u8>(masks + <usize>k);
    const w = seen + <usize>r;
    const x = load<u8>(w);
    if (x != 0) {
      store<u8>(w, x | m);
      continue;
    }
    // New to the group: its slot is at or before k, so nothing unread is overwritten.
    store<u32>(out + (<usize>end << 2), r);
    store<u8>(masks + <usize>end, m);
    end++;
  }
  // The group's own keys take their merged masks back; the new ones never entered `seen`.
  for (let k = start; k < at; k++) {
    const w = seen + <usize>load<u32>(out + (<usize>k << 2));
    store<u8>(masks + <usize>k, load<u8>(w));
    store<u8>(w, 0);
  }
  return end - start;
}
