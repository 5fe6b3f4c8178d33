// Segment masks of a large document: for each of its distinct trigrams, which fixed-size
// segments of the document hold an occurrence of it. A search for a literal ANDs the masks
// of the literal's trigrams, so a large document that holds every trigram, but never all
// of them near one another, is ruled out unread, and one that is not is read only where
// the literal can start (daemon/index/content-segments.ts).

/**
 * Writes `width` bytes per distinct trigram of `folded[0, n)` to `out`: bit (s & 7) of byte
 * (s >> 3) is set when the trigram occurs starting at a position p with p >> shift == s.
 *
 * `keys[0, cnt)` are the document's distinct byte-reversed trigram keys as
 * ngrams.distinctTrigrams lists them (the little-endian u32 at a position, masked to 24
 * bits); row k of `out` belongs to keys[k]. `rows` is a table of 2^24 u16, one per key,
 * all zero on entry and again on return: it maps each of the document's keys to its row
 * plus one while the positions are read, so cnt must be below 65535. (A direct table: a
 * hash probed at each position cost twice the time, and the table's pages that a
 * document touches are those `seen` touches in distinctTrigrams.) One readable byte must
 * follow folded + n, as for distinctTrigrams. `width` must be at least
 * ((n - 1) >> shift >> 3) + 1.
 */
export function segmentMasks(folded: usize, n: u32, keys: usize, cnt: u32, rows: usize, shift: u32, width: u32, out: usize): void {
  memory.fill(out, 0, <usize>cnt * width);
  for (let k: u32 = 0; k < cnt; k++) store<u16>(rows + (<usize>load<u32>(keys + (<usize>k << 2)) << 1), <u16>(k + 1));
  if (n >= 3) {
    const end = n - 2;
    for (let p: u32 = 0; p < end; p++) {
      const key = load<u32>(folded + p) & 0xFFFFFF;
      // Every key at a position is among the distinct keys, so its entry is set.
      const row = <u32>load<u16>(rows + (<usize>key << 1)) - 1;
      const s = p >> shift;
      const at = out + <usize>row * width + (s >> 3);
      store<u8>(at, <u32>load<u8>(at) | (<u32>1 << (s & 7)));
    }
  }
  for (let k: u32 = 0; k < cnt; k++) store<u16>(rows + (<usize>load<u32>(keys + (<usize>k << 2)) << 1), 0);
}
