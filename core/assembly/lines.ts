// Line location: the line number and line start of byte offsets in a document, for
// result shaping (daemon/search/shape.ts). Newlines are counted 16 bytes at a time: a
// block costs one load, one compare, one bitmask and a popcount, where the JavaScript
// walk it replaces called indexOf once per line.

/**
 * For each of the `k` ascending offsets at offs (u32 each; every one <= n), writes to out
 * two u32: its 1-based line number (1 + the "\n" bytes before it) and the offset of its
 * line's first byte (just past the last "\n" before it, or 0).
 *
 * Memory contract: at least 16 readable bytes must follow hay + n (lanes past the range
 * being counted are masked off).
 */
export function locateLines(hay: usize, n: u32, offs: usize, k: u32, out: usize): void {
  const nl = i8x16.splat(0x0a);
  let pos: u32 = 0;
  let line: u32 = 1;
  let lineStart: u32 = 0;
  for (let i: u32 = 0; i < k; i++) {
    let t = load<u32>(offs + (<usize>i << 2));
    if (t > n) t = n;
    if (t < pos) t = pos; // not ascending: counted as the previous one
    while (pos < t) {
      let mask = i8x16.bitmask(i8x16.eq(v128.load(hay + pos), nl));
      const left = t - pos;
      if (left < 16) mask &= (1 << left) - 1;
      if (mask != 0) {
        line += <u32>popcnt<i32>(mask);
        lineStart = pos + 32 - <u32>clz<i32>(mask);
      }
      pos += left < 16 ? left : 16;
    }
    store<u32>(out + (<usize>i << 3), line);
    store<u32>(out + (<usize>i << 3) + 4, lineStart);
  }
}
