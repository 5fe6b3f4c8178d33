// Posting lists: counting sort of (trigram, doc) pairs into per-trigram doc lists, and the
// varint encoding of those lists.
//
// Inputs built by the glue while documents are added:
//   pairs     u32[P]  the distinct trigrams of doc 0, then of doc 1, ... (no doc ids), as
//                     byte-reversed keys (ngrams.distinctTrigrams) until countTrigrams
//                     rewrites them in place as trigram ids
//   masks     u8[P]   each pair's follow mask (ngrams.distinctTrigrams)
//   docCounts u32[D]  how many of `pairs` belong to each doc, in doc order
// Working table during finish():
//   table     u32[2^24] indexed by trigram id: first a count, then a write cursor
//
// Encoding of one posting list (read by decodeList / core/postings.ts decodePostings):
//   the ascending doc ids d0 < d1 < ... < d(c-1) are written as the deltas
//   d0, d1 - d0, ..., d(c-1) - d(c-2), each as an unsigned LEB128 varint: 7 bits per byte,
//   least significant group first, bit 0x80 set on every byte except the last of a value.
//   Lists are concatenated without separators; the list's doc count (kept beside its id)
//   says where it ends.
// Follow masks (scatterDocs): one byte per posting, in the lists' order, list after list
// (list k's start is the sum of the counts before it): bit (b & 7) is set when some
// occurrence of the trigram in that document is followed by the folded byte b.

import { trigramIdOfKey } from './ngrams';

export const TABLE_ENTRIES: u32 = 1 << 24;

/**
 * Rewrites each key of pairs[0, n) as its trigram id t and does table[t] += 1.
 * table must be zeroed first.
 */
export function countTrigrams(pairs: usize, n: u32, table: usize): void {
  for (let i: u32 = 0; i < n; i++) {
    const q = pairs + (<usize>i << 2);
    const t = trigramIdOfKey(load<u32>(q));
    store<u32>(q, t);
    const p = table + (<usize>t << 2);
    store<u32>(p, load<u32>(p) + 1);
  }
}

/**
 * Rewrites each key of pairs[0, n) as its trigram id, as countTrigrams does, without a
 * table: for the sorting path of a small builder (core/postings-builder.ts, PostingsBuilder.finish).
 */
export function keysToIds(pairs: usize, n: u32): void {
  for (let i: u32 = 0; i < n; i++) {
    const q = pairs + (<usize>i << 2);
    store<u32>(q, trigramIdOfKey(load<u32>(q)));
  }
}

/** Number of non-zero entries of table. Scans four entries per v128. */
export function countDistinct(table: usize): u32 {
  let k: u32 = 0;
  const end = table + (<usize>TABLE_ENTRIES << 2);
  const zero = i32x4.splat(0);
  for (let p = table; p < end; p += 16) {
    const v = v128.load(p);
    if (!v128.any_true(v)) continue;
    k += <u32>popcnt<i32>(i32x4.bitmask(i32x4.ne(v, zero)));
  }
  return k;
}

/**
 * For every non-zero table entry, in ascending trigram order: ids[k] = trigram,
 * counts[k] = its count; and the entry is replaced by the exclusive prefix sum of the
 * counts, i.e. where that trigram's doc list starts in the scattered doc array.
 * Returns the number of distinct trigrams (ids/counts need countDistinct() entries).
 */
export function collectTrigrams(table: usize, ids: usize, counts: usize): u32 {
  let k: u32 = 0;
  let start: u32 = 0;
  for (let t: u32 = 0; t < TABLE_ENTRIES; t += 4) {
    const base = table + (<usize>t << 2);
    // Most of the 2^24 ids never occur; skip empty groups of four with one test.
    if (!v128.any_true(v128.load(base))) continue;
    for (let j: u32 = 0; j < 4; j++) {
      const p = base + (<usize>j << 2);
      const c = load<u32>(p);
      if (c == 0) continue;
      store<u32>(ids + (<usize>k << 2), t + j);
      store<u32>(counts + (<usize>k << 2), c);
      store<u32>(p, start);
      start += c;
      k++;
    }
  }
  return k;
}

/**
 * Scatters doc ids: for doc d (in ascending order) and each of its trigrams t,
 * docs[table[t]] = d and follow[table[t]] = masks[i] (the pair's follow mask,
 * ngrams.distinctTrigrams), then table[t]++. Because docs are visited in ascending order
 * every list comes out sorted without a comparison sort, its masks beside it.
 */
export function scatterDocs(pairs: usize, masks: usize, docCounts: usize, numDocs: u32, table: usize, docs: usize, follow: usize): void {
  let i: u32 = 0;
  for (let d: u32 = 0; d < numDocs; d++) {
    const stop = i + load<u32>(docCounts + (<usize>d << 2));
    for (; i < stop; i++) {
      const p = table + (<usize>load<u32>(pairs + (<usize>i << 2)) << 2);
      const at = load<u32>(p);
      store<u32>(p, at + 1);
      store<u32>(docs + (<usize>at << 2), d);
      store<u8>(follow + <usize>at, load<u8>(masks + <usize>i));
    }
  }
}

/**
 * Encodes the K consecutive lists of `docs` (list k has counts[k] entries) into blob,
 * writing the byte offset of list k to offsets[k]. Returns the blob length.
 * blob needs at most 5 bytes per doc entry.
 */
export function encodeLists(docs: usize, counts: usize, k: u32, blob: usize, offsets: usize): u32 {
  let q = blob;
  let i: usize = 0;
  for (let j: u32 = 0; j < k; j++) {
    store<u32>(offsets + (<usize>j << 2), <u32>(q - blob));
    const stop = i + <usize>load<u32>(counts + (<usize>j << 2));
    let prev: u32 = 0;
    for (; i < stop; i++) {
      const d = load<u32>(docs + (i << 2));
      let v = d - prev;
      prev = d;
      while (v >= 0x80) {
        store<u8>(q, (v & 0x7F) | 0x80);
        q++;
        v >>= 7;
      }
      store<u8>(q, v);
      q++;
    }
  }
  return <u32>(q - blob);
}

/**
 * Decodes `count` doc ids from src[0, len) into out (u32[count]), keeping only those whose
 * follow mask (follow[j] for the j-th id) holds every bit of `want`; want 0 keeps all and
 * never reads `follow`. Returns how many were kept, or -1 if the input ends early, a
 * varint is longer than 5 bytes / does not fit 32 bits, or the ids are not strictly
 * ascending and at most `maxId` (nextId): a damaged list is refused, never read past its
 * end nor turned into documents the shard does not have.
 */
export function decodeList(src: usize, len: u32, count: u32, follow: usize, want: u32, out: usize, maxId: u32): i32 {
  startList();
  let k: u32 = 0;
  for (let j: u32 = 0; j < count; j++) {
    const id = nextId(src, len, j, maxId);
    if (id < 0) return -1;
    store<u32>(out + (<usize>k << 2), <u32>id);
    if (want == 0 || ((<u32>load<u8>(follow + <usize>j)) & want) == want) k++;
  }
  return <i32>k;
}

/** Read cursor of nextId, and the last doc id it returned. */
let vPos: u32 = 0;
let vPrev: u32 = 0;

/** Starts reading a list with nextId at its first byte. */
// @ts-ignore: decorator
@inline
function startList(): void {
  vPos = 0;
  vPrev = 0;
}

/**
 * The next doc id of the list in src[0, len): the LEB128 delta at src[vPos] (vPos moves past
 * it) added to the previous id; -1 when src ends inside the value, it is longer than 5
 * bytes / does not fit 32 bits, it is a zero delta after the first id (`j`: the id's index
 * in the list; the ids of a list are distinct), or the id passes `maxId`. The one reader
 * of the encoding.
 */
// @ts-ignore: decorator
@inline
function nextId(src: usize, len: u32, j: u32, maxId: u32): i64 {
  if (vPos >= len) return -1;
  let b = <u32>load<u8>(src + vPos++);
  let v = b & 0x7F;
  if (b >= 0x80) {
    // Multi-byte value (deltas of dense lists are mostly single bytes).
    let shift: u32 = 7;
    do {
      if (vPos >= len) return -1;
      b = <u32>load<u8>(src + vPos++);
      if (shift == 28 && b > 0x0F) return -1;
      v |= (b & 0x7F) << shift;
      shift += 7;
    } while (b >= 0x80);
  }
  if (v == 0 && j != 0) return -1;
  const id = <u64>vPrev + <u64>v;
  if (id > <u64>maxId) return -1;
  vPrev = <u32>id;
  return <i64>id;
}

/**
 * out = acc[0, na) ∩ the list of `count` doc ids encoded in src[0, len) (as decodeList
 * reads it), merged while it is decoded: the list is never written out, and decoding stops
 * once it passes acc's last id. A common id is kept only if its follow mask (follow[j] for
 * the list's j-th id) holds every bit of `want` (0: always; `follow` is then not read).
 * Returns the intersection's length, or -1 when the part of the list read is malformed
 * (as decodeList, with the same `maxId`). `out` may be `acc`: an id is written at or
 * behind the position it was read from.
 */
export function intersectEncoded(acc: usize, na: u32, src: usize, len: u32, count: u32, follow: usize, want: u32, out: usize, maxId: u32): i32 {
  if (na == 0) return 0;
  let i: u32 = 0;
  let k: u32 = 0;
  let x = load<u32>(acc);
  startList();
  for (let j: u32 = 0; j < count; j++) {
    const id = nextId(src, len, j, maxId);
    if (id < 0) return -1;
    const doc = <u32>id;
    while (x < doc) {
      if (++i >= na) return <i32>k;
      x = load<u32>(acc + (<usize>i << 2));
    }
    if (x == doc) {
      if (want == 0 || ((<u32>load<u8>(follow + <usize>j)) & want) == want) {
        store<u32>(out + (<usize>k << 2), x);
        k++;
      }
      if (++i >= na) return <i32>k;
      x = load<u32>(acc + (<usize>i << 2));
    }
  }
  return <i32>k;
}
