// A repository's diff records: the added and removed lines of every commit of its history
// index (diff-log.ts), in a base file, `<history data dir>/diffs/<repoId>.diffs`, and a tail
// file beside it, `<repoId>.diffs-tail`, each written atomically (a crash leaves the
// previous one serving) and read whole into memory. The tail holds the commits added since
// the base was written (diff-index.ts): a new commit rewrites the small tail, not every
// commit's lines; a tail grown large is folded into a new base. Both have the format below;
// the base's meta has an `id`, the tail's names it as `base`: a tail left beside another
// base (a crash between writing a new base and removing the tail) is not read with it.
//
// Every distinct line text is stored once, all of them one after the other, so that a
// search scans one buffer (diff-search.ts) and then finds the hunks holding the lines it
// matched by a pass over one array of line ids.
//
// Format (integers unsigned 32-bit little-endian):
//   "TRAWLDF2"                        magic and format version
//   metaCompressed, metaBytes,            the meta frame's size and the meta's decompressed,
//   bodyCompressed, bodyBytes             the same of the body (a size decompressed is checked
//                                     against its bound before it is decompressed:
//                                     zstd-frame.ts; the frames end where the file does)
//   meta frame (metaCompressed bytes)     zstd of JSON (UTF-8):
//                                     { leftOut: commits the refs reach that the history's limit
//                                       left out (0: none),
//                                       commits: ids of every commit covered (merges and commits
//                                       without lines too) in the history walk's order, parents
//                                       first; what else is known of a commit is in the commit
//                                       records (commit-records.ts), joined by id where they are
//                                       loaded (diff-search.ts DiffCatalog),
//                                       paths: string[],
//                                       id?: string (a base: its name for its tail),
//                                       base?: string (a tail: the id of its base) }
//   body frame (bodyCompressed bytes)     zstd of:
//     fileCount, 4 × fileCount          per file: its commit's index in `commits`, path index,
//                                       old path index or -1 (as int32), its hunks' end index (a
//                                       file's hunks start where the previous file's end); files
//                                       in their commits' order
//     hunkCount, 20 × hunkCount bytes   per hunk oldStart, oldLines, newStart − oldStart (modulo
//                                       2^32), newLines, and its count of lines (its entries):
//                                       five columns of hunkCount numbers, one after the other,
//                                       stored as byte planes (byte-planes.ts; hunks' numbers
//                                       compress better so)
//     entryCount, 4 × entryCount bytes  per hunk line in order: line id × 2 + 1 if added, as byte
//                                       planes
//     lineCount                         distinct lines
//     noEolCount, noEolCount            the lines that ended their file without a line end, ascending
//                                       (kept so that an update rewrites the diffs as git gave them)
//     text                              the distinct lines, each followed by "\n\n" (a line is
//                                       matched with its line end, as git does: the second "\n"
//                                       lets a scan of the whole text see each line's end as
//                                       the end of its own text: diff-match.ts); no line holds
//                                       a "\n" (git's diff lines end there), so where each
//                                       starts is found again by a pass over the text
//
// The meta has a frame of its own so that a sync that only checks which commits the
// records cover (recordedCommits) decompresses it alone. A line's identity is its text and
// whether it had a line end. A file of another format version (TRAWLDF1 held the commits'
// people and messages in its meta, uncompressed) reads as no records: the next update of
// the history makes them again (history-index.ts syncHistory).

import { closeSync, mkdirSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openRegularFile, readBoundedFile } from '../bounded-read.ts';
import { historyDataDir, writeFileAtomic } from '../index/data-dir.ts';
import { fromPlanes, toPlanes } from './byte-planes.ts';
import type { DiffFile, DiffLine, LoggedDiff } from './diff-log.ts';
import { compressFrame, decompressFrame } from '../index/zstd-frame.ts';

const MAGIC = 'TRAWLDF2';
const HEADER_BYTES = 8 + 4 * 4;
/** The largest meta read (ids and paths of a history of tens of thousands of commits take a few MB). */
const MAX_META_BYTES = 256 * 1024 * 1024;
/** The largest body read (the text's offsets are 32-bit; a history of 20,000 commits of a large repository takes hundreds of MB). */
const MAX_BODY_BYTES = 2 * 1024 * 1024 * 1024 - 1;
/** The largest file read: compressed, its parts are smaller than their bounds. */
const MAX_FILE_BYTES = HEADER_BYTES + MAX_META_BYTES + MAX_BODY_BYTES;
const WHAT = 'the diff records file';

/** The records file of repository `repoId` (its base). */
export function diffsPath(dataDir: string, repoId: number): string {
  return join(historyDataDir(dataDir), 'diffs', `${repoId}.diffs`);
}

/** The tail file of repository `repoId`'s records. */
export function diffsTailPath(dataDir: string, repoId: number): string {
  return `${diffsPath(dataDir, repoId)}-tail`;
}

/** How a file of records is tied to the other (see the header). */
export interface RecordsLink {
  /** A base's name, which its tail gives as `base`. */
  id?: string;
  /** A tail's base, by its id. */
  base?: string;
}

export interface DiffRecords {
  /** Every commit covered, by id, parents first: a file names its commit by its index here. */
  commits: string[];
  /** The same ids, as a set. */
  done: ReadonlySet<string>;
  /** Commits the refs reach that the history's limit left out: a search of the records misses them. */
  leftOut: number;
  paths: string[];
  /** 4 per file: commit, path, old path (-1: none), hunks' end. */
  files: Int32Array;
  /** 5 per hunk: oldStart, oldLines, newStart, newLines, entries' end. */
  hunks: Uint32Array;
  /** Per hunk line: line id × 2 + (1 if added). */
  entries: Uint32Array;
  /** Per distinct line its start in `text`, and the end after the last. */
  lineStarts: Uint32Array;
  /** Per distinct line: 1 when it ended its file without a line end. */
  noEol: Uint8Array;
  /** The distinct lines, each followed by "\n\n". */
  text: Buffer;
  /** The file's size. */
  bytes: number;
  /** A base's id, or a tail's base (see the header). */
  link: RecordsLink;
}

/**
 * Encodes the diffs of commits `done` (ids, parents first: the history walk's order): those
 * of `diffs` (each a commit of `done`), and others without lines.
 */
export function encodeRecords(done: readonly string[], diffs: readonly LoggedDiff[], leftOut = 0, link: RecordsLink = {}): Buffer {
  const at = commitIndexes(done);
  const ordered = diffs
    .filter((d) => d.files.length > 0)
    .map((d) => {
      const i = at.get(d.id);
      if (i === undefined) throw new Error(`the diffs of commit ${d.id}, which the records do not cover`);
      return { i, d };
    });
  ordered.sort((a, b) => a.i - b.i);
  const t = new Tables();
  for (const { i, d } of ordered) t.addDiff(i, d);
  return t.encode(done, leftOut, link);
}

/**
 * Encodes what an update makes of records `old`: the commits `done` (as encodeRecords),
 * those of `old` with their lines as they are there, the others' from `fresh`. The same
 * bytes as encodeRecords of recordedDiffs(old) and `fresh` (a differential test holds it to
 * that), made without them: the lines `old` holds keep their identity by their id, so only
 * the fresh lines are looked up by their text.
 */
export function updateRecords(old: DiffRecords, done: readonly string[], fresh: readonly LoggedDiff[], leftOut = 0, link: RecordsLink = {}): Buffer {
  const oldAt = commitIndexes(old.commits);
  const doneAt = commitIndexes(done);
  const freshOf = new Map(fresh.filter((d) => d.files.length > 0).map((d) => [d.id, d]));
  for (const id of freshOf.keys()) if (!doneAt.has(id)) throw new Error(`the diffs of commit ${id}, which the records do not cover`);
  // Where each old commit's files start (they are in their commits' order).
  const firstFile = new Int32Array(old.commits.length + 1).fill(-1);
  for (let f = old.files.length / 4 - 1; f >= 0; f--) firstFile[old.files[f * 4]!] = f;
  const t = new Tables(old, fresh);
  done.forEach((id, c) => {
    const o = oldAt.get(id);
    if (o !== undefined && !freshOf.has(id)) {
      for (let f = firstFile[o]!; f >= 0 && f < old.files.length / 4 && old.files[f * 4] === o; f++) t.addOldFile(c, f);
    } else {
      const d = freshOf.get(id);
      if (d !== undefined) t.addDiff(c, d);
    }
  });
  return t.encode(done, leftOut, link);
}

function commitIndexes(ids: readonly string[]): Map<string, number> {
  const at = new Map<string, number>();
  ids.forEach((id, i) => at.set(id, i));
  return at;
}

/**
 * The tables of records being encoded, each line and path numbered on its first use. Lines
 * of records read back (`old`, given to an update) are known by their id there; lines of
 * diffs from git by their text (and whether they had a line end).
 */
class Tables {
  readonly texts: Buffer[] = [];
  readonly noEol: number[] = [];
  readonly paths: string[] = [];
  readonly files: number[] = [];
  readonly hunks: number[] = [];
  readonly entries: number[] = [];
  private readonly pathIds = new Map<string, number>();
  private readonly lineIds = new Map<string, number>();
  /** Per line of `old`, its id here (-1: not used yet). */
  private readonly remap: Int32Array;
  /** The lines of `old` that a fresh line may equal (those of a fresh line's length), by key. */
  private readonly oldByKey = new Map<string, number>();

  constructor(
    private readonly old?: DiffRecords,
    fresh: readonly LoggedDiff[] = [],
  ) {
    this.remap = new Int32Array(old === undefined ? 0 : old.lineStarts.length - 1).fill(-1);
    if (old === undefined) return;
    const lengths = new Set<number>();
    for (const d of fresh) for (const f of d.files) for (const h of f.hunks) for (const l of h.lines) lengths.add(l.text.length);
    for (let id = 0; id < this.remap.length; id++) {
      const start = old.lineStarts[id]!;
      const length = old.lineStarts[id + 1]! - 2 - start;
      if (lengths.has(length)) this.oldByKey.set(lineKey(old.text.subarray(start, start + length), old.noEol[id] === 1), id);
    }
  }

  pathId(p: string): number {
    let id = this.pathIds.get(p);
    if (id === undefined) {
      id = this.paths.length;
      this.pathIds.set(p, id);
      this.paths.push(p);
    }
    return id;
  }

  private newLine(text: Buffer, noEol: boolean): number {
    const id = this.texts.length;
    this.texts.push(text);
    if (noEol) this.noEol.push(id);
    return id;
  }

  /** Line `id` of `old`, here. */
  private oldLine(id: number): number {
    let here = this.remap[id]!;
    if (here < 0) this.remap[id] = here = this.newLine(lineText(this.old!, id), this.old!.noEol[id] === 1);
    return here;
  }

  private lineId(text: Buffer, noEol: boolean): number {
    const key = lineKey(text, noEol);
    const old = this.oldByKey.get(key);
    if (old !== undefined) return this.oldLine(old);
    let id = this.lineIds.get(key);
    if (id === undefined) {
      id = this.newLine(text, noEol);
      this.lineIds.set(key, id);
    }
    return id;
  }

  /** The files of diff `d`, of commit `c` (its index in the commits encoded). */
  addDiff(c: number, d: LoggedDiff): void {
    for (const f of d.files) {
      for (const h of f.hunks) {
        for (const l of h.lines) this.entries.push(this.lineId(l.text, l.noEol === true) * 2 + (l.added ? 1 : 0));
        this.hunks.push(h.oldStart, h.oldLines, h.newStart, h.newLines, this.entries.length);
      }
      this.files.push(c, this.pathId(f.path), f.oldPath === undefined ? -1 : this.pathId(f.oldPath), this.hunks.length / 5);
    }
  }

  /** File `f` of `old`, now of commit `c`. */
  addOldFile(c: number, f: number): void {
    const old = this.old!;
    const hunksEnd = old.files[f * 4 + 3]!;
    for (let h = f === 0 ? 0 : old.files[f * 4 - 1]!; h < hunksEnd; h++) {
      const end = old.hunks[h * 5 + 4]!;
      for (let e = h === 0 ? 0 : old.hunks[h * 5 - 1]!; e < end; e++) this.entries.push(this.oldLine(old.entries[e]! >>> 1) * 2 + (old.entries[e]! & 1));
      this.hunks.push(old.hunks[h * 5]!, old.hunks[h * 5 + 1]!, old.hunks[h * 5 + 2]!, old.hunks[h * 5 + 3]!, this.entries.length);
    }
    const oldPath = old.files[f * 4 + 2]!;
    this.files.push(c, this.pathId(old.paths[old.files[f * 4 + 1]!]!), oldPath < 0 ? -1 : this.pathId(old.paths[oldPath]!), this.hunks.length / 5);
  }

  /** The file's bytes (see the header). */
  encode(done: readonly string[], leftOut: number, link: RecordsLink): Buffer {
    const { texts, noEol, paths, files, hunks, entries } = this;
    let length = 0;
    for (const t of texts) length += t.length + 2;
    if (length > MAX_BODY_BYTES) throw new Error(`the diff records would hold ${length} bytes of lines; at most ${MAX_BODY_BYTES} are kept`);
    const text = Buffer.allocUnsafe(length);
    let offset = 0;
    for (const t of texts) {
      t.copy(text, offset);
      offset += t.length;
      text[offset++] = 0x0a;
      text[offset++] = 0x0a;
    }
    const meta = Buffer.from(JSON.stringify({ leftOut, commits: done, paths, ...link }), 'utf8');
    const counted = (count: number, view: Uint32Array | Int32Array | Buffer): Buffer =>
      Buffer.concat([u32(count), Buffer.from(view.buffer, view.byteOffset, view.byteLength)]);
    const body = Buffer.concat([
      counted(files.length / 4, Int32Array.from(files)),
      counted(hunks.length / 5, toPlanes(hunkColumns(hunks))),
      counted(entries.length, toPlanes(Uint32Array.from(entries))),
      u32(texts.length),
      counted(noEol.length, Uint32Array.from(noEol)),
      text,
    ]);
    if (meta.length > MAX_META_BYTES || body.length > MAX_BODY_BYTES)
      throw new Error(`the diff records would hold ${meta.length} + ${body.length} bytes; at most ${MAX_META_BYTES} + ${MAX_BODY_BYTES} are kept`);
    const metaFrame = compressFrame(meta);
    const bodyFrame = compressFrame(body);
    const out = Buffer.concat([
      Buffer.from(MAGIC, 'latin1'),
      u32(metaFrame.length),
      u32(meta.length),
      u32(bodyFrame.length),
      u32(body.length),
      metaFrame,
      bodyFrame,
    ]);
    if (out.length > MAX_FILE_BYTES) throw new Error(`the diff records would take ${out.length} bytes; at most ${MAX_FILE_BYTES} are read`);
    return out;
  }
}

/** A line's identity as a string: whether it had a line end, and its bytes. */
function lineKey(text: Buffer, noEol: boolean): string {
  return `${noEol ? 'n' : 'e'}${text.toString('latin1')}`;
}

/** Hunks (5 numbers each, as DiffRecords.hunks) as the file's five columns (see the header). */
function hunkColumns(hunks: readonly number[]): Uint32Array {
  const n = hunks.length / 5;
  const out = new Uint32Array(hunks.length);
  for (let h = 0; h < n; h++) {
    out[h] = hunks[h * 5]!;
    out[n + h] = hunks[h * 5 + 1]!;
    out[2 * n + h] = (hunks[h * 5 + 2]! - hunks[h * 5]!) >>> 0;
    out[3 * n + h] = hunks[h * 5 + 3]!;
    out[4 * n + h] = hunks[h * 5 + 4]! - (h === 0 ? 0 : hunks[h * 5 - 1]!);
  }
  return out;
}

/** The hunks of the file's five columns; an end past 32 bits is damage (checkIndexes checks the rest). */
function hunksOf(columns: Uint32Array): Uint32Array {
  const n = columns.length / 5;
  const out = new Uint32Array(columns.length);
  let end = 0;
  for (let h = 0; h < n; h++) {
    out[h * 5] = columns[h]!;
    out[h * 5 + 1] = columns[n + h]!;
    out[h * 5 + 2] = (columns[h]! + columns[2 * n + h]!) >>> 0;
    out[h * 5 + 3] = columns[3 * n + h]!;
    end += columns[4 * n + h]!;
    if (end > 0xffffffff) throw new Error(`${WHAT} is damaged: its hunks hold more lines than it can`);
    out[h * 5 + 4] = end;
  }
  return out;
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n);
  return b;
}

/** A file's header: its sizes, checked against the file's length. */
interface Header {
  metaCompressed: number;
  metaBytes: number;
  bodyCompressed: number;
  bodyBytes: number;
}

function readHeader(head: Buffer, fileBytes: number): Header {
  if (head.length < 8 || head.toString('latin1', 0, 8) !== MAGIC) throw new Error(`${WHAT} is not one (or of another format version)`);
  if (head.length < HEADER_BYTES || fileBytes < HEADER_BYTES) throw new Error(`${WHAT} is cut short: its header ends early`);
  const h = { metaCompressed: head.readUInt32LE(8), metaBytes: head.readUInt32LE(12), bodyCompressed: head.readUInt32LE(16), bodyBytes: head.readUInt32LE(20) };
  const total = HEADER_BYTES + h.metaCompressed + h.bodyCompressed;
  if (fileBytes < total) throw new Error(`${WHAT} is cut short: it holds ${fileBytes} bytes, its header says ${total}`);
  if (fileBytes > total) throw new Error(`${WHAT} is damaged: it holds ${fileBytes} bytes, its header says ${total}`);
  return h;
}

interface Meta extends RecordsLink {
  leftOut: number;
  commits: string[];
  paths: string[];
}

function parseMeta(raw: Buffer): Meta {
  let meta: Partial<Meta>;
  try {
    meta = JSON.parse(raw.toString('utf8')) as Partial<Meta>;
  } catch {
    throw new Error(`${WHAT} is damaged: its meta is not JSON`);
  }
  const strings = (a: unknown): a is string[] => Array.isArray(a) && a.every((x) => typeof x === 'string');
  if (typeof meta !== 'object' || meta === null || !Number.isSafeInteger(meta.leftOut) || !strings(meta.commits) || !strings(meta.paths))
    throw new Error(`${WHAT} is damaged: its meta lacks leftOut, commits or paths`);
  if ((meta.id !== undefined && typeof meta.id !== 'string') || (meta.base !== undefined && typeof meta.base !== 'string'))
    throw new Error(`${WHAT} is damaged: its id or base is not a string`);
  return meta as Meta;
}

/** Reads records from their bytes; an Error names what is wrong with a damaged file. */
export function decodeRecords(buf: Buffer): DiffRecords {
  const h = readHeader(buf.subarray(0, HEADER_BYTES), buf.length);
  const meta = parseMeta(decompressFrame(buf.subarray(HEADER_BYTES, HEADER_BYTES + h.metaCompressed), h.metaBytes, MAX_META_BYTES, WHAT));
  const body = decompressFrame(buf.subarray(HEADER_BYTES + h.metaCompressed), h.bodyBytes, MAX_BODY_BYTES, WHAT);
  let at = 0;
  const need = (n: number): void => {
    if (at + n > body.length) throw new Error(`${WHAT} is damaged: its body ends early`);
  };
  const count = (): number => {
    need(4);
    const n = body.readUInt32LE(at);
    at += 4;
    return n;
  };
  const take = (n: number): Buffer => {
    need(n);
    at += n;
    return body.subarray(at - n, at);
  };
  // A copy: the body's own offset need not be aligned for a typed array view.
  const copy = (n: number): ArrayBuffer => new Uint8Array(take(n * 4)).buffer;
  const files = new Int32Array(copy(count() * 4));
  const hunkCount = count();
  const hunks = hunksOf(fromPlanes(take(hunkCount * 20), hunkCount * 5));
  const entryCount = count();
  const entries = fromPlanes(take(entryCount * 4), entryCount);
  const lineCount = count();
  // Each line takes at least its two line ends: a count past that is damage, not an allocation.
  if (lineCount > (body.length - at) / 2) throw new Error(`${WHAT} is damaged: it counts more lines than its text holds`);
  const noEol = new Uint8Array(lineCount);
  for (const id of new Uint32Array(copy(count()))) {
    if (id >= noEol.length) throw new Error(`${WHAT} is damaged: a line past the last ends its file`);
    noEol[id] = 1;
  }
  const text = body.subarray(at);
  const lineStarts = lineStartsOf(text, lineCount);
  checkIndexes(meta, { files, hunks, entries, lineStarts });
  return {
    commits: meta.commits,
    done: new Set(meta.commits),
    leftOut: meta.leftOut,
    paths: meta.paths,
    files,
    hunks,
    entries,
    lineStarts,
    noEol,
    text,
    bytes: buf.length,
    link: { ...(meta.id === undefined ? {} : { id: meta.id }), ...(meta.base === undefined ? {} : { base: meta.base }) },
  };
}

/** Where each of the `lines` lines of `text` starts, and the end after the last (see the header). */
function lineStartsOf(text: Buffer, lines: number): Uint32Array {
  const starts = new Uint32Array(lines + 1);
  let at = 0;
  for (let i = 0; i < lines; i++) {
    starts[i] = at;
    const end = text.indexOf(0x0a, at);
    if (end < 0 || text[end + 1] !== 0x0a) throw new Error(`${WHAT} is damaged: its text holds fewer lines than it counts`);
    at = end + 2;
  }
  if (at !== text.length) throw new Error(`${WHAT} is damaged: its text holds more than its lines`);
  starts[lines] = at;
  return starts;
}

/**
 * That every index of the records points where it may: a search reads them without
 * further checks (its checksums make a damaged file unlikely to get here; a file that
 * says what it should not is refused all the same).
 */
function checkIndexes(meta: Meta, r: Pick<DiffRecords, 'files' | 'hunks' | 'entries' | 'lineStarts'>): void {
  const damaged = (what: string): never => {
    throw new Error(`${WHAT} is damaged: ${what}`);
  };
  const hunkCount = r.hunks.length / 5;
  const lines = r.lineStarts.length - 1;
  let end = 0;
  for (let f = 0; f < r.files.length; f += 4) {
    const c = r.files[f]!;
    if (c < 0 || c >= meta.commits.length) damaged('a file of a commit it does not cover');
    if (f > 0 && c < r.files[f - 4]!) damaged("files out of their commits' order");
    if (r.files[f + 1]! < 0 || r.files[f + 1]! >= meta.paths.length || r.files[f + 2]! < -1 || r.files[f + 2]! >= meta.paths.length)
      damaged('a path past the last');
    if (r.files[f + 3]! < end || r.files[f + 3]! > hunkCount) damaged('hunks out of order');
    end = r.files[f + 3]!;
  }
  if (end !== hunkCount) damaged('hunks of no file');
  end = 0;
  for (let h = 4; h < r.hunks.length; h += 5) {
    if (r.hunks[h]! < end || r.hunks[h]! > r.entries.length) damaged('lines out of order');
    end = r.hunks[h]!;
  }
  if (end !== r.entries.length) damaged('lines of no hunk');
  for (const e of r.entries) if (e >>> 1 >= lines) damaged('a line past the last');
}

/**
 * The records of `repoId`: its base, then its tail when it has one that follows that base
 * (the tail's leftOut is the current one, and is the base's here too). Undefined when it has
 * none: a damaged base, or one of another format, reads as none and is rebuilt by the next
 * update; a damaged tail reads as none, and its commits are read from git again by the next.
 */
export function readRecords(dataDir: string, repoId: number): DiffRecords[] | undefined {
  const base = readRecordFile(diffsPath(dataDir, repoId));
  if (base === undefined || base.link.base !== undefined) return undefined;
  const tail = base.link.id === undefined ? undefined : readRecordFile(diffsTailPath(dataDir, repoId));
  if (tail === undefined || tail.link.base !== base.link.id) return [base];
  return [{ ...base, leftOut: tail.leftOut }, tail];
}

/** One file of records; undefined when it is missing or cannot be read. */
function readRecordFile(path: string): DiffRecords | undefined {
  try {
    return decodeRecords(readBoundedFile(path, MAX_FILE_BYTES));
  } catch {
    return undefined;
  }
}

/** The commits the records of `repoId` cover, base and tail (their metas only are read); undefined when it has none readable. */
export function recordedCommits(dataDir: string, repoId: number): Set<string> | undefined {
  const base = readMeta(diffsPath(dataDir, repoId));
  if (base === undefined || base.base !== undefined) return undefined;
  const covered = new Set(base.commits);
  const tail = base.id === undefined ? undefined : readMeta(diffsTailPath(dataDir, repoId));
  if (tail !== undefined && tail.base === base.id) for (const id of tail.commits) covered.add(id);
  return covered;
}

/** A base as an update of the records needs it first: its meta and size, not its tables. */
export interface RecordsBase {
  commits: string[];
  leftOut: number;
  id: string | undefined;
  bytes: number;
}

/**
 * What an update of the records of `repoId` starts from: its base's meta, and its tail
 * whole when it has one that follows that base. Undefined when it has no readable base.
 */
export function recordsToUpdate(dataDir: string, repoId: number): { base: RecordsBase; tail: DiffRecords | undefined } | undefined {
  const meta = readMeta(diffsPath(dataDir, repoId));
  if (meta === undefined || meta.base !== undefined) return undefined;
  const base = { commits: meta.commits, leftOut: meta.leftOut, id: meta.id, bytes: meta.bytes };
  const tail = meta.id === undefined ? undefined : readRecordFile(diffsTailPath(dataDir, repoId));
  return { base, tail: tail?.link.base === meta.id ? tail : undefined };
}

/** The meta of the records file at `path`, and the file's size; undefined when it cannot be read. */
function readMeta(path: string): (Meta & { bytes: number }) | undefined {
  let file: ReturnType<typeof openRegularFile>;
  try {
    file = openRegularFile(path);
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(HEADER_BYTES);
    const h = readHeader(head.subarray(0, readSync(file.fd, head, 0, HEADER_BYTES, 0)), file.size);
    const frame = Buffer.alloc(h.metaCompressed);
    if (readSync(file.fd, frame, 0, h.metaCompressed, HEADER_BYTES) !== h.metaCompressed) return undefined;
    return { ...parseMeta(decompressFrame(frame, h.metaBytes, MAX_META_BYTES, WHAT)), bytes: file.size };
  } catch {
    return undefined;
  } finally {
    closeSync(file.fd);
  }
}

/** Writes the base of the records of `repoId`, and removes its tail (after: a crash between leaves a tail of another base, which is not read). */
export function writeRecords(dataDir: string, repoId: number, bytes: Buffer): void {
  mkdirSync(join(historyDataDir(dataDir), 'diffs'), { recursive: true });
  writeFileAtomic(diffsPath(dataDir, repoId), bytes);
  rmSync(diffsTailPath(dataDir, repoId), { force: true });
}

/** Writes the tail of the records of `repoId` (its base stays). */
export function writeRecordsTail(dataDir: string, repoId: number, bytes: Buffer): void {
  writeFileAtomic(diffsTailPath(dataDir, repoId), bytes);
}

export function removeRecords(dataDir: string, repoId: number): void {
  rmSync(diffsPath(dataDir, repoId), { force: true });
  rmSync(diffsTailPath(dataDir, repoId), { force: true });
}

/**
 * The diffs records hold, as diff-log.ts gives them (commits with lines only): what reads
 * them back whole (an update does not: updateRecords copies its tables instead).
 */
export function recordedDiffs(r: DiffRecords): LoggedDiff[] {
  const out: LoggedDiff[] = [];
  // One text object per line, however often it occurs.
  const texts: Array<Buffer | undefined> = [];
  let hunk = 0;
  let entry = 0;
  let last = -1;
  for (let f = 0; f < r.files.length; f += 4) {
    const file: DiffFile = { path: r.paths[r.files[f + 1]!]!, hunks: [] };
    if (r.files[f + 2]! >= 0) file.oldPath = r.paths[r.files[f + 2]!]!;
    for (; hunk < r.files[f + 3]!; hunk++) {
      const h = r.hunks.subarray(hunk * 5, hunk * 5 + 5);
      const lines: DiffLine[] = [];
      for (; entry < h[4]!; entry++) {
        const e = r.entries[entry]!;
        const id = e >>> 1;
        let text = texts[id];
        if (text === undefined) texts[id] = text = lineText(r, id);
        const line: DiffLine = { added: (e & 1) === 1, text };
        if (r.noEol[id] === 1) line.noEol = true;
        lines.push(line);
      }
      file.hunks.push({ oldStart: h[0]!, oldLines: h[1]!, newStart: h[2]!, newLines: h[3]!, lines });
    }
    // Files are in their commits' order: a commit's are adjacent.
    if (r.files[f]! !== last) {
      last = r.files[f]!;
      out.push({ id: r.commits[last]!, files: [] });
    }
    out[out.length - 1]!.files.push(file);
  }
  return out;
}

/** Line `id`'s text, without its line end. */
export function lineText(r: DiffRecords, id: number): Buffer {
  return r.text.subarray(r.lineStarts[id]!, r.lineStarts[id + 1]! - 2);
}

/**
 * Line `id` as git matches it: with a line end, also the last line of a file that has none
 * (git's diff output ends it before its `\ No newline at end of file`, and -G matches those lines).
 */
export function lineAsMatched(r: DiffRecords, id: number): Buffer {
  return r.text.subarray(r.lineStarts[id]!, r.lineStarts[id + 1]! - 1);
}
