// C's identifier bytes, as trawl's C scanner reads them (cscan.ts, and the body reader it
// uses, cbody.ts): a letter, `_`, `$` or any byte >= 0x80 starts one; those and digits
// continue it.

// @ts-ignore: decorator
@inline
export function identStart(c: u32): bool {
  return (c | 0x20) - 0x61 < 26 || c == 0x5f || c == 0x24 || c >= 0x80;
}

// @ts-ignore: decorator
@inline
export function identPart(c: u32): bool {
  return identStart(c) || c - 0x30 < 10;
}

/** Lanes of v that are identifier bytes (identPart). */
// @ts-ignore: decorator
@inline
export function identLanes(v: v128): v128 {
  const letter = i8x16.lt_u(i8x16.sub(v128.or(v, i8x16.splat(0x20)), i8x16.splat(0x61)), i8x16.splat(26));
  const digit = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x30)), i8x16.splat(10));
  const other = v128.or(v128.or(i8x16.eq(v, i8x16.splat(0x5f)), i8x16.eq(v, i8x16.splat(0x24))), i8x16.lt_s(v, i8x16.splat(0)));
  return v128.or(v128.or(letter, digit), other);
}
