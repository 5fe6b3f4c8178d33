// The data directory: where shards, manifests and the repository registry live.
//
//   <dataDir>/repos.json                 registry: repository name -> stable integer id
//   <dataDir>/repos.lock                 held while the registry is updated
//   <dataDir>/shards/<id>/manifest.json  the repository's current generation of shards
//   <dataDir>/shards/<id>/g<gen>-<n>.trawl
//
// The manifest is the commit point of an index run: new shards are written beside the old
// ones under a new generation number, then the manifest is replaced atomically (temporary
// file + rename), then the previous generation's files are removed. A crash at any point
// leaves a manifest that names complete shards, so the previous index keeps serving.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SHARD_EXT } from './shard-format.ts';

export const DEFAULT_DATA_DIR = '.trawl';

export function resolveDataDir(flag?: string): string {
  return resolve(flag ?? process.env.TRAWL_DATA_DIR ?? DEFAULT_DATA_DIR);
}

export interface Manifest {
  version: 1;
  repoId: number;
  repoName: string;
  generation: number;
  /** Shard file names, in shard order (relative to the manifest's directory). */
  shards: string[];
  indexedAt: string;
  files: number;
  contentBytes: number;
  skipped: number;
}

interface Registry {
  nextId: number;
  repos: Array<{ id: number; name: string }>;
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

/** The id of `name`, assigning the next unused one when the repository is new. Ids are never reused. */
export function repoIdFor(dataDir: string, name: string): number {
  mkdirSync(dataDir, { recursive: true });
  return withLock(join(dataDir, 'repos.lock'), () => {
    const path = join(dataDir, 'repos.json');
    const registry: Registry = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { nextId: 1, repos: [] };
    const known = registry.repos.find((r) => r.name === name);
    if (known) return known.id;
    const id = registry.nextId++;
    registry.repos.push({ id, name });
    writeFileAtomic(path, JSON.stringify(registry, null, 2) + '\n');
    return id;
  });
}

export function readManifest(dataDir: string, repoId: number): Manifest | undefined {
  const path = join(shardsDir(dataDir, repoId), 'manifest.json');
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
}

/** Every repository's manifest, ordered by repository name. */
export function readAllManifests(dataDir: string): Manifest[] {
  const root = join(dataDir, 'shards');
  if (!existsSync(root)) return [];
  const manifests: Manifest[] = [];
  for (const entry of readdirSync(root)) {
    if (!/^\d+$/.test(entry)) continue;
    const m = readManifest(dataDir, Number(entry));
    if (m) manifests.push(m);
  }
  return manifests.sort((a, b) => (a.repoName < b.repoName ? -1 : a.repoName > b.repoName ? 1 : a.repoId - b.repoId));
}

/**
 * Makes `manifest` the repository's current index, then removes every shard file of the
 * directory that it does not name (older generations, and temporary files of crashed runs).
 * Processes that have those files mapped keep reading them: unlinking does not unmap.
 */
export function commitManifest(dataDir: string, manifest: Manifest): void {
  const dir = shardsDir(dataDir, manifest.repoId);
  writeFileAtomic(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  const keep = new Set(manifest.shards);
  for (const entry of readdirSync(dir)) {
    if (keep.has(entry) || entry === 'manifest.json') continue;
    if (entry.includes(SHARD_EXT)) rmSync(join(dir, entry), { force: true });
  }
}

const SLEEP = new Int32Array(new SharedArrayBuffer(4));
const LOCK_TIMEOUT_MS = 30_000;

function withLock<T>(lockPath: string, fn: () => T): T {
  const deadline = Date.now() + LOCK_TIMEOUT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (lockIsStale(lockPath)) {
        try { unlinkSync(lockPath); } catch { /* another process removed it first */ }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`data directory is locked by another trawl process (${lockPath})`);
      Atomics.wait(SLEEP, 0, 0, 20);
    }
  }
  try {
    return fn();
  } finally {
    try { unlinkSync(lockPath); } catch { /* nothing to do */ }
  }
}

function lockIsStale(lockPath: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath, 'utf8'));
  } catch {
    return false; // being written right now
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
