// Index folding (see core/fold.ts foldBytes for the contract and the reason).
//
//   'A'..'Z'        -> 'a'..'z'
//   E2 84 AA (K, U+212A KELVIN SIGN)       -> 'k'
//   C5 BF    (ſ, U+017F LATIN SMALL LONG S) -> 's'
//   every other byte unchanged (a lone / truncated E2 84 or C5 is copied as is)
//
// The output is never longer than the input, so it is written to a separate buffer with
// a write cursor that lags the read cursor.

import { lowerAscii, lowerAscii16 } from './simd';

/**
 * Folds src[0, n) into dst and returns the folded length (<= n).
 * dst must have room for n + 16 bytes: the SIMD path stores whole 16-byte blocks and only
 * then advances the write cursor by the number of bytes that were final.
 */
export function fold(src: usize, n: u32, dst: usize): u32 {
  let i: u32 = 0;
  let o: u32 = 0;
  const e2 = i8x16.splat(<i8>0xE2);
  const c5 = i8x16.splat(<i8>0xC5);
  while (i + 16 <= n) {
    const v = v128.load(src + i);
    // The only lead bytes that can start a multi-byte fold. Source code is almost all
    // ASCII, so the common block has none and is folded and stored in one go.
    const special = i8x16.bitmask(v128.or(i8x16.eq(v, e2), i8x16.eq(v, c5)));
    v128.store(dst + o, lowerAscii16(v));
    if (special == 0) {
      i += 16;
      o += 16;
      continue;
    }
    // Keep the bytes before the first special lead byte, then handle it in scalar code.
    const k = <u32>ctz<i32>(special);
    i += k;
    o += k;
    const step = foldSpecial(src, n, i, dst + o);
    i += step;
    o += 1;
  }
  while (i < n) {
    const b = <u32>load<u8>(src + i);
    if (b == 0xE2 || b == 0xC5) {
      i += foldSpecial(src, n, i, dst + o);
    } else {
      store<u8>(dst + o, lowerAscii(b));
      i += 1;
    }
    o += 1;
  }
  return o;
}

/**
 * src[i] is E2 or C5: writes one byte at out and returns how many input bytes it consumed
 * (3 for a Kelvin sign, 2 for a long s, 1 otherwise - the lead byte itself, unchanged).
 */
// @ts-ignore: decorator
@inline
function foldSpecial(src: usize, n: u32, i: u32, out: usize): u32 {
  const b = <u32>load<u8>(src + i);
  if (b == 0xE2) {
    if (i + 2 < n && load<u8>(src + i + 1) == 0x84 && load<u8>(src + i + 2) == 0xAA) {
      store<u8>(out, 0x6B); // 'k'
      return 3;
    }
  } else if (i + 1 < n && load<u8>(src + i + 1) == 0xBF) {
    store<u8>(out, 0x73); // 's'
    return 2;
  }
  store<u8>(out, <u8>b);
  return 1;
}
