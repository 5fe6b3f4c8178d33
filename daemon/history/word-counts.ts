// The word counts of a repository's history: for every document (file version) of its
// history index, how many times each word occurs in it, kept as changes from the version
// before. `history:yes` of one identifier reads its versions' match counts from here instead
// of searching every version (word-count-query.ts; why the count is exact: there). Built
// from the history index's own documents (word-count-build.ts) and kept in
// `<history data dir>/words/<repoId>.words`, written whole and atomically.
//
// A word is a maximal run of ASCII word bytes [A-Za-z0-9_], and of the two code points
// whose case folding is an ASCII letter, K (U+212A, the Kelvin sign) and ſ (U+017F, long s),
// in UTF-8 (word-count-query.ts says why they belong), of at least MIN_WORD bytes, of
// any length (a query may sit inside a long base64 run). Documents are numbered in the order
// of the shards the file covers, each shard's in its order: a path's versions of one shard
// follow one another, newest first (history-source.ts). A *chain* is such a run; its first
// document holds each word's full count, every later one the change of each word whose
// count changed (a word that disappears: minus its count). A document's count of a word is
// the sum of the word's entries from its chain's start to it.
//
// File format (version 1):
//   line 1: a JSON object and "\n":
//           {"format":"trawl-words","version":1,"shards":[<shard file>...],"bytes":<b>,"compressed":<c>}
//           shards: the history index's shards (manifest order) whose documents it holds,
//           those with documents (shardsCounted): it is current while the manifest names
//           exactly these; bytes: the body's size
//           decompressed (checked against BODY_MAX_BYTES before it is decompressed);
//           compressed: its frame's size, the rest of the file
//   then the body, one zstd frame with its content checksum (index/zstd-frame.ts):
//     u32 docs, u32 paths, u32 words, then u32 byte lengths of: paths, dictionary, lists
//     paths        the distinct paths, each ended by \0
//     docPath      per document its path's index, a varint
//     blobs        per document its blob id, 20 bytes (zero: none)
//     starts       a bitmap, bit d set when document d starts a chain
//     dictionary   the words in byte order, each followed by \n: a literal of word bytes
//                  found in it by one Buffer.indexOf lies within one word
//     listBytes    per word, its list's byte length, a varint
//     lists        per word, its entries: document (the first absolute, then the gap from
//                  the one before, > 0) and change (zigzag), varints
// Every count and length is checked against what holds it before it is used: a file cut
// short, of another version, lying about a size, or failing its checksum is refused with an
// Error (the caller reads it as absent: `history:yes` then searches, and the next history
// update builds the file again).

import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readBoundedFile } from '../bounded-read.ts';
import { historyDataDir, writeFileAtomic } from '../index/data-dir.ts';
import { compressFrame, decompressFrame } from '../index/zstd-frame.ts';

/** Words shorter than this are not kept: the fast path answers literals of at least this many bytes. */
export const MIN_WORD = 3;
/** The largest body read, decompressed. */
const BODY_MAX_BYTES = 1024 * 1024 * 1024;
/** The largest header read (a history of many delta shards). */
const HEAD_MAX_BYTES = 1024 * 1024;
const FORMAT = 'trawl-words';
const VERSION = 1;
const WHAT = 'the word counts file';
export const OID_BYTES = 20;
const NL = 0x0a;

/**
 * A word's entries: those of a file read, as they are stored (`stored`, its last document
 * `last`), then ascending documents after them and the change of its count at each.
 */
export interface WordList {
  stored?: Buffer;
  last: number;
  docs: number[];
  deltas: number[];
}

/** The file's contents, as the builder makes them and an update extends them. */
export interface WordCountsModel {
  shards: string[];
  paths: string[];
  /** Per document: its path's index, its blob id (20 bytes each), whether it starts a chain. */
  docPath: number[];
  blobs: Buffer[];
  starts: boolean[];
  words: Map<string, WordList>;
}

/** The file as a query reads it (word-count-query.ts). */
export interface WordCounts {
  shards: readonly string[];
  docs: number;
  paths: readonly string[];
  docPath: Uint32Array;
  blobs: Buffer;
  /** 1 where a document starts a chain. */
  starts: Uint8Array;
  /** Whether some word holds K or ſ (a byte above 0x7f). */
  anyFolds: boolean;
  /** The words, each followed by \n, and where each starts (words + 1 entries: the last is the end). */
  dictionary: Buffer;
  wordStarts: Uint32Array;
  /** Where each word's list starts in `lists` (words + 1 entries). */
  listStarts: Uint32Array;
  lists: Buffer;
}

export function emptyModel(): WordCountsModel {
  return { shards: [], paths: [], docPath: [], blobs: [], starts: [], words: new Map() };
}

/**
 * The shards of a history's manifest whose documents the file holds, as its header names
 * them: those with documents (an incremental run may drop a shard that has none, which
 * changes no count).
 */
export function shardsCounted(shards: ReadonlyArray<{ file: string; docs: number }>): string[] {
  return countedShards(shards).map((s) => s.file);
}

/** shardsCounted's shards with their numbers of documents. */
export function countedShards(shards: ReadonlyArray<{ file: string; docs: number }>): Array<{ file: string; docs: number }> {
  return shards.filter((s) => s.docs > 0).map((s) => ({ file: s.file, docs: s.docs }));
}

/**
 * Documents of the file (numbered across `counted`, countedShards of the manifest it is
 * current for) by the shard holding each, as that shard numbers them: ascending per shard.
 */
export function docsByShard(counted: ReadonlyArray<{ file: string; docs: number }>, docs: Iterable<number>): Map<string, number[]> {
  const starts: number[] = [];
  let n = 0;
  for (const s of counted) {
    starts.push(n);
    n += s.docs;
  }
  const out = new Map<string, number[]>();
  for (const d of docs) {
    if (!Number.isInteger(d) || d < 0 || d >= n) throw new Error(`document ${d} is not one of the ${n} the shards hold`);
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= d) lo = mid;
      else hi = mid - 1;
    }
    const file = counted[lo]!.file;
    let list = out.get(file);
    if (list === undefined) out.set(file, (list = []));
    list.push(d - starts[lo]!);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/** Where a repository's word counts are. */
export function wordCountsPath(dataDir: string, repoId: number): string {
  return join(historyDataDir(dataDir), 'words', `${repoId}.words`);
}

export function removeWordCounts(path: string): void {
  rmSync(path, { force: true });
}

/** Writes the model whole and atomically. */
export function writeWordCounts(path: string, m: WordCountsModel): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, encodeWordCounts(m));
}

/** The file's bytes for `m`: the same model, the same bytes (the words sorted, nothing else unordered). */
export function encodeWordCounts(m: WordCountsModel): Buffer {
  const n = m.docPath.length;
  const words = [...m.words.keys()].sort(compareBytes);
  const w = new Writer();
  for (const p of m.paths) w.bytes(Buffer.from(`${p}\0`, 'utf8'));
  const pathsBytes = w.length;
  for (const p of m.docPath) w.varint(p);
  for (const b of m.blobs) w.bytes(b);
  w.bytes(bitmap(m.starts));
  const dictStart = w.length;
  for (const word of words) w.latin1(`${word}\n`);
  const dictBytes = w.length - dictStart;
  const lists = new Writer();
  const listBytes: number[] = [];
  for (const word of words) {
    const { stored, last: storedLast, docs, deltas } = m.words.get(word)!;
    const from = lists.length;
    if (stored !== undefined) lists.bytes(stored);
    let last = storedLast;
    for (let i = 0; i < docs.length; i++) {
      lists.varint(last < 0 ? docs[i]! : docs[i]! - last);
      last = docs[i]!;
      const d = deltas[i]!;
      lists.varint(d >= 0 ? 2 * d : -2 * d - 1);
    }
    listBytes.push(lists.length - from);
  }
  for (const b of listBytes) w.varint(b);
  const body = Buffer.concat([head32([n, m.paths.length, words.length, pathsBytes, dictBytes, lists.length]), w.done(), lists.done()]);
  const frame = compressFrame(body);
  const header = JSON.stringify({ format: FORMAT, version: VERSION, shards: m.shards, bytes: body.length, compressed: frame.length });
  return Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), frame]);
}

/** A repository's word counts; undefined when it has none. Throws when the file is damaged or of another version. */
export function readWordCounts(path: string): WordCounts | undefined {
  let buf: Buffer;
  try {
    buf = readBoundedFile(path, BODY_MAX_BYTES + HEAD_MAX_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseWordCounts(buf);
}

interface Head {
  shards: string[];
  bytes: number;
  compressed: number;
}

function parseHead(buf: Buffer): { head: Head; rest: Buffer } | undefined {
  const nl = buf.indexOf(NL);
  if (nl < 0 || nl > HEAD_MAX_BYTES) return undefined;
  let h: { format?: unknown; version?: unknown; shards?: unknown; bytes?: unknown; compressed?: unknown };
  try {
    h = JSON.parse(buf.toString('utf8', 0, nl)) as typeof h;
  } catch {
    return undefined;
  }
  if (typeof h !== 'object' || h === null || h.format !== FORMAT || h.version !== VERSION) return undefined;
  const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  if (!Array.isArray(h.shards) || !h.shards.every((s) => typeof s === 'string') || !count(h.bytes) || !count(h.compressed)) return undefined;
  return { head: { shards: h.shards as string[], bytes: h.bytes, compressed: h.compressed }, rest: buf.subarray(nl + 1) };
}

/** Parses a word counts file; an Error says what is wrong with one that is damaged or of another version. */
export function parseWordCounts(buf: Buffer): WordCounts {
  const parsed = parseHead(buf);
  if (parsed === undefined) throw new Error(`${WHAT} is of another format or version, or its header is damaged`);
  const { head, rest } = parsed;
  if (rest.length !== head.compressed) throw new Error(`${WHAT} is damaged: its compressed part is ${rest.length} bytes, not the ${head.compressed} it says`);
  const body = decompressFrame(rest, head.bytes, BODY_MAX_BYTES, WHAT);
  if (body.length < 24) throw new Error(`${WHAT} is damaged: its body is cut short`);
  const [docs, pathCount, wordCount, pathsBytes, dictBytes, listsBytes] = [0, 1, 2, 3, 4, 5].map((i) => body.readUInt32LE(4 * i)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const r = new Reader(body, 24);
  // Paths.
  const pathsBuf = r.take(pathsBytes);
  const paths = pathsBytes === 0 ? [] : pathsBuf.toString('utf8', 0, pathsBytes - 1).split('\0');
  if (pathsBuf.length > 0 && pathsBuf[pathsBuf.length - 1] !== 0) throw damaged('its paths are not ended');
  if (paths.length !== pathCount) throw damaged(`it holds ${paths.length} paths, not the ${pathCount} it says`);
  const docPath = new Uint32Array(docs);
  for (let d = 0; d < docs; d++) {
    const p = r.varint();
    if (p >= pathCount) throw damaged(`document ${d} names path ${p} of ${pathCount}`);
    docPath[d] = p;
  }
  const blobs = r.take(docs * OID_BYTES);
  const starts = unbitmap(r.take(Math.ceil(docs / 8)), docs);
  if (docs > 0 && starts[0] !== 1) throw damaged('its first document starts no chain');
  const dictionary = r.take(dictBytes);
  const wordStarts = new Uint32Array(wordCount + 1);
  let at = 0;
  for (let i = 0; i < wordCount; i++) {
    const end = dictionary.indexOf(NL, at);
    if (end < at + MIN_WORD) throw damaged(`its word ${i} is missing or too short`);
    wordStarts[i] = at;
    at = end + 1;
  }
  if (at !== dictBytes) throw damaged(`its dictionary holds more than its ${wordCount} words`);
  wordStarts[wordCount] = at;
  const listStarts = new Uint32Array(wordCount + 1);
  let sum = 0;
  for (let i = 0; i < wordCount; i++) {
    listStarts[i] = sum;
    sum += r.varint();
  }
  listStarts[wordCount] = sum;
  if (sum !== listsBytes) throw damaged(`its lists are ${sum} bytes, not the ${listsBytes} it says`);
  const lists = r.take(listsBytes);
  if (!r.atEnd()) throw damaged('its body holds bytes past its lists');
  return { shards: head.shards, docs, paths, docPath, blobs, starts, anyFolds: dictionary.some((b) => b >= 0x80), dictionary, wordStarts, listStarts, lists };
}

/**
 * Reads word `w`'s list: calls `entry(doc, delta)` for each of its entries, in order; throws
 * when the list points outside the documents or past its end.
 */
export function readList(c: WordCounts, w: number, entry: (doc: number, delta: number) => void): number {
  const r = new Reader(c.lists, c.listStarts[w]!, c.listStarts[w + 1]!);
  let doc = -1;
  let n = 0;
  while (!r.atEnd()) {
    const gap = r.varint();
    doc = doc < 0 ? gap : doc + gap;
    if ((n > 0 && gap === 0) || doc >= c.docs) throw damaged(`a list names document ${doc} of ${c.docs}`);
    const z = r.varint();
    entry(doc, z % 2 === 0 ? z / 2 : -(z + 1) / 2);
    n++;
  }
  return n;
}

/**
 * The last document of word `w`'s list: the sum of its gaps, each change skipped (an update
 * reads every list this way: a loop over bytes, not readList's calls). Checked as readList is.
 */
function lastDoc(c: WordCounts, w: number): number {
  const { lists } = c;
  const end = c.listStarts[w + 1]!;
  let i = c.listStarts[w]!;
  let doc = -1;
  let n = 0;
  while (i < end) {
    let gap = 0;
    let shift = 0;
    let b: number;
    do {
      if (i >= end || shift > 28) throw damaged('a number runs past its part');
      b = lists[i++]!;
      gap += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b >= 0x80);
    doc = doc < 0 ? gap : doc + gap;
    if ((n > 0 && gap === 0) || doc >= c.docs) throw damaged(`a list names document ${doc} of ${c.docs}`);
    do {
      if (i >= end) throw damaged('a number runs past its part');
    } while (lists[i++]! >= 0x80);
    n++;
  }
  return doc;
}

/** The model of a file read (an update extends it). */
export function modelOf(c: WordCounts): WordCountsModel {
  const m = emptyModel();
  m.shards = [...c.shards];
  m.paths = [...c.paths];
  for (let d = 0; d < c.docs; d++) {
    m.docPath.push(c.docPath[d]!);
    m.blobs.push(c.blobs.subarray(d * OID_BYTES, (d + 1) * OID_BYTES));
    m.starts.push(c.starts[d] === 1);
  }
  // Each word's stored entries are kept as they are (an update appends after them), walked only for their last document.
  for (let w = 0; w + 1 < c.wordStarts.length; w++) {
    const last = lastDoc(c, w);
    const stored = c.lists.subarray(c.listStarts[w]!, c.listStarts[w + 1]!);
    m.words.set((c.dictionary as unknown as Latin1).latin1Slice(c.wordStarts[w]!, c.wordStarts[w + 1]! - 1), { stored, last, docs: [], deltas: [] });
  }
  return m;
}

/** Node's Buffer#latin1Slice and #latin1Write, untyped: toString and write without their argument checks. */
export interface Latin1 {
  latin1Slice(start: number, end: number): string;
  latin1Write(s: string, offset: number): number;
}

function damaged(why: string): Error {
  return new Error(`${WHAT} is damaged: ${why}`);
}

function head32(values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((v, i) => b.writeUInt32LE(v, 4 * i));
  return b;
}

function bitmap(bits: readonly boolean[]): Buffer {
  const b = Buffer.alloc(Math.ceil(bits.length / 8));
  bits.forEach((on, i) => {
    if (on) b[i >> 3]! |= 1 << (i & 7);
  });
  return b;
}

function unbitmap(b: Buffer, n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (b[i >> 3]! >> (i & 7)) & 1;
  return out;
}

/** Byte order of two words (ASCII: code units are bytes). */
export function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

class Writer {
  private buf = Buffer.allocUnsafe(64 * 1024);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.length + n));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
  }

  varint(v: number): void {
    this.room(5);
    while (v >= 0x80) {
      this.buf[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.length++] = v;
  }

  /** An ASCII string's bytes. */
  latin1(s: string): void {
    this.room(s.length);
    this.length += (this.buf as unknown as Latin1).latin1Write(s, this.length);
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  done(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

class Reader {
  constructor(
    private readonly buf: Buffer,
    private at: number,
    private readonly end = buf.length,
  ) {}

  atEnd(): boolean {
    return this.at >= this.end;
  }

  take(n: number): Buffer {
    if (this.at + n > this.end) throw damaged('it is cut short');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  varint(): number {
    let v = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (this.at >= this.end) throw damaged('a number runs past its part');
      const b = this.buf[this.at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) {
        if (v > 0xffffffff) break;
        return v;
      }
    }
    throw damaged('a number is too large');
  }
}
