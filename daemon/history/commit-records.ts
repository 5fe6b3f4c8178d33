// The commit records of a repository's history: per commit its id, parents, author,
// committer and full message, what `type:commit` searches (commit-search.ts). Kept beside
// the history index, for the same commits (history-walk.ts: those the indexed refs reach,
// up to the limit), in `<history data dir>/commits/<repoId>.commits`, written whole and
// atomically (index/data-dir.ts writeFileAtomic) each time they change.
//
// File format (version 2):
//   line 1: a JSON object and "\n":
//           {"format":"trawl-commits","version":2,"tips":[<commit id>...],"leftOut":<n>,
//            "bytes":<b>,"compressed":<c>}
//           tips: the refs' commits the records were made for (an update compares them);
//           leftOut: commits the tips reach that the history's limit left out (0: none);
//           bytes: the records' size decompressed (checked against RECORDS_MAX_BYTES before
//           they are decompressed); compressed: the size of their frame, the rest of the file
//   then the records, one zstd frame with its content checksum (zstd-frame.ts), holding per
//   commit, newest first (committer time, then id), nine fields each ended by \0:
//     id \0 parents (ids joined by " ") \0 author name \0 author email \0 author date \0
//     committer name \0 committer email \0 committer date \0 message \0
//   dates in strict ISO 8601 with the commit's zone offset (git's %aI/%cI); the message as
//   git gives it (%B, UTF-8) without its final newlines. No field holds a \0 (git makes
//   no commit with one; its output is checked to hold nine fields a commit).
//
// These are the only records of a commit's parents, people and message: the diff records
// (diff-store.ts) name their commits by id and are joined to these where they are loaded.
// A file of version 1 (the same records, uncompressed) reads as none: the next update of the
// history makes it again (history-index.ts).
//
// An update asks git only for the commits not recorded yet (`git log --no-walk` of their
// ids) and drops those the refs no longer reach.

import { closeSync, existsSync, mkdirSync, readSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openRegularFile, readBoundedFile } from '../bounded-read.ts';
import { historyDataDir, writeFileAtomic } from '../index/data-dir.ts';
import { runGit } from '../repos/git-command.ts';
import type { CommitInfo } from '../search/types.ts';
import { compressFrame, decompressFrame } from '../index/zstd-frame.ts';

/** The largest records read, decompressed (about 50,000 commits of 10 KB messages); the file itself is smaller. */
const RECORDS_MAX_BYTES = 512 * 1024 * 1024;
/** The largest header read (tips of thousands of refs). */
const HEAD_MAX_BYTES = 16 * 1024 * 1024;
/** The most `git log` output read for one batch of new commits. */
const LOG_MAX_BYTES = 256 * 1024 * 1024;
/** Commit ids per `git log --no-walk` (its command line stays far below the system's limit). */
const IDS_PER_CALL = 2000;
const FIELDS = 9;
const FORMAT = 'trawl-commits';
const VERSION = 2;
const WHAT = 'the commit records file';

/** A commit as recorded: what a type:commit result shows of it (search/types.ts CommitInfo). */
export type CommitRecord = CommitInfo;

export interface CommitRecords {
  /** The refs' commits they were made for. */
  tips: string[];
  /** Commits the tips reach that are not recorded (the history's limit left them out). */
  leftOut: number;
  /** Newest first (committer time, then id). */
  commits: CommitRecord[];
}

/** Where a repository's records are. */
export function commitRecordsPath(dataDir: string, repoId: number): string {
  return join(historyDataDir(dataDir), 'commits', `${repoId}.commits`);
}

/**
 * A repository's records; undefined when it has none. Throws when they are unreadable (of
 * another version, damaged, not a regular file, too large): the next update makes them again.
 */
export function readCommitRecords(path: string): CommitRecords | undefined {
  let buf: Buffer;
  try {
    buf = readBoundedFile(path, RECORDS_MAX_BYTES + HEAD_MAX_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return parseCommitRecords(buf);
}

/**
 * The header of a repository's records: the tips and left-out count they were made for,
 * read without the records (a sync that finds nothing new reads only this); undefined when
 * there are none or it is not one of this version.
 */
export function readCommitRecordsHead(path: string): Omit<CommitRecords, 'commits'> | undefined {
  let file: ReturnType<typeof openRegularFile>;
  try {
    file = openRegularFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const chunks: Buffer[] = [];
    let length = 0;
    while (length <= HEAD_MAX_BYTES) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const n = readSync(file.fd, chunk, 0, chunk.length, length);
      if (n === 0) return undefined;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (chunk.subarray(0, n).includes(0x0a)) break;
    }
    const all = Buffer.concat(chunks);
    const nl = all.indexOf(0x0a);
    if (nl < 0) return undefined;
    const head = parseHead(all.subarray(0, nl));
    return head === undefined ? undefined : { tips: head.tips, leftOut: head.leftOut };
  } finally {
    closeSync(file.fd);
  }
}

interface Head {
  tips: string[];
  leftOut: number;
  /** The records' size decompressed, and their frame's. */
  bytes: number;
  compressed: number;
}

function parseHead(line: Buffer): Head | undefined {
  let head: { format?: unknown; version?: unknown; tips?: unknown; leftOut?: unknown; bytes?: unknown; compressed?: unknown };
  try {
    head = JSON.parse(line.toString('utf8')) as typeof head;
  } catch {
    return undefined;
  }
  if (typeof head !== 'object' || head === null || head.format !== FORMAT || head.version !== VERSION) return undefined;
  const count = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (!Array.isArray(head.tips) || !head.tips.every((t) => typeof t === 'string') || !count(head.leftOut) || !count(head.bytes) || !count(head.compressed))
    return undefined;
  return { tips: head.tips as string[], leftOut: head.leftOut, bytes: head.bytes, compressed: head.compressed };
}

/** Parses a records file; an Error says what is wrong with one that is damaged or of another version. */
export function parseCommitRecords(buf: Buffer): CommitRecords {
  const nl = buf.subarray(0, HEAD_MAX_BYTES + 1).indexOf(0x0a);
  if (nl < 0) throw new Error(`${WHAT} is not one: it has no header line`);
  const head = parseHead(buf.subarray(0, nl));
  if (head === undefined) throw new Error(`${WHAT} is not one (or of another format version)`);
  const frame = buf.subarray(nl + 1);
  if (frame.length < head.compressed) throw new Error(`${WHAT} is cut short: its records end early`);
  if (frame.length > head.compressed) throw new Error(`${WHAT} is damaged: bytes follow its records`);
  const fields = decompressFrame(frame, head.bytes, RECORDS_MAX_BYTES, WHAT).toString('utf8').split('\0');
  // The last field is what follows the final \0: nothing.
  if (fields.pop() !== '' || fields.length % FIELDS !== 0) throw new Error(`${WHAT} is damaged: its records are not nine fields a commit`);
  return { tips: head.tips, leftOut: head.leftOut, commits: recordsOf(fields, 0, fields.length) };
}

function recordsOf(f: string[], from: number, to: number): CommitRecord[] {
  const out: CommitRecord[] = [];
  for (let i = from; i + FIELDS <= to; i += FIELDS) {
    out.push({
      id: f[i]!,
      parents: f[i + 1] === '' ? [] : f[i + 1]!.split(' '),
      author: { name: f[i + 2]!, email: f[i + 3]!, date: f[i + 4]! },
      committer: { name: f[i + 5]!, email: f[i + 6]!, date: f[i + 7]! },
      message: f[i + 8]!.replace(/\n+$/, ''),
    });
  }
  return out;
}

/** The records file's bytes. */
export function formatCommitRecords(r: CommitRecords): Buffer {
  const parts: string[] = [];
  const clean = (s: string): string => s.replaceAll('\0', '\uFFFD');
  for (const c of r.commits) {
    parts.push(
      [c.id, c.parents.join(' '), c.author.name, c.author.email, c.author.date, c.committer.name, c.committer.email, c.committer.date, c.message]
        .map(clean)
        .join('\0'),
      '\0',
    );
  }
  const raw = Buffer.from(parts.join(''), 'utf8');
  if (raw.length > RECORDS_MAX_BYTES) throw new Error(`the commit records would hold ${raw.length} bytes; at most ${RECORDS_MAX_BYTES} are read`);
  const frame = compressFrame(raw);
  const head = JSON.stringify({ format: FORMAT, version: VERSION, tips: r.tips, leftOut: r.leftOut, bytes: raw.length, compressed: frame.length });
  return Buffer.concat([Buffer.from(`${head}\n`, 'utf8'), frame]);
}

/** Newest first by committer time, then by id (a stable order for commits made in the same second). */
export function byCommitterTime(a: CommitRecord, b: CommitRecord): number {
  return Date.parse(b.committer.date) - Date.parse(a.committer.date) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export interface RecordsUpdate {
  /** Commits asked of git (not recorded before). */
  added: number;
  /** Recorded commits dropped (no longer reached). */
  dropped: number;
  /** Commits recorded now. */
  commits: number;
}

/** What the records are to hold: the commits the history holds (`ids`), reached from `tips`, and how many more the tips reach (`leftOut`). */
export interface RecordsWanted {
  tips: readonly string[];
  ids: readonly string[];
  leftOut: number;
}

/**
 * Brings the records at `path` to what is `wanted`: asks git for the commits not recorded,
 * drops the ones not wanted, writes the file when anything changed (or the tips did).
 */
export async function updateCommitRecords(gitDir: string, path: string, wanted: RecordsWanted): Promise<RecordsUpdate> {
  const { tips, ids, leftOut } = wanted;
  let old: CommitRecords | undefined;
  try {
    old = readCommitRecords(path);
  } catch {
    old = undefined; // refused (not a regular file, too large): made again
  }
  const want = new Set(ids);
  const kept = (old?.commits ?? []).filter((c) => want.has(c.id));
  const have = new Set(kept.map((c) => c.id));
  const missing = [...want].filter((id) => !have.has(id));
  const added = await logCommits(gitDir, missing);
  const dropped = (old?.commits.length ?? 0) - kept.length;
  const same = old !== undefined && old.leftOut === leftOut && old.tips.length === tips.length && old.tips.every((t, i) => t === tips[i]);
  if (added.length === 0 && dropped === 0 && same) return { added: 0, dropped: 0, commits: kept.length };
  const commits = added.length === 0 ? kept : [...kept, ...added].sort(byCommitterTime);
  mkdirSync(dirname(path), { recursive: true });
  writeFileAtomic(path, formatCommitRecords({ tips: [...tips], leftOut, commits }));
  return { added: added.length, dropped, commits: commits.length };
}

/** Removes a repository's records, if any. */
export function removeCommitRecords(path: string): void {
  if (existsSync(path)) rmSync(path, { force: true });
}

/** The records of commits `ids` (any order), from git. */
async function logCommits(gitDir: string, ids: readonly string[]): Promise<CommitRecord[]> {
  const out: CommitRecord[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_CALL) {
    const batch = ids.slice(i, i + IDS_PER_CALL);
    const log = await runGit(
      gitDir,
      [
        '-c',
        'log.showSignature=false',
        '-c',
        'i18n.logOutputEncoding=UTF-8',
        'log',
        '--no-walk=unsorted',
        '--no-color',
        '-z',
        '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B',
        ...batch,
        '--',
      ],
      LOG_MAX_BYTES,
    );
    // -z ends each commit with \0: its nine fields are each ended by one.
    const fields = log.toString('utf8').split('\0');
    if (fields[fields.length - 1] === '') fields.pop();
    if (fields.length !== batch.length * FIELDS)
      throw new Error(`git log of ${batch.length} commits in ${gitDir}: ${fields.length} fields, expected ${batch.length * FIELDS}`);
    out.push(...recordsOf(fields, 0, fields.length));
  }
  return out;
}
