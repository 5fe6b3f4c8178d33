// A file result's chunks written as JSON by the core (core/assembly/chunks.ts).

import { align } from './arena.ts';
import { core } from './instance.ts';

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
 * daemon/search/file-json.ts writes itself. Null when a chunk is not valid UTF-8 (the
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
  const written = c.ex.shapeChunks(
    base,
    n,
    base + rangesOff,
    k,
    contextLines,
    base + linesOff,
    base + spansOff,
    base + marksOff,
    base + outOff,
    base + stateOff,
  );
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
