// Byte-class sequence search: where a document holds k consecutive bytes b[0..k) with each
// b[i] in a class C[i] (`\d{10}` is ten times the digits; `[A-Z]{6}_[0-9]{2}` six classes of
// capitals, one of '_', two of digits). A regex with no usable literal still requires such
// a sequence of every match (daemon/query/regex-sequence.ts), and this scan rules out most
// documents at memory speed, far faster than RE2 reads them.
//
// Candidate filter, as findLiteral's: for 16 starts at once, test two positions of the
// sequence (the glue picks them: A at offset pa, B at pb, C at pc) with a
// nibble lookup ("shufti"): a byte v is in a class when lo[v & 15] & hi[v >> 4] != 0, which
// represents any set of ASCII bytes exactly (one bit per distinct set of low nibbles among
// the high nibbles 0-7; bytes >= 0x80 look up a zero). Only the starts that pass both are
// verified, position by position, against a table of 256 words (bit i of word v: v in C[i]).
//
// Program layout (built by core/classes.ts, compileClassSequence): loA[16] hiA[16] loB[16]
// hiB[16] loC[16] hiC[16]; at 96 a byte per filter class, 1 when it is one range (then
// its lo holds the range's first byte and its hi its width, in every lane); at 128 the
// verification table u32[256]; 1,152 bytes.

const FLAGS: usize = 96;
const TABLE: usize = 128;

// @ts-ignore: decorator
@inline
function member(v: v128, lo: v128, hi: v128, range: bool): v128 {
  // A class of one range of bytes (digits, capitals, one byte): lo holds its first byte and
  // hi its width in every lane, and v - first < width (unsigned) tests it in two steps.
  if (range) return i8x16.lt_u(i8x16.sub(v, lo), hi);
  const l = v128.and(v, i8x16.splat(0x0f));
  const h = i8x16.shr_u(v, 4);
  return i8x16.ne(v128.and(i8x16.swizzle(lo, l), i8x16.swizzle(hi, h)), i8x16.splat(0));
}

/** Whether the k bytes at s are in their classes. */
function verifyAt(s: usize, table: usize, k: u32): bool {
  for (let i: u32 = 0; i < k; i++) {
    if (((load<u32>(table + (<usize>load<u8>(s + i) << 2)) >>> i) & 1) == 0) return false;
  }
  return true;
}

/**
 * Writes to out (u32 each) the starts of the leftmost non-overlapping occurrences of the
 * program's sequence of k classes (1 <= k <= 32) in hay[0, n), at most `max`, and returns
 * how many. pa, pb, pc: the offsets in the sequence of the three filter classes (< k).
 *
 * Memory contract: at least 16 readable bytes must follow hay + n (lanes past the last
 * possible start are masked off); out needs `max` entries.
 */
export function findClassSequence(hay: usize, n: u32, prog: usize, k: u32, pa: u32, pb: u32, pc: u32, out: usize, max: u32): u32 {
  if (k == 0 || k > 32 || k > n || max == 0) return 0;
  const rA = load<u8>(prog + FLAGS) != 0;
  const rB = load<u8>(prog + FLAGS + 1) != 0;
  const rC = load<u8>(prog + FLAGS + 2) != 0;
  const loA = v128.load(prog);
  const hiA = v128.load(prog + 16);
  const loB = v128.load(prog + 32);
  const hiB = v128.load(prog + 48);
  const loC = v128.load(prog + 64);
  const hiC = v128.load(prog + 80);
  const table = prog + TABLE;
  const lastStart = n - k;
  let count: u32 = 0;
  let next: u32 = 0; // non-overlapping: the earliest start the next occurrence may have
  let p: u32 = 0;
  while (p <= lastStart) {
    // Most blocks have no candidate: 64 starts a round, one test.
    while (p + 63 <= lastStart) {
      const c0 = v128.and(member(v128.load(hay + p + pa), loA, hiA, rA), v128.and(member(v128.load(hay + p + pb), loB, hiB, rB), member(v128.load(hay + p + pc), loC, hiC, rC)));
      const c1 = v128.and(member(v128.load(hay + p + pa + 16), loA, hiA, rA), v128.and(member(v128.load(hay + p + pb + 16), loB, hiB, rB), member(v128.load(hay + p + pc + 16), loC, hiC, rC)));
      const c2 = v128.and(member(v128.load(hay + p + pa + 32), loA, hiA, rA), v128.and(member(v128.load(hay + p + pb + 32), loB, hiB, rB), member(v128.load(hay + p + pc + 32), loC, hiC, rC)));
      const c3 = v128.and(member(v128.load(hay + p + pa + 48), loA, hiA, rA), v128.and(member(v128.load(hay + p + pb + 48), loB, hiB, rB), member(v128.load(hay + p + pc + 48), loC, hiC, rC)));
      if (v128.any_true(v128.or(v128.or(c0, c1), v128.or(c2, c3)))) break;
      p += 64;
    }
    const blockEnd = p + 64;
    while (p < blockEnd && p <= lastStart) {
      const c = v128.and(member(v128.load(hay + p + pa), loA, hiA, rA), v128.and(member(v128.load(hay + p + pb), loB, hiB, rB), member(v128.load(hay + p + pc), loC, hiC, rC)));
      let mask = i8x16.bitmask(c);
      const left = lastStart - p;
      if (left < 15) mask &= (2 << left) - 1; // lanes past lastStart read padding
      while (mask != 0) {
        const j = <u32>ctz<i32>(mask);
        mask &= mask - 1;
        const s = p + j;
        if (s < next || !verifyAt(hay + s, table, k)) continue;
        store<u32>(out + (<usize>count << 2), s);
        count++;
        if (count >= max) return count;
        next = s + k;
      }
      p += 16;
    }
  }
  return count;
}
