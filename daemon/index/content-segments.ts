// The content-segments section (shard format version 8): for each posting of a large
// document in the content trigram lists, which 4 KB segments of the document hold the
// trigram. A literal's occurrence starting in segment s has each of its trigrams in segment
// s or s + 1 (a literal no longer than a segment), so ANDing the literal's masks, each
// widened by one segment, gives the segments where it can start: a large document where
// that is none is ruled out unread (the trigrams are all there, but never near one
// another: generated register headers hold most trigrams of most identifiers), and one
// where it is some is read only there to tell whether it matches.
//
// Only documents of at least SEGMENTED_MIN_BYTES get masks: below it a document costs
// little to scan, and the masks would cost a byte per posting. Documents whose case
// folding changes their length (core/index.ts foldBytes) get none either: positions in the
// folded bytes, where trigrams are found, are then not positions in the content.
//
// # Layout
//
// All integers are little-endian u32; the arrays start at multiples of 4 bytes. The section
// is empty (0 bytes) when no document of the shard has masks.
//
//   0   shift         a segment is 2^shift bytes
//   4   docCount D    documents with masks
//   8   rowCount K    rows of the content-ngrams table
//   12  maskBytes M
//   16  docs[D]       the documents with masks, ascending
//       segments[D]   each one's segments: ceil(length / 2^shift); its masks are
//                     ceil(segments / 8) bytes each
//       starts[K + 1] row r's masks are masks[starts[r] .. starts[r + 1]): one per posting
//                     of a document with masks, in the row's document order
//       masks         M bytes: bit (s & 7) of byte (s >> 3) set when the trigram occurs
//                     starting at a position p with p >> shift == s
//
// Worked example: shift 12, one document with masks, document 1 of 9,000 bytes (3
// segments), holding trigram "abc" at positions 10 and 8,200 and "bcd" at 11: if those are
// rows 0 and 1 of the table, D = 1, K = 2, M = 2, docs = [1], segments = [3],
// starts = [0, 1, 2], masks = 05 01.

import type { SegmentMasks, SegmentOptions } from '../../core/index.ts';
import { SectionDamage } from './section-checks.ts';

const HEADER = 16;

/** Segments of 4 KB: an occurrence is read within at most 8 KB of the segment it starts in. */
export const SEGMENT_SHIFT = 12;
/** Documents below this many bytes get no masks (see above). */
export const SEGMENTED_MIN_BYTES = 64 << 10;

/** What the content postings builder is asked for (core/index.ts PostingsBuilder). */
export const CONTENT_SEGMENTS: SegmentOptions = { shift: SEGMENT_SHIFT, minBytes: SEGMENTED_MIN_BYTES };

/** The section of a builder's masks (null: none, an empty section). */
export function encodeContentSegments(built: SegmentMasks | null): Uint8Array {
  if (built === null || built.docs.length === 0) return new Uint8Array(0);
  const d = built.docs.length;
  const k = built.starts.length - 1;
  const arrays = 4 * (2 * d + k + 1);
  const out = new Uint8Array(HEADER + arrays + built.masks.length);
  const u32 = new Uint32Array(out.buffer, 0, (HEADER + arrays) / 4);
  u32[0] = built.shift;
  u32[1] = d;
  u32[2] = k;
  u32[3] = built.masks.length;
  u32.set(built.docs, 4);
  u32.set(built.segments, 4 + d);
  u32.set(built.starts, 4 + 2 * d);
  out.set(built.masks, HEADER + arrays);
  return out;
}

/** A content-segments section, read in place. */
export class ContentSegments {
  readonly shift: number;
  /** The documents with masks, ascending. */
  readonly docs: Uint32Array;
  private readonly segments: Uint32Array;
  private readonly starts: Uint32Array;
  private readonly masks: Buffer;
  private slotOf: Int32Array | undefined;

  /**
   * Throws a plain Error when the section's shape is inconsistent (the caller names the
   * shard). The section may be read before its checksum is verified (section-checks.ts):
   * every mask read is bounded by its row's range here.
   */
  constructor(section: Buffer, docCount: number, rowCount: number, lengthOf: (doc: number) => number) {
    if (section.length < HEADER || section.byteOffset % 4 !== 0) throw new Error('content-segments section is truncated or misaligned');
    this.shift = section.readUInt32LE(0);
    const d = section.readUInt32LE(4);
    const k = section.readUInt32LE(8);
    const m = section.readUInt32LE(12);
    if (this.shift < 6 || this.shift > 30 || k !== rowCount || d > docCount) throw new Error('content-segments section does not match the shard');
    const arrays = 4 * (2 * d + k + 1);
    if (HEADER + arrays + m !== section.length) throw new Error('content-segments section is truncated');
    const all = new Uint32Array(section.buffer, section.byteOffset + HEADER, arrays / 4);
    this.docs = all.subarray(0, d);
    this.segments = all.subarray(d, 2 * d);
    this.starts = all.subarray(2 * d);
    this.masks = section.subarray(HEADER + arrays);
    for (let i = 0; i < d; i++) {
      const doc = this.docs[i]!;
      if (doc >= docCount || (i > 0 && doc <= this.docs[i - 1]!)) throw new Error('content-segments documents are not ascending document numbers');
      // A document's segments follow from its length: a mask's width is then bounded by it.
      if (this.segments[i] !== Math.ceil(lengthOf(doc) / 2 ** this.shift)) throw new Error('content-segments segment counts do not match the documents');
    }
  }

  /** Mask bytes of each posting of the document at `index` in `docs`. */
  width(index: number): number {
    return ((this.segments[index]! - 1) >>> 3) + 1;
  }

  /**
   * ANDs into `acc` (one mask per wanted document, `want` ascending indexes into `docs`,
   * each mask widened by a segment: bit s set when the trigram is in segment s or s + 1)
   * the masks of table row `row`, whose postings are `rowDocs` (ascending). A wanted document absent
   * from the row gets nothing ANDed (the caller knows it holds the trigram; a damaged list
   * must not make it vanish). Throws SectionDamage when the row's masks run past its range.
   */
  andRow(row: number, rowDocs: Uint32Array, want: Int32Array, acc: Uint8Array[]): void {
    const end = this.starts[row + 1];
    let at = this.starts[row]!;
    if (end === undefined || end < at || end > this.masks.length) throw new SectionDamage('content-segments row range is out of bounds');
    const slot = this.slots();
    let j = 0; // into want
    for (let p = 0; p < rowDocs.length && j < want.length; p++) {
      const doc = rowDocs[p]!;
      if (doc >= slot.length) break;
      const i = slot[doc]!;
      if (i < 0) continue;
      const w = this.width(i);
      if (at + w > end) throw new SectionDamage('content-segments row holds fewer masks than its postings');
      while (j < want.length && want[j]! < i) j++;
      if (j < want.length && want[j] === i) {
        const a = acc[j]!;
        for (let b = 0; b < w; b++) {
          const here = this.masks[at + b]!;
          const next = b + 1 < w ? this.masks[at + b + 1]! : 0;
          a[b]! &= here | (here >>> 1) | ((next & 1) << 7);
        }
      }
      at += w;
    }
  }

  /** Each document's index in `docs`, or -1 (made at first use; documents past the last with masks are not in it). */
  slots(): Int32Array {
    if (this.slotOf === undefined) {
      const last = this.docs.length > 0 ? this.docs[this.docs.length - 1]! : -1;
      this.slotOf = new Int32Array(last + 1).fill(-1);
      this.docs.forEach((d, i) => (this.slotOf![d] = i));
    }
    return this.slotOf;
  }
}
