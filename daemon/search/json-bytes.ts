// JSON written straight into bytes: what a search worker shapes its files with
// (file-json.ts). A document's lines go from its (UTF-8) bytes to JSON string bytes without
// becoming a JS string, and nothing else is allocated per value: shaping a common word's
// stream of tens of thousands of matches through objects and JSON.stringify cost more than
// finding them, most of it in strings and objects for the collector.
//
// The bytes are exactly those of Buffer.from(JSON.stringify(value)) for the same value: a
// JSON string escapes `"`, `\` and the control characters below U+0020 (\b \t \n \f \r by
// their short forms, the others as \u00xx) and nothing else; bytes that are not valid
// UTF-8 read as U+FFFD the way Buffer#toString reads them (such a span is decoded by it and
// escaped by JSON.stringify: the rare case takes the slow path).

import { isUtf8 } from 'node:buffer';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Per byte below 0x80: 0 copied as is, else the escape's second character ('u': \u00xx). */
const ESCAPE = new Uint8Array(128);
for (let b = 0; b < 0x20; b++) ESCAPE[b] = 0x75; // u
ESCAPE[0x08] = 0x62; // b
ESCAPE[0x09] = 0x74; // t
ESCAPE[0x0a] = 0x6e; // n
ESCAPE[0x0c] = 0x66; // f
ESCAPE[0x0d] = 0x72; // r
ESCAPE[QUOTE] = QUOTE;
ESCAPE[BACKSLASH] = BACKSLASH;

const HEX = Buffer.from('0123456789abcdef');

const BYTE_OFFSET = Buffer.from('{"byteOffset":');
const LINE_NUMBER = Buffer.from(',"lineNumber":');
const COLUMN = Buffer.from(',"column":');
/** The longest location (three 10-digit numbers). */
const LOCATION_MAX = BYTE_OFFSET.length + LINE_NUMBER.length + COLUMN.length + 31;

/** Copies `src` into `buf` at `p`; returns the position after it. */
function copy(buf: Buffer, p: number, src: Uint8Array): number {
  buf.set(src, p);
  return p + src.length;
}

/** An integer in [0, 2^31): what writeSmallInt writes. */
const isSmall = (x: number): boolean => x >= 0 && x <= 0x7fffffff && (x | 0) === x;

/** Writes n (0 <= n < 2^31, an integer) in decimal at `p` (room for 10 bytes); returns the position after it. */
function writeSmallInt(buf: Buffer, p: number, n: number): number {
  const digits =
    n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : n < 10000000 ? 7 : n < 100000000 ? 8 : n < 1000000000 ? 9 : 10;
  let x = n;
  for (let i = p + digits - 1; i >= p; i--) {
    const q = (x / 10) | 0;
    buf[i] = 0x30 + x - q * 10;
    x = q;
  }
  return p + digits;
}

/** Copies up to this many bytes go byte by byte (JsonBytes.copy). */
const SMALL_COPY = 64;

export class JsonBytes {
  private buf: Buffer;
  /** `buf` as a plain Uint8Array: its subarray() is the engine's, cheaper than a Buffer's (view()). */
  private plain: Uint8Array;
  pos = 0;

  constructor(size = 1 << 16) {
    this.buf = Buffer.allocUnsafeSlow(size);
    this.plain = new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.buf.length);
  }

  /** Room for `n` more bytes. A view taken before keeps the old buffer: it stays valid. */
  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafeSlow(Math.max(2 * this.buf.length, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
    this.plain = new Uint8Array(next.buffer, next.byteOffset, next.length);
  }

  /** The bytes written since `start`, not copied: valid until the writer is reset and writes over them. */
  view(start: number): Uint8Array {
    return this.plain.subarray(start, this.pos);
  }

  /** Empty again; a buffer grown past `keep` bytes is let go for one of `keep` (a big answer's room is not held for good). */
  reset(keep = Infinity): void {
    this.pos = 0;
    if (this.buf.length > keep) {
      this.buf = Buffer.allocUnsafeSlow(keep);
      this.plain = new Uint8Array(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    }
  }

  /** The bytes written since reset(), copied into a buffer of their own. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /**
   * Text that is JSON as it stands and ASCII (punctuation, keys written as `"key":`). By
   * hand: values are short, and Buffer#write's call cost more than the bytes.
   */
  raw(ascii: string): void {
    const n = ascii.length;
    this.room(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = ascii.charCodeAt(i);
    this.pos = p;
  }

  /** Bytes [start, end) of `src` as they are (JSON already). */
  copy(src: Uint8Array, start: number, end: number): void {
    const n = end - start;
    this.room(n);
    if (n <= SMALL_COPY) {
      // A key or a kind: a loop costs less than a view and a call.
      const buf = this.buf;
      let p = this.pos;
      for (let i = start; i < end; i++) buf[p++] = src[i]!;
      this.pos = p;
      return;
    }
    this.buf.set(src.subarray(start, end), this.pos);
    this.pos += n;
  }

  /** A non-negative integer (offsets, lines, columns, ids), as JSON.stringify writes it. */
  int(n: number): void {
    if (isSmall(n)) {
      this.room(10);
      this.pos = writeSmallInt(this.buf, this.pos, n);
      return;
    }
    if (!Number.isSafeInteger(n) || n < 0) {
      this.raw(JSON.stringify(n));
      return;
    }
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    this.room(digits);
    const buf = this.buf;
    let x = n;
    for (let i = this.pos + digits - 1; i >= this.pos; i--) {
      buf[i] = 0x30 + (x % 10);
      x = Math.floor(x / 10);
    }
    this.pos += digits;
  }

  /**
   * A location, `{"byteOffset":…,"lineNumber":…,"column":…}` (the API's Location, in its
   * fields' order): written at once, the commonest object of a result (two per match).
   */
  location(byteOffset: number, lineNumber: number, column: number): void {
    if (!isSmall(byteOffset) || !isSmall(lineNumber) || !isSmall(column)) {
      this.raw('{"byteOffset":');
      this.int(byteOffset);
      this.raw(',"lineNumber":');
      this.int(lineNumber);
      this.raw(',"column":');
      this.int(column);
      this.raw('}');
      return;
    }
    this.room(LOCATION_MAX);
    const buf = this.buf;
    let p = copy(buf, this.pos, BYTE_OFFSET);
    p = writeSmallInt(buf, p, byteOffset);
    p = copy(buf, p, LINE_NUMBER);
    p = writeSmallInt(buf, p, lineNumber);
    p = copy(buf, p, COLUMN);
    p = writeSmallInt(buf, p, column);
    buf[p++] = 0x7d; // }
    this.pos = p;
  }

  /** A JS string as a JSON string. */
  string(s: string): void {
    const n = s.length;
    this.room(n + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = QUOTE;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80 || ESCAPE[c] !== 0) {
        // Something to escape or encode (rare in paths, names and URLs): JSON.stringify and
        // the encoder write it, over what was written here.
        const json = JSON.stringify(s);
        this.room(3 * json.length);
        this.pos += this.buf.write(json, this.pos, 'utf8');
        return;
      }
      buf[p++] = c;
    }
    buf[p++] = QUOTE;
    this.pos = p;
  }

  /** Bytes [start, end) of a UTF-8 document as a JSON string (what string(src.toString('utf8', start, end)) writes). */
  bytes(src: Buffer, start: number, end: number): void {
    // Worst case: every byte a \u00xx escape.
    this.room(6 * (end - start) + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = QUOTE;
    let checked = false;
    // Byte by byte: a chunk is a few lines, shorter than a copy call is worth.
    for (let i = start; i < end; i++) {
      const b = src[i]!;
      if (b >= 0x80) {
        // Not ASCII: valid UTF-8 is copied as it is; anything else is decoded the way
        // Buffer#toString decodes it (U+FFFD for each bad sequence), the rare slow path.
        if (!checked && !isUtf8(src.subarray(start, end))) {
          this.string(src.toString('utf8', start, end));
          return;
        }
        checked = true;
        buf[p++] = b;
        continue;
      }
      const e = ESCAPE[b]!;
      if (e === 0) {
        buf[p++] = b;
        continue;
      }
      buf[p++] = BACKSLASH;
      buf[p++] = e;
      if (e === 0x75) {
        buf[p++] = 0x30;
        buf[p++] = 0x30;
        buf[p++] = HEX[b >> 4]!;
        buf[p++] = HEX[b & 15]!;
      }
    }
    buf[p++] = QUOTE;
    this.pos = p;
  }
}
