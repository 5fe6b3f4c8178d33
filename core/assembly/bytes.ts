// Byte strings in memory, 8 bytes at a time: the words' and the symbol names' comparisons
// and hashes (words.ts, names.ts). Each reads up to 7 bytes past the strings it is given:
// the glue leaves slack after every region they read.

/** The bytes p[0, len) as a little-endian word: only the bytes below len (8 are read). */
// @ts-ignore: decorator
@inline
export function tail(p: usize, len: u32): u64 {
  return load<u64>(p) & (len >= 8 ? <u64>-1 : (<u64>1 << (<u64>len << 3)) - 1);
}

/** a[0, n) == b[0, n). */
// @ts-ignore: decorator
@inline
export function sameBytes(a: usize, b: usize, n: u32): bool {
  let off: u32 = 0;
  for (; off + 8 <= n; off += 8) if (load<u64>(a + off) != load<u64>(b + off)) return false;
  return off >= n || tail(a + off, n - off) == tail(b + off, n - off);
}

/** A 64-bit hash of p[0, len), 8 bytes at a time (a multiply-rotate round per word, then a final mix). */
// @ts-ignore: decorator
@inline
export function hashBytes(p: usize, len: u32): u64 {
  let h: u64 = <u64>len * 0x9e3779b97f4a7c15;
  let off: u32 = 0;
  for (; off + 8 <= len; off += 8) h = rotl<u64>((h ^ load<u64>(p + off)) * 0xbf58476d1ce4e5b9, 29);
  if (off < len) h = rotl<u64>((h ^ tail(p + off, len - off)) * 0xbf58476d1ce4e5b9, 29);
  return (h ^ (h >> 32)) * 0x94d049bb133111eb;
}
