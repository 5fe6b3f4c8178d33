// Where byte ranges of one file lie: their locations (line and column) and the chunks of
// whole lines around them, as the API's results show them.
//
// - A location is {byteOffset (0-based), lineNumber (1-based), column (1-based, code points)}.
// - A range's end is exclusive; a match that ends with "\n" ends at column 1 of the next line.
// - A chunk is the exact bytes of whole lines, from the first line's start to the last
//   line's end without its "\n" (a "\r" before it stays: the bytes are the file's own).
//   Lines are split on "\n" only. Context lines extend a match's lines on both sides;
//   chunks whose lines overlap or touch are merged.

import { locateLines } from '../../core/index.ts';
import type { Location, Range } from './types.ts';

const NL = 0x0a;

/** Code points in bytes [start, end): bytes that are not UTF-8 continuation bytes. */
function codepoints(buf: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if ((buf[i]! & 0xc0) !== 0x80) n++;
  return n;
}

/** End of the line that starts at or contains `offset`: the index of its "\n", or the buffer's end. */
function lineEnd(buf: Buffer, offset: number): number {
  const nl = buf.indexOf(NL, offset);
  return nl === -1 ? buf.length : nl;
}

/** Start of the line `back` lines above the line starting at `lineStart` (clamped at line 1). */
function linesBack(buf: Buffer, lineStart: number, back: number): { start: number; lines: number } {
  let start = lineStart;
  let lines = 0;
  while (lines < back && start > 0) {
    const prev = start - 2 >= 0 ? buf.lastIndexOf(NL, start - 2) : -1;
    start = prev + 1;
    lines++;
  }
  return { start, lines };
}

/** End (exclusive, before "\n") of the line `ahead` lines below the line ending at `end`. */
function linesAhead(buf: Buffer, end: number, ahead: number): { end: number; lines: number } {
  let e = end;
  let lines = 0;
  // A final "\n" ends the last line; it does not start a line of context.
  while (lines < ahead && e + 1 < buf.length) {
    e = lineEnd(buf, e + 1);
    lines++;
  }
  return { end: e, lines };
}

/**
 * Where each offset of ascending flat offsets lies: out[2i] is offset i's 1-based line,
 * out[2i + 1] the offset its line starts at. Counted by the core (locateLines: 16 bytes at
 * a time); a search worker does it while the document is in the core's memory anyway
 * (shard-search.ts, ShardHit.lines), so shaping does not copy it there again.
 */
export type LineTable = ArrayLike<number>;

/** The 1-based column of offset `i` of flat offsets with their line table: code points from its line's start. */
export function columnAt(buf: Uint8Array, flat: ArrayLike<number>, lines: LineTable, i: number): number {
  return 1 + codepoints(buf, lines[2 * i + 1]!, flat[i]!);
}

/** Offset `i` of flat offsets with their line table as a location. */
function locationAt(buf: Uint8Array, flat: ArrayLike<number>, lines: LineTable, i: number): Location {
  return { byteOffset: flat[i]!, lineNumber: lines[2 * i]!, column: columnAt(buf, flat, lines, i) };
}

/** Locations of flat [start, end, ...] ranges (ascending, non-overlapping). */
export function locateRanges(buf: Uint8Array, flat: number[], lines: LineTable = locateLines(buf, flat)): Range[] {
  const out: Range[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ start: locationAt(buf, flat, lines, i), end: locationAt(buf, flat, lines, i + 1) });
  return out;
}

/** Ranges inside a file's path: byte offsets into the path, line 1. */
export function nameRanges(path: string, flat: number[]): Range[] {
  // (Most files match in their content only: no path encoded for nothing.)
  return flat.length === 0 ? [] : locateRanges(Buffer.from(path, 'utf8'), flat);
}

/**
 * The line of a match's last byte, from its end: a match that ends at a line's start
 * (column 1) ends on the line before, unless it is empty (then its line is its own).
 * The lines a chunk shows end there (chunkSpans; search/file-json-cut.ts cuts chunks by it).
 */
export function lastLineOf(start: number, end: number, endLine: number, endColumn: number): number {
  return end > start && endColumn === 1 ? endLine - 1 : endLine;
}

/** A chunk's lines and the match ranges it holds: ranges [from, to) of the flat list (pair indices). */
export interface Span {
  start: number; // byte offset of the first line's start
  end: number; // byte offset of the last line's end (its "\n" or the file's end)
  firstLine: number;
  lastLine: number;
  from: number;
  to: number;
}

/**
 * The chunks of whole lines around flat ranges (ascending, with their line table), with
 * `contextLines` lines of context, merged: what every form of a result is built from.
 */
export function chunkSpans(buf: Buffer, flat: ArrayLike<number>, lines: LineTable, contextLines: number): Span[] {
  const spans: Span[] = [];
  for (let r = 0; 2 * r < flat.length; r++) {
    const o = flat[2 * r]!;
    const e = flat[2 * r + 1]!;
    const s = lines[4 * r + 1]!;
    const startLine = lines[4 * r]!;
    const endLine = lines[4 * r + 2]!;
    // The last line a match touches: the line of its last byte (an empty match: its own line).
    const lastByte = e > o ? e - 1 : o;
    // (A match on one line ends on it: its end's column is not looked up.)
    const lastLine = endLine > startLine ? lastLineOf(o, e, endLine, columnAt(buf, flat, lines, 2 * r + 1)) : endLine;
    const back = linesBack(buf, s, contextLines);
    const ahead = linesAhead(buf, lineEnd(buf, Math.min(lastByte, buf.length)), contextLines);
    const firstLine = startLine - back.lines;
    const prev = spans[spans.length - 1];
    if (prev && firstLine <= prev.lastLine + 1) {
      prev.end = Math.max(prev.end, ahead.end);
      prev.lastLine = Math.max(prev.lastLine, lastLine + ahead.lines);
      prev.to = r + 1;
    } else {
      spans.push({ start: back.start, end: ahead.end, firstLine, lastLine: lastLine + ahead.lines, from: r, to: r + 1 });
    }
  }
  return spans;
}
