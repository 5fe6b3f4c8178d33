// Lock files between trawl processes sharing a data dir (a repository's index run, a
// mirror's fetch), that survive their holder being killed at any moment.
//
// The lock file holds one line, "PID START\n": the holder's pid and its start time in clock
// ticks since boot (left-behind.ts; "-" where /proc is missing). It is written complete under a
// temporary name (`<lock>.tmp-<pid>-<hex>`) and hard-linked into place, so it is never seen
// empty or half-written: link(2) fails when the lock exists, like an O_EXCL create. The
// holder removes it when done.
//
// A lock is stale, and the next process takes it over, when:
//   - its pid is not running;
//   - its pid runs a process that started at another time (the pid was recycled);
//   - it is a bare "PID" (the format of earlier versions) and that pid is not running or
//     runs a process that started after the file was written;
//   - it is empty or unreadable and older than EMPTY_GRACE_MS (a writer killed between
//     creating and writing it, where hard links are not supported; or an older trawl).
//     Unreadable includes what trawl never writes: a record over LOCK_MAX_BYTES, or
//     something other than a regular file (a FIFO, a link to a device), never read whole.
//     A directory in its place cannot be taken over: an error says so at once.
// Taking over goes through a guard file (`<lock>.break`, O_EXCL): the breaker re-checks
// the lock under the guard before deleting it, so two processes that both found it stale
// cannot delete each other's fresh lock. A guard older than EMPTY_GRACE_MS is from a
// breaker killed in those few system calls and is removed.
//
// Processes sharing a data dir must share a pid namespace (one machine, one container):
// a pid seen from another namespace means nothing here.

import { closeSync, linkSync, lstatSync, openSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { link, unlink, writeFile } from 'node:fs/promises';
import { readBoundedText } from '../bounded-read.ts';
import { leftBehind, processAlive, processStartTicks } from './left-behind.ts';

export const LOCK_TIMEOUT_MS = 30_000;
/** How long an empty lock file (or a guard) may stand before it is taken for a leftover. */
export const EMPTY_GRACE_MS = 2_000;
const POLL_MS = 50;
/** The largest lock record read: it is one line of two numbers. */
const LOCK_MAX_BYTES = 1024;

export interface LockOwner {
  pid: number;
  /** Start time in clock ticks since boot; undefined in the old format (pid only) or without /proc. */
  start?: number;
}

/**
 * Takes the lock file `lockPath`, waiting up to `timeoutMs` for its holder to release it;
 * a stale lock (above) is taken over. Returns the release function.
 */
export async function acquireLock(lockPath: string, what: string, timeoutMs = LOCK_TIMEOUT_MS): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The first try off this thread: creating files waits on the file system's journal,
    // and a sync takes the locks of many repositories at once.
    if (await createAsync(lockPath)) {
      removeOldGuard(lockPath);
      break;
    }
    if (breakIfStale(lockPath) && create(lockPath)) break;
    if (Date.now() > deadline) {
      const owner = readLockOwner(lockPath);
      throw new Error(`${what} is locked by another trawl process (${owner ? `pid ${owner.pid}` : 'no owner recorded yet'}, ${lockPath})`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      unlinkSync(lockPath);
    } catch {
      /* nothing to do */
    }
  };
}

/** Takes the lock if it is free or stale; false when a live process holds it. */
export function tryLock(lockPath: string): boolean {
  if (create(lockPath)) {
    removeOldGuard(lockPath);
    return true;
  }
  return breakIfStale(lockPath) && create(lockPath);
}

/** The lock's holder as recorded, or undefined (no lock, empty or unreadable). */
export function readLockOwner(lockPath: string): LockOwner | undefined {
  let text: string;
  try {
    text = readBoundedText(lockPath, LOCK_MAX_BYTES, 'latin1');
  } catch {
    return undefined;
  }
  const m = /^(\d+)(?: (\d+|-))?\n?$/.exec(text);
  if (!m) return undefined;
  const pid = Number(m[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return m[2] === undefined || m[2] === '-' ? { pid } : { pid, start: Number(m[2]) };
}

/** This process's lock record. */
function record(): string {
  return `${process.pid} ${processStartTicks(process.pid) ?? '-'}\n`;
}

/** Creates the lock holding our record; false when it exists. */
function create(lockPath: string): boolean {
  const tmp = tmpName(lockPath);
  try {
    // Inside the try: a write that fails (a full disk) leaves no record behind either.
    writeFileSync(tmp, record(), { flag: 'wx' });
    linkSync(tmp, lockPath);
    return true;
  } catch (err) {
    return notCreated(err, lockPath);
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      /* already gone */
    }
  }
}

/** create(), its file system calls made on libuv's threads. */
async function createAsync(lockPath: string): Promise<boolean> {
  const tmp = tmpName(lockPath);
  try {
    await writeFile(tmp, record(), { flag: 'wx' });
    await link(tmp, lockPath);
    return true;
  } catch (err) {
    return notCreated(err, lockPath);
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

const tmpName = (lockPath: string): string => `${lockPath}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;

/** After a failed create: false when the lock exists; on a file system without hard links, the create without one; else the error. */
function notCreated(err: unknown, lockPath: string): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EEXIST') return false;
  if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
  return createWithoutLink(lockPath);
}

/** Filesystems without hard links: O_EXCL create, then write (empty for a moment; see EMPTY_GRACE_MS). */
function createWithoutLink(lockPath: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeFileSync(fd, record());
  } catch (err) {
    closeSync(fd);
    try {
      unlinkSync(lockPath);
    } catch {
      /* gone already */
    }
    throw err; // not left empty: that would hold the lock for the grace
  }
  closeSync(fd);
  return true;
}

/** Deletes the lock if it is stale, under the guard; true when it is gone. */
function breakIfStale(lockPath: string): boolean {
  const guard = `${lockPath}.break`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    removeOldGuard(lockPath);
    return false; // another process is breaking it: look again at the next poll
  }
  closeSync(fd);
  try {
    if (!isStale(lockPath)) return false;
    // A directory cannot be unlinked, and would be found stale at every poll until the
    // timeout: said at once instead (trawl never makes one there).
    if (lstatSync(lockPath, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${lockPath} is a directory, not a lock file; remove it`);
    try {
      unlinkSync(lockPath);
    } catch {
      /* gone already */
    }
    return true;
  } finally {
    try {
      unlinkSync(guard);
    } catch {
      /* gone already */
    }
  }
}

function removeOldGuard(lockPath: string): void {
  const guard = `${lockPath}.break`;
  const st = statSync(guard, { throwIfNoEntry: false });
  if (st && Date.now() - st.mtimeMs > EMPTY_GRACE_MS) {
    try {
      unlinkSync(guard);
    } catch {
      /* gone already */
    }
  }
}

/** See the header: dead, recycled or long-empty. */
function isStale(lockPath: string): boolean {
  const st = statSync(lockPath, { throwIfNoEntry: false });
  if (!st) return true;
  const owner = readLockOwner(lockPath);
  if (!owner) return Date.now() - st.mtimeMs > EMPTY_GRACE_MS;
  if (owner.start === undefined) return leftBehind(owner.pid, st.mtimeMs);
  if (!processAlive(owner.pid)) return true;
  const now = processStartTicks(owner.pid);
  return now !== undefined && now !== owner.start;
}
