// Word extraction for the content-words section (shard-reader.ts): the distinct words of a
// document, interned into a dictionary that lives across the documents of one shard.
//
// A word is a maximal run of ASCII word bytes [A-Za-z0-9_], taken with its case, of
// MIN_WORD..MAX_WORD bytes (shorter and longer runs are not words here). The dictionary is
// an open-addressing hash table over entries whose bytes are kept in an arena; the glue
// (core/index.ts WordsBuilder) owns every region and grows them before each call, so that a
// call never runs out of room:
//
//   slots    u32[mask + 1]   entry index + 1 per slot, 0 when empty (linear probing)
//   entries  u32[4] each     hash, offset of its bytes in the arena, length, last doc + 1
//   arena    the words' bytes, one after the other
//   state    u32[2]          entries in use, arena bytes in use (read and updated here)
//   out      u32 per word    the entry of each word new to this document, appended
//
// Word bytes are classified 64 at a time (SIMD) and a word hashed 8 bytes at a time: on
// 100 MB of Linux's C, add() went 530 -> ~295 ms (the byte-at-a-time loop and its FNV
// hash were ~300 ms of it; the rest is the table's lookups, ~37 ns a word, which a
// per-document table in front of it did not shorten).
//
// A document of n bytes adds at most n / (MIN_WORD + 1) + 1 words, entries and arena
// bytes up to n; the glue keeps the table at most half full after any call.

export const MIN_WORD: u32 = 3;
export const MAX_WORD: u32 = 64;

/**
 * Bit j set when src[p + j] is a word byte, for j < 64 (the bytes are read whether or not
 * they are the document's: the glue pads it).
 */
// @ts-ignore: decorator
@inline
function wordMask(p: usize): u64 {
  let m: u64 = 0;
  for (let b: usize = 0; b < 4; b++) {
    const v = v128.load(p + (b << 4));
    const letter = i8x16.lt_u(i8x16.sub(v128.or(v, i8x16.splat(0x20)), i8x16.splat(0x61)), i8x16.splat(26));
    const digit = i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x30)), i8x16.splat(10));
    const under = i8x16.eq(v, i8x16.splat(0x5f));
    m |= <u64>(<u32>i8x16.bitmask(v128.or(v128.or(letter, digit), under))) << (<u64>b << 4);
  }
  return m;
}

/** The bytes p[0, len) as little-endian words: the last one holds only the bytes below len (7 bytes past it are read). */
// @ts-ignore: decorator
@inline
function tail(p: usize, len: u32): u64 {
  return load<u64>(p) & (len >= 8 ? <u64>-1 : (<u64>1 << (<u64>len << 3)) - 1);
}

/** A word's hash (len 1..MAX_WORD): 8 bytes at a time. */
// @ts-ignore: decorator
@inline
function wordHash(p: usize, len: u32): u32 {
  let h: u64 = <u64>len * 0x9e3779b97f4a7c15;
  let off: u32 = 0;
  for (; off + 8 <= len; off += 8) h = rotl<u64>((h ^ load<u64>(p + off)) * 0xbf58476d1ce4e5b9, 29);
  if (off < len) h = rotl<u64>((h ^ tail(p + off, len - off)) * 0xbf58476d1ce4e5b9, 29);
  h = (h ^ (h >> 32)) * 0x94d049bb133111eb;
  return <u32>(h >> 32);
}

/** a[0, n) == b[0, n), 8 bytes at a time (7 bytes past both are read). */
// @ts-ignore: decorator
@inline
function sameBytes(a: usize, b: usize, n: u32): bool {
  let off: u32 = 0;
  for (; off + 8 <= n; off += 8) if (load<u64>(a + off) != load<u64>(b + off)) return false;
  return off >= n || tail(a + off, n - off) == tail(b + off, n - off);
}

/**
 * Interns the words of src[0, n) for document `doc` and appends to `out` the entry of each
 * word that `doc` had not shown before, in the order of their first occurrence. Returns how
 * many were appended. src must be readable to n + 64 (a 64-byte window is read at a
 * time), the arena to its end + 8.
 */
export function distinctWords(src: usize, n: u32, doc: u32, slots: usize, mask: u32, entries: usize, arena: usize, state: usize, out: usize): u32 {
  const mark = doc + 1;
  let k: u32 = 0;
  // Word bytes are found 64 at a time: a word starts where a word byte follows another
  // byte, ends where a word byte is followed by another; the two alternate, so that each
  // bit of starts | ends, in order, opens or closes a word.
  let prev: u64 = 0; // whether the byte before the window is a word byte
  let open = false;
  let from: u32 = 0;
  for (let p: u32 = 0; p < n; p += 64) {
    let m = wordMask(src + <usize>p);
    if (n - p < 64) m &= (<u64>1 << <u64>(n - p)) - 1;
    const shifted = (m << 1) | prev;
    let edges = (m & ~shifted) | (~m & shifted);
    prev = m >> 63;
    while (edges != 0) {
      const at = p + <u32>ctz<u64>(edges);
      edges &= edges - 1;
      if (!open) {
        from = at;
        open = true;
        continue;
      }
      open = false;
      const len = at - from;
      if (len >= MIN_WORD && len <= MAX_WORD) k = word(state, mark, src + <usize>from, len, slots, mask, entries, arena, out, k);
    }
  }
  if (open) {
    const len = n - from;
    if (len >= MIN_WORD && len <= MAX_WORD) k = word(state, mark, src + <usize>from, len, slots, mask, entries, arena, out, k);
  }
  return k;
}

/** One occurrence of a word (w, len bytes): appended to out at k if new to the document. Returns the new k. */
// @ts-ignore: decorator
@inline
function word(state: usize, mark: u32, w: usize, len: u32, slots: usize, mask: u32, entries: usize, arena: usize, out: usize, k: u32): u32 {
  const h = wordHash(w, len);
  let s = h & mask;
  for (;;) {
    const slot = slots + (<usize>s << 2);
    const v = load<u32>(slot);
    if (v == 0) {
      // A word new to the shard.
      const used = load<u32>(state);
      const arenaUsed = load<u32>(state, 4);
      const e = entries + (<usize>used << 4);
      memory.copy(arena + <usize>arenaUsed, w, len);
      store<u32>(e, h);
      store<u32>(e, arenaUsed, 4);
      store<u32>(e, len, 8);
      store<u32>(e, mark, 12);
      store<u32>(slot, used + 1);
      store<u32>(out + (<usize>k << 2), used);
      store<u32>(state, used + 1);
      store<u32>(state, arenaUsed + len, 4);
      return k + 1;
    }
    const e = entries + (<usize>(v - 1) << 4);
    if (load<u32>(e) == h && load<u32>(e, 8) == len && sameBytes(arena + <usize>load<u32>(e, 4), w, len)) {
      if (load<u32>(e, 12) == mark) return k;
      store<u32>(e, mark, 12);
      store<u32>(out + (<usize>k << 2), v - 1);
      return k + 1;
    }
    s = (s + 1) & mask;
  }
  return k; // (never reached: the table always has an empty slot)
}

/** Re-inserts entries[0, used) into the empty table `slots` (mask + 1 slots), after the glue grew it. */
export function rehashWords(slots: usize, mask: u32, entries: usize, used: u32): void {
  for (let j: u32 = 0; j < used; j++) {
    let s = load<u32>(entries + (<usize>j << 4)) & mask;
    while (load<u32>(slots + (<usize>s << 2)) != 0) s = (s + 1) & mask;
    store<u32>(slots + (<usize>s << 2), j + 1);
  }
}
