// The posting lists of one shard, built in the core (core/assembly/ngrams.ts takes each
// document's distinct trigrams, core/assembly/postings.ts groups and encodes them).

import { align, Taken, type Block } from './arena.ts';
import { core, type Core } from './instance.ts';
import {
  placeSegments,
  rowByBisection,
  SEGMENT_MAX_TRIGRAMS,
  SEGMENT_ROWS_BYTES,
  segmentDoc,
  type SegmentedDoc,
  type SegmentMasks,
  type SegmentOptions,
} from './segments.ts';

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
 *
 * Grouped (`grouped: true`, a history shard's postings: shard-reader.ts, doc-groups): a
 * posting is a group of documents, not a document. addContent is then given the same id
 * again for each further version of the group: the group's trigrams are the union of its
 * versions', each follow mask the OR of theirs, and its segment masks (when it is large)
 * the OR of theirs per segment, so that every version's own masks are within the group's.
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
  /** Postings are groups of documents (see the class comment). */
  #grouped: boolean;
  /** Grouped: where the last group's pairs start in `pairs`. */
  #groupStart = 0;
  /** Grouped: the last group's segment masks so far (null: none wanted). */
  #groupSegments: GroupSegments | null = null;

  constructor(options?: { expectedBytes?: number; segments?: SegmentOptions; grouped?: boolean }) {
    const c = core();
    if (liveBuilder !== null) {
      throw new Error('PostingsBuilder: another builder is live on this thread; finish() or dispose() it first');
    }
    this.#core = c;
    const expected = Math.max(0, options?.expectedBytes ?? 0) || 0;
    this.#seen = c.arena.alloc(c.seenBytes);
    try {
      // Source code yields one distinct (doc, trigram) pair per 5-10 bytes (dense C
      // sources at the low end, headers at the high one). Reserving for the dense end costs
      // little: grown wasm pages only take physical memory once written.
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
    this.#grouped = options?.grouped === true;
    liveBuilder = this;
  }

  /**
   * Whether the content last given to addContent holds a code point whose case folding
   * reaches ASCII (U+212A or U+017F; see foldBytes): folding shortens exactly such content.
   * A reader that knows a document holds neither may compare ASCII case-insensitively.
   */
  lastFoldsToAscii = false;

  /**
   * Adds the document `docId` (must be exactly the previous docId + 1, starting at 0) with
   * the distinct folded trigrams of `content`. Returns the number of distinct trigrams, or -1
   * (document NOT added, docId not consumed) when there are more than `limit` distinct
   * trigrams. Grouped, `docId` is a group: the previous one again adds a version to it (the
   * count and the limit are still the version's own), and `groupBytes` (its largest
   * version's size, known beforehand) decides whether it gets segment masks.
   */
  addContent(docId: number, content: Uint8Array, limit: number, groupBytes = content.length): number {
    if (!this.#live) throw new Error('PostingsBuilder: already finished or disposed');
    const again = this.#grouped && docId === this.#numDocs - 1;
    if (docId !== this.#numDocs && !again) {
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
    }
    if (this.#grouped) {
      this.#addVersion(docId, again, { folded: base + foldOff, n, f, cnt }, groupBytes);
      return cnt;
    }
    if (cnt > 0) {
      // Positions in the folded bytes are the content's only when folding kept the length.
      const seg = this.#segmenting;
      if (seg && f === n && n >= seg.minBytes && cnt < SEGMENT_MAX_TRIGRAMS) this.#segmented.push(this.#segmentDoc(docId, base + foldOff, f, cnt));
      this.#pairsLen += cnt;
    }
    this.#docCounts = withCount(this.#docCounts, this.#numDocs++, cnt);
    return cnt;
  }

  /** The segment masks of the document just added: its folded bytes folded[0, n), its `cnt` keys at the end of the pairs. */
  #segmentDoc(docId: number, folded: number, n: number, cnt: number): SegmentedDoc {
    const c = this.#core;
    if (this.#rows === null) {
      this.#rows = c.arena.alloc(SEGMENT_ROWS_BYTES);
      c.u8.fill(0, this.#rows.off, this.#rows.off + SEGMENT_ROWS_BYTES);
    }
    return segmentDoc(c, { doc: docId, folded, n, keys: this.#pairs!.off + this.#pairsLen * 4, cnt }, this.#segmenting!.shift, this.#rows);
  }

  /**
   * Grouped: the version just given (its `cnt` keys appended after the pairs) joins group
   * `group`, a new one unless `again`. Its segment masks are taken before its keys merge
   * into the group's (mergeIntoGroup drops the keys the group has).
   */
  #addVersion(group: number, again: boolean, v: { folded: number; n: number; f: number; cnt: number }, groupBytes: number): void {
    const c = this.#core;
    if (!again) {
      this.#endGroup();
      this.#groupStart = this.#pairsLen;
      const seg = this.#segmenting;
      this.#groupSegments = seg && groupBytes >= seg.minBytes ? new GroupSegments(group, seg.shift) : null;
      this.#docCounts = withCount(this.#docCounts, this.#numDocs++, 0);
    }
    const gs = this.#groupSegments;
    if (gs !== null) {
      gs.maxBytes = Math.max(gs.maxBytes, v.n);
      // A version whose positions are not its content's (folding changed its length), or
      // too rich for segmentMasks, leaves the group without masks: they would not cover it.
      if (v.cnt > 0 && (v.f !== v.n || v.cnt >= SEGMENT_MAX_TRIGRAMS)) this.#groupSegments = null;
      else if (v.cnt > 0) gs.add(this.#segmentDoc(group, v.folded, v.f, v.cnt));
    }
    if (v.cnt === 0) return;
    const count = c.ex.mergeIntoGroup(this.#pairs!.off, this.#masks!.off, this.#groupStart, this.#pairsLen, v.cnt, this.#seen!.off) >>> 0;
    this.#pairsLen = this.#groupStart + count;
    this.#docCounts[group] = count;
  }

  /** Grouped: the last group's segment masks join the shard's, when it has them. */
  #endGroup(): void {
    const done = this.#groupSegments?.finish();
    if (done) this.#segmented.push(done);
    this.#groupSegments = null;
  }

  /** Finishes: for every trigram that occurs, in ascending id order: its id, how many docs contain it, and the byte offset of its list in `blob`. Each list is the ascending doc ids, LEB128-varint delta encoded (see the class comment for the exact encoding; decodePostings reads it). */
  finish(options?: { path?: 'table' | 'sort' }): {
    ids: Uint32Array;
    counts: Uint32Array;
    offsets: Uint32Array;
    blob: Uint8Array;
    follow: Uint8Array;
    segments: SegmentMasks | null;
  } {
    if (!this.#live) throw new Error('PostingsBuilder: already finished or disposed');
    const c = this.#core;
    const a = c.arena;
    const taken = new Taken(a);
    try {
      if (this.#grouped) this.#endGroup();
      const P = this.#pairsLen;
      const D = this.#numDocs;
      a.free(this.#seen!);
      this.#seen = null;
      if (this.#rows) a.free(this.#rows);
      this.#rows = null;
      // Steps 1-3 give every trigram's id and doc count, ascending, and the docs of each
      // list one after the other. The counting table costs the same whatever the input (its
      // 64 MiB cleared and scanned twice); a small builder (a delta shard of a few files)
      // sorts its pairs instead. Both give the same lists (core.test.ts).
      const path = options?.path ?? (P <= SORT_MAX_PAIRS && D <= SORT_MAX_DOCS ? 'sort' : 'table');
      const { ids, counts, docs, follow, K, segments } = path === 'sort' ? this.#listsBySort(taken) : this.#listsByTable(taken);
      a.free(this.#pairs!);
      this.#pairs = null;
      a.free(this.#masks!);
      this.#masks = null;
      // 4. Varint-encode every list (at most 5 bytes per entry).
      const blob = taken.take(P * 5 + 16);
      const offsets = taken.take(K * 4);
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

  /** finish() steps 1-3 for a small builder: the pairs sorted, as numbers. */
  #listsBySort(taken: Taken): Lists {
    const c = this.#core;
    const P = this.#pairsLen;
    const D = this.#numDocs;
    const pairs = this.#pairs!;
    const masks = this.#masks!;
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
    let K = 0;
    for (let i = 0; i < P; i++) if (i === 0 || Math.floor(keys[i]! / unit) !== Math.floor(keys[i - 1]! / unit)) K++;
    const ids = taken.take(K * 4);
    const counts = taken.take(K * 4);
    const docs = taken.take(P * 4);
    const follow = taken.take(P);
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
    let segments: SegmentMasks | null = null;
    if (this.#segmented.length > 0) {
      const sorted = u32.slice(ids.off / 4, ids.off / 4 + K);
      segments = placeSegments(this.#segmenting!.shift, this.#segmented, K, (id) => rowByBisection(sorted, id));
    }
    return { ids, counts, docs, follow, K, segments };
  }

  /** finish() steps 1-3 in the counting table. */
  #listsByTable(taken: Taken): Lists {
    const c = this.#core;
    const P = this.#pairsLen;
    const D = this.#numDocs;
    const pairs = this.#pairs!;
    // 1. Count each trigram's docs in a table indexed by trigram id.
    const table = taken.take(TABLE_BYTES);
    c.u8.fill(0, table.off, table.off + TABLE_BYTES);
    c.ex.countTrigrams(pairs.off, P, table.off);
    // 2. Ascending ids with their counts; the table becomes each list's start index.
    const K = c.ex.countDistinct(table.off) >>> 0;
    const ids = taken.take(K * 4);
    const counts = taken.take(K * 4);
    c.ex.collectTrigrams(table.off, ids.off, counts.off);
    // 3. Scatter doc ids; docs arrive in ascending order so every list comes out sorted.
    const docCounts = taken.take(D * 4);
    c.u32.set(this.#docCounts.subarray(0, D), docCounts.off / 4);
    const docs = taken.take(P * 4);
    const follow = taken.take(P);
    c.ex.scatterDocs(pairs.off, this.#masks!.off, docCounts.off, D, table.off, docs.off, follow.off);
    let segments: SegmentMasks | null = null;
    if (this.#segmented.length > 0) {
      // The table, indexed by trigram id, is free now: it maps each id to its row.
      const u32 = c.u32;
      const at = table.off / 4;
      for (let r = 0; r < K; r++) u32[at + u32[ids.off / 4 + r]!] = r;
      segments = placeSegments(this.#segmenting!.shift, this.#segmented, K, (id) => u32[at + id]!);
    }
    taken.drop(table);
    taken.drop(docCounts);
    return { ids, counts, docs, follow, K, segments };
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
    this.#groupSegments = null;
    if (liveBuilder === this) liveBuilder = null;
  }
}

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

/** The finish() counting table: one u32 per possible trigram id. */
const TABLE_BYTES = (1 << 24) * 4;
/**
 * finish() sorts up to this many pairs instead of counting them in the table (sorting this
 * many numbers takes a fraction of the table's fixed cost).
 */
const SORT_MAX_PAIRS = 1 << 18;
/** ... when doc ids fit below this (a sort key is (trigram id × this + doc id) × 256 + follow mask, exact in a double up to 2^53). */
const SORT_MAX_DOCS = 1 << 20;

/** finish() steps 1-3: K distinct trigrams' ids and doc counts, ascending, each list's docs and follow masks (its P pairs, list after list), and the segment masks laid out by list. */
interface Lists {
  ids: Block;
  counts: Block;
  docs: Block;
  follow: Block;
  K: number;
  segments: SegmentMasks | null;
}

/**
 * A group's segment masks while its versions are added: per trigram id, the OR of its
 * versions' masks (a version's segments are positions in its own bytes: bit s of any
 * version's mask stays bit s), as wide as its largest version needs.
 */
class GroupSegments {
  /** The largest version's bytes: the group's segment count (the reader checks it against its documents). */
  maxBytes = 0;
  readonly #byId = new Map<number, Uint8Array>();
  #width = 1;

  constructor(
    readonly group: number,
    readonly shift: number,
  ) {}

  add(d: SegmentedDoc): void {
    if (d.width > this.#width) {
      this.#width = d.width;
      for (const [id, m] of this.#byId) {
        const wider = new Uint8Array(d.width);
        wider.set(m);
        this.#byId.set(id, wider);
      }
    }
    const w = d.width;
    for (let k = 0; k < d.ids.length; k++) {
      const id = d.ids[k]!;
      let m = this.#byId.get(id);
      if (m === undefined) {
        m = new Uint8Array(this.#width);
        this.#byId.set(id, m);
      }
      for (let j = 0; j < w; j++) m[j]! |= d.masks[k * w + j]!;
    }
  }

  /** The group's masks as one document's (null: no version had any). */
  finish(): SegmentedDoc | null {
    if (this.#byId.size === 0) return null;
    const segments = ((this.maxBytes - 1) >>> this.shift) + 1;
    const width = ((segments - 1) >>> 3) + 1;
    const ids = new Uint32Array(this.#byId.size);
    const masks = new Uint8Array(ids.length * width);
    let k = 0;
    for (const [id, m] of this.#byId) {
      ids[k] = id;
      masks.set(m.subarray(0, width), k * width);
      k++;
    }
    return { doc: this.group, segments, width, ids, masks };
  }
}
