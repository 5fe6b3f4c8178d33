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
// A document of n bytes adds at most n / (MIN_WORD + 1) + 1 words, entries and arena
// bytes up to n; the glue keeps the table at most half full after any call.

export const MIN_WORD: u32 = 3;
export const MAX_WORD: u32 = 64;

// @ts-ignore: decorator
@inline
function isWordByte(b: u32): bool {
  return (b | 0x20) - 0x61 < 26 || b - 0x30 < 10 || b == 0x5f;
}

// @ts-ignore: decorator
@inline
function sameBytes(a: usize, b: usize, n: u32): bool {
  for (let i: usize = 0; i < <usize>n; i++) if (load<u8>(a + i) != load<u8>(b + i)) return false;
  return true;
}

/**
 * Interns the words of src[0, n) for document `doc` and appends to `out` the entry of each
 * word that `doc` had not shown before. Returns how many were appended.
 */
export function distinctWords(src: usize, n: u32, doc: u32, slots: usize, mask: u32, entries: usize, arena: usize, state: usize, out: usize): u32 {
  let used = load<u32>(state);
  let arenaUsed = load<u32>(state, 4);
  const mark = doc + 1;
  let k: u32 = 0;
  let i: u32 = 0;
  while (i < n) {
    // Skip to the next word byte.
    while (i < n && !isWordByte(<u32>load<u8>(src + <usize>i))) i++;
    if (i >= n) break;
    const start = i;
    let h: u32 = 0x811c9dc5;
    while (i < n) {
      const b = <u32>load<u8>(src + <usize>i);
      if (!isWordByte(b)) break;
      h = (h ^ b) * 0x01000193;
      i++;
    }
    const len = i - start;
    if (len < MIN_WORD || len > MAX_WORD) continue;
    h ^= h >> 15;
    let s = h & mask;
    for (;;) {
      const slot = slots + (<usize>s << 2);
      const v = load<u32>(slot);
      if (v == 0) {
        // A word new to the shard.
        const e = entries + (<usize>used << 4);
        memory.copy(arena + <usize>arenaUsed, src + <usize>start, len);
        store<u32>(e, h);
        store<u32>(e, arenaUsed, 4);
        store<u32>(e, len, 8);
        store<u32>(e, mark, 12);
        store<u32>(slot, used + 1);
        store<u32>(out + (<usize>k << 2), used);
        k++;
        used++;
        arenaUsed += len;
        break;
      }
      const e = entries + (<usize>(v - 1) << 4);
      if (load<u32>(e) == h && load<u32>(e, 8) == len && sameBytes(arena + <usize>load<u32>(e, 4), src + <usize>start, len)) {
        if (load<u32>(e, 12) != mark) {
          store<u32>(e, mark, 12);
          store<u32>(out + (<usize>k << 2), v - 1);
          k++;
        }
        break;
      }
      s = (s + 1) & mask;
    }
  }
  store<u32>(state, used);
  store<u32>(state, arenaUsed, 4);
  return k;
}

/** Re-inserts entries[0, used) into the empty table `slots` (mask + 1 slots), after the glue grew it. */
export function rehashWords(slots: usize, mask: u32, entries: usize, used: u32): void {
  for (let j: u32 = 0; j < used; j++) {
    let s = load<u32>(entries + (<usize>j << 4)) & mask;
    while (load<u32>(slots + (<usize>s << 2)) != 0) s = (s + 1) & mask;
    store<u32>(slots + (<usize>s << 2), j + 1);
  }
}
