// Literal search: leftmost non-overlapping occurrences of a needle in a haystack.
//
// Candidate filter ("SIMD-friendly substring search"): for 16 start positions p..p+15 at
// once, compare hay[p + k + pa] and hay[p + k + pb] with the needle's bytes at two probe
// offsets pa < pb; only lanes where both match are verified byte by byte. The caller picks
// the needle's two rarest bytes as probes (core/verify.ts, by a table of how often each byte
// occurs in source code): the rarer they are, the rarer false candidates, so most blocks
// have none and are passed over 64 starts a round with a single test; a block with a
// candidate is taken 16 at a time. (First and last byte, the textbook probes, are often
// common letters in identifiers: `release_filter` has an `r` at both ends.)
//
// Case-insensitive mode (ASCII only): the needle is lower-cased in place first. For a
// letter, `(h | 0x20) == lower` holds exactly for its two cases, so the filter ORs 0x20
// into the hay lanes when (and only when) the needle byte is a letter; non-letters are
// compared exactly (mask 0), which keeps e.g. '@' from matching '`'.

import { lowerAscii, lowerAscii16 } from './simd';

// @ts-ignore: decorator
@inline
function isLower(b: u32): bool {
  return b - 0x61 < 26;
}

/**
 * Writes to out (u32 each) the start offsets of the leftmost non-overlapping occurrences
 * of needle[0, m) in hay[0, n), at most `max` of them, and returns how many.
 *
 * Memory contract: at least 16 readable bytes must follow hay + n (their content does not
 * matter - lanes past the last possible start are masked off), and the needle buffer is
 * modified (lower-cased) when ci != 0. Requires m >= 1 and probe offsets pa <= pb < m (pa
 * == pb for a needle of one byte); out needs `max` entries.
 */
export function findLiteral(hay: usize, n: u32, needle: usize, m: u32, ci: i32, out: usize, max: u32, pa: u32, pb: u32): u32 {
  if (m == 0 || m > n || max == 0 || pa > pb || pb >= m) return 0;
  if (ci) {
    for (let i: u32 = 0; i < m; i++) store<u8>(needle + i, <u8>lowerAscii(<u32>load<u8>(needle + i)));
  }
  const first = <u32>load<u8>(needle + pa);
  const lastB = <u32>load<u8>(needle + pb);
  const fMask = i8x16.splat(<i8>(ci && isLower(first) ? 0x20 : 0));
  const lMask = i8x16.splat(<i8>(ci && isLower(lastB) ? 0x20 : 0));
  const fVec = i8x16.splat(<i8>first);
  const lVec = i8x16.splat(<i8>lastB);
  const lastStart = n - m; // greatest possible start
  let count: u32 = 0;
  let p: u32 = 0;
  while (p <= lastStart) {
    // Most of a haystack has no candidate at all: skip it 64 starts at a time (four
    // independent blocks per round keep the loads in flight; one test per round).
    while (p + 63 <= lastStart) {
      const c0 = v128.and(i8x16.eq(v128.or(v128.load(hay + p + pa), fMask), fVec), i8x16.eq(v128.or(v128.load(hay + p + pb), lMask), lVec));
      const c1 = v128.and(i8x16.eq(v128.or(v128.load(hay + p + pa + 16), fMask), fVec), i8x16.eq(v128.or(v128.load(hay + p + pb + 16), lMask), lVec));
      const c2 = v128.and(i8x16.eq(v128.or(v128.load(hay + p + pa + 32), fMask), fVec), i8x16.eq(v128.or(v128.load(hay + p + pb + 32), lMask), lVec));
      const c3 = v128.and(i8x16.eq(v128.or(v128.load(hay + p + pa + 48), fMask), fVec), i8x16.eq(v128.or(v128.load(hay + p + pb + 48), lMask), lVec));
      if (v128.any_true(v128.or(v128.or(c0, c1), v128.or(c2, c3)))) break;
      p += 64;
    }
    // The block of 64 with a candidate (or the last few starts), 16 starts at a time.
    const blockEnd = p + 64;
    while (p < blockEnd && p <= lastStart) {
      const a = v128.load(hay + p + pa);
      const b = v128.load(hay + p + pb);
      const hit = v128.and(i8x16.eq(v128.or(a, fMask), fVec), i8x16.eq(v128.or(b, lMask), lVec));
      let mask = i8x16.bitmask(hit);
      const left = lastStart - p;
      if (left < 15) mask &= (2 << left) - 1; // lanes past lastStart read padding
      let next = p + 16;
      while (mask != 0) {
        const k = <u32>ctz<i32>(mask);
        mask &= mask - 1;
        const s = p + k;
        if (m == 1 || equalBytes(hay + s, needle, m, ci)) {
          store<u32>(out + (<usize>count << 2), s);
          count++;
          if (count >= max) return count;
          // Non-overlapping: the next match may start at s + m at the earliest.
          const resume = s + m;
          const skip = resume - p;
          if (skip >= 16) {
            next = resume;
            break;
          }
          mask &= -1 << skip;
        }
      }
      p = next;
    }
  }
  return count;
}

/** hay[0, len) == needle[0, len), ASCII case-insensitively when ci (needle already lower). */
function equalBytes(h: usize, nd: usize, len: u32, ci: i32): bool {
  let i: u32 = 0;
  if (ci) {
    while (i + 16 <= len) {
      if (v128.any_true(v128.xor(lowerAscii16(v128.load(h + i)), v128.load(nd + i)))) return false;
      i += 16;
    }
    while (i < len) {
      if (lowerAscii(<u32>load<u8>(h + i)) != <u32>load<u8>(nd + i)) return false;
      i++;
    }
    return true;
  }
  while (i + 16 <= len) {
    if (v128.any_true(v128.xor(v128.load(h + i), v128.load(nd + i)))) return false;
    i += 16;
  }
  while (i + 8 <= len) {
    if (load<u64>(h + i) != load<u64>(nd + i)) return false;
    i += 8;
  }
  while (i < len) {
    if (load<u8>(h + i) != load<u8>(nd + i)) return false;
    i++;
  }
  return true;
}
