// A repository's diff records: the added and removed lines of every commit of its history
// index (diff-log.ts), in one file, `<history data dir>/diffs/<repoId>.diffs`, written
// atomically (a crash leaves the previous file serving) and read whole into memory.
//
// Every distinct line text is stored once, all of them one after the other, so that a
// search scans one buffer (diff-search.ts) and then finds the hunks holding the lines it
// matched by a pass over one array of line ids.
//
// Format (integers unsigned 32-bit little-endian):
//   "TRAWLDF1"                        magic and format version
//   metaBytes, meta                   JSON (UTF-8), padded with spaces to a multiple of 4:
//                                     { leftOut: commits the refs reach that the history's limit
//                                       left out (0: none; absent in older files: 0),
//                                       done: ids of every commit covered (merges and commits
//                                       without lines too), commits: DiffCommit[] (those with
//                                       files), paths: string[], files: number[] (4 per file:
//                                       commit index, path index, old path index or -1, its
//                                       hunks' end index; a file's hunks start where the
//                                       previous file's end) }
//   hunkCount, 5 × hunkCount          oldStart, oldLines, newStart, newLines, its entries' end
//                                     (a hunk's entries start where the previous hunk's end)
//   entryCount, entryCount            per hunk line in order: line id × 2 + 1 if added
//   lineCount, lineCount + 1          each distinct line's start in the text; the last: its end
//   noEolCount, noEolCount            the lines that ended their file without a line end, ascending
//                                     (kept so that an update rewrites the diffs as git gave them)
//   text                              the distinct lines, each followed by "\n\n" (a line is
//                                     matched with its line end, as git does: the second "\n"
//                                     lets a scan of the whole text see each line's end as
//                                     the end of its own text: diff-match.ts)
//
// A line's identity is its text and whether it had a line end.

import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { historyDataDir, writeFileAtomic } from '../index/data-dir.ts';
import type { DiffCommit, DiffFile, DiffLine, LoggedDiff } from './diff-log.ts';

const MAGIC = 'TRAWLDF1';
/** The largest records file read (the text's offsets are 32-bit). */
const MAX_FILE_BYTES = 4 * 1024 * 1024 * 1024 - 1;

/** The records file of repository `repoId`. */
export function diffsPath(dataDir: string, repoId: number): string {
  return join(historyDataDir(dataDir), 'diffs', `${repoId}.diffs`);
}

export interface DiffRecords {
  /** Every commit covered, by id. */
  done: ReadonlySet<string>;
  /** Commits the refs reach that the history's limit left out: a search of the records misses them. */
  leftOut: number;
  commits: DiffCommit[];
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
}

/** Encodes the diffs of commits `done` (those of `diffs`, and others without lines). */
export function encodeRecords(done: readonly string[], diffs: readonly LoggedDiff[], leftOut = 0): Buffer {
  const lineIds = new Map<string, number>();
  const texts: Buffer[] = [];
  const noEol: number[] = [];
  const paths: string[] = [];
  const pathIds = new Map<string, number>();
  const pathId = (p: string): number => {
    let id = pathIds.get(p);
    if (id === undefined) {
      id = paths.length;
      pathIds.set(p, id);
      paths.push(p);
    }
    return id;
  };
  const commits: DiffCommit[] = [];
  const files: number[] = [];
  const hunks: number[] = [];
  const entries: number[] = [];
  // Lines read back from records (recordedDiffs) share one text object per line: found by
  // it, they need no string key (an update re-encodes every line of the history).
  const byObject = [new Map<Buffer, number>(), new Map<Buffer, number>()];
  for (const d of diffs) {
    if (d.files.length === 0) continue;
    const c = commits.length;
    commits.push(d.commit);
    for (const f of d.files) {
      for (const h of f.hunks) {
        for (const l of h.lines) {
          const known = byObject[l.noEol ? 1 : 0]!;
          let id = known.get(l.text);
          if (id === undefined) {
            const key = `${l.noEol ? 'n' : 'e'}${l.text.toString('latin1')}`;
            id = lineIds.get(key);
            if (id === undefined) {
              id = texts.length;
              lineIds.set(key, id);
              texts.push(l.text);
              if (l.noEol) noEol.push(id);
            }
            known.set(l.text, id);
          }
          entries.push(id * 2 + (l.added ? 1 : 0));
        }
        hunks.push(h.oldStart, h.oldLines, h.newStart, h.newLines, entries.length);
      }
      files.push(c, pathId(f.path), f.oldPath === undefined ? -1 : pathId(f.oldPath), hunks.length / 5);
    }
  }
  const lineStarts = new Uint32Array(texts.length + 1);
  let offset = 0;
  texts.forEach((t, i) => {
    lineStarts[i] = offset;
    offset += t.length + 2;
  });
  lineStarts[texts.length] = offset;
  if (offset > MAX_FILE_BYTES) throw new Error(`the diff records would hold ${offset} bytes of lines; at most ${MAX_FILE_BYTES} are kept`);
  const text = Buffer.allocUnsafe(offset);
  texts.forEach((t, i) => {
    t.copy(text, lineStarts[i]);
    text[lineStarts[i]! + t.length] = 0x0a;
    text[lineStarts[i]! + t.length + 1] = 0x0a;
  });
  let meta = Buffer.from(JSON.stringify({ leftOut, done, commits, paths, files }), 'utf8');
  if (meta.length % 4 !== 0) meta = Buffer.concat([meta, Buffer.alloc(4 - (meta.length % 4), 0x20)]);
  const counted = (a: ArrayLike<number>, view: Uint32Array | Int32Array): Buffer =>
    Buffer.concat([u32(a.length), Buffer.from(view.buffer, view.byteOffset, view.byteLength)]);
  return Buffer.concat([
    Buffer.from(MAGIC, 'latin1'),
    u32(meta.length),
    meta,
    counted({ length: hunks.length / 5 }, Uint32Array.from(hunks)),
    counted(entries, Uint32Array.from(entries)),
    counted({ length: texts.length }, lineStarts),
    counted(noEol, Uint32Array.from(noEol)),
    text,
  ]);
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32LE(n);
  return b;
}

/** Reads records from their bytes; an Error names what is wrong with a damaged file. */
export function decodeRecords(buf: Buffer): DiffRecords {
  if (buf.toString('latin1', 0, 8) !== MAGIC) throw new Error('not a diff records file (or of another format version)');
  let at = 8;
  const need = (n: number): void => {
    if (at + n > buf.length) throw new Error('the diff records file is cut short');
  };
  const words = (n: number): Uint32Array => {
    need(n * 4);
    // A copy: the buffer's own offset need not be aligned for a Uint32Array view.
    const out = new Uint32Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + n * 4));
    at += n * 4;
    return out;
  };
  const count = (): number => {
    need(4);
    const n = buf.readUInt32LE(at);
    at += 4;
    return n;
  };
  const metaBytes = count();
  need(metaBytes);
  const meta = JSON.parse(buf.toString('utf8', at, at + metaBytes)) as {
    leftOut?: number;
    done: string[];
    commits: DiffCommit[];
    paths: string[];
    files: number[];
  };
  at += metaBytes;
  const hunks = words(count() * 5);
  const entries = words(count());
  const lineStarts = words(count() + 1);
  const noEol = new Uint8Array(lineStarts.length - 1);
  for (const id of words(count())) {
    if (id >= noEol.length) throw new Error('the diff records file is damaged');
    noEol[id] = 1;
  }
  const text = buf.subarray(at);
  if (lineStarts[lineStarts.length - 1] !== text.length) throw new Error('the diff records file is cut short');
  return {
    done: new Set(meta.done),
    leftOut: meta.leftOut ?? 0,
    commits: meta.commits,
    paths: meta.paths,
    files: Int32Array.from(meta.files),
    hunks,
    entries,
    lineStarts,
    noEol,
    text,
    bytes: buf.length,
  };
}

/** The records of `repoId`; undefined when it has none (a damaged file reads as none, and is rebuilt by the next update). */
export function readRecords(dataDir: string, repoId: number): DiffRecords | undefined {
  const path = diffsPath(dataDir, repoId);
  if (!existsSync(path)) return undefined;
  if (statSync(path).size > MAX_FILE_BYTES) return undefined;
  try {
    return decodeRecords(readFileSync(path));
  } catch {
    return undefined;
  }
}

/** The commits the records of `repoId` cover (their meta only is read); undefined when it has none readable. */
export function recordedCommits(dataDir: string, repoId: number): Set<string> | undefined {
  const path = diffsPath(dataDir, repoId);
  if (!existsSync(path)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(12);
    if (readSync(fd, head, 0, 12, 0) !== 12 || head.toString('latin1', 0, 8) !== MAGIC) return undefined;
    const metaBytes = head.readUInt32LE(8);
    if (metaBytes > fstatSync(fd).size - 12) return undefined;
    const meta = Buffer.alloc(metaBytes);
    if (readSync(fd, meta, 0, metaBytes, 12) !== metaBytes) return undefined;
    return new Set((JSON.parse(meta.toString('utf8')) as { done: string[] }).done);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

export function writeRecords(dataDir: string, repoId: number, bytes: Buffer): void {
  const path = diffsPath(dataDir, repoId);
  mkdirSync(join(historyDataDir(dataDir), 'diffs'), { recursive: true });
  writeFileAtomic(path, bytes);
}

export function removeRecords(dataDir: string, repoId: number): void {
  rmSync(diffsPath(dataDir, repoId), { force: true });
}

/** The diffs records hold, as diff-log.ts gives them: what an update keeps of them. */
export function recordedDiffs(r: DiffRecords): LoggedDiff[] {
  const out: LoggedDiff[] = r.commits.map((commit) => ({ commit, files: [] }));
  // One text object per line, however often it occurs (encodeRecords finds a line by it).
  const texts: Array<Buffer | undefined> = [];
  let hunk = 0;
  let entry = 0;
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
    out[r.files[f]!]!.files.push(file);
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
