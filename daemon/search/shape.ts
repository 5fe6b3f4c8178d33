// Result shaping: byte ranges of one file become the API's chunks and locations.
//
// - A location is {byteOffset (0-based), lineNumber (1-based), column (1-based, code points)}.
// - A range's end is exclusive; a match that ends with "\n" ends at column 1 of the next line.
// - A chunk is the exact bytes of whole lines, from the first line's start to the last
//   line's end without its "\n" (a "\r" before it stays: the bytes are the file's own).
//   Lines are split on "\n" only. Context lines extend a match's lines on both sides;
//   chunks whose lines overlap or touch are merged.

import { locateLines } from '../../core/index.ts';
import type { Chunk, Location, Range } from './types.ts';

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
 * Locations of flat [start, end, ...] ranges (ascending, non-overlapping). Lines are
 * counted by the core (locateLines: 16 bytes at a time), columns here (a line's prefix).
 */
export function locateRanges(buf: Buffer, flat: number[]): Range[] {
  const out: Range[] = [];
  if (flat.length === 0) return out;
  const lines = locateLines(buf, flat);
  const at = (i: number): Location => {
    const offset = flat[i]!;
    const lineStart = lines[2 * i + 1]!;
    return { byteOffset: offset, lineNumber: lines[2 * i]!, column: 1 + codepoints(buf, lineStart, offset) };
  };
  for (let i = 0; i < flat.length; i += 2) out.push({ start: at(i), end: at(i + 1) });
  return out;
}

/** Ranges inside a file's path: byte offsets into the path, line 1. */
export function nameRanges(path: string, flat: number[]): Range[] {
  return locateRanges(Buffer.from(path, 'utf8'), flat);
}

interface Span {
  start: number; // byte offset of the first line's start
  end: number; // byte offset of the last line's end (its "\n" or the file's end)
  firstLine: number;
  lastLine: number;
  ranges: Range[];
}

/** Chunks of whole lines around the ranges, with `contextLines` lines of context, merged. */
export function buildChunks(buf: Buffer, ranges: Range[], contextLines: number): Chunk[] {
  const spans: Span[] = [];
  for (const r of ranges) {
    const o = r.start.byteOffset;
    // (lastIndexOf with a negative offset would count from the end: guard offset 0.)
    const s = o === 0 ? 0 : buf.lastIndexOf(NL, o - 1) + 1;
    // The last line a match touches: the line of its last byte (an empty match: its own line).
    const lastByte = r.end.byteOffset > r.start.byteOffset ? r.end.byteOffset - 1 : r.start.byteOffset;
    const lastLine = r.end.byteOffset > r.start.byteOffset && r.end.column === 1 && r.end.lineNumber > r.start.lineNumber
      ? r.end.lineNumber - 1
      : r.end.lineNumber;
    const back = linesBack(buf, s, contextLines);
    const ahead = linesAhead(buf, lineEnd(buf, Math.min(lastByte, buf.length)), contextLines);
    const span: Span = {
      start: back.start,
      end: ahead.end,
      firstLine: r.start.lineNumber - back.lines,
      lastLine: lastLine + ahead.lines,
      ranges: [r],
    };
    const prev = spans[spans.length - 1];
    if (prev && span.firstLine <= prev.lastLine + 1) {
      prev.end = Math.max(prev.end, span.end);
      prev.lastLine = Math.max(prev.lastLine, span.lastLine);
      prev.ranges.push(r);
    } else {
      spans.push(span);
    }
  }
  return spans.map((s) => ({
    content: buf.toString('utf8', s.start, s.end),
    matchRanges: s.ranges,
    contentStart: { byteOffset: s.start, lineNumber: s.firstLine, column: 1 },
    symbols: [],
  }));
}

/**
 * A file's whole content for `whole: true`, at most `maxBytes` of it: a longer file is cut
 * before the character that would cross the limit (never inside a UTF-8 sequence), and
 * `truncated` says so.
 */
export function wholeContent(buf: Buffer, maxBytes: number): { content: string; truncated: boolean } {
  if (buf.length <= maxBytes) return { content: buf.toString('utf8'), truncated: false };
  let end = maxBytes;
  // Back over continuation bytes to the start of the character at the cut: it is at most
  // three bytes back (a character has at most four); further back the bytes are not UTF-8.
  while (end > 0 && end > maxBytes - 3 && (buf[end]! & 0xc0) === 0x80) end--;
  return { content: buf.toString('utf8', 0, end), truncated: true };
}
