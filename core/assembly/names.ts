// The symbol name index's hot loops (daemon/index/symbol-index.ts has the section's
// layout and the order): the distinct names of a shard's definitions, sorted by their
// folded key, then by their bytes, and the section's arrays. A shard has hundreds of
// thousands of definitions and nearly as many distinct names, which JavaScript typed
// arrays sorted and laid out much more slowly.
//
// Regions (owned by the glue, core/names.ts encodeNameIndex):
//   bytes        the names' UTF-8; name of record i is bytes[start[i], start[i] + length[i])
//                (8 bytes of slack after the last: compared 8 bytes at a time)
//   table        u32 per slot (a name's number + 1, 0 when empty), a power of two >= 2 d
//   nameOf[d]    each record's name number (numbered in order of first use)
//   rawStart[n], rawLength[n]  each name's bytes (its first record's)
//   state        u32[3]: names n, their bytes, 1 when a name holds a letter that folds to
//                ASCII from several bytes (then the glue has namesFold write the keys)

import { hashBytes, sameBytes } from './bytes';

/** A name's folded byte when it stands alone: ASCII A-Z as a-z. */
// @ts-ignore: decorator
@inline
function fold(b: u32): u32 {
  return b - 0x41 < 26 ? b | 0x20 : b;
}

/** A name's hash, to tell names apart in the table. */
// @ts-ignore: decorator
@inline
function nameHash(p: usize, len: u32): u32 {
  return <u32>(hashBytes(p, len) >> 32);
}

/**
 * The distinct names of d records (layout above), numbered in order of first use: fills
 * nameOf, rawStart, rawLength and state. `table` is mask + 1 slots, zeroed.
 */
export function namesDedup(bytes: usize, start: usize, length: usize, d: u32, table: usize, mask: u32, nameOf: usize, rawStart: usize, rawLength: usize, state: usize): void {
  let n: u32 = 0;
  let total: u32 = 0;
  let multi: u32 = 0;
  for (let i: u32 = 0; i < d; i++) {
    const s = load<u32>(start + (<usize>i << 2));
    const len = load<u32>(length + (<usize>i << 2));
    const p = bytes + <usize>s;
    let slot = nameHash(p, len) & mask;
    for (;;) {
      const q = table + (<usize>slot << 2);
      const v = load<u32>(q);
      if (v == 0) {
        store<u32>(q, n + 1);
        store<u32>(rawStart + (<usize>n << 2), s);
        store<u32>(rawLength + (<usize>n << 2), len);
        store<u32>(nameOf + (<usize>i << 2), n);
        total += len;
        if (multi == 0 && hasMultiByteFold(p, len)) multi = 1;
        n++;
        break;
      }
      const id = v - 1;
      if (load<u32>(rawLength + (<usize>id << 2)) == len && sameBytes(bytes + <usize>load<u32>(rawStart + (<usize>id << 2)), p, len)) {
        store<u32>(nameOf + (<usize>i << 2), id);
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  store<u32>(state, n);
  store<u32>(state, total, 4);
  store<u32>(state, multi, 8);
}

/**
 * The folded byte that starts at p[i] (of a name ending at `end`) and how many bytes it
 * takes, as (length << 8) | byte: the folding rule of symbol-index.ts's layout (ASCII A-Z;
 * U+212A KELVIN SIGN, E2 84 AA, as "k"; U+017F LONG S, C5 BF, as "s").
 */
// @ts-ignore: decorator
@inline
function foldAt(p: usize, i: u32, end: u32): u32 {
  const b = <u32>load<u8>(p + <usize>i);
  if (b - 0x41 < 26) return 0x100 | (b + 0x20);
  if (b == 0xe2 && i + 2 < end && load<u8>(p + <usize>i + 1) == 0x84 && load<u8>(p + <usize>i + 2) == 0xaa) return 0x300 | 0x6b;
  if (b == 0xc5 && i + 1 < end && load<u8>(p + <usize>i + 1) == 0xbf) return 0x200 | 0x73;
  return 0x100 | b;
}

function hasMultiByteFold(p: usize, len: u32): bool {
  for (let k: u32 = 0; k < len; k++) {
    const b = load<u8>(p + <usize>k);
    if ((b == 0xe2 || b == 0xc5) && foldAt(p, k, len) >> 8 > 1) return true;
  }
  return false;
}

/** Each name's folded key written out (when some name needs it: state[2]), at foldBytes (room for the names' bytes). */
export function namesFold(bytes: usize, rawStart: usize, rawLength: usize, n: u32, foldBytes: usize, foldStart: usize, foldLength: usize): void {
  let f: u32 = 0;
  for (let id: u32 = 0; id < n; id++) {
    store<u32>(foldStart + (<usize>id << 2), f);
    const p = bytes + <usize>load<u32>(rawStart + (<usize>id << 2));
    const end = load<u32>(rawLength + (<usize>id << 2));
    for (let k: u32 = 0; k < end; ) {
      const folded = foldAt(p, k, end);
      store<u8>(foldBytes + <usize>(f++), <u8>folded);
      k += folded >> 8;
    }
    store<u32>(foldLength + (<usize>id << 2), f - load<u32>(foldStart + (<usize>id << 2)));
  }
}

// The sort's inputs, set by namesSort for the helpers below (wasm globals).
let keyBytes: usize = 0;
let keyStart: usize = 0;
let keyLength: usize = 0;
let rawBytes: usize = 0;
let rawStarts: usize = 0;
let rawLengths: usize = 0;

/** The folded byte of name id at depth, or -1 past its end. */
// @ts-ignore: decorator
@inline
function keyAt(id: u32, depth: u32): i32 {
  return depth < load<u32>(keyLength + (<usize>id << 2)) ? <i32>fold(load<u8>(keyBytes + <usize>load<u32>(keyStart + (<usize>id << 2)) + <usize>depth)) : -1;
}

/** Byte order of names a and b. */
function compareRaw(a: u32, b: u32): i32 {
  const la = load<u32>(rawLengths + (<usize>a << 2));
  const lb = load<u32>(rawLengths + (<usize>b << 2));
  const pa = rawBytes + <usize>load<u32>(rawStarts + (<usize>a << 2));
  const pb = rawBytes + <usize>load<u32>(rawStarts + (<usize>b << 2));
  const m = la < lb ? la : lb;
  for (let k: u32 = 0; k < m; k++) {
    const x = <i32>load<u8>(pa + <usize>k);
    const y = <i32>load<u8>(pb + <usize>k);
    if (x != y) return x - y;
  }
  return <i32>la - <i32>lb;
}

/** The index's order of names a and b, whose folded keys agree below `depth`. */
function compareNames(a: u32, b: u32, depth: u32): i32 {
  const la = load<u32>(keyLength + (<usize>a << 2));
  const lb = load<u32>(keyLength + (<usize>b << 2));
  const pa = keyBytes + <usize>load<u32>(keyStart + (<usize>a << 2));
  const pb = keyBytes + <usize>load<u32>(keyStart + (<usize>b << 2));
  const m = la < lb ? la : lb;
  for (let k = depth; k < m; k++) {
    const x = <i32>fold(load<u8>(pa + <usize>k));
    const y = <i32>fold(load<u8>(pb + <usize>k));
    if (x != y) return x - y;
  }
  if (la != lb) return <i32>la - <i32>lb;
  return compareRaw(a, b);
}

/** Partitions this small are sorted by insertion. */
const INSERTION_BELOW: u32 = 16;

/**
 * order[0, n) := the names in the index's order: by folded key (`key*`, read through
 * fold()), then by their bytes (`raw*`). A multikey quicksort (Bentley and Sedgewick):
 * names share long prefixes (CONFIG_, __, snd_soc_), which it compares once per partition
 * rather than once per comparison. Its partitions go on `stack` (room for 3 u32 per n / 2
 * + 1: the partitions waiting are disjoint, of two names at least).
 */
export function namesSort(kb: usize, ks: usize, kl: usize, rb: usize, rs: usize, rl: usize, n: u32, order: usize, stack: usize): void {
  keyBytes = kb;
  keyStart = ks;
  keyLength = kl;
  rawBytes = rb;
  rawStarts = rs;
  rawLengths = rl;
  for (let i: u32 = 0; i < n; i++) store<u32>(order + (<usize>i << 2), i);
  if (n < 2) return;
  let top: usize = stack;
  store<u32>(top, 0);
  store<u32>(top, n, 4);
  store<u32>(top, 0, 8);
  top += 12;
  while (top > stack) {
    top -= 12;
    const lo = load<u32>(top);
    const hi = load<u32>(top, 4);
    const depth = load<u32>(top, 8);
    if (hi - lo < INSERTION_BELOW) {
      for (let i = lo + 1; i < hi; i++) {
        const v = load<u32>(order + (<usize>i << 2));
        let j = i;
        while (j > lo && compareNames(load<u32>(order + (<usize>(j - 1) << 2)), v, depth) > 0) {
          store<u32>(order + (<usize>j << 2), load<u32>(order + (<usize>(j - 1) << 2)));
          j--;
        }
        store<u32>(order + (<usize>j << 2), v);
      }
      continue;
    }
    // Median of three as the pivot byte.
    const x = keyAt(load<u32>(order + (<usize>lo << 2)), depth);
    const y = keyAt(load<u32>(order + (<usize>((lo + hi) >>> 1) << 2)), depth);
    const z = keyAt(load<u32>(order + (<usize>(hi - 1) << 2)), depth);
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    // Three-way partition: [lo, lt) below, [lt, gt) equal, [gt, hi) above.
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i < gt) {
      const oi = load<u32>(order + (<usize>i << 2));
      const c = keyAt(oi, depth);
      if (c < pivot) {
        store<u32>(order + (<usize>i << 2), load<u32>(order + (<usize>lt << 2)));
        store<u32>(order + (<usize>lt << 2), oi);
        lt++;
        i++;
      } else if (c > pivot) {
        gt--;
        store<u32>(order + (<usize>i << 2), load<u32>(order + (<usize>gt << 2)));
        store<u32>(order + (<usize>gt << 2), oi);
      } else i++;
    }
    if (lt - lo > 1) {
      store<u32>(top, lo);
      store<u32>(top, lt, 4);
      store<u32>(top, depth, 8);
      top += 12;
    }
    if (hi - gt > 1) {
      store<u32>(top, gt);
      store<u32>(top, hi, 4);
      store<u32>(top, depth, 8);
      top += 12;
    }
    if (gt - lt < 2) continue;
    if (pivot >= 0) {
      store<u32>(top, lt);
      store<u32>(top, gt, 4);
      store<u32>(top, depth + 1, 8);
      top += 12;
    } else heapSortRaw(order + (<usize>lt << 2), gt - lt);
  }
}

/** Names whose folded keys are equal (case variants), by their bytes: distinct, so no two compare equal. */
function heapSortRaw(a: usize, n: u32): void {
  for (let start = (n >> 1); start > 0; ) {
    start--;
    siftDown(a, start, n);
  }
  for (let end = n - 1; end > 0; end--) {
    const t = load<u32>(a);
    store<u32>(a, load<u32>(a + (<usize>end << 2)));
    store<u32>(a + (<usize>end << 2), t);
    siftDown(a, 0, end);
  }
}

function siftDown(a: usize, root: u32, end: u32): void {
  let r = root;
  for (;;) {
    let child: u32 = 2 * r + 1;
    if (child >= end) return;
    if (child + 1 < end && compareRaw(load<u32>(a + (<usize>child << 2)), load<u32>(a + (<usize>(child + 1) << 2))) < 0) child++;
    const vr = load<u32>(a + (<usize>r << 2));
    const vc = load<u32>(a + (<usize>child << 2));
    if (compareRaw(vr, vc) >= 0) return;
    store<u32>(a + (<usize>r << 2), vc);
    store<u32>(a + (<usize>child << 2), vr);
    r = child;
  }
}

/**
 * The section's arrays (symbol-index.ts layout) after its 16-byte header, at `out`:
 * nameOff[n + 1], defRecord[d], then the names in `order`, each followed by "\n"; and
 * nameOffOf[d], each record's name offset in those strings. `rank` and `next` are room
 * for n and n + 1 u32 (`next` zeroed). Returns 1 when some name holds a "\n", else 0.
 */
export function namesWrite(bytes: usize, rawStart: usize, rawLength: usize, order: usize, n: u32, nameOf: usize, d: u32, rank: usize, next: usize, out: usize, nameOffOf: usize): u32 {
  const nameOff = out;
  const defRecord = out + ((<usize>n + 1) << 2);
  const strings = defRecord + (<usize>d << 2);
  let newline: u32 = 0;
  let at: u32 = 0;
  for (let r: u32 = 0; r < n; r++) {
    const id = load<u32>(order + (<usize>r << 2));
    store<u32>(rank + (<usize>id << 2), r);
    store<u32>(nameOff + (<usize>r << 2), at);
    const p = bytes + <usize>load<u32>(rawStart + (<usize>id << 2));
    const len = load<u32>(rawLength + (<usize>id << 2));
    const to = strings + <usize>at;
    for (let k: u32 = 0; k < len; k++) {
      const b = load<u8>(p + <usize>k);
      if (b == 10) newline = 1;
      store<u8>(to + <usize>k, b);
    }
    store<u8>(to + <usize>len, 10);
    at += len + 1;
  }
  store<u32>(nameOff + (<usize>n << 2), at);
  // Records by name, then record number: a counting sort (stable: records go in ascending).
  for (let i: u32 = 0; i < d; i++) {
    const q = next + ((<usize>load<u32>(rank + (<usize>load<u32>(nameOf + (<usize>i << 2)) << 2)) + 1) << 2);
    store<u32>(q, load<u32>(q) + 1);
  }
  for (let r: u32 = 0; r < n; r++) store<u32>(next + ((<usize>r + 1) << 2), load<u32>(next + ((<usize>r + 1) << 2)) + load<u32>(next + (<usize>r << 2)));
  for (let i: u32 = 0; i < d; i++) {
    const r = load<u32>(rank + (<usize>load<u32>(nameOf + (<usize>i << 2)) << 2));
    const q = next + (<usize>r << 2);
    const slot = load<u32>(q);
    store<u32>(q, slot + 1);
    store<u32>(defRecord + (<usize>slot << 2), i);
    store<u32>(nameOffOf + (<usize>i << 2), load<u32>(nameOff + (<usize>r << 2)));
  }
  return newline;
}
