// The data directory and the file primitives its writers share.
//
//   <dataDir>/trawl.db           the embedded store: repositories, connections (store/)
//   <dataDir>/shards/<id>/       a repository's index (manifest.ts documents it)
//   <dataDir>/git/<id>.git       bare mirrors of repositories from connections (repos/mirror.ts)
//   <dataDir>/index-version      changes whenever a manifest does
//
// Locks between processes sharing the data dir: runtime/lock-file.ts. What is read back
// from it is read through ../bounded-read.ts (a regular file within a bound of its kind):
// anything may have been put in a file's place.

import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export const DEFAULT_DATA_DIR = '.trawl';

export function resolveDataDir(flag?: string): string {
  return resolve(flag ?? (process.env.TRAWL_DATA_DIR || undefined) ?? DEFAULT_DATA_DIR); // empty: unset
}

export function shardsDir(dataDir: string, repoId: number): string {
  return join(dataDir, 'shards', String(repoId));
}

/** Where compound shards live: files of several repositories, named by each one's manifest (manifest.ts). */
export function packsDir(dataDir: string): string {
  return join(dataDir, 'packs');
}

/**
 * Writes a file atomically: temporary name (`<path>.tmp-<pid>`), fsync, rename. On failure
 * (a full disk) the temporary file is removed before the error is rethrown; one a killed
 * process left behind is removed by removeLeftoverTemps (runtime/left-behind.ts).
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeFileSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
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

export function mirrorsDir(dataDir: string): string {
  return join(dataDir, 'git');
}

/**
 * The history indexes' own data dir (history/history-index.ts): the same layout as this one
 * (shards/<id>/manifest.json, index-version), one repository's history per directory, kept
 * apart so that a search of the indexed refs never opens them.
 */
export function historyDataDir(dataDir: string): string {
  return join(dataDir, 'history');
}
