// Content deltas: how a shard built with version deltas (a history shard) stores a file
// version against the version before it, and how a reader gets the version back.
//
// A delta turns a base (the previous document's bytes) into a target (this document's
// bytes). It is a sequence of instructions, each starting with a LEB128 varint h (at most
// 5 bytes, low 7 bits first):
//
//   h even: a literal: the target's next h / 2 bytes are the delta's next h / 2 bytes.
//   h odd:  a copy: a second varint z follows, a signed distance d in zigzag form
//           (d = z / 2 when z is even, -(z + 1) / 2 when odd); the target's next
//           (h - 1) / 2 bytes are the base's, from p + d on, where p is where the previous
//           copy ended in the base (0 before the first). A copy that goes on where the
//           last one ended is thus 2 bytes for up to 63 bytes copied.
//
// Every instruction produces at least one byte; the instructions produce exactly the
// target's length (the document's contentLen) and end exactly at the delta's end; a copy
// lies within the base. Anything else is a corrupt delta (applyDelta throws): a reader
// never reads outside the base or the delta, never allocates more than the target's
// length, and takes one pass over the delta.
//
// Worked example: base "int a;\nint b;\nint c;\n" (21 bytes), target
// "int a;\nint B;\nint c;\nint d;\n" (28 bytes):
//
//   17 00            copy 11 bytes (h = 11*2+1 = 23), d = 0: "int a;\nint " from base 0 (p is now 11)
//   02 42            literal 1 byte "B"
//   13 02            copy 9 bytes (h = 19), d = +1 (z = 2): ";\nint c;\n" from base 12 (p is now 21)
//   0e 69 6e 74 20 64 3b 0a
//                    literal 7 bytes "int d;\n"
//
// 14 bytes for 28. The matcher (encodeDelta) is line-based and greedy: what the versions
// share at their start and at their end is one copy each; between, at each line start of
// the target it looks for the line in the base (where the last copy ended first, then by
// the line's hash among the base's lines between its shared start and end), extends the
// match forward byte by byte and back into the bytes not yet copied, and copies when that
// is shorter than the bytes as literals. Source files change by lines, in a few places
// from one version to the next, so this finds nearly all that two versions share, in one
// pass over each.

/** Lines of the base looked at per target line, besides where the last copy ended: a bound on the matcher's work for repeated lines ("}\n"). */
const CANDIDATES_PER_LINE = 8;

/** The delta that turns `base` into `target` (layout above). */
export function encodeDelta(base: Uint8Array, target: Uint8Array): Uint8Array {
  const out = new DeltaOut(target.length);
  // What the versions share at their start and at their end is copied as it is, and only
  // what lies between is matched line by line: most versions differ from the one before in
  // a few places, and the base's lines outside them need not even be hashed.
  const head = commonPrefix(base, 0, target, 0, target.length);
  const tail = commonSuffix(base, target, Math.min(base.length, target.length) - head);
  const end = target.length - tail;
  let litStart = 0;
  let pos = 0;
  let expected = 0;
  if (head > copyCost(head, 0)) {
    out.copy(head, 0);
    litStart = expected = pos = head;
    if (target[pos - 1] !== 0x0a) pos = endOfLine(target, pos);
  }
  const lines = pos < end ? lineIndex(base, lineStartOf(base, Math.min(head, base.length)), base.length - tail) : new Map<number, number[]>();
  while (pos < end) {
    const lineEnd = endOfLine(target, pos);
    let best = -1;
    let bestLen = 0;
    const consider = (c: number): void => {
      const n = commonPrefix(base, c, target, pos, end - pos);
      if (n > bestLen) {
        best = c;
        bestLen = n;
      }
    };
    if (expected < base.length) consider(expected);
    if (bestLen < lineEnd - pos) {
      const starts = lines.get(lineHash(target, pos, lineEnd));
      if (starts !== undefined) for (let i = 0; i < starts.length && i < CANDIDATES_PER_LINE; i++) consider(starts[i]!);
    }
    if (best >= 0 && bestLen > copyCost(bestLen, best - expected)) {
      // The copy reaches back into the pending literal as far as the bytes agree: a line changed in its middle costs its changed bytes only.
      while (pos > litStart && best > 0 && base[best - 1] === target[pos - 1]) {
        best--;
        pos--;
        bestLen++;
      }
      out.literal(target, litStart, pos);
      out.copy(bestLen, best - expected);
      pos += bestLen;
      expected = best + bestLen;
      litStart = pos;
      // A copy that ends mid-line ends where the versions differ: matching resumes at the next line.
      if (target[pos - 1] !== 0x0a) pos = endOfLine(target, pos);
    } else {
      pos = lineEnd;
    }
  }
  if (tail > copyCost(tail, base.length - tail - expected)) {
    out.literal(target, litStart, end);
    out.copy(tail, base.length - tail - expected);
    litStart = target.length;
  }
  out.literal(target, litStart, target.length);
  return out.finish();
}

/**
 * `target` from `base` and `delta` (layout above), `length` bytes long; throws Error when
 * the delta is corrupt. Written into `out` when given (at least `length` bytes, not
 * overlapping `base`; the view of its first `length` bytes is returned): a reader that
 * applies a chain of deltas reuses two buffers for the versions between instead of
 * allocating each.
 */
export function applyDelta(base: Uint8Array, delta: Uint8Array, length: number): Buffer;
export function applyDelta(base: Uint8Array, delta: Uint8Array, length: number, out: Uint8Array): Uint8Array;
export function applyDelta(base: Uint8Array, delta: Uint8Array, length: number, out?: Uint8Array): Uint8Array {
  const target = out === undefined ? Buffer.allocUnsafe(length) : out.subarray(0, length);
  const end = delta.length;
  let i = 0;
  let o = 0;
  let p = 0;
  while (i < end) {
    const h = readVarint(delta, i);
    i = varintEnd;
    const n = Math.floor(h / 2);
    if (n === 0) throw new Error('delta holds an empty instruction');
    if (o + n > length) throw new Error('delta makes more bytes than the document holds');
    if (h % 2 === 0) {
      if (i + n > end) throw new Error('delta literal runs past its end');
      copyBytes(delta, i, target, o, n);
      i += n;
    } else {
      const z = readVarint(delta, i);
      i = varintEnd;
      const from = p + (z % 2 === 0 ? z / 2 : -(z + 1) / 2);
      if (from < 0 || from + n > base.length) throw new Error('delta copies from outside its base');
      copyBytes(base, from, target, o, n);
      p = from + n;
    }
    o += n;
  }
  if (o !== length) throw new Error(`delta makes ${o} bytes of the document's ${length}`);
  return target;
}

/** Where the last readVarint stopped (a module variable, not a returned pair: applyDelta calls it per instruction). */
let varintEnd = 0;

/** The LEB128 varint at `at` (at most 5 bytes); sets varintEnd. */
function readVarint(delta: Uint8Array, at: number): number {
  let v = 0;
  let scale = 1;
  for (let k = 0; k < 5; k++) {
    if (at >= delta.length) throw new Error('delta ends inside an instruction');
    const b = delta[at++]!;
    v += (b & 0x7f) * scale;
    if (b < 0x80) {
      varintEnd = at;
      return v;
    }
    scale *= 128;
  }
  throw new Error('delta holds a varint longer than 5 bytes');
}

/** Bytes below this are copied one by one: a subarray for each costs more than the copy (most instructions are short). */
const SHORT_COPY = 64;

function copyBytes(from: Uint8Array, at: number, to: Uint8Array, o: number, n: number): void {
  if (n < SHORT_COPY) for (let j = 0; j < n; j++) to[o + j] = from[at + j]!;
  else to.set(from.subarray(at, at + n), o);
}

/** The delta's instructions as they are made, in a buffer that grows. */
class DeltaOut {
  private buf: Buffer;
  private n = 0;
  constructor(targetLength: number) {
    // Most deltas are a small part of their version: start small, grow when not.
    this.buf = Buffer.allocUnsafe(Math.min(4096, targetLength + 16));
  }

  literal(src: Uint8Array, from: number, to: number): void {
    if (to <= from) return;
    this.varint((to - from) * 2);
    this.room(to - from);
    this.buf.set(src.subarray(from, to), this.n);
    this.n += to - from;
  }

  copy(length: number, distance: number): void {
    this.varint(length * 2 + 1);
    this.varint(zigzag(distance));
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }

  private varint(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.n++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.n++] = v;
  }

  private room(bytes: number): void {
    if (this.n + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + bytes));
    this.buf.copy(grown, 0, 0, this.n);
    this.buf = grown;
  }
}

function zigzag(d: number): number {
  return d >= 0 ? d * 2 : -d * 2 - 1;
}

function varintLength(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Bytes a copy instruction takes. */
function copyCost(length: number, distance: number): number {
  return varintLength(length * 2 + 1) + varintLength(zigzag(distance));
}

/** Where the line starting at `from` ends: past its "\n", or at the end. */
function endOfLine(buf: Uint8Array, from: number): number {
  const nl = buf.indexOf(0x0a, from);
  return nl < 0 ? buf.length : nl + 1;
}

/** FNV-1a of buf[from, to). */
function lineHash(buf: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h >>> 0;
}

/** The start of the line holding buf[at] (at most buf.length). */
function lineStartOf(buf: Uint8Array, at: number): number {
  return at === 0 ? 0 : buf.lastIndexOf(0x0a, at - 1) + 1;
}

/** The line starts of base[from, to) (from a line start) by the hash of their line, ascending. */
function lineIndex(base: Uint8Array, from: number, to: number): Map<number, number[]> {
  const lines = new Map<number, number[]>();
  for (let s = from; s < to; ) {
    const e = endOfLine(base, s);
    const h = lineHash(base, s, e);
    const list = lines.get(h);
    if (list === undefined) lines.set(h, [s]);
    else if (list.length < CANDIDATES_PER_LINE) list.push(s);
    s = e;
  }
  return lines;
}

/** Compared this many bytes at a time (natively) before byte by byte. */
const BLOCK = 256;

/** How many bytes of a from `ai` on equal b's from `bi` on, at most `max`. */
function commonPrefix(a: Uint8Array, ai: number, b: Uint8Array, bi: number, max: number): number {
  const n = Math.min(a.length - ai, b.length - bi, max);
  let k = 0;
  while (k + BLOCK <= n && Buffer.compare(a.subarray(ai + k, ai + k + BLOCK), b.subarray(bi + k, bi + k + BLOCK)) === 0) k += BLOCK;
  while (k < n && a[ai + k] === b[bi + k]) k++;
  return k;
}

/** How many bytes a and b end with alike, at most `max`. */
function commonSuffix(a: Uint8Array, b: Uint8Array, max: number): number {
  const al = a.length;
  const bl = b.length;
  let k = 0;
  while (k + BLOCK <= max && Buffer.compare(a.subarray(al - k - BLOCK, al - k), b.subarray(bl - k - BLOCK, bl - k)) === 0) k += BLOCK;
  while (k < max && a[al - 1 - k] === b[bl - 1 - k]) k++;
  return k;
}
