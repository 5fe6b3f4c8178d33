// A worker's message (protocol.ts FromWorker.body) in one flat buffer: its value packed
// with msgpack, then its files laid out by hand. A search's files are most of what its
// workers send, and msgpack's work on their numbers and strings was a large share of a
// common word's request, in the workers and in the main thread's unpacking. Here a file
// is a fixed record of numbers, its JSON bytes and
// its hit's arrays, copied in bulk; the main thread reads them back with each file's JSON a
// view of the transferred buffer (not copied).
//
// Layout (little-endian; every part starts 8-aligned):
//   u32 length of the packed value, 4 bytes of padding, the packed value, padding
//   then, from the next 8-aligned offset (the files part):
//   u32 groups, u32 strings, then u32 files[groups] (one group per shard reply)
//   strings: u32 byteLength each, then the UTF-8 bytes of each (repositories and branch
//     names: each string once), each part padded to 8
//   per file, a record of f64 score, f64 hit.score, then u32 count, total, repositoryId,
//     shard, doc, definition (0/1), repository (string number), path's UTF-8 length,
//     json length, ranges, name ranges, branches, term frequencies, lines + 1 (0: none),
//     member (the hit's repository in a compound shard), 0 (padding to 8);
//     then the JSON bytes, the path's bytes, then the u32 arrays ranges, nameRanges,
//     branches (string numbers), termFreqs, lines: each padded to 8. (Paths are not in
//     the strings: each is a file's own, and looking them up cost more than writing them.)
// Numbers in u32 fields are offsets, counts and ids (all below 2^32, as in the shard
// format); scores keep their f64 bits.
//
// Buffers go round: a stream's main thread gives a message's buffer back to the worker
// that sent it once every file of it is written (releaseFile; protocol.ts `recycle`), and
// the worker packs its next messages into it. A new buffer per message was external
// memory the main thread's heap counted: a common word's stream of megabytes took it a
// full collection, a long pause, every stream or two.

import { packr } from './protocol.ts';
import type { ShapedFile } from './file-json.ts';
import type { ShardHit } from './shard-search.ts';

const FIXED_BYTES = 2 * 8 + 16 * 4;
const pad8 = (n: number): number => (n + 7) & ~7;

/**
 * A message of a worker in one buffer of its own (transferable): `value` packed with
 * msgpack (protocol.ts packr), then the files of `groups`. One buffer, not two: a second
 * transferred buffer per message cost a rare literal's requests a noticeable share of
 * their CPU under load. `roomy`: a stream's message (its buffer comes back: messageBuffer).
 * `room` (a multiple of 8): bytes left before the message for the caller's head (a link
 * frame's: cluster/link-frames.ts), so that the message is not copied once more behind it.
 */
export function packMessage(value: unknown, groups: ShapedFile[][], roomy = false, room = 0): Uint8Array<ArrayBuffer> {
  if (room % 8 !== 0) throw new Error(`packMessage: room for a head must keep the message 8-aligned (${room} bytes)`);
  return packFiles(groups, packr.pack(value), roomy, room);
}

/**
 * What packMessage packed. With `giveBack`, the buffer goes to it once releaseFile has
 * been called on every file of the message (then nothing may read them again): a file
 * never released leaves the buffer to the garbage collector, as without.
 */
export function unpackMessage(bytes: Uint8Array, giveBack?: (buffer: ArrayBuffer) => void): { value: unknown; groups: ShapedFile[][] } {
  const value = unpackValue(bytes);
  const start = pad8(8 + valueLength(bytes));
  const groups = unpackFiles(bytes.subarray(start));
  if (giveBack) {
    let files = 0;
    for (const g of groups) files += g.length;
    if (files === 0) giveBack(bytes.buffer as ArrayBuffer);
    else {
      const owner: Owner = { files, giveBack };
      for (const g of groups) for (const f of g) (f as PackedFile).owner = owner;
    }
  }
  return { value, groups };
}

/** The packed value of a message, its files left where they lie (a cluster node forwards them: copyMessage). */
export function unpackValue(bytes: Uint8Array): unknown {
  return packr.unpack(bytes.subarray(8, 8 + valueLength(bytes)));
}

const valueLength = (bytes: Uint8Array): number => new Uint32Array(bytes.buffer, bytes.byteOffset, 1)[0]!;

/**
 * A packed message copied whole behind `room` bytes (a multiple of 8; packMessage's room)
 * of a buffer of this thread's spares or a new one: a served part's replies go to the
 * coordinator as their worker packed them (cluster/link-server.ts), not unpacked into file
 * objects and packed again on the serving node's main thread.
 */
export function copyMessage(message: Uint8Array, room: number): Uint8Array<ArrayBuffer> {
  if (room % 8 !== 0) throw new Error(`copyMessage: room for a head must keep the message 8-aligned (${room} bytes)`);
  const whole = messageBuffer(room + message.length, false);
  whole.set(message, room);
  return whole;
}

/** Who gets a message's buffer back, and how many of its files are still unwritten (shared by its files). */
interface Owner {
  files: number;
  giveBack: (buffer: ArrayBuffer) => void;
}

/**
 * A file of a message is written and will not be read again: the last of its message
 * gives the buffer back (unpackMessage). Other files (shaped again, made here) are left alone.
 */
export function releaseFile(f: ShapedFile): void {
  if (!(f instanceof PackedFile) || f.owner === undefined) return;
  const owner = f.owner;
  f.owner = undefined;
  if (--owner.files === 0) owner.giveBack(f.buffer);
}

/** Buffers given back (recycle): packFiles lays a message into one that fits before it allocates. */
const spares: ArrayBuffer[] = [];
/** At most this many kept, each at most SPARE_MAX_BYTES: a worker holds ≤ 4 MB of them. */
const SPARES_MAX = 4;
const SPARE_MAX_BYTES = 1 << 20;
/** A new message buffer holds at least this much, so that a stream's next messages (each smaller) fit in it. */
const MESSAGE_MIN_BYTES = 256 << 10;

/**
 * A message's buffer that nothing reads any more: given back by the thread it went to, or
 * a link frame's once sent (cluster/link-server.ts). Kept for the next messages packed in
 * this thread (within the bounds above).
 */
export function recycle(buffer: ArrayBuffer): void {
  if (buffer.byteLength <= SPARE_MAX_BYTES && spares.length < SPARES_MAX) spares.push(buffer);
}

/** Drops the buffers kept (the searches have gone quiet). */
export function dropSpares(): void {
  spares.length = 0;
}

/**
 * `size` bytes, not zeroed, in a buffer given back or a new one: `roomy` (a stream's
 * message, whose buffer comes back) of at least MESSAGE_MIN_BYTES, else of `size` (a
 * blocking search's message is a few KB: a roomy buffer for each under load was work for
 * the collector).
 */
function messageBuffer(size: number, roomy: boolean): Buffer<ArrayBuffer> {
  for (let i = 0; i < spares.length; i++) {
    const b = spares[i]!;
    if (b.byteLength < size) continue;
    spares[i] = spares[spares.length - 1]!;
    spares.pop();
    return Buffer.from(b, 0, size);
  }
  const fresh = Buffer.allocUnsafeSlow(roomy ? Math.max(size, MESSAGE_MIN_BYTES) : size);
  return Buffer.from(fresh.buffer, 0, size);
}

/** `room` bytes for the caller, the packed value `head`, then the files of each group (a shard reply's, in order). */
function packFiles(groups: ShapedFile[][], head: Uint8Array, roomy: boolean, room: number): Uint8Array<ArrayBuffer> {
  const base = room + pad8(8 + head.length);
  const strings = new Map<string, number>();
  const order: string[] = [];
  const str = (s: string): number => {
    let i = strings.get(s);
    if (i === undefined) {
      strings.set(s, (i = order.length));
      order.push(s);
    }
    return i;
  };
  let size = pad8(8 + 4 * groups.length);
  for (const files of groups) {
    for (const f of files) {
      str(f.repository);
      for (const b of f.hit.branches) str(b);
      const h = f.hit;
      // (At most 3 UTF-8 bytes per UTF-16 code unit: room enough, the path's exact length is written.)
      size +=
        FIXED_BYTES +
        pad8(f.json.length) +
        pad8(3 * f.path.length) +
        pad8(4 * h.ranges.length) +
        pad8(4 * h.nameRanges.length) +
        pad8(4 * h.branches.length) +
        pad8(4 * h.termFreqs.length) +
        pad8(4 * (h.lines?.length ?? 0));
    }
  }
  const encoded = order.map((s) => Buffer.from(s, 'utf8'));
  size += pad8(4 * order.length);
  for (const e of encoded) size += pad8(e.length);
  // Not zeroed (every byte read back is written; padding is never read): zeroing a roomy
  // buffer per message was a noticeable share of a stream's work.
  const whole = messageBuffer(base + size, roomy);
  new Uint32Array(whole.buffer, room, 1)[0] = head.length;
  whole.set(head, room + 8);
  const bytes = whole.subarray(base);
  const text = Buffer.from(whole.buffer, base, size);
  const u32 = new Uint32Array(whole.buffer, base, size >> 2);
  const f64 = new Float64Array(whole.buffer, base, size >> 3);
  u32[0] = groups.length;
  u32[1] = order.length;
  groups.forEach((files, g) => (u32[2 + g] = files.length));
  let at = pad8(8 + 4 * groups.length);
  encoded.forEach((e, i) => (u32[(at >> 2) + i] = e.length));
  at += pad8(4 * order.length);
  for (const e of encoded) {
    bytes.set(e, at);
    at += pad8(e.length);
  }
  const array = (a: ArrayLike<number>): void => {
    // By hand: most are a few numbers, for which set() is a call into the runtime.
    const w = at >> 2;
    for (let i = 0; i < a.length; i++) u32[w + i] = a[i]!;
    at += pad8(4 * a.length);
  };
  for (const files of groups) {
    for (const f of files) {
      const h = f.hit;
      f64[at >> 3] = f.score;
      f64[(at >> 3) + 1] = h.score;
      const w = (at >> 2) + 4;
      u32[w] = f.count;
      u32[w + 1] = f.total;
      u32[w + 2] = f.repositoryId;
      u32[w + 3] = f.shard;
      u32[w + 4] = h.doc;
      u32[w + 5] = h.definition ? 1 : 0;
      u32[w + 6] = strings.get(f.repository)!;
      u32[w + 8] = f.json.length;
      u32[w + 9] = h.ranges.length;
      u32[w + 10] = h.nameRanges.length;
      u32[w + 11] = h.branches.length;
      u32[w + 12] = h.termFreqs.length;
      u32[w + 13] = h.lines === undefined ? 0 : h.lines.length + 1;
      u32[w + 14] = h.member;
      u32[w + 15] = 0;
      at += FIXED_BYTES;
      bytes.set(f.json, at);
      at += pad8(f.json.length);
      const pathBytes = text.write(f.path, at, 'utf8');
      u32[w + 7] = pathBytes;
      at += pad8(pathBytes);
      array(h.ranges);
      array(h.nameRanges);
      for (let b = 0; b < h.branches.length; b++) u32[(at >> 2) + b] = strings.get(h.branches[b]!)!;
      at += pad8(4 * h.branches.length);
      array(h.termFreqs);
      if (h.lines !== undefined) array(h.lines);
    }
  }
  return whole;
}

/** The files part of a message: the files of each group, their JSON views of `bytes`. */
function unpackFiles(bytes: Uint8Array): ShapedFile[][] {
  if (bytes.byteOffset % 8 !== 0) throw new Error('unpackFiles: the buffer must start 8-aligned');
  const m: Message = {
    bytes,
    buf: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    u32: new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 2),
    strings: [],
  };
  const { u32, buf } = m;
  const f64 = new Float64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 3);
  const groupCount = u32[0]!;
  const stringCount = u32[1]!;
  let at = pad8(8 + 4 * groupCount);
  const lengths = u32.subarray(at >> 2, (at >> 2) + stringCount);
  at += pad8(4 * stringCount);
  for (let i = 0; i < stringCount; i++) {
    m.strings.push(buf.toString('utf8', at, at + lengths[i]!));
    at += pad8(lengths[i]!);
  }
  const groups: ShapedFile[][] = [];
  for (let g = 0; g < groupCount; g++) {
    const files: ShapedFile[] = new Array(u32[2 + g]!);
    for (let k = 0; k < files.length; k++) {
      files[k] = new PackedFile(m, at, f64[at >> 3]!);
      at = recordEnd(u32, at);
    }
    groups.push(files);
  }
  return groups;
}

/** A message's buffer as unpackFiles reads it, and its strings. */
interface Message {
  bytes: Uint8Array;
  buf: Buffer;
  u32: Uint32Array;
  strings: string[];
}

/** Where the file whose record starts at `at` ends: its JSON, path and lists (the layout above). */
function recordEnd(u32: Uint32Array, at: number): number {
  const w = (at >> 2) + 4;
  let end = at + FIXED_BYTES + pad8(u32[w + 8]!) + pad8(u32[w + 7]!);
  for (let k = 9; k <= 12; k++) end += pad8(4 * u32[w + k]!);
  const lines = u32[w + 13]!;
  return lines > 0 ? end + pad8(4 * (lines - 1)) : end;
}

/**
 * A file of a message: its numbers and JSON read at once, its path and hit when first asked
 * for. A stream's searcher writes most files without either (a path breaks ties of equal
 * scores only; a hit's lists serve a file shaped again), and decoding every file's was a
 * noticeable share of the main thread's CPU in a stream.
 */
class PackedFile implements ShapedFile {
  json: Uint8Array;
  count: number;
  total: number;
  repositoryId: number;
  repository: string;
  shard: number;
  #path: string | undefined;
  #hit: ShardHit | undefined;
  /** Set by unpackMessage when the message's buffer goes back once its files are written. */
  owner: Owner | undefined;

  constructor(
    private readonly m: Message,
    /** Where its record starts in the files part. */
    readonly at: number,
    public score: number,
  ) {
    const w = (at >> 2) + 4;
    const u32 = m.u32;
    this.count = u32[w]!;
    this.total = u32[w + 1]!;
    this.repositoryId = u32[w + 2]!;
    this.shard = u32[w + 3]!;
    this.repository = m.strings[u32[w + 6]!]!;
    const jsonAt = at + FIXED_BYTES;
    this.json = m.bytes.subarray(jsonAt, jsonAt + u32[w + 8]!);
  }

  get buffer(): ArrayBuffer {
    return this.m.bytes.buffer as ArrayBuffer;
  }

  get path(): string {
    if (this.#path === undefined) {
      const start = this.at + FIXED_BYTES + pad8(this.json.length);
      this.#path = this.m.buf.toString('utf8', start, start + this.m.u32[(this.at >> 2) + 4 + 7]!);
    }
    return this.#path;
  }

  set path(path: string) {
    this.#path = path;
  }

  get hit(): ShardHit {
    return (this.#hit ??= this.decodeHit());
  }

  set hit(hit: ShardHit) {
    this.#hit = hit;
  }

  private decodeHit(): ShardHit {
    const { u32, strings } = this.m;
    const w = (this.at >> 2) + 4;
    let at = this.at + FIXED_BYTES + pad8(this.json.length) + pad8(u32[w + 7]!);
    const array = (n: number): number[] => {
      const out: number[] = new Array(n);
      const x = at >> 2;
      for (let i = 0; i < n; i++) out[i] = u32[x + i]!;
      at += pad8(4 * n);
      return out;
    };
    const hitScore = new Float64Array(this.m.bytes.buffer, this.m.bytes.byteOffset + this.at, 2)[1]!;
    // The keys in the order shard-search.ts and file-json.ts create them (one shape).
    const hit: ShardHit = {
      doc: u32[w + 4]!,
      member: u32[w + 14]!,
      ranges: array(u32[w + 9]!),
      nameRanges: array(u32[w + 10]!),
      branches: array(u32[w + 11]!).map((i) => strings[i]!),
      termFreqs: array(u32[w + 12]!),
      score: hitScore,
      definition: u32[w + 5] === 1,
    };
    const lines = u32[w + 13]!;
    if (lines > 0) hit.lines = array(lines - 1);
    return hit;
  }
}
