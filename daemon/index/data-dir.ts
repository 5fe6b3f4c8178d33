// The data directory and the file primitives its writers share.
//
//   <dataDir>/trawl.db           the embedded store: repositories, connections (store/)
//   <dataDir>/shards/<id>/       a repository's index (manifest.ts documents it)
//   <dataDir>/git/<id>.git       bare mirrors of repositories from connections (repos/mirror.ts)
//   <dataDir>/index-version      changes whenever a manifest does

import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const DEFAULT_DATA_DIR = '.trawl';

export function resolveDataDir(flag?: string): string {
  return resolve(flag ?? (process.env.TRAWL_DATA_DIR || undefined) ?? DEFAULT_DATA_DIR); // empty: unset
}

export function shardsDir(dataDir: string, repoId: number): string {
  return join(dataDir, 'shards', String(repoId));
}

/** Writes a file atomically: temporary name, fsync, rename. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * Flushes files (and the directory holding them) to disk. Runs on libuv's thread pool,
 * several at a time; the kernel has usually written much of the data back already.
 */
export async function syncFiles(dir: string, names: string[]): Promise<void> {
  await Promise.all(
    [...names.map((n) => join(dir, n)), dir].map(async (path) => {
      const handle = await open(path, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    }),
  );
}

const LOCK_TIMEOUT_MS = 30_000;

export function mirrorsDir(dataDir: string): string {
  return join(dataDir, 'git');
}

/**
 * Takes the lock file `lockPath` (O_EXCL create holding our pid), waiting up to
 * `timeoutMs` for another process to release it; a lock whose pid is dead is broken.
 * Returns the release function.
 */
export async function acquireLock(lockPath: string, what: string, timeoutMs = LOCK_TIMEOUT_MS): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (tryLock(lockPath)) break;
    if (Date.now() > deadline) throw new Error(`${what} is locked by another trawl process (pid ${readPid(lockPath) ?? '?'}, ${lockPath})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try { unlinkSync(lockPath); } catch { /* nothing to do */ }
  };
}

function tryLock(lockPath: string): boolean {
  try {
    const fd = openSync(lockPath, 'wx');
    writeFileSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (lockIsStale(lockPath)) {
      try { unlinkSync(lockPath); } catch { /* another process removed it first */ }
      return tryLock(lockPath);
    }
    return false;
  }
}

function readPid(lockPath: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockPath, 'utf8'));
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function lockIsStale(lockPath: string): boolean {
  const pid = readPid(lockPath);
  if (pid === undefined) return false; // being written right now
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
