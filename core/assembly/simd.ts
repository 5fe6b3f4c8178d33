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
