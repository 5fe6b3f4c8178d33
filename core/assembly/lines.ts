// Line location: the line number and line start of byte offsets in a document, for
// result shaping (daemon/search/range-locations.ts). Newlines are counted 64 bytes at a time without
// a branch per block: each compare's lanes (0 or -1) are subtracted from byte counters,
// which are summed before they can overflow; a line's start is then found by looking back
// from the offset for the last newline, which lies after the previous offset.

/** Newlines in hay[from, to), counted by whole 16-byte blocks and then byte by byte. */
function countNewlines(hay: usize, from: u32, to: u32): u32 {
  const nl = i8x16.splat(0x0a);
  let count: u32 = 0;
  let p = from;
  while (to - p >= 64) {
    // A round adds at most 4 to a byte lane: 63 rounds keep every lane under 256.
    let acc = i8x16.splat(0);
    let rounds: u32 = 0;
    while (to - p >= 64 && rounds < 63) {
      acc = i8x16.sub(acc, i8x16.eq(v128.load(hay + p), nl));
      acc = i8x16.sub(acc, i8x16.eq(v128.load(hay + p + 16), nl));
      acc = i8x16.sub(acc, i8x16.eq(v128.load(hay + p + 32), nl));
      acc = i8x16.sub(acc, i8x16.eq(v128.load(hay + p + 48), nl));
      p += 64;
      rounds++;
    }
    count += sumLanes(acc);
  }
  while (to - p >= 16) {
    count += <u32>popcnt<i32>(i8x16.bitmask(i8x16.eq(v128.load(hay + p), nl)));
    p += 16;
  }
  while (p < to) {
    if (load<u8>(hay + p) == 0x0a) count++;
    p++;
  }
  return count;
}

/** The sum of the u8 lanes of a counter vector. */
// @ts-ignore: decorator
@inline
function sumLanes(acc: v128): u32 {
  const d = i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(acc));
  return <u32>(i32x4.extract_lane(d, 0) + i32x4.extract_lane(d, 1) + i32x4.extract_lane(d, 2) + i32x4.extract_lane(d, 3));
}

/**
 * For each of the `k` ascending offsets at offs (u32 each; every one <= n), writes to out
 * two u32: its 1-based line number (1 + the "\n" bytes before it) and the offset of its
 * line's first byte (just past the last "\n" before it, or 0).
 *
 * Memory contract: at least 16 readable bytes must follow hay + n.
 */
export function locateLines(hay: usize, n: u32, offs: usize, k: u32, out: usize): void {
  let pos: u32 = 0;
  let line: u32 = 1;
  let start: u32 = 0;
  for (let i: u32 = 0; i < k; i++) {
    let t = load<u32>(offs + (<usize>i << 2));
    if (t > n) t = n;
    if (t < pos) t = pos; // not ascending: counted as the previous one
    const c = countNewlines(hay, pos, t);
    if (c > 0) {
      // The last newline lies in [pos, t): looking back never passes pos, so the whole
      // walk reads each byte at most twice however long the lines are.
      line += c;
      start = t;
      while (load<u8>(hay + start - 1) != 0x0a) start--;
    }
    pos = t;
    store<u32>(out + (<usize>i << 3), line);
    store<u32>(out + (<usize>i << 3) + 4, start);
  }
}
