// Word extraction for the content-words section (daemon/index/content-words.ts): which
// words each document of a shard holds, grouped by word at the end.
//
// A word is a maximal run of ASCII word bytes [A-Za-z0-9_], taken with its case, of
// MIN_WORD..MAX_WORD bytes (shorter and longer runs are not words here).
//
// # How (and why not a dictionary)
//
// A shard of source code holds several times more word occurrences than (document, word)
// pairs, and far more distinct words than it lists (most are in too few documents). A hash
// table of every distinct word, looked up at each occurrence, was slower than what
// follows: its slots, entries and bytes, many times the cache's size, miss it at every
// rare word, and a per-document table in front of it did not help, since the pairs still
// went to the big table. Instead:
//
// 1. docWords, per document: each word gets a 64-bit key, and a small table of this
//    document's words (in cache) keeps its first occurrence; each new one appends a pair
//    (key, document, ref).
// 2. groupWords, at the end: the pairs are sorted by key, stably (so each key's documents
//    stay ascending), by a radix sort 8 bits at a time from the top (256 places written at
//    once stay in cache; 65,536 did not), and each run of one key is a word with its
//    documents.
//
// The key is exact, not a hash that might collide:
// - A word of up to 8 bytes: its bytes as a little-endian u64 (zero-padded; word bytes are
//   never zero, nor above 0x7f, so bit 63 is 0 and the value gives the bytes back), times
//   the odd constant SHORT_MIX modulo 2^63. Multiplying by an odd number is a bijection
//   modulo a power of two, so equal keys are equal words, and the product's top bits, which
//   the sort and the tables read, depend on every byte.
// - A longer word: bit 63 set, a 57-bit hash of its bytes in bits 6..62, and its length
//   - 9 in bits 0..5; a copy of its bytes goes to the arena and its pair's ref says where.
//   Two long words may share a key; groupWords compares the bytes of every pair of a run
//   with its first and splits a run whose words differ, so a list never holds a document
//   for a word it does not contain. (Tests narrow the hash with `hashMask` to make such
//   runs common.)
//
// # Regions (owned by the glue, core/words.ts WordsBuilder, grown before each call)
//
//   table  per-document table, (mask + 1) entries of 16 bytes: key u64, generation u32
//          (the entry is in use for this document when it equals `gen`), position u32 (the
//          word's offset in the document, to compare a long word's bytes)
//   pairs  16 bytes each: key u64, document u32, ref u32 (a long word's arena offset)
//   arena  long words' bytes, one after the other (+ 8 bytes of slack: 8 are read at a time)
//   state  u32[2]: pairs so far, arena bytes so far (read and updated here)
//
// A document of n bytes adds at most n / (MIN_WORD + 1) + 1 pairs and n arena bytes.

import { hashBytes, sameBytes, tail } from './bytes';

export const MIN_WORD: u32 = 3;
export const MAX_WORD: u32 = 64;

/** Odd: multiplication by it modulo 2^63 is a bijection (SHORT_UNMIX is its inverse). */
const SHORT_MIX: u64 = 0x9e3779b97f4a7c15;
const LOW63: u64 = 0x7fffffffffffffff;
const LONG: u64 = 0x8000000000000000;

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

/** The key of the word p[0, len), 3 <= len <= 64 (layout above). */
// @ts-ignore: decorator
@inline
function wordKey(p: usize, len: u32, hashMask: u64): u64 {
  if (len <= 8) return (tail(p, len) * SHORT_MIX) & LOW63;
  return LONG | ((hashBytes(p, len) & hashMask) << 6) | <u64>(len - 9);
}

/** docWords' answer when the table is too small for the document. */
export const FULL: u32 = 0xffffffff;

// docWords' running totals (wasm globals: kept in registers by the engine, unlike memory).
let pairsSoFar: u32 = 0;
let arenaSoFar: u32 = 0;
/** docWords' entries left before its table is half full. */
let room: u32 = 0;
// The document docWords reads, and its regions (its arguments, for each word).
let docNumber: u32 = 0;
let docTable: usize = 0;
let docMask: u32 = 0;
let docShift: u32 = 0;
let docGen: u32 = 0;
let docPairs: usize = 0;
let docArena: usize = 0;
let docHashMask: u64 = 0;

/**
 * Appends a pair for each distinct word of document `doc` (src[0, n), readable to n + 64:
 * 64 bytes are read at a time), in the order of their first occurrence, and returns how
 * many; or FULL, having changed nothing, when the document has more distinct words than
 * half the table's size (`mask + 1`, a power of two; `shift` is 64 - log2(mask + 1)): the
 * glue sizes the table for a typical document, which keeps it in cache, and calls again
 * with a larger one for the rare one that needs it. `gen` is a number no earlier call on
 * this table gave (0 never). `hashBits` of the long words' hash are kept (57 but in tests,
 * which take fewer to make words share keys).
 */
export function docWords(src: usize, n: u32, doc: u32, table: usize, mask: u32, shift: u32, gen: u32, pairs: usize, arena: usize, state: usize, hashBits: u32): u32 {
  docNumber = doc;
  docTable = table;
  docMask = mask;
  docShift = shift;
  docGen = gen;
  docPairs = pairs;
  docArena = arena;
  docHashMask = (<u64>1 << <u64>min<u32>(hashBits, 57)) - 1;
  const k0 = load<u32>(state);
  pairsSoFar = k0;
  arenaSoFar = load<u32>(state, 4);
  room = (mask + 1) >> 1;
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
      word(src, from, at - from);
      if (room == 0) return FULL;
    }
  }
  // A word running to the end.
  if (open) word(src, from, n - from);
  if (room == 0) return FULL;
  store<u32>(state, pairsSoFar);
  store<u32>(state, arenaSoFar, 4);
  return pairsSoFar - k0;
}

/** One occurrence of a run of word bytes, src[from, from + len) of docWords' document: a pair if it is a word new to the document. */
// @ts-ignore: decorator
@inline
function word(src: usize, from: u32, len: u32): void {
  if (len < MIN_WORD || len > MAX_WORD) return;
  const table = docTable;
  const mask = docMask;
  const gen = docGen;
  const w = src + <usize>from;
  const key = wordKey(w, len, docHashMask);
  let s = <u32>((key << 1) >> <u64>docShift);
  for (;;) {
    const e = table + (<usize>s << 4);
    if (load<u32>(e, 8) != gen) {
      // New to the document.
      store<u64>(e, key);
      store<u32>(e, gen, 8);
      store<u32>(e, from, 12);
      const q = docPairs + (<usize>pairsSoFar << 4);
      store<u64>(q, key);
      store<u32>(q, docNumber, 8);
      let ref: u32 = 0;
      if (len > 8) {
        ref = arenaSoFar;
        memory.copy(docArena + <usize>ref, w, len);
        arenaSoFar = ref + len;
      }
      store<u32>(q, ref, 12);
      pairsSoFar++;
      room--;
      return;
    }
    if (load<u64>(e) == key && (len <= 8 || sameBytes(src + <usize>load<u32>(e, 12), w, len))) return;
    s = (s + 1) & mask;
  }
}

/** Runs at most this long are sorted by insertion; longer ones by their next 8 bits. */
const INSERTION_MAX: u32 = 32;
/** Bits of the key each counting pass sorts by. */
const DIGIT: u32 = 8;

/** groupWords' `counts` region: 257 u32 per level of the radix sort. */
export function wordCountsBytes(): u32 {
  return (64 / DIGIT) * 257 * 4;
}

// groupWords' regions (its arguments, for the sort's passes and splitRun).
let groupCounts: usize = 0;
let groupSorted: usize = 0;
let groupArena: usize = 0;
let groupMinDocs: u32 = 0;
let groupOutWord: usize = 0;
let groupOutCount: usize = 0;
let groupOutDocs: usize = 0;

/** The counts of the radix sort's pass by the 8 bits at `shift` (56 for the first, one level down for each next). */
// @ts-ignore: decorator
@inline
function countsAt(shift: u32): usize {
  return groupCounts + <usize>((56 - shift) / DIGIT) * 257 * 4;
}

/**
 * Sorts the n pairs by key, stably, into `sorted` (room for n pairs); `counts` is
 * wordCountsBytes() of room. Then appends each word found in at least `minDocs` documents
 * to the outputs and returns how many: outWord[j] = the index in the sorted pairs of a
 * pair of word j (its key and ref say what the word is: keptWordBytes), outCount[j] = its
 * documents, whose numbers follow those of the words before it in `outDocs`, ascending.
 * outDocs may be `pairs` itself (free once sorted from: its u32s are written no faster
 * than its pairs are read); outWord and outCount need room for n / minDocs + 1 u32.
 */
export function groupWords(pairs: usize, n: u32, sorted: usize, counts: usize, minDocs: u32, arena: usize, outWord: usize, outCount: usize, outDocs: usize): u32 {
  groupCounts = counts;
  groupSorted = sorted;
  groupArena = arena;
  groupMinDocs = minDocs;
  groupOutWord = outWord;
  groupOutCount = outCount;
  groupOutDocs = outDocs;
  // 1. The top 8 bits, from pairs into sorted.
  radixPass(pairs, sorted, 0, n, 56);
  // 2. Each part sorted the rest of the way (pairs is its scratch), 3. its runs of one key
  // taken as words.
  let kept: u32 = 0;
  let written: u32 = 0;
  let start: u32 = 0;
  for (let d: u32 = 0; d < 256; d++) {
    const end = load<u32>(counts + (<usize>d << 2));
    if (end - start > 1) sortRange(sorted, pairs, start, end, 56);
    let i = start;
    while (i < end) {
      const key = load<u64>(sorted + (<usize>i << 4));
      let j = i + 1;
      while (j < end && load<u64>(sorted + (<usize>j << 4)) == key) j++;
      if (j - i >= minDocs) {
        if ((key & LONG) == 0 || sameWords(key, i, j, sorted, arena)) {
          store<u32>(outWord + (<usize>kept << 2), i);
          store<u32>(outCount + (<usize>kept << 2), j - i);
          for (let r = i; r < j; r++) store<u32>(outDocs + (<usize>(written++) << 2), load<u32>(sorted + (<usize>r << 4), 8));
          kept++;
        } else {
          const res = splitRun(key, i, j, kept, written);
          kept = <u32>(res >> 32);
          written = <u32>res;
        }
      }
      i = j;
    }
    start = end;
  }
  return kept;
}

/**
 * A stable counting sort of pairs [from, to) of `src` by the 8 bits of their keys at
 * `shift`, into the same places of `dst`; counts[d] (countsAt(shift)) ends as where digit
 * d's part ends.
 */
// @ts-ignore: decorator
@inline
function radixPass(src: usize, dst: usize, from: u32, to: u32, shift: u32): void {
  const counts = countsAt(shift);
  memory.fill(counts, 0, 257 * 4);
  const sh = <u64>shift;
  for (let i = from; i < to; i++) {
    const c = counts + ((<usize>((load<u64>(src + (<usize>i << 4)) >> sh) & 0xff) + 1) << 2);
    store<u32>(c, load<u32>(c) + 1);
  }
  store<u32>(counts, from);
  for (let d: usize = 1; d <= 256; d++) store<u32>(counts + (d << 2), load<u32>(counts + (d << 2)) + load<u32>(counts + ((d - 1) << 2)));
  for (let i = from; i < to; i++) {
    const p = src + (<usize>i << 4);
    const c = counts + (<usize>((load<u64>(p) >> sh) & 0xff) << 2);
    const at = load<u32>(c);
    store<u32>(c, at + 1);
    v128.store(dst + (<usize>at << 4), v128.load(p));
  }
}

/**
 * Sorts pairs [from, to) of `pairs`, whose keys agree above bit `bits`, by key, stably;
 * `scratch` has the same places free.
 */
function sortRange(pairs: usize, scratch: usize, from: u32, to: u32, bits: u32): void {
  if (to - from <= INSERTION_MAX || bits == 0) {
    for (let i = from + 1; i < to; i++) {
      const v = v128.load(pairs + (<usize>i << 4));
      const kv = v128.extract_lane<u64>(v, 0);
      let j = i;
      while (j > from && load<u64>(pairs + (<usize>(j - 1) << 4)) > kv) {
        v128.store(pairs + (<usize>j << 4), v128.load(pairs + (<usize>(j - 1) << 4)));
        j--;
      }
      v128.store(pairs + (<usize>j << 4), v);
    }
    return;
  }
  // Keys all equal (a common word's run): nothing to do.
  const first = load<u64>(pairs + (<usize>from << 4));
  let i = from + 1;
  while (i < to && load<u64>(pairs + (<usize>i << 4)) == first) i++;
  if (i == to) return;
  radixPass(pairs, scratch, from, to, bits - DIGIT);
  memory.copy(pairs + (<usize>from << 4), scratch + (<usize>from << 4), <usize>(to - from) << 4);
  const counts = countsAt(bits - DIGIT);
  let s = from;
  for (let d: usize = 0; d < 256; d++) {
    const e = load<u32>(counts + (d << 2));
    if (e - s > 1) sortRange(pairs, scratch, s, e, bits - DIGIT);
    s = e;
  }
}

/** Whether the long words of sorted pairs [i, j) (one key) are all the same. */
function sameWords(key: u64, i: u32, j: u32, sorted: usize, arena: usize): bool {
  const len = <u32>(key & 63) + 9;
  const a = arena + <usize>load<u32>(sorted + (<usize>i << 4), 12);
  for (let r = i + 1; r < j; r++) if (!sameBytes(a, arena + <usize>load<u32>(sorted + (<usize>r << 4), 12), len)) return false;
  return true;
}

/** A pair's ref once splitRun has listed it. */
const TAKEN: u32 = 0xffffffff;

/**
 * A run [i, j) of groupWords' sorted pairs of one long key whose words differ (a hash
 * collision): its words one by one, in the order of their first pair, each with its
 * documents (still ascending; a document holding two of them is listed under each), after
 * the `kept` words and `written` documents before. Returns (kept << 32) | written.
 */
function splitRun(key: u64, i: u32, j: u32, kept: u32, written: u32): u64 {
  const sorted = groupSorted;
  const arena = groupArena;
  const outDocs = groupOutDocs;
  const len = <u32>(key & 63) + 9;
  for (let r = i; r < j; r++) {
    const ref = load<u32>(sorted + (<usize>r << 4), 12);
    if (ref == TAKEN) continue;
    const w = arena + <usize>ref;
    let c: u32 = 0;
    for (let q = r; q < j; q++) {
      const rq = load<u32>(sorted + (<usize>q << 4), 12);
      if (rq != TAKEN && sameBytes(w, arena + <usize>rq, len)) c++;
    }
    const keep = c >= groupMinDocs;
    if (keep) {
      store<u32>(groupOutWord + (<usize>kept << 2), r);
      store<u32>(groupOutCount + (<usize>kept << 2), c);
      store<u32>(outDocs + (<usize>(written++) << 2), load<u32>(sorted + (<usize>r << 4), 8));
      kept++;
    }
    // Pair r is taken last: keptWordBytes reads the word of a kept run's first pair.
    for (let q = r + 1; q < j; q++) {
      const p = sorted + (<usize>q << 4);
      const rq = load<u32>(p, 12);
      if (rq != TAKEN && sameBytes(w, arena + <usize>rq, len)) {
        if (keep) store<u32>(outDocs + (<usize>(written++) << 2), load<u32>(p, 8));
        store<u32>(p, TAKEN, 12);
      }
    }
  }
  return (<u64>kept << 32) | <u64>written;
}

/**
 * The bytes of the k words groupWords found (outWord: the index of one of each word's
 * sorted pairs), one after the other at `out` (room for k x MAX_WORD bytes + 8), word j at
 * out[offs[j], offs[j + 1]) (offs: k + 1 u32). Returns the bytes written.
 */
export function keptWordBytes(sorted: usize, outWord: usize, k: u32, arena: usize, out: usize, offs: usize): u32 {
  // The inverse of SHORT_MIX modulo 2^64, by Newton's iteration (each step doubles the
  // correct low bits: 3 -> 6 -> 12 -> 24 -> 48 -> 96), is its inverse modulo 2^63 too.
  let inv: u64 = SHORT_MIX;
  for (let s = 0; s < 5; s++) inv *= 2 - SHORT_MIX * inv;
  let at: u32 = 0;
  store<u32>(offs, 0);
  for (let j: u32 = 0; j < k; j++) {
    const i = load<u32>(outWord + (<usize>j << 2));
    const p = sorted + (<usize>i << 4);
    const key = load<u64>(p);
    let len: u32;
    if ((key & LONG) != 0) {
      len = <u32>(key & 63) + 9;
      memory.copy(out + <usize>at, arena + <usize>load<u32>(p, 12), len);
    } else {
      const raw = (key * inv) & LOW63;
      store<u64>(out + <usize>at, raw);
      len = 8 - <u32>(clz<u64>(raw) >> 3);
    }
    at += len;
    store<u32>(offs + (<usize>(j + 1) << 2), at);
  }
  return at;
}
