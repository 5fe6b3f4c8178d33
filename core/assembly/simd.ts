// Small SIMD helpers shared by the other modules.

/**
 * ASCII lower-casing of 16 bytes at once: lanes holding 'A'..'Z' get bit 0x20 set, every
 * other lane is unchanged. `v - 'A' <u 26` is the classic one-compare range test; upper-case
 * letters have bit 0x20 clear, so OR-ing it in is the same as adding 32.
 */
// @ts-ignore: decorator
@inline
export function lowerAscii16(v: v128): v128 {
  const inRange = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x41)), i8x16.splat(26));
  return v128.or(v, v128.and(inRange, i8x16.splat(0x20)));
}

/** Scalar twin of lowerAscii16. */
// @ts-ignore: decorator
@inline
export function lowerAscii(b: u32): u32 {
  return b - 0x41 < 26 ? b | 0x20 : b;
}

/**
 * Sum of the sixteen u8 lanes of `acc`. Used by the byte counters, which accumulate
 * per-lane match counts (at most 255 per lane) and reduce only every 255 blocks.
 */
// @ts-ignore: decorator
@inline
export function sumU8Lanes(acc: v128): u32 {
  const s32 = i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(acc));
  return <u32>(i32x4.extract_lane(s32, 0) + i32x4.extract_lane(s32, 1) +
               i32x4.extract_lane(s32, 2) + i32x4.extract_lane(s32, 3));
}
