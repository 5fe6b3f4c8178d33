// A repository's manifest: the list of shard files (and membership files) that make up its
// current index, with the repository's metadata and the refs it holds.
//
//   <dataDir>/shards/<id>/manifest.json     this file
//   <dataDir>/shards/<id>/g<gen>-<n>.trawl  shards written by generation <gen>
//   <dataDir>/shards/<id>/g<gen>-m<n>.branches  membership files (branch-set.ts)
//   <dataDir>/shards/<id>/lock              held by the process indexing the repository
//   <dataDir>/index-version                 changes whenever any manifest does
//
// The manifest is the commit point of an index run: new files are written beside the old
// ones under a new generation number, then the manifest is replaced atomically (temporary
// file + fsync + rename). A crash at any point leaves a manifest that names complete files,
// so the previous index keeps serving.
//
// Files the new manifest no longer names are not deleted at once: searches that began
// before the swap may still have to open them. They are listed as `retired` with the time
// they were retired, and deleted by a later commit or by collectGarbage once RETIRE_GRACE_MS
// has passed, longer than any search may run. The searcher notices a swap by reading
// index-version before each search, and a search uses one snapshot of every manifest from
// its start to its end, so it never sees half of a swap.

import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { SHARD_EXT } from './shard-format.ts';
import { shardsDir, writeFileAtomic } from './data-dir.ts';
import type { CodeHostType, GitRef } from '../repos/git.ts';

/**
 * How long a retired file stays on disk. Searches are bounded by settings.search.timeoutMs
 * (20 s by default); a minute covers that with room to spare.
 */
export const RETIRE_GRACE_MS = 60_000;

export const MEMBERSHIP_EXT = '.branches';

export interface ManifestShard {
  file: string;
  /** A membership file that replaces the shard's own branch lists. */
  membership?: string;
  docs: number;
  /** Documents still on at least one indexed ref. */
  liveDocs: number;
  contentBytes: number;
  liveContentBytes: number;
  /** Written by an incremental run (holds only files that changed). */
  delta: boolean;
}

/** What searches need to know of the repository, kept current without rewriting shards. */
export interface ManifestRepo {
  name: string;
  displayName: string;
  codeHostType: CodeHostType;
  /** The host's page of the repository. */
  externalWebUrl?: string;
  archived: boolean;
  fork: boolean;
  visibility: 'public' | 'private';
  kind: 'git' | 'directory';
  /** Where it was indexed from: a local path or the mirror in the data dir. */
  source: string;
  /** Git: when the default branch's tip was committed; the push time of a repository whose host reports none (plain git). */
  committedAt?: string;
}

export interface Manifest {
  version: 2;
  repoId: number;
  repo: ManifestRepo;
  generation: number;
  /** The refs indexed; refs[0] is the default branch. Directories: one ref, "HEAD". */
  refs: GitRef[];
  shards: ManifestShard[];
  indexedAt: string;
  /** Live documents and their bytes, over all shards. */
  files: number;
  contentBytes: number;
  skipped: number;
  /** Generation of the last full build; delta shards pile up on it until the next one. */
  baseGeneration: number;
  retired: Array<{ file: string; at: number }>;
}

/** Manifests of version 1 (before branches): shard names only; the shards carry the rest. */
interface ManifestV1 {
  version: 1;
  repoId: number;
  repoName: string;
  generation: number;
  shards: string[];
  indexedAt: string;
  files: number;
  contentBytes: number;
  skipped: number;
}

/** A readable manifest: the current version, or version 1 with `repo` and `refs` unknown. */
export type LoadedManifest = Manifest | (Omit<Manifest, 'repo' | 'refs' | 'version'> & { version: 1; repoName: string; repo?: undefined; refs?: undefined });

/** The repository's name, whichever version the manifest is. */
export function manifestRepoName(m: LoadedManifest): string {
  return m.version === 2 ? m.repo.name : m.repoName;
}

export function readManifest(dataDir: string, repoId: number): LoadedManifest | undefined {
  const path = join(shardsDir(dataDir, repoId), 'manifest.json');
  if (!existsSync(path)) return undefined;
  const raw = JSON.parse(readFileSync(path, 'utf8')) as Manifest | ManifestV1;
  if (raw.version === 2) return raw;
  return {
    version: 1,
    repoId: raw.repoId,
    repoName: raw.repoName,
    generation: raw.generation,
    shards: raw.shards.map((file) => ({ file, docs: 0, liveDocs: 0, contentBytes: 0, liveContentBytes: 0, delta: false })),
    indexedAt: raw.indexedAt,
    files: raw.files,
    contentBytes: raw.contentBytes,
    skipped: raw.skipped,
    baseGeneration: raw.generation,
    retired: [],
  };
}

/** Every repository's manifest that has shards, ordered by repository directory number. */
export function readAllManifests(dataDir: string): LoadedManifest[] {
  const root = join(dataDir, 'shards');
  if (!existsSync(root)) return [];
  const manifests: LoadedManifest[] = [];
  for (const entry of readdirSync(root)) {
    if (!/^\d+$/.test(entry)) continue;
    const m = readManifest(dataDir, Number(entry));
    if (m) manifests.push(m);
  }
  return manifests.sort((a, b) => a.repoId - b.repoId);
}

/** Files a manifest names (shards and membership files), relative to its shards dir. */
export function named(m: LoadedManifest): string[] {
  return m.shards.flatMap((s) => (s.membership ? [s.file, s.membership] : [s.file]));
}

/**
 * Makes `next` the repository's current index. Files of `previous` that `next` does not
 * name are retired; retired files past their grace, and stray files no manifest names
 * (temporary files of crashed runs), are deleted. The caller holds the repository's lock.
 */
export function commitManifest(dataDir: string, next: Omit<Manifest, 'retired'>, previous: LoadedManifest | undefined, now = Date.now()): Manifest {
  const dir = shardsDir(dataDir, next.repoId);
  const keep = new Set(named(next as Manifest));
  const retired = new Map<string, number>();
  for (const r of previous?.retired ?? []) if (!keep.has(r.file)) retired.set(r.file, r.at);
  for (const f of previous ? named(previous) : []) if (!keep.has(f) && !retired.has(f)) retired.set(f, now);
  const manifest: Manifest = { ...next, retired: [] };
  for (const [file, at] of retired) {
    if (now - at >= RETIRE_GRACE_MS) rmSync(join(dir, file), { force: true });
    else manifest.retired.push({ file, at });
  }
  writeFileAtomic(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
  bumpIndexVersion(dataDir);
  const listed = new Set([...keep, ...manifest.retired.map((r) => r.file)]);
  for (const entry of readdirSync(dir)) {
    if (listed.has(entry)) continue;
    if (entry.includes(SHARD_EXT) || entry.includes(MEMBERSHIP_EXT)) rmSync(join(dir, entry), { force: true });
  }
  return manifest;
}

/**
 * Removes a repository from the index: an empty manifest that retires every file; the
 * directory goes when the grace has passed (collectGarbage).
 */
export function retireRepository(dataDir: string, repoId: number, now = Date.now()): void {
  const previous = readManifest(dataDir, repoId);
  if (!previous) {
    rmSync(shardsDir(dataDir, repoId), { recursive: true, force: true });
    bumpIndexVersion(dataDir);
    return;
  }
  commitManifest(dataDir, { ...(previous as Manifest), version: 2, shards: [], files: 0, contentBytes: 0, skipped: 0 }, previous, now);
}

/**
 * Deletes retired files whose grace has passed, and the directories of removed
 * repositories once nothing in them is still retired. `inUse` (absolute paths) are kept
 * regardless: a long search in this process still reads them.
 */
export function collectGarbage(dataDir: string, inUse: ReadonlySet<string> = new Set(), now = Date.now()): void {
  for (const m of readAllManifests(dataDir)) {
    const dir = shardsDir(dataDir, m.repoId);
    let pending = 0;
    for (const r of m.retired) {
      const path = join(dir, r.file);
      if (now - r.at >= RETIRE_GRACE_MS && !inUse.has(path)) rmSync(path, { force: true });
      else pending++;
    }
    if (m.shards.length === 0 && pending === 0) rmSync(dir, { recursive: true, force: true });
  }
}

/** Tells searchers (in this and other processes) that some manifest changed. */
export function bumpIndexVersion(dataDir: string): void {
  writeFileAtomic(join(dataDir, 'index-version'), `${Date.now()}-${randomBytes(6).toString('hex')}\n`);
}

export function readIndexVersion(dataDir: string): string {
  try {
    return readFileSync(join(dataDir, 'index-version'), 'utf8');
  } catch {
    return '';
  }
}
