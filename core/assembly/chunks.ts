// Result chunks written as JSON where the document is: the `chunks` of a file result
// (daemon/search/file-json.ts writes the rest of it) from the document's bytes in this
// module's memory and its match ranges. Byte for byte what file-json.ts writes in
// TypeScript (daemon/search/range-locations.ts chunkSpans for the chunks, json-bytes.ts for the
// JSON), but for each chunk's symbols, which the caller inserts at the marks this leaves.
//
// Memory, laid out by the glue (core/chunks.ts shapeChunks):
//   hay[n] + 16 readable bytes   the document
//   ranges u32[2k]               flat [start, end, ...], ascending, not overlapping
//   lines u32[4k]                out: each offset's line and line start (locateLines)
//   spans u32[6k]                scratch: a chunk's start, end, first line, last line,
//                                first and last + 1 range
//   marks u32[3k]                out: per chunk, where its symbols go in `out`, and its
//                                ranges [from, to)
//   out                          the JSON: at most 6 bytes per document byte and 160 per
//                                range, plus 160 per chunk
// A chunk is whole lines: from the start of its first match's line (less `context` lines)
// to the end of its last match's line (plus `context`), without the last "\n"; chunks
// whose lines overlap or touch are merged.

import { locateLines } from './lines';

const NL: u8 = 0x0a;

// @ts-ignore: decorator
@inline
function lineEnd(hay: usize, n: u32, from: u32): u32 {
  let p = from;
  while (p < n && load<u8>(hay + p) != NL) p++;
  return p;
}

let at: usize = 0;

// @ts-ignore: decorator
@inline
function put(b: u32): void {
  store<u8>(at, b);
  at++;
}

// @ts-ignore: decorator
@inline
function text(s: string): void {
  // The keys are ASCII: each UTF-16 code unit is the byte. Read in place, without
  // charCodeAt's bounds check, and `at` moved once (a global's store per byte cost more
  // than the bytes: locations were a quarter of this module's time on a stream).
  const src = changetype<usize>(s);
  const n = <usize>s.length;
  const o = at;
  for (let i: usize = 0; i < n; i++) store<u8>(o + i, load<u16>(src + (i << 1)));
  at = o + n;
}

function int(x: u32): void {
  let digits: u32 = 1;
  for (let y = x; y >= 10; y /= 10) digits++;
  let p = at + <usize>digits;
  at = p;
  do {
    p--;
    store<u8>(p, 0x30 + x % 10);
    x /= 10;
  } while (x != 0);
}

// The keys of a location as little-endian words (three per match: the commonest bytes of
// a stream), stored 8 bytes at a time; each store's spare bytes are written over next.
//   {"byteOffset":   7b 22 62 79 74 65 4f 66 | 66 73 65 74 22 3a
//   ,"lineNumber":   2c 22 6c 69 6e 65 4e 75 | 6d 62 65 72 22 3a
//   ,"column":       2c 22 63 6f 6c 75 6d 6e | 22 3a
const BYTE_OFFSET_0: u64 = 0x664f65747962227b;
const BYTE_OFFSET_1: u64 = 0x3a2274657366;
const LINE_NUMBER_0: u64 = 0x754e656e696c222c;
const LINE_NUMBER_1: u64 = 0x3a227265626d;
const COLUMN_0: u64 = 0x6e6d756c6f63222c;
const COLUMN_1: u64 = 0x3a22;

// @ts-ignore: decorator
@inline
function key(a: u64, b: u64, length: usize): void {
  store<u64>(at, a);
  store<u64>(at + 8, b);
  at += length;
}

function location(byteOffset: u32, line: u32, column: u32): void {
  key(BYTE_OFFSET_0, BYTE_OFFSET_1, 14);
  int(byteOffset);
  key(LINE_NUMBER_0, LINE_NUMBER_1, 14);
  int(line);
  key(COLUMN_0, COLUMN_1, 10);
  int(column);
  put(0x7d);
}

/** Code points in hay[from, to): bytes that are not UTF-8 continuation bytes. */
function codepoints(hay: usize, from: u32, to: u32): u32 {
  let c: u32 = 0;
  for (let p = from; p < to; p++) if ((load<u8>(hay + p) & 0xc0) != 0x80) c++;
  return c;
}

/** Whether hay[from, to) is valid UTF-8 (what Node's isUtf8 accepts). */
function validUtf8(hay: usize, from: u32, to: u32): bool {
  let p = from;
  while (p < to) {
    const b = <u32>load<u8>(hay + p);
    if (b < 0x80) {
      p++;
      continue;
    }
    let need: u32;
    let lo: u32 = 0x80;
    let hi: u32 = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b == 0xe0) { need = 2; lo = 0xa0; }
    else if (b >= 0xe1 && b <= 0xec) need = 2;
    else if (b == 0xed) { need = 2; hi = 0x9f; }
    else if (b >= 0xee && b <= 0xef) need = 2;
    else if (b == 0xf0) { need = 3; lo = 0x90; }
    else if (b >= 0xf1 && b <= 0xf3) need = 3;
    else if (b == 0xf4) { need = 3; hi = 0x8f; }
    else return false;
    if (to - p - 1 < need) return false;
    const c1 = <u32>load<u8>(hay + p + 1);
    if (c1 < lo || c1 > hi) return false;
    for (let j: u32 = 2; j <= need; j++) {
      const c = <u32>load<u8>(hay + p + j);
      if (c < 0x80 || c > 0xbf) return false;
    }
    p += need + 1;
  }
  return true;
}

/** hay[from, to) as a JSON string: false (nothing usable written) when it is not valid UTF-8. */
function jsonString(hay: usize, from: u32, to: u32): bool {
  put(0x22);
  let checked = false;
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  for (let p = from; p < to; p++) {
    // 16 bytes at a time while none needs a look: a control byte, `"`, `\`, or (until the
    // span is found valid UTF-8) a byte from 0x80. The block is stored whole and `at`
    // moved past the clean bytes only: the bytes after them are written over (the out
    // region has room for 6 bytes per byte, more than a block past the last byte).
    while (to - p >= 16) {
      const v = v128.load(hay + p);
      let special = v128.or(i8x16.lt_u(v, space), v128.or(i8x16.eq(v, quote), i8x16.eq(v, backslash)));
      if (!checked) special = v128.or(special, i8x16.lt_s(v, i8x16.splat(0)));
      const mask = i8x16.bitmask(special);
      v128.store(at, v);
      if (mask == 0) {
        at += 16;
        p += 16;
        continue;
      }
      const clean = <u32>ctz<i32>(mask);
      at += clean;
      p += clean;
      break;
    }
    if (p >= to) break;
    const b = <u32>load<u8>(hay + p);
    if (b >= 0x80) {
      if (!checked) {
        if (!validUtf8(hay, from, to)) return false;
        checked = true;
      }
      put(b);
    } else if (b == 0x22 || b == 0x5c) {
      put(0x5c);
      put(b);
    } else if (b >= 0x20) {
      put(b);
    } else {
      put(0x5c);
      if (b == 0x08) put(0x62);
      else if (b == 0x09) put(0x74);
      else if (b == 0x0a) put(0x6e);
      else if (b == 0x0c) put(0x66);
      else if (b == 0x0d) put(0x72);
      else {
        put(0x75);
        put(0x30);
        put(0x30);
        put(0x30 + (b >> 4));
        const d = b & 15;
        put(d < 10 ? 0x30 + d : 0x57 + d);
      }
    }
  }
  put(0x22);
  return true;
}

/**
 * Writes the chunks of the `k` ranges (at least one) at `out`: the JSON objects of the
 * `chunks` array, comma-separated, each up to and including `"symbols":[` and then `]}`,
 * with its mark (3 u32) at `marks`. Returns the bytes written, the chunk count in
 * `state` (u32), or -1 when a chunk is not valid UTF-8 (the caller shapes the file itself).
 */
export function shapeChunks(hay: usize, n: u32, ranges: usize, k: u32, context: u32, lines: usize, spans: usize, marks: usize, out: usize, state: usize): i32 {
  locateLines(hay, n, ranges, 2 * k, lines);
  // The spans, merged (range-locations.ts chunkSpans).
  let count: u32 = 0;
  for (let r: u32 = 0; r < k; r++) {
    const o = load<u32>(ranges + (<usize>r << 3));
    const e = load<u32>(ranges + (<usize>r << 3) + 4);
    const row = lines + (<usize>r << 4);
    const startLine = load<u32>(row);
    const s = load<u32>(row, 4);
    const endLine = load<u32>(row, 8);
    const endLineStart = load<u32>(row, 12);
    // The last line a match touches: the line of its last byte (an empty match: its own).
    const lastByte = e > o ? e - 1 : o;
    // (When the match ends at column 1 of a later line: range-locations.ts columnAt, code points.)
    const lastLine = e > o && endLine > startLine && codepoints(hay, endLineStart, e) == 0 ? endLine - 1 : endLine;
    let start = s;
    let back: u32 = 0;
    while (back < context && start > 0) {
      // The line above ends at start - 1 (its "\n"); it starts after the "\n" before that.
      let p = start - 1;
      while (p > 0 && load<u8>(hay + p - 1) != NL) p--;
      start = p;
      back++;
    }
    let end = lineEnd(hay, n, lastByte < n ? lastByte : n);
    let ahead: u32 = 0;
    // A final "\n" ends the last line; it does not start a line of context.
    while (ahead < context && end + 1 < n) {
      end = lineEnd(hay, n, end + 1);
      ahead++;
    }
    const firstLine = startLine - back;
    if (count > 0) {
      const prev = spans + <usize>(count - 1) * 24;
      if (firstLine <= load<u32>(prev, 12) + 1) {
        if (end > load<u32>(prev, 4)) store<u32>(prev, end, 4);
        if (lastLine + ahead > load<u32>(prev, 12)) store<u32>(prev, lastLine + ahead, 12);
        store<u32>(prev, r + 1, 20);
        continue;
      }
    }
    const sp = spans + <usize>count * 24;
    store<u32>(sp, start);
    store<u32>(sp, end, 4);
    store<u32>(sp, firstLine, 8);
    store<u32>(sp, lastLine + ahead, 12);
    store<u32>(sp, r, 16);
    store<u32>(sp, r + 1, 20);
    count++;
  }
  at = out;
  for (let i: u32 = 0; i < count; i++) {
    const sp = spans + <usize>i * 24;
    const start = load<u32>(sp);
    const from = load<u32>(sp, 16);
    const to = load<u32>(sp, 20);
    text(i == 0 ? '{"content":' : ',{"content":');
    if (!jsonString(hay, start, load<u32>(sp, 4))) return -1;
    text(',"matchRanges":[');
    for (let r = from; r < to; r++) {
      const row = lines + (<usize>r << 4);
      const o = load<u32>(ranges + (<usize>r << 3));
      const e = load<u32>(ranges + (<usize>r << 3) + 4);
      text(r == from ? '{"start":' : ',{"start":');
      location(o, load<u32>(row), 1 + codepoints(hay, load<u32>(row, 4), o));
      text(',"end":');
      location(e, load<u32>(row, 8), 1 + codepoints(hay, load<u32>(row, 12), e));
      put(0x7d);
    }
    text('],"contentStart":');
    location(start, load<u32>(sp, 8), 1);
    text(',"symbols":[');
    const m = marks + <usize>i * 12;
    store<u32>(m, <u32>(at - out));
    store<u32>(m, from, 4);
    store<u32>(m, to, 8);
    text(']}');
  }
  store<u32>(state, count);
  return <i32>(at - out);
}
