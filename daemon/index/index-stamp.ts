// How a searcher learns, before each search, whether the index changed: its stamp.
//
// Every change to a data dir's manifests ends with a bump (manifest.ts bumpIndexVersion):
// index-version is replaced (a new inode, written aside and renamed over), then index-seq is
// written. The stamp is index-version's identity (inode, times, size), taken by a stat;
// a stamp seen again means the version read along with it still holds.
//
// A stat is a system call, and on a virtual machine whose kernel isolates its page tables a
// system call also empties the TLB: it was a tenth of a search's time. So index-seq, eight
// bytes written in place (never replaced, never shortened) with a new random value by every
// bump, is mapped read-only and read as memory: while it holds the value read before the
// last stat, no bump has finished since, and the stamp then taken still holds. A writer
// that dies between its rename and its write to index-seq leaves the signal unchanged, and
// a data dir made anew leaves the mapping on the old file: so the stat is taken anyway when
// the last one is older than RESTAT_MS, which bounds how long either goes unseen.
//
// index-seq layout: bytes 0-7, any value; only a change means something. A bump of this
// process also forgets the stamp at once (forgetStamp): it never waits for the signal.

import { closeSync, constants, fstatSync, ftruncateSync, openSync, statSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openRegularFile } from '../bounded-read.ts';
import { mmap } from './mmap.ts';

/** The file index-version's stamp is taken of (replaced by every bump). */
export const INDEX_VERSION_FILE = 'index-version';
/** The change signal (layout above). */
export const INDEX_SEQ_FILE = 'index-seq';
const SEQ_BYTES = 8;
/** The longest a stamp is trusted on the signal alone. */
const RESTAT_MS = 1000;

/** What this thread knows of a data dir: its signal's mapping, and the stamp taken while the signal held `seq`. */
interface Watched {
  /** The signal's first bytes, mapped; undefined while the file is missing or unmappable. */
  signal: Buffer | undefined;
  /** The inode of the mapped signal file (a data dir made anew has another). */
  signalIno: bigint;
  /** The signal's value read just before `stamp` was taken ('' : none). */
  seq: string;
  stamp: string;
  /** performance.now() at that stat. */
  at: number;
}

const watched = new Map<string, Watched>();

/**
 * The stamps taken during the current turn of the event loop, by data dir. One search asks
 * several times (each service it passes through, the tips' and the history's, checks both
 * data dirs); the answer is the same for all of them, as a bump by another process between
 * two of them is only seen at the next search anyway.
 */
const stampsThisTurn = new Map<string, string>();

/**
 * index-version's identity (inode, times, size) without reading it: '' when there is no
 * file. A stat at most when the change signal moved, or the last stat is RESTAT_MS old.
 */
export function indexVersionStamp(dataDir: string): string {
  const known = stampsThisTurn.get(dataDir);
  if (known !== undefined) return known;
  let w = watched.get(dataDir);
  if (w === undefined) watched.set(dataDir, (w = { signal: undefined, signalIno: -1n, seq: '', stamp: '', at: Number.NEGATIVE_INFINITY }));
  const now = performance.now();
  const seq = readSignal(w);
  let stamp: string;
  if (seq !== '' && seq === w.seq && now - w.at < RESTAT_MS) stamp = w.stamp;
  else {
    stamp = statStamp(join(dataDir, INDEX_VERSION_FILE));
    // The signal is mapped once the first bump made it, and mapped again when the file was made anew.
    if (w.signal === undefined || now - w.at >= RESTAT_MS) remap(w, join(dataDir, INDEX_SEQ_FILE));
    w.seq = w.signal === undefined ? '' : seq;
    w.stamp = stamp;
    w.at = now;
  }
  if (stampsThisTurn.size === 0) setImmediate(() => stampsThisTurn.clear()).unref();
  stampsThisTurn.set(dataDir, stamp);
  return stamp;
}

/** A bump by this process: the next stamp of `dataDir` is taken afresh. */
export function forgetStamp(dataDir: string): void {
  stampsThisTurn.delete(dataDir);
  const w = watched.get(dataDir);
  if (w !== undefined) w.at = Number.NEGATIVE_INFINITY;
}

/**
 * Tells the searchers of `dataDir` (in every process) that index-version was just replaced:
 * a new value in index-seq, written in place. A failure to write it is not fatal: they see
 * the bump within RESTAT_MS.
 */
export function signalIndexChange(dataDir: string): void {
  writeSignal(join(dataDir, INDEX_SEQ_FILE), (fd) => writeSync(fd, randomBytes(SEQ_BYTES), 0, SEQ_BYTES, 0));
}

/** A signal file made where there is none: SEQ_BYTES zero bytes, or what a writer put there meanwhile (never overwritten). */
function makeSignal(path: string): void {
  writeSignal(path, (fd, size) => {
    if (size < SEQ_BYTES) ftruncateSync(fd, SEQ_BYTES);
  });
}

/** `write` on the signal file, opened (made if missing) for writing when it is a regular file; failures ignored: the periodic stat sees the bump. */
function writeSignal(path: string, write: (fd: number, size: number) => void): void {
  let fd: number | undefined;
  try {
    // Neither O_TRUNC (a reader's mapping must never see the file shorter than SEQ_BYTES)
    // nor O_APPEND (which would write at the end); O_NONBLOCK: a FIFO put there never blocks.
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOCTTY, 0o644);
    const st = fstatSync(fd);
    if (st.isFile()) write(fd, st.size);
  } catch {
    // Seen by the periodic stat instead.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function statStamp(path: string): string {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false });
  return st ? `${st.ino}:${st.mtimeNs}:${st.ctimeNs}:${st.size}` : '';
}

/** The signal's value as text ('' : not mapped). */
function readSignal(w: Watched): string {
  const s = w.signal;
  if (s === undefined) return '';
  return `${s.readUInt32LE(0)}:${s.readUInt32LE(4)}`;
}

/**
 * Maps the signal file when it is not mapped, or its inode changed; made first when missing
 * (a data dir indexed before the signal existed has none until its next bump), unless the
 * data dir is read-only; left unmapped when it cannot be, or holds too few bytes.
 */
function remap(w: Watched, path: string): void {
  let st = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (st === undefined) {
    makeSignal(path);
    st = statSync(path, { bigint: true, throwIfNoEntry: false });
  }
  if (st === undefined || st.size < BigInt(SEQ_BYTES)) {
    w.signal = undefined;
    return;
  }
  if (w.signal !== undefined && st.ino === w.signalIno) return;
  let fd: number | undefined;
  try {
    // Only a regular file is mapped (bounded-read.ts says why).
    const file = openRegularFile(path);
    fd = file.fd;
    w.signal = file.size >= SEQ_BYTES ? mmap.map(fd, SEQ_BYTES) : undefined;
    w.signalIno = st.ino;
  } catch {
    w.signal = undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
