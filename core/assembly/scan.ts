// Byte scanning: first occurrence, occurrence count and UTF-8 code point count.
// All process 16 bytes per step; tails are handled in scalar code, so no padding is needed.

import { sumU8Lanes } from './simd';

/** Index of the first `byte` in p[0, n), or -1. */
export function indexOfByte(p: usize, n: u32, byte: u32): i32 {
  const nv = i8x16.splat(<i8>byte);
  let i: u32 = 0;
  // Two blocks per iteration: one OR'ed test for "anything here?" halves the branches.
  while (i + 32 <= n) {
    const ea = i8x16.eq(v128.load(p + i), nv);
    const eb = i8x16.eq(v128.load(p + i, 16), nv);
    if (v128.any_true(v128.or(ea, eb))) {
      const ma = i8x16.bitmask(ea);
      if (ma != 0) return <i32>(i + <u32>ctz<i32>(ma));
      return <i32>(i + 16 + <u32>ctz<i32>(i8x16.bitmask(eb)));
    }
    i += 32;
  }
  while (i + 16 <= n) {
    const m = i8x16.bitmask(i8x16.eq(v128.load(p + i), nv));
    if (m != 0) return <i32>(i + <u32>ctz<i32>(m));
    i += 16;
  }
  const b = <u8>byte;
  while (i < n) {
    if (load<u8>(p + i) == b) return <i32>i;
    i++;
  }
  return -1;
}

/**
 * Counts lanes selected by a compare, 16 bytes per step. An equality compare yields 0xFF
 * (-1) per matching lane, so subtracting it adds 1 to that lane's u8 counter; lanes can
 * take 255 steps before they could overflow, then they are reduced into a u32 total.
 */
export function countByte(p: usize, n: u32, byte: u32): u32 {
  const nv = i8x16.splat(<i8>byte);
  let total: u32 = 0;
  let i: u32 = 0;
  while (i + 16 <= n) {
    let acc = i8x16.splat(0);
    let steps = (n - i) >> 4;
    if (steps > 255) steps = 255;
    const stop = i + (steps << 4);
    for (; i < stop; i += 16) acc = i8x16.sub(acc, i8x16.eq(v128.load(p + i), nv));
    total += sumU8Lanes(acc);
  }
  const b = <u8>byte;
  for (; i < n; i++) total += <u32>(load<u8>(p + i) == b);
  return total;
}

/**
 * UTF-8 code points in p[0, n): bytes that are not continuation bytes 0x80..0xBF. As
 * signed bytes those are exactly -128..-65, so a code point starts where byte > -65.
 */
export function countCodepoints(p: usize, n: u32): u32 {
  const lim = i8x16.splat(-65);
  let total: u32 = 0;
  let i: u32 = 0;
  while (i + 16 <= n) {
    let acc = i8x16.splat(0);
    let steps = (n - i) >> 4;
    if (steps > 255) steps = 255;
    const stop = i + (steps << 4);
    for (; i < stop; i += 16) acc = i8x16.sub(acc, i8x16.gt_s(v128.load(p + i), lim));
    total += sumU8Lanes(acc);
  }
  for (; i < n; i++) total += <u32>(<i8>load<u8>(p + i) > -65);
  return total;
}
