// TypeScript glue of the trawl WebAssembly core (core/assembly/*.ts, built to
// core/build/trawl-core.wasm). This file is the only code that touches wasm memory.
//
// - The module is compiled and instantiated lazily and synchronously on first use, once
//   per thread: module-level state is per realm, so each worker thread gets its own
//   instance and its own memory.
// - The wasm side never allocates. Everything above the module's heap base is an arena
//   owned here: a first-fit list of 64-byte aligned blocks. Memory grows (memory.grow)
//   when a block does not fit, and the typed-array views are rebuilt after each grow,
//   because growing detaches the previous ArrayBuffer.
// - One "io" block is reused by every call for its inputs and outputs (grown on demand,
//   never shrunk). A PostingsBuilder owns further blocks until finish() / dispose().
// - Results are copied out (.slice()) so they stay valid after the next call.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { INSTALL_ROOT } from '../daemon/install-root.ts';
import { BYTE_FREQUENCY } from './byte-frequency.ts';

/** Index folding: ASCII 'A'-'Z' -> 'a'-'z'; the UTF-8 sequence E2 84 AA (U+212A KELVIN SIGN) -> 'k'; C5 BF (U+017F LATIN SMALL LETTER LONG S) -> 's'; every other byte unchanged. Reason: these are the only non-ASCII code points whose Unicode simple case folding reaches ASCII, so folding them makes a trigram index over folded text sound for both case-sensitive and Unicode case-insensitive queries. */
export function foldBytes(src: Uint8Array): Uint8Array {
  const c = core();
  const n = src.length;
  // io layout: src[n] | folded[n + 16]
  const dstOff = align(n);
  const base = c.scratch(dstOff + n + 16);
  c.u8.set(src, base);
  const len = c.ex.fold(base, n, base + dstOff) >>> 0;
  return c.u8.slice(base + dstOff, base + dstOff + len);
}

/** Trigram id of three folded bytes: (b0 << 16) | (b1 << 8) | b2. (Each argument is taken mod 256.) */
export function trigramId(b0: number, b1: number, b2: number): number {
  return ((b0 & 0xff) << 16) | ((b1 & 0xff) << 8) | (b2 & 0xff);
}

let liveBuilder: PostingsBuilder | null = null;

/**
 * Builds the posting lists of one shard.
 *
 * Only one builder may be live per thread at a time: it owns large regions of this
 * thread's wasm memory (a 16 MiB dedup table and the growing pair and mask lists while
 * adding; a 64 MiB counting table during finish). Creating a second one before the first
 * was finished or disposed throws.
 *
 * Posting list encoding (the format decodePostings reads): a list of ascending doc ids
 * d0 < d1 < ... is stored as the deltas d0, d1 - d0, d2 - d1, ..., each as an unsigned
 * LEB128 varint (7 bits per byte, least significant group first, 0x80 set on every byte
 * but the last of a value). Lists are concatenated in ascending trigram order with no
 * separators; `offsets[i]` is where list i starts in `blob` and `counts[i]` says how many
 * varints it holds.
 *
 * Follow masks (`follow`, one byte per posting, in the lists' order): bit (b & 7) is set
 * when some occurrence of the trigram in that document is followed by the folded byte b
 * (core/assembly/ngrams.ts distinctTrigrams). List i's masks start at the sum of the
 * counts before it.
 */
export class PostingsBuilder {
  #core: Core;
  #seen: Block | null;
  #pairs: Block | null = null;
  #pairsLen = 0;
  /** Each pair's follow mask, u8 per pair. */
  #masks: Block | null = null;
  #docCounts: Uint32Array<ArrayBuffer>;
  #numDocs = 0;
  #live = true;
  /** Segment masks wanted of large documents (none: no masks). */
  #segmenting: SegmentOptions | undefined;
  /** The large documents' masks so far, in document order. */
  #segmented: SegmentedDoc[] = [];
  /** segmentMasks' table of rows by key (taken at the first large document). */
  #rows: Block | null = null;

  constructor(options?: { expectedBytes?: number; segments?: SegmentOptions }) {
    const c = core();
    if (liveBuilder !== null) {
      throw new Error('PostingsBuilder: another builder is live on this thread; finish() or dispose() it first');
    }
    this.#core = c;
    const expected = Math.max(0, options?.expectedBytes ?? 0) || 0;
    this.#seen = c.arena.alloc(c.seenBytes);
    try {
      // Source code yields one distinct (doc, trigram) pair per 5-10 bytes (Linux sources
      // about 5.2, /usr/include about 9.7). Reserving for the dense end costs little:
      // grown wasm pages only take physical memory once written.
      this.#pairs = c.arena.alloc(Math.min(Math.max(1 << 16, Math.ceil(expected / 5)), 1 << 26) * 4);
      this.#masks = c.arena.alloc(this.#pairs.size / 4);
    } catch (err) {
      c.arena.free(this.#seen);
      if (this.#pairs) c.arena.free(this.#pairs);
      throw err;
    }
    c.u8.fill(0, this.#seen.off, this.#seen.off + c.seenBytes);
    this.#docCounts = new Uint32Array(1024);
    this.#segmenting = options?.segments;
    liveBuilder = this;
  }

  /**
   * Whether the content last given to addContent holds a code point whose case folding
   * reaches ASCII (U+212A or U+017F; see foldBytes): folding shortens exactly such content.
   * A reader that knows a document holds neither may compare ASCII case-insensitively.
   */
  lastFoldsToAscii = false;

  /** Adds the document `docId` (must be exactly the previous docId + 1, starting at 0) with the distinct folded trigrams of `content`. Returns the number of distinct trigrams, or -1 (document NOT added, docId not consumed) when there are more than `limit` distinct trigrams. */
  addContent(docId: number, content: Uint8Array, limit: number): number {
    if (!this.#live) throw new Error('PostingsBuilder: already finished or disposed');
    if (docId !== this.#numDocs) {
      throw new RangeError(`PostingsBuilder.addContent: expected docId ${this.#numDocs}, got ${docId}`);
    }
    if (!(limit >= 0)) throw new RangeError(`PostingsBuilder.addContent: limit must be >= 0, got ${limit}`);
    const lim = Math.min(Math.floor(limit), 0x7fffffff);
    const c = this.#core;
    const n = content.length;
    // io layout: content[n] | folded[n + 16]
    const foldOff = align(n);
    const base = c.scratch(foldOff + n + 16);
    c.u8.set(content, base);
    const f = c.ex.fold(base, n, base + foldOff) >>> 0;
    this.lastFoldsToAscii = f !== n;
    let cnt = 0;
    if (f >= 3) {
      const need = Math.min(f - 2, lim + 1) + 1; // see distinctTrigrams: room it may write
      const pairs = this.#pairs!;
      const want = (this.#pairsLen + need) * 4;
      if (want > pairs.size) {
        const size = Math.max(want, Math.ceil(pairs.size * 1.5));
        c.arena.resize(pairs, size, this.#pairsLen * 4);
        c.arena.resize(this.#masks!, Math.ceil(size / 4), this.#pairsLen);
      }
      // The last trigram's "next" byte (distinctTrigrams): a zero, so that a shard's bytes
      // depend on its input only.
      c.u8[base + foldOff + f] = 0;
      cnt = c.ex.distinctTrigrams(base + foldOff, f, this.#seen!.off, pairs.off + this.#pairsLen * 4, this.#masks!.off + this.#pairsLen, lim);
      if (cnt < 0) return -1;
      // Positions in the folded bytes are the content's only when folding kept the length.
      const seg = this.#segmenting;
      if (seg && f === n && n >= seg.minBytes && cnt > 0 && cnt < SEGMENT_MAX_TRIGRAMS) {
        if (this.#rows === null) {
          this.#rows = c.arena.alloc(SEGMENT_ROWS_BYTES);
          c.u8.fill(0, this.#rows.off, this.#rows.off + SEGMENT_ROWS_BYTES);
        }
        this.#segmented.push(segmentDoc(c, docId, base + foldOff, f, pairs.off + this.#pairsLen * 4, cnt, seg.shift, this.#rows));
      }
      this.#pairsLen += cnt;
    }
    this.#docCounts = withCount(this.#docCounts, this.#numDocs++, cnt);
    return cnt;
  }

  /** Finishes: for every trigram that occurs, in ascending id order: its id, how many docs contain it, and the byte offset of its list in `blob`. Each list is the ascending doc ids, LEB128-varint delta encoded (see the class comment for the exact encoding; decodePostings reads it). */
  finish(options?: { path?: 'table' | 'sort' }): { ids: Uint32Array; counts: Uint32Array; offsets: Uint32Array; blob: Uint8Array; follow: Uint8Array; segments: SegmentMasks | null } {
    if (!this.#live) throw new Error('PostingsBuilder: already finished or disposed');
    const c = this.#core;
    const a = c.arena;
    const taken = new Taken(a);
    const take = (size: number): Block => taken.take(size);
    const drop = (b: Block): void => taken.drop(b);
    try {
      const P = this.#pairsLen;
      const D = this.#numDocs;
      a.free(this.#seen!);
      this.#seen = null;
      if (this.#rows) a.free(this.#rows);
      this.#rows = null;
      const pairs = this.#pairs!;
      const masks = this.#masks!;
      // Steps 1-3 give every trigram's id and doc count, ascending, and the docs of each
      // list one after the other. The counting table costs the same (~60 ms: 64 MiB
      // cleared and scanned twice) whatever the input; a small builder (a delta shard of a
      // few files) sorts its pairs instead. Both give the same lists (core.test.ts).
      const path = options?.path ?? (P <= SORT_MAX_PAIRS && D <= SORT_MAX_DOCS ? 'sort' : 'table');
      let ids: Block, counts: Block, docs: Block, follow: Block, K: number;
      let segments: SegmentMasks | null = null;
      if (path === 'sort') {
        c.ex.keysToIds(pairs.off, P);
        // One number per pair, trigram id above doc id above follow mask: sorted, they are
        // in list order (ids are distinct per document, so the mask never decides).
        const keys = new Float64Array(P);
        const at = pairs.off / 4;
        const u8 = c.u8;
        for (let d = 0, i = 0; d < D; d++) {
          for (const stop = i + this.#docCounts[d]!; i < stop; i++) keys[i] = (c.u32[at + i]! * SORT_MAX_DOCS + d) * 256 + u8[masks.off + i]!;
        }
        keys.sort();
        const unit = SORT_MAX_DOCS * 256;
        K = 0;
        for (let i = 0; i < P; i++) if (i === 0 || Math.floor(keys[i]! / unit) !== Math.floor(keys[i - 1]! / unit)) K++;
        ids = take(K * 4);
        counts = take(K * 4);
        docs = take(P * 4);
        follow = take(P);
        const u32 = c.u32;
        let k = -1;
        let prev = -1;
        for (let i = 0; i < P; i++) {
          const key = keys[i]!;
          const t = Math.floor(key / unit);
          if (t !== prev) {
            k++;
            u32[ids.off / 4 + k] = t;
            u32[counts.off / 4 + k] = 0;
            prev = t;
          }
          u32[counts.off / 4 + k]!++;
          const rest = key - t * unit;
          u32[docs.off / 4 + i] = Math.floor(rest / 256);
          u8[follow.off + i] = rest % 256;
        }
        if (this.#segmented.length > 0) {
          const sorted = u32.slice(ids.off / 4, ids.off / 4 + K);
          segments = placeSegments(this.#segmenting!.shift, this.#segmented, K, (id) => rowByBisection(sorted, id));
        }
      } else {
        // 1. Count each trigram's docs in a table indexed by trigram id.
        const table = take(TABLE_BYTES);
        c.u8.fill(0, table.off, table.off + TABLE_BYTES);
        c.ex.countTrigrams(pairs.off, P, table.off);
        // 2. Ascending ids with their counts; the table becomes each list's start index.
        K = c.ex.countDistinct(table.off) >>> 0;
        ids = take(K * 4);
        counts = take(K * 4);
        c.ex.collectTrigrams(table.off, ids.off, counts.off);
        // 3. Scatter doc ids; docs arrive in ascending order so every list comes out sorted.
        const docCounts = take(D * 4);
        c.u32.set(this.#docCounts.subarray(0, D), docCounts.off / 4);
        docs = take(P * 4);
        follow = take(P);
        c.ex.scatterDocs(pairs.off, masks.off, docCounts.off, D, table.off, docs.off, follow.off);
        if (this.#segmented.length > 0) {
          // The table, indexed by trigram id, is free now: it maps each id to its row.
          const u32 = c.u32;
          const at = table.off / 4;
          for (let r = 0; r < K; r++) u32[at + u32[ids.off / 4 + r]!] = r;
          segments = placeSegments(this.#segmenting!.shift, this.#segmented, K, (id) => u32[at + id]!);
        }
        drop(table);
        drop(docCounts);
      }
      a.free(pairs);
      this.#pairs = null;
      a.free(masks);
      this.#masks = null;
      // 4. Varint-encode every list (at most 5 bytes per entry).
      const blob = take(P * 5 + 16);
      const offsets = take(K * 4);
      const blobLen = c.ex.encodeLists(docs.off, counts.off, K, blob.off, offsets.off) >>> 0;
      const u32 = c.u32;
      return {
        ids: u32.slice(ids.off / 4, ids.off / 4 + K),
        counts: u32.slice(counts.off / 4, counts.off / 4 + K),
        offsets: u32.slice(offsets.off / 4, offsets.off / 4 + K),
        blob: c.u8.slice(blob.off, blob.off + blobLen),
        follow: c.u8.slice(follow.off, follow.off + P),
        segments,
      };
    } finally {
      taken.free();
      this.dispose();
    }
  }

  /** Releases the builder's regions so another builder can be created. finish() calls it; calling it again is a no-op. */
  dispose(): void {
    if (!this.#live) return;
    this.#live = false;
    const a = this.#core.arena;
    if (this.#seen) a.free(this.#seen);
    if (this.#pairs) a.free(this.#pairs);
    if (this.#masks) a.free(this.#masks);
    if (this.#rows) a.free(this.#rows);
    this.#seen = null;
    this.#pairs = null;
    this.#masks = null;
    this.#rows = null;
    this.#docCounts = new Uint32Array(0);
    this.#segmented = [];
    if (liveBuilder === this) liveBuilder = null;
  }
}

/** Which documents get segment masks: those of at least `minBytes`, in segments of 2^shift bytes. */
export interface SegmentOptions {
  shift: number;
  minBytes: number;
}

/** One large document's masks: `width` bytes per distinct trigram, in the order of `ids`. */
interface SegmentedDoc {
  doc: number;
  segments: number;
  width: number;
  ids: Uint32Array;
  masks: Uint8Array;
}

/**
 * The segment masks of a builder's large documents, in its lists' order: row r's masks are
 * masks[starts[r], starts[r + 1]), one per posting of a listed document, in document order;
 * a posting of document docs[i] takes ceil(segments[i] / 8) bytes, bit (s & 7) of byte
 * (s >> 3) set when the trigram occurs starting in segment s (positions s << shift up to
 * (s + 1) << shift). Postings of other documents have none.
 */
export interface SegmentMasks {
  shift: number;
  docs: Uint32Array;
  segments: Uint32Array;
  starts: Uint32Array;
  masks: Uint8Array;
}

/** A document with more distinct trigrams gets no masks (segmentMasks numbers them in a u16). */
const SEGMENT_MAX_TRIGRAMS = 65535;
/** segmentMasks' table: a u16 per trigram key. */
const SEGMENT_ROWS_BYTES = (1 << 24) * 2;

/** The masks of one document just added (its folded bytes and distinct keys in wasm memory). */
function segmentDoc(c: Core, doc: number, folded: number, n: number, keys: number, cnt: number, shift: number, rows: Block): SegmentedDoc {
  const segments = ((n - 1) >>> shift) + 1;
  const width = ((segments - 1) >>> 3) + 1;
  const out = c.arena.alloc(cnt * width);
  try {
    c.ex.segmentMasks(folded, n, keys, cnt, rows.off, shift, width, out.off);
    const ids = c.u32.slice(keys / 4, keys / 4 + cnt);
    for (let k = 0; k < cnt; k++) {
      const r = ids[k]!;
      ids[k] = ((r & 0xff) << 16) | (r & 0xff00) | (r >>> 16); // byte-reversed key -> trigram id
    }
    return { doc, segments, width, ids, masks: c.u8.slice(out.off, out.off + cnt * width) };
  } finally {
    c.arena.free(out);
  }
}

/** Lays out the documents' masks by row (SegmentMasks); `rowOf` gives a trigram id's row of K. */
function placeSegments(shift: number, list: readonly SegmentedDoc[], K: number, rowOf: (id: number) => number): SegmentMasks {
  const starts = new Uint32Array(K + 1);
  const rows = list.map((d) => {
    const r = new Uint32Array(d.ids.length);
    for (let k = 0; k < r.length; k++) {
      r[k] = rowOf(d.ids[k]!);
      starts[r[k]! + 1]! += d.width;
    }
    return r;
  });
  for (let r = 0; r < K; r++) starts[r + 1]! += starts[r]!;
  const masks = new Uint8Array(starts[K]!);
  const cursor = starts.slice(0, K);
  // Documents in ascending order, so each row's masks come in its postings' order.
  list.forEach((d, i) => {
    const r = rows[i]!;
    const w = d.width;
    for (let k = 0; k < r.length; k++) {
      const to = cursor[r[k]!]!;
      for (let j = 0, from = k * w; j < w; j++) masks[to + j] = d.masks[from + j]!;
      cursor[r[k]!] = to + w;
    }
  });
  return { shift, docs: Uint32Array.from(list, (d) => d.doc), segments: Uint32Array.from(list, (d) => d.segments), starts, masks };
}

/** The row of `id` in ascending `ids` (it is there). */
function rowByBisection(ids: Uint32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The words of a shard's documents (core/assembly/words.ts says what a word is and how they
 * are found) and, for each word found in at least `minDocs` documents, the ascending list
 * of those documents, encoded as PostingsBuilder encodes its lists (decodePostings reads
 * them). What the content-words section holds (daemon/index/content-words.ts). Its regions
 * live beside a PostingsBuilder's.
 */
export class WordsBuilder {
  #core: Core;
  /** The per-document table (16-byte entries), its size in entries. */
  #table: Block;
  /** (key, document, ref) per distinct word of each document: 16 bytes (words.ts). */
  #pairs: Block;
  #arena: Block;
  #state: Block;
  #numDocs = 0;
  /** The last generation given to the table (words.ts docWords). */
  #gen = 0;
  #hashBits: number;
  #live = true;

  /** `hashBits`: of the long words' 57-bit hash (tests take fewer, to make words share keys). */
  constructor(options?: { hashBits?: number }) {
    const c = core();
    this.#core = c;
    this.#hashBits = Math.max(0, Math.min(57, Math.floor(options?.hashBits ?? 57)));
    [this.#table, this.#pairs, this.#arena, this.#state] = new Taken(c.arena).all([TABLE_MIN * 16, 1 << 20, 1 << 16, 64]) as [Block, Block, Block, Block];
    c.u8.fill(0, this.#table.off, this.#table.off + this.#table.size);
    c.u32[this.#state.off / 4] = 0;
    c.u32[this.#state.off / 4 + 1] = 0;
  }

  /** Adds document `docId` (the previous docId + 1, from 0). Returns its distinct words. */
  add(docId: number, content: Uint8Array): number {
    if (!this.#live) throw new Error('WordsBuilder: already finished or disposed');
    if (docId !== this.#numDocs) throw new RangeError(`WordsBuilder.add: expected docId ${this.#numDocs}, got ${docId}`);
    const c = this.#core;
    const n = content.length;
    // Room for the most a document of n bytes can add (words.ts): words of 3+ bytes, apart.
    const most = Math.floor(n / 4) + 2;
    const pairs = c.u32[this.#state.off / 4]!;
    const arenaUsed = c.u32[this.#state.off / 4 + 1]!;
    // Grown by half at least, so that the blocks move (and leave holes) rarely.
    const grow = (b: Block, need: number, keep: number) => {
      if (need > b.size) c.arena.resize(b, Math.max(need, Math.ceil(b.size * 1.5)), keep);
    };
    grow(this.#pairs, (pairs + most) * 16, pairs * 16);
    // (+ 8: words.ts reads a word's last 8 bytes whole.)
    grow(this.#arena, arenaUsed + n + 8, arenaUsed);
    // (+ 64: words.ts reads the document 64 bytes at a time.) Left there for a scan of the
    // same document (scanC), which copies it no more.
    const base = c.scratchWith(content, n, n + 64);
    // The table sized for a typical document (Linux: ~1 distinct word per 45 bytes), at most
    // half full: small enough to stay in cache. A document with more words is read again
    // with a table twice the size (words.ts FULL).
    let slots = TABLE_MIN;
    while (slots < n / 16) slots *= 2;
    let k: number;
    for (;;) {
      if (slots * 16 > this.#table.size) {
        // Entries' generations start at 0, which no call gives: a grown table is cleared.
        c.arena.resize(this.#table, slots * 16, 0);
        c.u8.fill(0, this.#table.off, this.#table.off + this.#table.size);
      }
      k = c.ex.docWords(base, n, docId, this.#table.off, slots - 1, 64 - Math.log2(slots), ++this.#gen, this.#pairs.off, this.#arena.off, this.#state.off, this.#hashBits) >>> 0;
      if (k !== WORDS_FULL) break;
      slots *= 2;
    }
    this.#numDocs++;
    return k;
  }

  /**
   * Finishes: the words found in at least `minDocs` documents, in byte order: their bytes
   * one after the other (word i is wordBytes[wordOff[i], wordOff[i + 1])), each word's
   * document count, and the offset of its list in `blob`.
   */
  finish(minDocs: number): { wordBytes: Buffer; wordOff: Uint32Array; counts: Uint32Array; offsets: Uint32Array; blob: Uint8Array } {
    if (!this.#live) throw new Error('WordsBuilder: already finished or disposed');
    const c = this.#core;
    const a = c.arena;
    const taken = new Taken(a);
    const take = (size: number): Block => taken.take(size);
    try {
      const min = Math.max(1, Math.floor(minDocs));
      const P = c.u32[this.#state.off / 4]!;
      a.free(this.#table); // (its room serves the blocks below)
      const sortedPairs = take(P * 16);
      const counts = take(c.ex.wordCountsBytes());
      const most = Math.floor(P / min) + 1;
      const outWord = take(most * 4);
      const outCount = take(most * 4);
      // Sorted by key and taken by runs (words.ts); each kept word's documents, list after
      // list, in the pairs' own region.
      const K = c.ex.groupWords(this.#pairs.off, P, sortedPairs.off, counts.off, min, this.#arena.off, outWord.off, outCount.off, this.#pairs.off) >>> 0;
      const bytes = take(K * 64 + 8);
      const offs = take((K + 1) * 4);
      c.ex.keptWordBytes(sortedPairs.off, outWord.off, K, this.#arena.off, bytes.off, offs.off);
      const memory = Buffer.from(c.u8.buffer, c.u8.byteOffset, c.u8.byteLength);
      const off = c.u32.subarray(offs.off / 4, offs.off / 4 + K + 1);
      // In byte order: sorted as latin1 strings (words are ASCII: their order is their
      // bytes'), each followed by "\0" and its number in three chars: no word holds "\0",
      // so the tail never decides the order, and a sort without a comparator compares
      // them natively (Buffer.compare per pair of words took 4x as long).
      const sorted: string[] = new Array<string>(K);
      for (let j = 0; j < K; j++) sorted[j] = memory.toString('latin1', bytes.off + off[j]!, bytes.off + off[j + 1]!) + String.fromCharCode(0, (j >>> 16) & 0xff, (j >>> 8) & 0xff, j & 0xff);
      sorted.sort();
      const listCount = c.u32.slice(outCount.off / 4, outCount.off / 4 + K);
      const listStart = new Uint32Array(K + 1);
      for (let j = 0; j < K; j++) listStart[j + 1] = listStart[j]! + listCount[j]!;
      const wordOff = new Uint32Array(K + 1);
      const wordCounts = new Uint32Array(K);
      const docsSorted = take(listStart[K]! * 4);
      const docsFrom = this.#pairs.off / 4;
      let at = docsSorted.off / 4;
      for (let i = 0; i < K; i++) {
        const s = sorted[i]!;
        const j = (s.charCodeAt(s.length - 3) << 16) | (s.charCodeAt(s.length - 2) << 8) | s.charCodeAt(s.length - 1);
        wordOff[i + 1] = wordOff[i]! + s.length - 4;
        wordCounts[i] = listCount[j]!;
        c.u32.copyWithin(at, docsFrom + listStart[j]!, docsFrom + listStart[j + 1]!);
        at += listCount[j]!;
      }
      const wordBytes = Buffer.allocUnsafe(wordOff[K]!);
      for (let i = 0; i < K; i++) wordBytes.write(sorted[i]!, wordOff[i]!, wordOff[i + 1]! - wordOff[i]!, 'latin1');
      // Encoded by the core, as PostingsBuilder's lists are.
      const countsBlock = take(K * 4);
      const blobBlock = take(listStart[K]! * 5 + 16);
      const offsetsBlock = take(K * 4);
      c.u32.set(wordCounts, countsBlock.off / 4);
      const blobLen = c.ex.encodeLists(docsSorted.off, countsBlock.off, K, blobBlock.off, offsetsBlock.off) >>> 0;
      return {
        wordBytes,
        wordOff,
        counts: wordCounts,
        offsets: c.u32.slice(offsetsBlock.off / 4, offsetsBlock.off / 4 + K),
        blob: c.u8.slice(blobBlock.off, blobBlock.off + blobLen),
      };
    } finally {
      taken.free();
      this.dispose();
    }
  }

  /** Releases the builder's regions. finish() calls it; calling it again is a no-op. */
  dispose(): void {
    if (!this.#live) return;
    this.#live = false;
    const a = this.#core.arena;
    for (const b of [this.#table, this.#pairs, this.#arena, this.#state]) a.free(b);
  }
}

/** The per-document words table's least size, in entries (a power of two). */
const TABLE_MIN = 1024;
/** docWords' answer when its table is too small (core/assembly/words.ts FULL). */
const WORDS_FULL = 0xffffffff;

/** `counts` with `value` at `i` (the next one), grown by doubling when full: a builder's per-document counts. */
function withCount(counts: Uint32Array<ArrayBuffer>, i: number, value: number): Uint32Array<ArrayBuffer> {
  let out = counts;
  if (i === counts.length) {
    out = new Uint32Array(counts.length * 2);
    out.set(counts);
  }
  out[i] = value;
  return out;
}

/**
 * The symbol name index of records whose names are `bytes[start[i], start[i] + length[i])`
 * (core/assembly/names.ts; the section's layout and order in
 * daemon/index/symbol-index.ts): the section, with its first `header` bytes left for the
 * caller (zero), then nameOff, defRecord and the sorted names; how many names; whether a
 * name holds "\n"; and each record's name offset in the names.
 */
export function encodeNameIndex(bytes: Uint8Array, start: Uint32Array, length: Uint32Array, header: number): { section: Uint8Array; nameCount: number; newline: boolean; nameOffOf: Uint32Array } {
  const c = core();
  const a = c.arena;
  const d = start.length;
  const taken = new Taken(a);
  const take = (size: number): Block => taken.take(size);
  try {
    // (+ 8: names are compared 8 bytes at a time.)
    const names = take(bytes.length + 8);
    const starts = take(d * 4);
    const lengths = take(d * 4);
    let slots = 16;
    while (slots < 2 * d) slots *= 2;
    const table = take(slots * 4);
    const nameOf = take(d * 4);
    const rawStart = take(d * 4);
    const rawLength = take(d * 4);
    const state = take(16);
    c.u8.set(bytes, names.off);
    c.u32.set(start, starts.off / 4);
    c.u32.set(length, lengths.off / 4);
    c.u8.fill(0, table.off, table.off + slots * 4);
    c.ex.namesDedup(names.off, starts.off, lengths.off, d, table.off, slots - 1, nameOf.off, rawStart.off, rawLength.off, state.off);
    const n = c.u32[state.off / 4]!;
    const total = c.u32[state.off / 4 + 1]!;
    const multiByteFold = c.u32[state.off / 4 + 2]! !== 0;
    // The folded keys are the names' own bytes (read through the ASCII fold) unless a name
    // holds one of the two letters that fold to ASCII from several bytes.
    let key = { bytes: names.off, start: rawStart.off, length: rawLength.off };
    if (multiByteFold) {
      const foldBytes = take(total + 8);
      const foldStart = take(n * 4);
      const foldLength = take(n * 4);
      c.ex.namesFold(names.off, rawStart.off, rawLength.off, n, foldBytes.off, foldStart.off, foldLength.off);
      key = { bytes: foldBytes.off, start: foldStart.off, length: foldLength.off };
    }
    const order = take(n * 4);
    const stack = take((Math.floor(n / 2) + 2) * 12);
    c.ex.namesSort(key.bytes, key.start, key.length, names.off, rawStart.off, rawLength.off, n, order.off, stack.off);
    const rank = take(n * 4);
    const next = take((n + 1) * 4);
    c.u8.fill(0, next.off, next.off + (n + 1) * 4);
    const size = header + 4 * (n + 1 + d) + total + n;
    const out = take(size);
    const nameOffOf = take(d * 4);
    c.u8.fill(0, out.off, out.off + header);
    const newline = c.ex.namesWrite(names.off, rawStart.off, rawLength.off, order.off, n, nameOf.off, d, rank.off, next.off, out.off + header, nameOffOf.off) !== 0;
    return { section: c.u8.slice(out.off, out.off + size), nameCount: n, newline, nameOffOf: c.u32.slice(nameOffOf.off / 4, nameOffOf.off / 4 + d) };
  } finally {
    taken.free();
  }
}

/** The kinds of the C scanner's definitions, by their number in its records (core/assembly/cscan.ts KIND_*). */
export const C_KINDS: readonly string[] = Object.freeze(['macro', 'function', 'struct', 'union', 'enum', 'enumerator', 'member', 'typedef', 'variable']);

/**
 * The C scanner's definitions of one file, as core/assembly/cscan.ts writes them: `defs`
 * holds 8 u32 per definition (kind | 0x100 when the name is in `names`, name offset, name
 * length, line, end line, where the name is in the file, parent as i32 (-1: none), where
 * its line first spells it as a whole word (0xffffffff: the line rule decides)),
 * `parents` 4 u32 per scope (kind | 0x100 when its name is in `names`, name offset, name
 * length, 0), `names` the names that are not the file's bytes.
 */
export interface CScan {
  count: number;
  defs: Uint32Array;
  parents: Uint32Array;
  names: Uint8Array;
}

/** Why a C scan stopped (cscan.ts STOP_*). */
const C_STOP_NOT_C = 1;
const C_STOP_ROOM = 2;

/**
 * The scanner's regions (cscan.ts), kept from file to file on this thread (a shard has
 * thousands of C files: allocating them per file cost more than the scanner's tokenizer),
 * grown as files need; `room` is how many definitions, scopes, name bytes, tokens and
 * conditions each holds.
 */
let cRegions: { room: number; defs: Block; parents: Block; names: Block; tokens: Block; conds: Block; state: Block } | undefined;

function cRegionsFor(c: Core, room: number): NonNullable<typeof cRegions> {
  if (cRegions && cRegions.room >= room) return cRegions;
  const a = c.arena;
  if (cRegions) for (const b of [cRegions.defs, cRegions.parents, cRegions.names, cRegions.tokens, cRegions.conds, cRegions.state]) a.free(b);
  cRegions = undefined;
  const [defs, parents, names, tokens, conds, state] = new Taken(a).all([room * 32, room * 16, room, room * 16, room * 4, 64]) as [Block, Block, Block, Block, Block, Block];
  cRegions = { room, defs, parents, names, tokens, conds, state };
  return cRegions;
}

/**
 * Scans a C file (`header`: a .h file, which may turn out to be C++ or Objective-C;
 * `pathHash`: the path's FNV-1a, for anonymous scopes' names). Undefined when the file is
 * not C, or nests too deep for the scanner's stack: ctags is asked then. The arrays are
 * views of the core's memory, valid until the next scan or any other use of the core.
 */
export function scanC(content: Uint8Array, header: boolean, pathHash: number): CScan | undefined {
  const c = core();
  const n = content.length;
  // Room for a typical file (Linux: ~1 definition per 180 bytes); a scan that needs more
  // stops (STOP_ROOM) and runs again with twice as much.
  let room = Math.max(4096, Math.ceil(n / 16));
  for (;;) {
    const r = cRegionsFor(c, room);
    room = r.room;
    // (+ 16: keywords and directive names are read 16 and 8 bytes at a time, the file's
    // end marked by zeros.) Not copied when it is there already (WordsBuilder.add).
    const src = c.scratchWith(content, n, n + 32);
    c.u8.fill(0, src + n, src + n + 16);
    let count: number;
    try {
      count = c.ex.cScan(src, n, header ? 1 : 0, pathHash >>> 0, r.defs.off, room, r.parents.off, room, r.names.off, room, r.tokens.off, room, r.conds.off, room, r.state.off) >>> 0;
    } catch (err) {
      // RangeError: the wasm stack overflowed (aggregates nested thousands deep).
      if (err instanceof RangeError) return undefined;
      if (!(err instanceof Wasm.RuntimeError)) throw err;
      const why = c.u32[r.state.off / 4 + 4];
      if (why === C_STOP_NOT_C) return undefined;
      if (why === C_STOP_ROOM) {
        room *= 2;
        continue;
      }
      throw err;
    }
    const u32 = c.u32;
    const parentCount = u32[r.state.off / 4 + 1]!;
    const nameBytes = u32[r.state.off / 4 + 2]!;
    return {
      count,
      defs: u32.subarray(r.defs.off / 4, r.defs.off / 4 + count * 8),
      parents: u32.subarray(r.parents.off / 4, r.parents.off / 4 + parentCount * 4),
      names: c.u8.subarray(r.names.off, r.names.off + nameBytes),
    };
  }
}

/**
 * Lets this thread's wasm memory go where no block lies: `discard(memory, offset, length)`
 * is called for each such run of whole 64 KiB pages (a caller's madvise(MADV_DONTNEED):
 * memory cannot shrink, but its pages need not stay resident; they read as zeros after,
 * and nothing here assumes what a free region holds). A build thread does it between a
 * content build, whose posting lists took ~300 MB, and a symbols pass, which needs half.
 * Returns the bytes let go.
 */
export function releaseFreeMemory(discard: (memory: Buffer, offset: number, length: number) => void): number {
  if (instance === null) return 0;
  const c = instance;
  c.resident = null;
  const memory = Buffer.from(c.u8.buffer, 0, c.u8.byteLength);
  let released = 0;
  for (const [off, len] of c.arena.freePages(c.u8.byteLength, PAGE)) {
    discard(memory, off, len);
    released += len;
  }
  return released;
}

/** Why CBodyReader.read stopped (core/assembly/cbody.ts). */
export const C_BODY_END = 0;
export const C_BODY_EOF = 1;
export const C_BODY_KEYWORD = 2;
export const C_BODY_DIRECTIVE = 3;

/**
 * Reads a C function body of one document by the rules of core/assembly/cbody.ts, stretch
 * by stretch: each read stops at the body's end, at a `struct`/`union`/`enum`, or at a
 * directive, which the caller reads before it reads on. The document is copied into the
 * core once and stays there while nothing else uses the core.
 */
export class CBodyReader {
  /** Where the last read stopped (see C_BODY_*). */
  pos = 0;
  /** Braces open in the body. */
  braces = 0;
  /** Only whitespace since the last newline. */
  bol = false;
  /** Lines the last read counted. */
  lines = 0;
  /** Change of the nesting depth (braces and parentheses) in the last read. */
  depth = 0;
  /** First byte of the keyword a C_BODY_KEYWORD read stopped after. */
  keywordAt = 0;

  constructor(private readonly doc: Uint8Array) {}

  /** Reads from `pos` with `braces` open and `bol`; returns why it stopped, the rest in the fields. */
  read(pos: number, braces: number, bol: boolean): number {
    const c = core();
    const n = this.doc.length;
    const stateOff = align(n + 16);
    const base = c.scratchWith(this.doc, n, stateOff + 32);
    const st = (base + stateOff) >>> 2;
    const u32 = c.u32;
    u32[st] = pos;
    u32[st + 1] = braces;
    u32[st + 2] = bol ? 1 : 0;
    const why = c.ex.skipCBody(base, n, base + stateOff);
    this.pos = u32[st]!;
    this.braces = u32[st + 1]!;
    this.bol = u32[st + 2] !== 0;
    this.lines = u32[st + 3]!;
    this.depth = u32[st + 4]! | 0;
    this.keywordAt = u32[st + 5]!;
    return why;
  }
}

/**
 * A posting list that is not what PostingsBuilder writes: cut short, a varint too long,
 * ids not strictly ascending, an id past the list's bound, or more ids than bytes. Only a
 * damaged index holds one (the caller names the file).
 */
export class MalformedPostings extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedPostings';
  }
}

/** The bound of a list whose ids may be any u32 (EncodedList.limit's default). */
export const ANY_ID = 0x1_0000_0000;

/** maxId of the core's decoders (core/assembly/postings.ts nextId): the largest id below `limit`. */
function maxIdBelow(limit: number, count: number, what: string): number {
  if (!(limit >= 1 && limit <= ANY_ID)) {
    if (limit === 0 && count === 0) return 0;
    throw new MalformedPostings(`${what}: ${count} ids cannot lie below ${limit}`);
  }
  return (limit - 1) >>> 0;
}

/**
 * Decodes a posting list written by PostingsBuilder. `bytes` starts at the list (may extend
 * past it); `count` is its doc count; every id must be below `limit` (the shard's document
 * count, say: default any u32). Throws MalformedPostings if the bytes end before `count`
 * values, a varint is malformed, the ids are not strictly ascending or one reaches
 * `limit`, or `count` exceeds the bytes (a value takes at least one): a damaged list is
 * refused, never read past its end nor turned into documents that do not exist.
 */
export function decodePostings(bytes: Uint8Array, count: number, limit: number = ANY_ID): Uint32Array {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`decodePostings: bad count ${count}`);
  if (count === 0) return new Uint32Array(0);
  if (count > bytes.length) throw new MalformedPostings(`decodePostings: ${count} ids cannot fit in ${bytes.length} bytes`);
  const maxId = maxIdBelow(limit, count, 'decodePostings');
  const c = core();
  // A value takes at most 5 bytes, so only that much of `bytes` can belong to the list.
  const srcLen = Math.min(bytes.length, count * 5);
  const outOff = align(srcLen);
  const base = c.scratch(outOff + count * 4);
  c.u8.set(srcLen === bytes.length ? bytes : bytes.subarray(0, srcLen), base);
  const r = c.ex.decodeList(base, srcLen, count, 0, 0, base + outOff, maxId);
  if (r < 0) throw new MalformedPostings('decodePostings: truncated or malformed posting list');
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + count);
}

/**
 * One encoded posting list: its bytes (as decodePostings reads them) and its length in doc
 * ids; optionally its follow masks (one byte per doc id, PostingsBuilder) with the bits a
 * document's mask must hold to be kept (`want`, 0: none), and the bound its ids lie below
 * (`limit`, as decodePostings's; default any u32).
 */
export interface EncodedList {
  bytes: Uint8Array;
  count: number;
  follow?: Uint8Array;
  want?: number;
  limit?: number;
}

/**
 * The intersection of `n` encoded posting lists (`list(i)`, i ascending: give the rarest
 * first), computed in the core: the first list is decoded there, each next one is merged
 * with the running set while it is decoded (up to the set's last id), and only the result
 * comes out, so no list is copied out and back. The second list is always merged; before
 * each later list `next` is read, `goOn(next, before, after)` says whether it is worth it,
 * given the set's sizes before and after the last merge. An empty set ends it. A list with
 * follow masks and a `want` keeps only the documents whose mask holds every wanted bit.
 * Returns null for n = 0 (no constraint). Throws MalformedPostings on a malformed list (as
 * decodePostings; of a list merged, only the part read is checked), or one whose follow
 * masks are fewer than its ids. `list` and `goOn` must not call into the core.
 */
export function intersectPostings(n: number, list: (i: number) => EncodedList, goOn: (next: number, before: number, after: number) => boolean): Uint32Array | null {
  if (n === 0) return null;
  const first = list(0);
  if (first.count === 0) return new Uint32Array(0);
  const c = core();
  // io layout: the set u32[first.count] | the list being merged (its bytes) | its follow
  // masks when it has a `want`
  const setBytes = align(first.count * 4);
  const load = (l: EncodedList): { base: number; len: number; follow: number; want: number; maxId: number } => {
    if (!Number.isInteger(l.count) || l.count < 0 || l.count > l.bytes.length) throw new MalformedPostings(`intersectPostings: ${l.count} ids cannot fit in ${l.bytes.length} bytes`);
    const maxId = maxIdBelow(l.limit ?? ANY_ID, l.count, 'intersectPostings');
    // A value takes at most 5 bytes, so only that much of `bytes` can belong to the list.
    const len = Math.min(l.bytes.length, l.count * 5);
    const want = l.follow && l.want ? l.want & 0xff : 0;
    if (want && l.follow!.length < l.count) throw new MalformedPostings(`intersectPostings: ${l.follow!.length} follow masks for ${l.count} ids`);
    const followOff = setBytes + align(len);
    const base = c.scratch(followOff + (want ? l.count : 0), setBytes);
    c.u8.set(len === l.bytes.length ? l.bytes : l.bytes.subarray(0, len), base + setBytes);
    if (want) c.u8.set(l.follow!.subarray(0, l.count), base + followOff);
    return { base, len, follow: base + followOff, want, maxId };
  };
  let { base, len, follow, want, maxId } = load(first);
  let size = c.ex.decodeList(base + setBytes, len, first.count, follow, want, base, maxId);
  if (size < 0) throw new MalformedPostings('intersectPostings: truncated or malformed posting list');
  let before = size;
  for (let i = 1; i < n && size > 0 && (i === 1 || goOn(i, before, size)); i++) {
    const l = list(i);
    if (l.count === 0) return new Uint32Array(0);
    ({ base, len, follow, want, maxId } = load(l));
    const k = c.ex.intersectEncoded(base, size, base + setBytes, len, l.count, follow, want, base, maxId);
    if (k < 0) throw new MalformedPostings('intersectPostings: truncated or malformed posting list');
    before = size;
    size = k;
  }
  return c.u32.slice(base / 4, base / 4 + size);
}

/** Sorted-set intersection of strictly ascending u32 arrays (galloping / exponential search when sizes are skewed). */
export function intersectSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0 || b.length === 0) return new Uint32Array(0);
  const c = core();
  const bOff = align(a.length * 4);
  const outOff = bOff + align(b.length * 4);
  const base = c.scratch(outOff + Math.min(a.length, b.length) * 4);
  c.u32.set(a, base / 4);
  c.u32.set(b, (base + bOff) / 4);
  const k = c.ex.intersect(base, a.length, base + bOff, b.length, base + outOff) >>> 0;
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + k);
}

/** Sorted-set union of strictly ascending u32 arrays (galloping with bulk copies when sizes are skewed). */
export function unionSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0) return b.slice();
  if (b.length === 0) return a.slice();
  const c = core();
  const bOff = align(a.length * 4);
  const outOff = bOff + align(b.length * 4);
  const base = c.scratch(outOff + (a.length + b.length) * 4);
  c.u32.set(a, base / 4);
  c.u32.set(b, (base + bOff) / 4);
  const k = c.ex.union(base, a.length, base + bOff, b.length, base + outOff) >>> 0;
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + k);
}

/**
 * Whether `needle` occurs in `hay` at all (caseInsensitive: ASCII only, as findLiteral).
 * A long document is scanned from its middle to its end first, then from its start, each
 * part in growing windows copied in as they are scanned: where a term occurs at all, it
 * tends to occur again in the second half (Linux: the files that say "mutex_lock" and
 * "mutex_unlock" say the second ~30 % sooner from the middle than from the start, where
 * headers and declarations come first), and the bytes copied are the cost. The document's
 * resident prefix (Core.scratchWith) is left as it was: the second half's windows are laid
 * at their own offsets, beyond it.
 */
export function containsLiteral(hay: Uint8Array, needle: Uint8Array, caseInsensitive: boolean): boolean {
  const n = hay.length;
  const m = needle.length;
  if (m === 0 || m > n) return false;
  if (n <= 2 * FIRST_WINDOW) return findLiteral(hay, needle, caseInsensitive, 1).length > 0;
  const c = core();
  // io layout as findLiteral's: hay[n] + 16 readable padding bytes | needle[m] | out u32[1]
  const needleOff = align(n + 16);
  const outOff = needleOff + align(m);
  const size = outOff + 4;
  const ci = caseInsensitive ? 1 : 0;
  const [pa, pb] = probeOffsets(needle, caseInsensitive);
  let base = c.scratchWith(hay, n, size, 0);
  c.u8.set(needle, base + needleOff);
  const mid = n >>> 1;
  // Starts in [mid, n - m]: windows of starts [from, from + window), bytes [from, to).
  for (let from = mid, window = FIRST_WINDOW; from <= n - m; from += window, window *= 2) {
    const to = Math.min(n, from + window + m - 1);
    base = c.scratchWith(hay, n, size, 0);
    c.u8.set(hay.subarray(from, to), base + from);
    if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) return true;
  }
  // Starts in [0, mid): the windows extend the resident prefix.
  for (let from = 0, window = FIRST_WINDOW; from < mid; from += window, window *= 2) {
    const to = Math.min(n, Math.min(from + window, mid) + m - 1);
    base = c.scratchWith(hay, n, size, to);
    if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) return true;
  }
  return false;
}

/**
 * The offsets the literal search probes (findLiteral in core/assembly/verify.ts): the
 * needle's rarest byte in source code and its next rarest at another offset (a letter
 * counts both its cases when the search ignores case), in ascending order; 0 and 0 for one
 * byte. Rare probes make false candidates rare, and those are what a scan spends its time on.
 */
export function probeOffsets(needle: Uint8Array, caseInsensitive: boolean): [number, number] {
  const m = needle.length;
  if (m <= 1) return [0, 0];
  const frequency = (b: number): number => {
    if (!caseInsensitive) return BYTE_FREQUENCY[b]!;
    const lower = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
    return lower >= 0x61 && lower <= 0x7a ? BYTE_FREQUENCY[lower]! + BYTE_FREQUENCY[lower - 0x20]! : BYTE_FREQUENCY[b]!;
  };
  let a = 0;
  let b = -1;
  let fa = frequency(needle[0]!);
  let fb = Infinity;
  for (let i = 1; i < m; i++) {
    const f = frequency(needle[i]!);
    if (f < fa) {
      b = a;
      fb = fa;
      a = i;
      fa = f;
    } else if (f < fb) {
      b = i;
      fb = f;
    }
  }
  return a < b ? [a, b] : [b, a];
}

/** Start byte offsets of the leftmost non-overlapping occurrences of `needle` in `hay`, at most `max` of them (after a match at i, search resumes at i + needle.length). caseInsensitive: ASCII only (A-Z == a-z), other bytes compared exactly. Empty needle: return empty array. The hay is copied into the wasm arena (reuse one region) unless it is there from the previous call (the same object): a second needle in one document copies nothing. With max 1 it is copied and scanned in growing windows up to the first match. */
export function findLiteral(hay: Uint8Array, needle: Uint8Array, caseInsensitive: boolean, max: number): number[] {
  const n = hay.length;
  const m = needle.length;
  if (m === 0 || m > n || !(max >= 1)) return [];
  const c = core();
  // Non-overlapping matches: at most n / m of them.
  const cap = Math.min(Math.floor(max), Math.floor(n / m));
  // io layout: hay[n] + 16 readable padding bytes | needle[m] | out u32[cap]
  const needleOff = align(n + 16);
  const outOff = needleOff + align(m);
  const size = outOff + cap * 4;
  const ci = caseInsensitive ? 1 : 0;
  const [pa, pb] = probeOffsets(needle, caseInsensitive);
  if (cap === 1 && n > 2 * FIRST_WINDOW) {
    // One match wanted: the document is copied and scanned in growing windows, since the
    // first occurrence is often early (Linux: "mutex_unlock" in the files that say
    // "mutex_lock" lies 41 % in on average) and memory traffic is the cost.
    let base = c.scratchWith(hay, n, size, 0);
    c.u8.set(needle, base + needleOff);
    let from = 0;
    for (let window = FIRST_WINDOW; from <= n - m; window *= 2) {
      // Starts in [from, from + window) lie wholly in [from, to).
      const to = Math.min(n, from + window + m - 1);
      base = c.scratchWith(hay, n, size, to);
      if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) {
        return [c.u32[(base + outOff) / 4]! + from];
      }
      from += window;
    }
    return [];
  }
  const base = c.scratchWith(hay, n, size);
  c.u8.set(needle, base + needleOff);
  const k = c.ex.findLiteral(base, n, base + needleOff, m, ci, base + outOff, cap, pa, pb) >>> 0;
  // A plain array: a typed array per call would be a backing store per document searched
  // for the garbage collector to sweep.
  const at = (base + outOff) / 4;
  const out: number[] = new Array(k);
  for (let i = 0; i < k; i++) out[i] = c.u32[at + i]!;
  return out;
}

/** A file result's chunks as JSON, written by the core (shapeChunks). */
export interface CoreChunks {
  /** The chunk objects, comma-separated, each missing its symbols. */
  json: Uint8Array;
  /** Per chunk three numbers: where its symbols go in `json`, and its ranges [from, to) (pair indices). */
  marks: number[];
  /** The ranges' line table (locateLines: line and line start of each offset). */
  lines: number[];
  /** The context lines it was written with. */
  contextLines: number;
}

/**
 * The `chunks` of a file result with `ranges` (flat, ascending, not overlapping; at least
 * one) and `contextLines`, written as JSON by the core from the document's bytes (those
 * of the last call when they are still there): each chunk object up to `"symbols":[` and
 * from `]}` on, the caller writing its symbols at its mark. Byte for byte what
 * daemon/search/shape-file.ts writes itself. Null when a chunk is not valid UTF-8 (the
 * caller shapes the file itself: such bytes are decoded, core/assembly/chunks.ts). `keep`
 * copies the JSON out of the core's memory (default: into a buffer of its own).
 */
export function shapeChunks(doc: Uint8Array, ranges: ArrayLike<number>, contextLines: number, keep?: (json: Uint8Array) => Uint8Array): CoreChunks | null {
  const n = doc.length;
  const k = ranges.length >>> 1;
  if (k === 0) throw new RangeError('shapeChunks: no range');
  const c = core();
  // io layout (core/assembly/chunks.ts): hay[n] + 16 | ranges u32[2k] | lines u32[4k] |
  // spans u32[6k] | marks u32[3k] | state | out. The chunks' bytes are at most the
  // document's (disjoint spans), 6 bytes each when escaped; a range's two locations and
  // its keys, and a chunk's keys and start, fit in 200 bytes each.
  const rangesOff = align(n + 16);
  const linesOff = rangesOff + align(8 * k);
  const spansOff = linesOff + align(16 * k);
  const marksOff = spansOff + align(24 * k);
  const stateOff = marksOff + align(12 * k);
  const outOff = stateOff + 64;
  const base = c.scratchWith(doc, n, outOff + 6 * n + 400 * k + 64);
  const r32 = (base + rangesOff) / 4;
  for (let i = 0; i < 2 * k; i++) c.u32[r32 + i] = ranges[i]!;
  const written = c.ex.shapeChunks(base, n, base + rangesOff, k, contextLines, base + linesOff, base + spansOff, base + marksOff, base + outOff, base + stateOff);
  const l32 = (base + linesOff) / 4;
  const lines: number[] = new Array(4 * k);
  for (let i = 0; i < 4 * k; i++) lines[i] = c.u32[l32 + i]!;
  if (written < 0) return null;
  const count = c.u32[(base + stateOff) / 4]!;
  const m32 = (base + marksOff) / 4;
  const marks: number[] = new Array(3 * count);
  for (let i = 0; i < 3 * count; i++) marks[i] = c.u32[m32 + i]!;
  // The bytes are the io region's until the next call: `keep` copies them where the caller
  // keeps them (a search worker: beside the message they will go in); else a buffer of
  // their own (Buffer#allocUnsafe takes small ones from a shared pool).
  const out = c.u8.subarray(base + outOff, base + outOff + written);
  let json: Uint8Array;
  if (keep) json = keep(out);
  else {
    json = Buffer.allocUnsafe(written);
    json.set(out);
  }
  return { json, marks, lines, contextLines };
}

/** A sequence of byte classes compiled for findClassSequence (its program: core/assembly/classes.ts). */
export interface ClassSequence {
  readonly program: Uint8Array;
  /** Classes in the sequence (1-32). */
  readonly length: number;
  /** The offsets of the three classes the scan filters on (compileClassSequence picks them). */
  readonly pa: number;
  readonly pb: number;
  readonly pc: number;
}

/** A class's members: 4 u32 words per class, bit b of word b >> 5 set when byte b (< 0x80) is in it. */
const inClass = (words: ArrayLike<number>, i: number, b: number): boolean => ((words[4 * i + (b >> 5)]! >>> (b & 31)) & 1) === 1;

/** The class's bytes when they are one range [first, last], else null. */
function oneRange(words: ArrayLike<number>, i: number): [number, number] | null {
  let first = -1;
  let last = -1;
  for (let b = 0; b < 0x80; b++) {
    if (!inClass(words, i, b)) continue;
    if (first >= 0 && last !== b - 1) return null;
    if (first < 0) first = b;
    last = b;
  }
  return first < 0 ? null : [first, last];
}

/** The nibble tables of one class: b is in it when lo[b & 15] & hi[b >> 4] != 0 (exact for ASCII sets). */
function shufti(words: ArrayLike<number>, i: number): [Uint8Array, Uint8Array] {
  const lo = new Uint8Array(16);
  const hi = new Uint8Array(16);
  const bits = new Map<number, number>(); // a set of low nibbles -> its bit
  for (let h = 0; h < 8; h++) {
    let nibbles = 0;
    for (let l = 0; l < 16; l++) if (inClass(words, i, (h << 4) | l)) nibbles |= 1 << l;
    if (nibbles === 0) continue;
    let bit = bits.get(nibbles);
    if (bit === undefined) bits.set(nibbles, (bit = 1 << bits.size)); // at most 8 high nibbles: 8 bits
    hi[h] = bit;
    for (let l = 0; l < 16; l++) if ((nibbles >> l) & 1) lo[l]! |= bit;
  }
  return [lo, hi];
}

/**
 * Compiles a sequence of classes of ASCII bytes, 4 u32 words each (bit b of word b >> 5:
 * byte b is in the class; bits of bytes >= 0x80 are ignored). 1 to 32 classes.
 */
export function compileClassSequence(words: ArrayLike<number>): ClassSequence {
  const k = words.length / 4;
  if (!Number.isInteger(k) || k < 1 || k > 32) throw new RangeError(`trawl core: a class sequence has 1 to 32 classes, not ${words.length / 4}`);
  const size: number[] = [];
  for (let i = 0; i < k; i++) {
    let n = 0;
    for (let b = 0; b < 0x80; b++) if (inClass(words, i, b)) n++;
    size.push(n);
  }
  // A: the rarest class. B: the farthest from it of those that rule out at least half the
  // bytes (neighbours are correlated: `0x` then hex digits passes every "0x" when B is the
  // 'x', few when B is the last digit). C: the rarest of the rest.
  let pa = 0;
  for (let i = 1; i < k; i++) if (size[i]! < size[pa]!) pa = i;
  let pb = pa;
  for (let i = 0; i < k; i++) {
    if (i === pa || size[i]! > 64) continue;
    if (pb === pa || Math.abs(i - pa) > Math.abs(pb - pa) || (Math.abs(i - pa) === Math.abs(pb - pa) && size[i]! < size[pb]!)) pb = i;
  }
  let pc = pa;
  for (let i = 0; i < k; i++) if (i !== pa && i !== pb && (pc === pa || size[i]! < size[pc]!)) pc = i;
  if (pb === pa) pb = pc; // no class rules out half: the two rarest
  const program = new Uint8Array(128 + 256 * 4);
  [pa, pb, pc].forEach((at, i) => {
    const range = oneRange(words, at);
    if (range) {
      program.fill(range[0], 32 * i, 32 * i + 16);
      program.fill(range[1] - range[0] + 1, 32 * i + 16, 32 * i + 32);
      program[96 + i] = 1;
      return;
    }
    const [lo, hi] = shufti(words, at);
    program.set(lo, 32 * i);
    program.set(hi, 32 * i + 16);
  });
  const table = new Uint32Array(program.buffer, 128, 256);
  for (let i = 0; i < k; i++) for (let b = 0; b < 0x80; b++) if (inClass(words, i, b)) table[b]! |= 1 << i;
  return { program, length: k, pa, pb, pc };
}

/**
 * Starts of the leftmost non-overlapping occurrences of the class sequence in `hay`, at
 * most `max` (after one at i the scan resumes at i + its length). The document is copied
 * as findLiteral copies it (nothing when it is resident).
 */
export function findClassSequence(hay: Uint8Array, seq: ClassSequence, max: number): number[] {
  const n = hay.length;
  const k = seq.length;
  if (k > n || !(max >= 1)) return [];
  const c = core();
  const cap = Math.min(Math.floor(max), Math.floor(n / k));
  // io layout: hay[n] + 16 readable padding bytes | program | out u32[cap]
  const progOff = align(n + 16);
  const outOff = progOff + align(seq.program.length);
  const base = c.scratchWith(hay, n, outOff + cap * 4);
  c.u8.set(seq.program, base + progOff);
  const found = c.ex.findClassSequence(base, n, base + progOff, k, seq.pa, seq.pb, seq.pc, base + outOff, cap) >>> 0;
  const at = (base + outOff) / 4;
  const out: number[] = new Array(found);
  for (let i = 0; i < found; i++) out[i] = c.u32[at + i]!;
  return out;
}

/**
 * Line numbers and line starts of ascending byte offsets into `hay`: out[2i] is offset i's
 * 1-based line (1 + the "\n" bytes before it), out[2i + 1] the offset its line starts at.
 * Only the bytes up to the last offset are copied into the wasm arena.
 */
export function locateLines(hay: Uint8Array, offsets: ArrayLike<number>): number[] {
  const k = offsets.length;
  if (k === 0) return [];
  let n = 0;
  for (let i = 0; i < k; i++) if (offsets[i]! > n) n = offsets[i]!;
  n = Math.min(n, hay.length);
  const c = core();
  // io layout: hay[n] + 16 readable padding bytes | offsets u32[k] | out u32[2k]
  const offsOff = align(n + 16);
  const outOff = offsOff + align(k * 4);
  const base = c.scratchWith(hay, n, outOff + k * 8);
  c.u32.set(offsets, (base + offsOff) / 4);
  c.ex.locateLines(base, n, base + offsOff, k, base + outOff);
  // A plain array, as findLiteral's: a search locates the lines of every hit.
  const at = (base + outOff) / 4;
  const out: number[] = new Array(2 * k);
  for (let i = 0; i < 2 * k; i++) out[i] = c.u32[at + i]!;
  return out;
}

/** xxHash32 of data with seed (default 0): standard xxHash32 so values match published test vectors. Large inputs are streamed through the io region in chunks. */
export function hash32(data: Uint8Array, seed: number = 0): number {
  const n = data.length;
  if (n > CHUNK) return new Hash32Stream(seed).update(data).digest();
  const c = core();
  const base = c.scratch(n);
  c.u8.set(data, base);
  return c.ex.xxh32(base, n, seed >>> 0) >>> 0;
}

/**
 * xxHash32 (as hash32) of bytes given piece by piece, the pieces of any length: what a
 * reader that hashes a file in slices between other work needs (daemon/index/scrub-thread.ts).
 * Its state is kept here between pieces, so other hashes may run in between.
 */
export class Hash32Stream {
  readonly #seed: number;
  /** The four accumulators (xxh32Save), the stripe not yet whole, and bytes taken. */
  readonly #state = new Uint32Array(4);
  readonly #tail = new Uint8Array(16);
  #tailLen = 0;
  #total = 0;

  constructor(seed = 0) {
    this.#seed = seed >>> 0;
    const c = core();
    c.ex.xxh32Begin(this.#seed);
    const base = c.scratch(16);
    c.ex.xxh32Save(base);
    this.#state.set(c.u32.subarray(base / 4, base / 4 + 4));
  }

  /** Takes the next bytes. */
  update(data: Uint8Array): this {
    this.#total += data.length;
    let from = 0;
    if (this.#tailLen > 0) {
      from = Math.min(data.length, 16 - this.#tailLen);
      this.#tail.set(data.subarray(0, from), this.#tailLen);
      this.#tailLen += from;
      if (this.#tailLen < 16) return this;
    }
    const whole = (data.length - from) & ~15;
    if (this.#tailLen === 16 || whole > 0) {
      const c = core();
      const size = Math.min(CHUNK, 16 + whole);
      const base = c.scratch(size + 16);
      const at = base + size; // the state, after the bytes
      c.u32.set(this.#state, at / 4);
      c.ex.xxh32Restore(at);
      if (this.#tailLen === 16) {
        c.u8.set(this.#tail, base);
        c.ex.xxh32Update(base, 16);
        this.#tailLen = 0;
      }
      for (let i = 0; i < whole; i += size) {
        const len = Math.min(size, whole - i); // size is a multiple of 16 (CHUNK is)
        c.u8.set(data.subarray(from + i, from + i + len), base);
        c.ex.xxh32Update(base, len);
      }
      c.ex.xxh32Save(at);
      this.#state.set(c.u32.subarray(at / 4, at / 4 + 4));
      from += whole;
    }
    this.#tail.set(data.subarray(from), this.#tailLen);
    this.#tailLen += data.length - from;
    return this;
  }

  /** The hash of every byte taken. */
  digest(): number {
    const c = core();
    const base = c.scratch(32);
    c.u8.set(this.#tail.subarray(0, this.#tailLen), base);
    c.u32.set(this.#state, (base + 16) / 4);
    c.ex.xxh32Restore(base + 16);
    return c.ex.xxh32End(base, this.#tailLen, this.#total >>> 0, this.#total >= 16 ? 1 : 0, this.#seed) >>> 0;
  }
}

/** Names of the wasm exports the glue requires (for a test that asserts the module has them). */
export const REQUIRED_EXPORTS: readonly string[] = Object.freeze([
  'memory',
  'heapBase',
  'fold',
  'seenBytes',
  'distinctTrigrams',
  'segmentMasks',
  'countTrigrams',
  'keysToIds',
  'countDistinct',
  'collectTrigrams',
  'scatterDocs',
  'encodeLists',
  'decodeList',
  'intersectEncoded',
  'intersect',
  'union',
  'findLiteral',
  'docWords',
  'groupWords',
  'keptWordBytes',
  'wordCountsBytes',
  'namesDedup',
  'namesFold',
  'namesSort',
  'namesWrite',
  'findClassSequence',
  'locateLines',
  'shapeChunks',
  'xxh32',
  'xxh32Begin',
  'xxh32Update',
  'xxh32End',
  'xxh32Save',
  'xxh32Restore',
  'skipCBody',
  'cScan',
]);

// ---------------------------------------------------------------------------------------
// Instance, views and arena.

const WASM_URL = pathToFileURL(join(INSTALL_ROOT, 'core/build/trawl-core.wasm'));
const NOT_BUILT = 'trawl core not built: run ./scripts/setup.sh (or npm run build:wasm)';
/** Streaming chunk for hashing (a multiple of 16, the xxHash32 stripe). */
const CHUNK = 1 << 20;
/** findLiteral's first window when one match is wanted (it doubles from there). */
const FIRST_WINDOW = 8 << 10;
/** The finish() counting table: one u32 per possible trigram id. */
const TABLE_BYTES = (1 << 24) * 4;
/**
 * finish() sorts up to this many pairs instead of counting them in the table (sorting
 * 2^18 numbers takes ~20 ms here, about a third of the table's fixed cost).
 */
const SORT_MAX_PAIRS = 1 << 18;
/** ... when doc ids fit below this (a sort key is (trigram id × this + doc id) × 256 + follow mask, exact in a double up to 2^53). */
const SORT_MAX_DOCS = 1 << 20;
const PAGE = 65536;
const MAX_BYTES = 65536 * PAGE; // wasm32 limit: 4 GiB

// The compiler options include no DOM library, which is where the WebAssembly typings
// live, so the few parts used here are typed locally.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(deltaPages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  /** A trap (core/assembly/cscan.ts stops a scan with one). */
  RuntimeError: new (...args: never[]) => Error;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface CoreExports {
  memory: WasmMemory;
  heapBase(): number;
  fold(src: number, n: number, dst: number): number;
  seenBytes(): number;
  distinctTrigrams(folded: number, n: number, seen: number, out: number, masks: number, limit: number): number;
  segmentMasks(folded: number, n: number, keys: number, cnt: number, rows: number, shift: number, width: number, out: number): void;
  countTrigrams(pairs: number, n: number, table: number): void;
  keysToIds(pairs: number, n: number): void;
  countDistinct(table: number): number;
  collectTrigrams(table: number, ids: number, counts: number): number;
  scatterDocs(pairs: number, masks: number, docCounts: number, numDocs: number, table: number, docs: number, follow: number): void;
  encodeLists(docs: number, counts: number, k: number, blob: number, offsets: number): number;
  decodeList(src: number, len: number, count: number, follow: number, want: number, out: number, maxId: number): number;
  intersectEncoded(acc: number, na: number, src: number, len: number, count: number, follow: number, want: number, out: number, maxId: number): number;
  intersect(a: number, na: number, b: number, nb: number, out: number): number;
  union(a: number, na: number, b: number, nb: number, out: number): number;
  findLiteral(hay: number, n: number, needle: number, m: number, ci: number, out: number, max: number, pa: number, pb: number): number;
  docWords(src: number, n: number, doc: number, table: number, mask: number, shift: number, gen: number, pairs: number, arena: number, state: number, hashBits: number): number;
  groupWords(pairs: number, n: number, sorted: number, counts: number, minDocs: number, arena: number, outWord: number, outCount: number, outDocs: number): number;
  keptWordBytes(sorted: number, outWord: number, k: number, arena: number, out: number, offs: number): number;
  wordCountsBytes(): number;
  namesDedup(bytes: number, start: number, length: number, d: number, table: number, mask: number, nameOf: number, rawStart: number, rawLength: number, state: number): void;
  namesFold(bytes: number, rawStart: number, rawLength: number, n: number, foldBytes: number, foldStart: number, foldLength: number): void;
  namesSort(kb: number, ks: number, kl: number, rb: number, rs: number, rl: number, n: number, order: number, stack: number): void;
  namesWrite(bytes: number, rawStart: number, rawLength: number, order: number, n: number, nameOf: number, d: number, rank: number, next: number, out: number, nameOffOf: number): number;
  findClassSequence(hay: number, n: number, prog: number, k: number, pa: number, pb: number, pc: number, out: number, max: number): number;
  locateLines(hay: number, n: number, offs: number, k: number, out: number): void;
  shapeChunks(hay: number, n: number, ranges: number, k: number, context: number, lines: number, spans: number, marks: number, out: number, state: number): number;
  xxh32(p: number, len: number, seed: number): number;
  xxh32Begin(seed: number): void;
  xxh32Update(p: number, len: number): void;
  xxh32End(tail: number, tailLen: number, totalLow: number, large: number, seed: number): number;
  xxh32Save(p: number): void;
  xxh32Restore(p: number): void;
  skipCBody(src: number, n: number, state: number): number;
  cScan(src: number, n: number, header: number, pathHash: number, defs: number, defsCap: number, parents: number, parentsCap: number, names: number, namesCap: number, tokens: number, tokensCap: number, conds: number, condsCap: number, state: number): number;
}

/** A region of wasm memory: [off, off + size), off and size multiples of 64. */
interface Block {
  off: number;
  size: number;
}

/**
 * The blocks one call takes, freed together when it is done (`free`, in a finally), or one
 * early (`drop`): what a builder's finish and the name index lay out for a while.
 */
class Taken {
  readonly #arena: Arena;
  readonly #blocks: Block[] = [];

  constructor(arena: Arena) {
    this.#arena = arena;
  }

  take(size: number): Block {
    const b = this.#arena.alloc(size);
    this.#blocks.push(b);
    return b;
  }

  /** Several blocks at once, all or none (a failure frees those taken). */
  all(sizes: readonly number[]): Block[] {
    const from = this.#blocks.length;
    try {
      return sizes.map((size) => this.take(size));
    } catch (err) {
      for (const b of this.#blocks.splice(from)) this.#arena.free(b);
      throw err;
    }
  }

  drop(b: Block): void {
    this.#blocks.splice(this.#blocks.indexOf(b), 1);
    this.#arena.free(b);
  }

  free(): void {
    for (const b of this.#blocks.splice(0)) this.#arena.free(b);
  }
}

/**
 * First-fit allocator over [base, memory end). Live blocks are kept sorted by offset; the
 * gaps between them are the free space, so freeing needs no coalescing. Blocks are
 * mutable records: resize() may move a block and updates it in place, so holders keep
 * one reference.
 */
class Arena {
  readonly #blocks: Block[] = [];
  readonly #base: number;
  readonly #core: Core;

  constructor(c: Core, base: number) {
    this.#core = c;
    this.#base = base;
  }

  alloc(size: number): Block {
    const b: Block = { off: 0, size: align(Math.max(size, 64)) };
    const [off, idx] = this.#place(b.size);
    b.off = off;
    this.#blocks.splice(idx, 0, b);
    return b;
  }

  free(b: Block): void {
    const i = this.#blocks.indexOf(b);
    if (i >= 0) this.#blocks.splice(i, 1);
  }

  /** Makes b at least `size` bytes, preserving its first `keep` bytes (it may move). */
  resize(b: Block, size: number, keep: number): void {
    size = align(size);
    if (size <= b.size) return;
    const i = this.#blocks.indexOf(b);
    if (i < 0) throw new Error('trawl core: resize of a freed block');
    const nextOff = i + 1 < this.#blocks.length ? this.#blocks[i + 1]!.off : Infinity;
    if (b.off + size <= nextOff) {
      this.#core.ensureBytes(b.off + size);
      b.size = size;
      return;
    }
    this.#blocks.splice(i, 1);
    let placed: [number, number];
    try {
      placed = this.#place(size);
    } catch (err) {
      this.#blocks.splice(i, 0, b);
      throw err;
    }
    const [off, idx] = placed;
    // The new place may overlap the old one (a gap that contained it); copyWithin has
    // memmove semantics.
    if (keep > 0 && off !== b.off) this.#core.u8.copyWithin(off, b.off, b.off + keep);
    b.off = off;
    b.size = size;
    this.#blocks.splice(idx, 0, b);
  }

  /** The gaps between live blocks, and the room after the last, as [offset, length] of whole `page`s (a power of two). */
  freePages(end: number, page: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let from = this.#base;
    const gap = (a: number, b: number) => {
      const s = Math.ceil(a / page) * page;
      const e = Math.floor(b / page) * page;
      if (e > s) out.push([s, e - s]);
    };
    for (const b of this.#blocks) {
      gap(from, b.off);
      from = b.off + b.size;
    }
    gap(from, end);
    return out;
  }

  /** Finds room for `size` bytes: the first gap that fits, else after the last block. */
  #place(size: number): [number, number] {
    let prevEnd = this.#base;
    const blocks = this.#blocks;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i]!;
      if (b.off - prevEnd >= size) return [prevEnd, i];
      prevEnd = b.off + b.size;
    }
    this.#core.ensureBytes(prevEnd + size);
    return [prevEnd, blocks.length];
  }
}

class Core {
  readonly ex: CoreExports;
  readonly memory: WasmMemory;
  readonly arena: Arena;
  readonly seenBytes: number;
  u8: Uint8Array;
  u32: Uint32Array;
  readonly #io: Block;

  constructor(ex: CoreExports) {
    this.ex = ex;
    this.memory = ex.memory;
    this.u8 = new Uint8Array(this.memory.buffer);
    this.u32 = new Uint32Array(this.memory.buffer);
    this.seenBytes = ex.seenBytes() >>> 0;
    this.arena = new Arena(this, align(ex.heapBase() >>> 0));
    this.#io = this.arena.alloc(1 << 16);
  }

  /** Grows memory so that [0, end) is addressable, then refreshes the views. */
  ensureBytes(end: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    if (end > MAX_BYTES) throw new RangeError(`trawl core: needs ${end} bytes of wasm memory, more than 4 GiB`);
    // Grow by at least 1/8 of the current size so repeated small growths stay amortized.
    const pages = Math.min(Math.max(Math.ceil((end - have) / PAGE), Math.ceil(have / PAGE / 8)), MAX_BYTES / PAGE - have / PAGE);
    try {
      this.memory.grow(pages);
    } catch (err) {
      throw new RangeError(`trawl core: cannot grow wasm memory to ${have + pages * PAGE} bytes`, { cause: err });
    }
    this.u8 = new Uint8Array(this.memory.buffer);
    this.u32 = new Uint32Array(this.memory.buffer);
  }

  /**
   * The document whose bytes sit at the start of the io region since the last findLiteral
   * or locateLines call (the same object, so the same bytes: documents are read-only
   * views): another needle in it, or its lines, copy nothing. Any other use of the io
   * region forgets it, but a small input laid out past it (scratchWith).
   */
  resident: Uint8Array | null = null;
  /** How many bytes of `resident` are there (locateLines and a one-match findLiteral copy a prefix). */
  residentBytes = 0;

  /** The shared io region, grown to at least `size` bytes (contents not preserved past its first `keep` bytes). Returns its offset. */
  scratch(size: number, keep = 0): number {
    this.resident = null;
    if (size > this.#io.size) this.arena.resize(this.#io, Math.max(size, this.#io.size * 1.25), keep);
    return this.#io.off;
  }

  /**
   * The io region for a call whose first `n` bytes are `doc`'s first `n` bytes (the call's
   * other data at `n` + 16 and after), of which the first `upto` (default all) are copied
   * there unless they are there already: the region did not move since and nothing else
   * used it. A caller may copy a growing prefix call by call. Returns its offset.
   *
   * A small other input (up to SIDE_MAX bytes: a file's path, searched between calls on its
   * content) is laid out past the resident document, which stays resident: a search that
   * looks for a term in a file's content, then in its name, then locates the content's
   * lines copies the content once.
   */
  scratchWith(doc: Uint8Array, n: number, size: number, upto: number = n): number {
    const resident = this.resident;
    if (resident !== null && resident !== doc && n <= SIDE_MAX) {
      const kept = this.residentBytes;
      const off = align(kept + 16);
      const base = this.scratch(off + size, kept) + off;
      this.resident = resident;
      this.u8.set(doc.subarray(0, upto), base);
      return base;
    }
    const there = this.resident === doc && size <= this.#io.size ? this.residentBytes : 0;
    const base = this.scratch(size);
    // (The whole document without a view of it: a Buffer's subarray is a slow call.)
    if (there === 0 && upto === doc.length) this.u8.set(doc, base);
    else if (there < upto) this.u8.set(doc.subarray(there, upto), base + there);
    // The call lays out its other data from n + 16 on: only the first n bytes stay.
    this.resident = doc;
    this.residentBytes = Math.min(Math.max(there, upto), n);
    return base;
  }
}

let instance: Core | null = null;

function core(): Core {
  if (instance === null) instance = load();
  return instance;
}

function load(): Core {
  let bytes: Buffer;
  try {
    bytes = readFileSync(WASM_URL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(NOT_BUILT);
    throw err;
  }
  const mod = new Wasm.Module(bytes);
  const inst = new Wasm.Instance(mod, {
    env: {
      abort(_msg: number, _file: number, line: number, col: number): never {
        throw new Error(`trawl core: wasm abort at ${line}:${col}`);
      },
    },
  });
  const ex = inst.exports;
  const missing = REQUIRED_EXPORTS.filter((name) => !(name in ex));
  if (missing.length > 0) throw new Error(`trawl core: ${WASM_URL.pathname} lacks exports ${missing.join(', ')}; rebuild it (npm run build:wasm)`);
  return new Core(ex as unknown as CoreExports);
}

/** Inputs this small go past the resident document instead of replacing it (Core.scratchWith). */
const SIDE_MAX = 4096;

function align(x: number): number {
  return Math.ceil(x / 64) * 64;
}
