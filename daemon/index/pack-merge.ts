// Merging compound shards: the repositories still served from small packs, or from packs
// mostly tombstoned (their other members moved on), are copied into new packs of about
// the target size, and each is committed there (pack-build.ts has the layout and why a
// manifest commit is the tombstone). A merge copies documents from the old packs (their
// bytes, branch lists and definitions), so it needs no git repository and runs no ctags.
//
// It blocks neither searches (they read the old packs until the commits, then the new) nor
// syncs: a repository is committed to its new pack only if its lock is free and its
// manifest still names what the merge copied; one re-indexed meanwhile keeps its newer
// index, and its copy in the new pack is dead from the start. Killed at any moment, every
// repository is served from exactly one pack: the old one until its commit, the new one
// after (the new pack is written and flushed before any commit names it).

import { join } from 'node:path';
import { shardsDir } from './data-dir.ts';
import { commitManifest, loadManifest, memberEntry, readAllManifests, shardFiles, type LoadedManifest, type Manifest, type ManifestShard } from './manifest.ts';
import { buildPacks, type PackItem, type PackOptions } from './pack-build.ts';
import { Shard } from './shard-reader.ts';
import type { ShardFile } from './shard-builder.ts';
import { tryLock } from '../runtime/lock-file.ts';
import { rmSync } from 'node:fs';

/** A pack whose live content is under this share of the target is small: merged with others. */
export const SMALL_PACK_SHARE = 0.5;
/** A pack whose tombstoned content is at least this share of it is rewritten. */
export const DEAD_SHARE = 0.5;

/** A pack as the manifests and its own table say. */
interface PackState {
  file: string;
  path: string;
  symbols?: string;
  contentBytes: number;
  liveBytes: number;
  /** The repositories it serves: their manifests and entries. */
  live: Array<{ manifest: Manifest; entry: ManifestShard }>;
}

export interface MergeReport {
  /** Packs merged away (their live repositories moved). */
  packs: number;
  /** Repositories moved, and those left where they were (locked or re-indexed meanwhile). */
  moved: number;
  skipped: number;
}

/**
 * Small packs are merged by size tier, two or more of a tier at a time: the tiers are
 * powers of four from a 64th of the target (a tier's packs are within a factor four of each
 * other). A small new pack (a repository that changed) is thus merged with others of its
 * size, never into a pack many times larger: on 20,000 tiny repositories in one pack, each
 * one-line change rewrote all of them. A byte is rewritten about once per tier it climbs.
 */
export function tierOf(liveBytes: number, target: number): number {
  const base = target / 64;
  return liveBytes <= base ? 0 : Math.ceil(Math.log(liveBytes / base) / Math.log(4));
}

/**
 * Which packs to merge: those mostly tombstoned, the small ones of a size tier that holds
 * two or more, and the small ones whose tier is not above that of what the tombstoned packs
 * being rewritten keep (they ride along). Nothing when a merge would rewrite one small pack into itself.
 */
export function packsToMerge(packs: readonly Pick<PackState, 'contentBytes' | 'liveBytes'>[], target: number): number[] {
  const dead: number[] = [];
  const small: number[] = [];
  packs.forEach((p, i) => {
    if (p.liveBytes === 0) return; // nothing to move: the collector deletes it
    if (isDead(p)) dead.push(i);
    else if (p.liveBytes < SMALL_PACK_SHARE * target) small.push(i);
  });
  const picked = new Set(dead);
  const tiers = new Map<number, number[]>();
  for (const i of small) {
    const t = tierOf(packs[i]!.liveBytes, target);
    tiers.set(t, [...(tiers.get(t) ?? []), i]);
  }
  for (const members of tiers.values()) if (members.length >= 2) for (const i of members) picked.add(i);
  if (dead.length > 0) {
    const kept = tierOf(
      dead.reduce((n, i) => n + packs[i]!.liveBytes, 0),
      target,
    );
    for (const i of small) if (tierOf(packs[i]!.liveBytes, target) <= kept) picked.add(i);
  }
  return [...picked].sort((a, b) => a - b);
}

/**
 * The packs (indexes into `packs`, none of them picked by packsToMerge) that a new pack of
 * `bytes` live bytes takes in as it is built: the small pack of its size tier, which the
 * next packsToMerge would merge it with, then the one of the tier it grows into, and so on
 * while it stays small. Taken in at once, each repository is copied once, where a pack of
 * its own and then a merge would copy some twice; and no state that looks final (every
 * repository in a compound shard) comes between, only to be followed by the merge.
 */
export function packsToJoin(bytes: number, packs: readonly Pick<PackState, 'contentBytes' | 'liveBytes'>[], target: number): number[] {
  const taken: number[] = [];
  let total = bytes;
  while (total < SMALL_PACK_SHARE * target) {
    const tier = tierOf(total, target);
    const i = packs.findIndex(
      (p, k) => !taken.includes(k) && p.liveBytes > 0 && !isDead(p) && p.liveBytes < SMALL_PACK_SHARE * target && tierOf(p.liveBytes, target) === tier,
    );
    if (i < 0) break;
    taken.push(i);
    total += packs[i]!.liveBytes;
  }
  return taken;
}

/** Mostly tombstoned: its live members are rewritten elsewhere. */
function isDead(p: Pick<PackState, 'contentBytes' | 'liveBytes'>): boolean {
  return p.contentBytes > 0 && 1 - p.liveBytes / p.contentBytes >= DEAD_SHARE;
}

/**
 * Merges the packs packsToMerge picks. Uses the build options of pack-build.ts; the packs
 * lock is taken by buildPacks, so merges and pack builds never overlap. `manifests`: the
 * index's manifests as the caller already holds them (a daemon's view, which the change
 * journal keeps current: reading every manifest again cost more than the merge of a small
 * change); default, read from disk. A manifest it lacks or holds stale costs nothing but a
 * merge less: a repository is moved only if its manifest on disk still names what was
 * copied.
 */
export async function mergePacks(options: PackOptions, manifests?: readonly LoadedManifest[]): Promise<MergeReport> {
  const packs = packStates(options.dataDir, manifests ?? readAllManifests(options.dataDir));
  const picked = packsToMerge(packs, options.target).map((i) => packs[i]!);
  if (picked.length === 0) return { packs: 0, moved: 0, skipped: 0 };
  const items: PackItem[] = [];
  for (const p of picked) {
    const shard = Shard.open(p.path, p.symbols !== undefined ? { symbols: p.symbols } : {});
    for (const { manifest, entry } of p.live) items.push(movedRepo(options.dataDir, p, shard, manifest, entry));
  }
  const outcomes = await buildPacks(items, options);
  const moved = outcomes.filter((o) => 'summary' in o).length;
  return { packs: picked.length, moved, skipped: outcomes.length - moved };
}

/** Every pack some manifest names, with its live members. */
function packStates(dataDir: string, manifests: readonly LoadedManifest[]): PackState[] {
  const byFile = new Map<string, PackState>();
  for (const m of manifests) {
    if (m.version !== 2) continue;
    for (const entry of m.shards) {
      if (entry.member === undefined) continue;
      const files = shardFiles(dataDir, m.repoId, entry);
      let p = byFile.get(entry.file);
      if (!p) {
        // (Older entries lack the pack's size: then only its live bytes are known, as if nothing in it were dead.)
        p = { file: entry.file, path: files.path, contentBytes: 0, liveBytes: 0, live: [], ...(files.symbols !== undefined ? { symbols: files.symbols } : {}) };
        byFile.set(entry.file, p);
      }
      p.contentBytes = Math.max(p.contentBytes, entry.packBytes ?? 0);
      p.liveBytes += entry.liveContentBytes;
      p.live.push({ manifest: m, entry });
    }
  }
  for (const p of byFile.values()) p.contentBytes = Math.max(p.contentBytes, p.liveBytes);
  return [...byFile.values()].sort((a, b) => (a.file < b.file ? -1 : 1));
}

/**
 * A repository's live documents in a shard (its member `member`: 0 in a shard of its own),
 * as files of a new pack that bring their bytes, branch lists and definitions from there
 * (`from`: the shard's path and its symbols file's).
 */
export function memberFiles(shard: Shard, member: number, from: { path: string; symbols?: string }): ShardFile[] {
  const m = shard.members[member]!;
  const files: ShardFile[] = [];
  for (let doc = m.first; doc < m.end; doc++) {
    const branches: number[] = [];
    for (let b = m.branchFirst; b < m.branchEnd; b++) if (shard.branches.has(b, doc)) branches.push(b - m.branchFirst);
    // A document on none of its branches is dead (none in a pack: they are built whole; a delta's older versions in a shard of its own).
    if (branches.length === 0) continue;
    const size = shard.contentLength(doc);
    files.push({
      path: shard.name(doc),
      size,
      branches,
      oid: shard.oid(doc),
      from: { shard: from.path, doc, ...(from.symbols !== undefined ? { symbols: from.symbols } : {}) },
    });
  }
  return files;
}

/** A live member of a pack as an item of the merge: its documents copied, its commit guarded. */
function movedRepo(dataDir: string, pack: PackState, shard: Shard, manifest: Manifest, entry: ManifestShard): PackItem {
  const m = shard.members[entry.member!]!;
  return {
    repoId: manifest.repoId,
    repo: manifest.repo,
    refs: manifest.refs,
    files: memberFiles(shard, entry.member!, pack),
    bytes: entry.liveContentBytes,
    skipped: m.skipped,
    commit: (file, member, built, batch) => {
      const lock = join(shardsDir(dataDir, manifest.repoId), 'lock');
      if (!tryLock(lock)) throw new Error(`${manifest.repo.name} is being indexed: it stays where it is`);
      try {
        const now = loadManifest(dataDir, manifest.repoId);
        if (!now || 'unreadable' in now || now.version !== 2 || now.generation !== manifest.generation)
          throw new Error(`${manifest.repo.name} was indexed again meanwhile`);
        const shards: ManifestShard[] = [memberEntry(file, member, built)];
        const { retired: _r, indexVersion: _v, fileBytes: _f, ...rest } = now;
        commitManifest(dataDir, { ...rest, generation: now.generation + 1, shards }, now, Date.now(), batch);
        return undefined;
      } finally {
        rmSync(lock, { force: true });
      }
    },
  };
}
