// Where in a large candidate a literal can start, from the shard's segment masks
// (index/content-segments.ts): the candidates whose masks leave no segment are ruled out
// before any is read, and the others are checked only in the windows their masks leave;
// the whole document is searched only once a window holds the literal.
//
// Sound because every trigram a literal term's n-gram query requires at its top (the
// trigrams of the literal's own text) lies within each of its matches: a match starting in
// segment s ends before s + 2 when it is no longer than a segment, so each such trigram is
// in segment s or s + 1 (ContentSegments.andRow widens each mask by one segment).

import type { Matcher } from './matcher.ts';
import type { Tree } from './match-tree.ts';
import type { Shard } from '../index/shard-reader.ts';
import type { ShardCounters } from './types.ts';

// A content term's node (its op is 'content'; the type does not tell it from 'file' and 'sym').
type ContentNode = Extract<Tree, { term: unknown }>;

/**
 * The allowed start segments of each candidate with masks, per content node of one shard's
 * tree. A candidate is a content posting (shard-reader.ts unitOf: a document, or a group
 * of versions of one path, whose masks then hold each version's).
 */
const windows = new WeakMap<ContentNode, { shard: Shard; masks: Map<number, Uint8Array> }>();

/**
 * A match of a literal of this many bytes is at most twice as long (a case-insensitive
 * match may spell a letter in a longer UTF-8 sequence); windows are widened by that.
 */
const MATCH_SPREAD = 2;

/**
 * A list is read while it costs less than what the last one ruled out of the windows left
 * (its share of them), or than this share when the last ruled out less: the windows
 * narrow fast at first (a literal's rarest trigrams are the telling ones), then by a few
 * per cent a list, which the lists cost more than.
 */
const MIN_SHARE = 0.05;

/** The top-level trigrams of a literal term (its text's), or null when the masks do not apply. */
function literalTrigrams(t: ContentNode, shift: number): number[] | null {
  const term = t.term;
  if (term.kind !== 'literal' || MATCH_SPREAD * Buffer.byteLength(term.pattern) > 1 << shift) return null;
  const q = term.ngrams;
  if (q.op === 'tri') return [q.id];
  if (q.op !== 'and') return null;
  const ids: number[] = [];
  for (const a of q.args) if (a.op === 'tri') ids.push(a.id);
  return ids.length > 0 ? ids : null;
}

/** The shard a literal's candidates are narrowed in, with what the narrowing counts and its cap (candidates.ts Examine). */
export interface SegmentsOf {
  shard: Shard;
  counters: ShardCounters;
  examine: { cap: number; capped: boolean };
}

/**
 * `docs` (a literal term's candidate units, ascending) less the large ones its trigrams cannot
 * start anywhere in; the windows of the rest are kept for `ruledOut`. Reads the rarest of
 * the literal's lists while they cost less to decode than scanning what they may rule out
 * (`decodeVsScan`: what a posting byte costs against a content byte).
 */
export function bySegments(t: ContentNode, docs: Uint32Array, { shard, counters, examine }: SegmentsOf, decodeVsScan: number): Uint32Array {
  const segs = shard.contentSegments;
  if (segs === undefined) return docs;
  const ids = literalTrigrams(t, segs.shift);
  if (ids === null) return docs;
  // The candidates with masks, ascending.
  const slot = segs.slots();
  const wantIdx: number[] = [];
  const wantDoc: number[] = [];
  for (const d of docs) {
    if (d >= slot.length) break;
    if (slot[d]! >= 0) {
      wantIdx.push(slot[d]!);
      wantDoc.push(d);
    }
  }
  if (wantIdx.length === 0) return docs;
  // Past the examination's cap (a common literal, its candidates mostly true, the search
  // stopping at its limit) the lists are left: the candidates are refined if they turn out
  // mostly false (candidates.ts Examine).
  if (docs.length > examine.cap) {
    examine.capped = true;
    return docs;
  }
  const table = shard.content;
  const rows: number[] = [];
  for (const id of ids) {
    const row = table.find(id);
    if (row >= 0) rows.push(row);
  }
  rows.sort((a, b) => table.rowCount(a) - table.rowCount(b));
  let idx = Int32Array.from(wantIdx);
  let live = wantDoc;
  let acc = wantIdx.map((k) => new Uint8Array(segs.width(k)).fill(0xff));
  // What is left to scan: each live document's windows (the whole document at first), in each of a group's versions.
  const toScan = (): number => {
    let n = 0;
    for (let j = 0; j < acc.length; j++) n += Math.min(shard.unitLength(live[j]!), popcount(acc[j]!) << segs.shift) * shard.unitSize(live[j]!);
    return n;
  };
  let bytes = toScan();
  let read = 0;
  let share = 1;
  for (const row of rows) {
    const cost = table.rowBytes(row);
    if (cost * decodeVsScan > bytes * Math.max(share, MIN_SHARE)) break;
    read++;
    counters.indexBytesLoaded += cost;
    segs.andRow(row, table.rowDocs(row), idx, acc);
    const keep: number[] = [];
    for (let j = 0; j < acc.length; j++) if (acc[j]!.some((b) => b !== 0)) keep.push(j);
    if (keep.length < acc.length) {
      idx = Int32Array.from(keep, (j) => idx[j]!);
      acc = keep.map((j) => acc[j]!);
      live = keep.map((j) => live[j]!);
    }
    const before = bytes;
    bytes = toScan();
    share = before > 0 ? (before - bytes) / before : 0;
  }
  if (read === 0) return docs;
  const masks = new Map<number, Uint8Array>();
  live.forEach((d, j) => masks.set(d, acc[j]!));
  windows.set(t, { shard, masks });
  if (live.length === wantDoc.length) return docs;
  const dropped = new Set(wantDoc);
  for (const d of live) dropped.delete(d);
  return docs.filter((d) => !dropped.has(d));
}

/** Bits set in each byte value. */
const BITS = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let v = b; v !== 0; v &= v - 1) n++;
  return n;
});

/** Bits set in `mask`. */
function popcount(mask: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += BITS[mask[i]!]!;
  return n;
}

/** A document being examined, as ruledOut reads it (examine-doc.ts DocContext). */
export interface ExaminedDoc {
  readonly shard: Shard;
  readonly doc: number;
  bytes(): Buffer;
  /** The shard's word that the document holds no code point folding to ASCII (Matcher.find). */
  asciiFoldsOnly(): boolean;
}

/**
 * True when the document cannot match the literal: none of the windows its masks leave
 * (bySegments) holds it. False when it may (then the caller searches the whole document)
 * or when nothing is known of it. The document is read either way.
 */
export function ruledOut(t: ContentNode, d: ExaminedDoc, matcher: Matcher): boolean {
  const { shard, doc } = d;
  const bytes = d.bytes();
  const asciiFoldsOnly = d.asciiFoldsOnly();
  const known = windows.get(t);
  if (known === undefined || known.shard !== shard) return false;
  const mask = known.masks.get(shard.unitOf(doc));
  if (mask === undefined) return false;
  const shift = shard.contentSegments!.shift;
  const spread = MATCH_SPREAD * Buffer.byteLength(t.term.pattern);
  const segments = mask.length * 8;
  for (let s = 0; s < segments; s++) {
    if ((mask[s >>> 3]! & (1 << (s & 7))) === 0) continue;
    let e = s;
    while (e + 1 < segments && (mask[(e + 1) >>> 3]! & (1 << ((e + 1) & 7))) !== 0) e++;
    const from = s << shift;
    if (from >= bytes.length) break;
    const to = Math.min(bytes.length, ((e + 1) << shift) + spread);
    if (matcher.exists(bytes.subarray(from, to), asciiFoldsOnly)) return false;
    s = e;
  }
  return true;
}
