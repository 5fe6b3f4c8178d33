// Segment masks of a large document: for each of its distinct trigrams, which fixed-size
// segments of the document hold an occurrence of it. A search for a literal ANDs the masks
// of the literal's trigrams, so a large document that holds every trigram, but never all
// of them near one another, is ruled out unread, and one that is not is read only where
// the literal can start (shard-reader.ts, content-segments).

/**
 * Writes `width` bytes per distinct trigram of `folded[0, n)` to `out`: bit (s & 7) of byte
 * (s >> 3) is set when the trigram occurs starting at a position p with p >> shift == s.
 *
 * `keys[0, cnt)` are the document's distinct byte-reversed trigram keys as
 * ngrams.distinctTrigrams lists them (the little-endian u32 at a position, masked to 24
 * bits); row k of `out` belongs to keys[k]. `table` is scratch for a hash from key to row:
 * `slots` u32 pairs, `slots` a power of two above cnt (a sparse table stays in cache where
 * a direct one over 2^24 keys would touch megabytes). One readable byte must follow
 * folded + n, as for distinctTrigrams. `width` must be at least ((n - 1) >> shift >> 3) + 1.
 */
export function segmentMasks(folded: usize, n: u32, keys: usize, cnt: u32, table: usize, slots: u32, shift: u32, width: u32, out: usize): void {
  const mask = slots - 1;
  memory.fill(table, 0, <usize>slots << 3);
  memory.fill(out, 0, <usize>cnt * width);
  for (let k: u32 = 0; k < cnt; k++) {
    const key = load<u32>(keys + (<usize>k << 2));
    let h = slotOf(key, mask);
    while (load<u32>(table + (<usize>h << 3)) != 0) h = (h + 1) & mask;
    store<u32>(table + (<usize>h << 3), key + 1);
    store<u32>(table + (<usize>h << 3) + 4, k);
  }
  if (n < 3) return;
  const end = n - 2;
  for (let p: u32 = 0; p < end; p++) {
    const key = load<u32>(folded + p) & 0xFFFFFF;
    let h = slotOf(key, mask);
    // Every key at a position is among the distinct keys, so the probe ends at it.
    while (load<u32>(table + (<usize>h << 3)) != key + 1) h = (h + 1) & mask;
    const row = load<u32>(table + (<usize>h << 3) + 4);
    const s = p >> shift;
    const at = out + <usize>row * width + (s >> 3);
    store<u8>(at, <u32>load<u8>(at) | (<u32>1 << (s & 7)));
  }
}

// @ts-ignore: decorator
@inline
function slotOf(key: u32, mask: u32): u32 {
  return (key * 0x9E3779B1) >> 8 & mask;
}
