// Segment masks of a shard's large documents (core/assembly/segments.ts computes one
// document's): which segments of the document each of its trigrams starts in, laid out by
// posting list when the builder finishes.

import type { Block } from './arena.ts';
import type { Core } from './instance.ts';

/** Which documents get segment masks: those of at least `minBytes`, in segments of 2^shift bytes. */
export interface SegmentOptions {
  shift: number;
  minBytes: number;
}

/** One large document's masks: `width` bytes per distinct trigram, in the order of `ids`. */
export interface SegmentedDoc {
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
export const SEGMENT_MAX_TRIGRAMS = 65535;
/** segmentMasks' table: a u16 per trigram key. */
export const SEGMENT_ROWS_BYTES = (1 << 24) * 2;

/** A document just added, in wasm memory: its folded bytes folded[0, n) and its `cnt` distinct trigram keys (u32 each) at `keys`. */
export interface AddedDoc {
  doc: number;
  folded: number;
  n: number;
  keys: number;
  cnt: number;
}

/** The masks of a document just added, in segments of 2^shift bytes (`rows`: segmentMasks' table, SEGMENT_ROWS_BYTES). */
export function segmentDoc(c: Core, added: AddedDoc, shift: number, rows: Block): SegmentedDoc {
  const { doc, folded, n, keys, cnt } = added;
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
export function placeSegments(shift: number, list: readonly SegmentedDoc[], K: number, rowOf: (id: number) => number): SegmentMasks {
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
export function rowByBisection(ids: Uint32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
