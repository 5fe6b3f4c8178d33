// Planning an incremental index run: which file versions are new, which branches now hold
// the documents already indexed, and whether the run stays within the bounds on delta
// shards.
//
// Every document of a version-3 shard carries its git blob id, so a file version (path,
// blob) of the new refs is either already a document somewhere in the repository's shards
// (it only needs its branch lists updated), or was skipped before (binary, too large: its
// blob id is in the shard's skipped list), or is new and goes into a delta shard. Documents
// no new ref holds end up on no branch: dead, never matched, their bytes reclaimed by the
// next full build (deltaTooLarge decides when, by the bounds below; docs/design.md states
// them).

import { join, sep } from 'node:path';
import { Shard } from './shard-reader.ts';
import { ShardError } from './shard-error.ts';
import { shardsDir } from './data-dir.ts';
import type { Manifest, ManifestShard } from './manifest.ts';
import type { BlobFile } from './build-pool.ts';
import type { GitRef, GitVersion } from '../repos/git.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';

/** A shard's number in a document's place in the plan's map (a shard has fewer documents). */
const SHARD_UNIT = 2 ** 32;

/**
 * Bounds on delta shards (docs/design.md "Incremental indexing"). An incremental run is
 * replaced by a full build when, afterwards, the repository would have more than
 * MAX_DELTA_SHARDS delta shards, or less than MIN_LIVE_FRACTION of its stored content
 * would still be live (and more than MIN_DEAD_BYTES dead), or when more than
 * MAX_DELTA_FRACTION of its file versions (and more than MIN_FULL_FILES) changed: then a
 * full build costs about the same and leaves nothing dead behind.
 */
export const MAX_DELTA_SHARDS = 8;
export const MIN_LIVE_FRACTION = 0.5;
/** ... counted only once the dead content is worth reclaiming. */
export const MIN_DEAD_BYTES = 4 * 1024 * 1024;
export const MAX_DELTA_FRACTION = 0.25;
/** ... but a change of this many file versions or fewer is always built as a delta: it is cheap either way. */
export const MIN_FULL_FILES = 100;

export interface ShardUpdate {
  entry: ManifestShard;
  /** Per new ref (same order as the refs), the shard's documents on it, ascending. */
  lists: Uint32Array[];
  /** The lists differ from what the shard (or its membership file) says now. */
  changed: boolean;
  liveDocs: number;
  liveContentBytes: number;
  /**
   * Versions of the new refs that its skipped list names: a shard with no live document
   * but these is kept, or the next run would read and skip them again.
   */
  liveSkipped: number;
}

export interface DeltaPlan {
  added: BlobFile[];
  shards: ShardUpdate[];
  /** Bytes of content in the existing shards, and of the documents still live. */
  contentBytes: number;
  liveContentBytes: number;
}

/**
 * The plan, or the reason an incremental run is impossible (then a full build runs). It
 * runs on the thread that serves requests and reads every document of a large repository
 * (Linux: 78k), so it works in time slices (runtime/time-slices.ts).
 */
export async function planDelta(dataDir: string, previous: Manifest, refs: GitRef[], versions: GitVersion[]): Promise<DeltaPlan | { impossible: string }> {
  const dir = shardsDir(dataDir, previous.repoId);
  const shards: Shard[] = [];
  // A compound shard is shared with other repositories: a repository of one is built anew
  // (and its range there is then named by no manifest), never given a membership file.
  if (previous.shards.some((s) => s.member !== undefined))
    return { impossible: 'the repository is part of a compound shard (small repositories are rebuilt whole)' };
  for (const entry of previous.shards) {
    if (sliceUsed()) await nextSlice();
    let shard: Shard;
    try {
      // Its documents, branch lists and blob ids are what the plan reads: its symbols file is
      // not opened, and its other sections are not hashed (the searcher checks them).
      shard = Shard.open(join(dir, entry.file), { membership: entry.membership ? join(dir, entry.membership) : undefined, catalogOnly: true });
    } catch (err) {
      // A damaged base is rebuilt, not built upon (manifest.ts).
      if (err instanceof ShardError) return { impossible: `the previous index is damaged: ${err.message.split(dir + sep).join('')}` };
      throw err;
    }
    if (shard.version < 3) return { impossible: 'the index predates blob ids (shard format 2)' };
    shards.push(shard);
  }
  // (path, blob) -> shard s and document d, as s * 2^32 + d; documents are found by their key.
  const where = new Map<string, number>();
  // (path, blob) -> the shard whose skipped list names it.
  const skipped = new Map<string, number>();
  for (const [s, shard] of shards.entries()) {
    for (let d = 0; d < shard.docCount; d++) {
      where.set(`${shard.name(d)}\0${shard.oid(d)}`, s * SHARD_UNIT + d);
      if ((d & 1023) === 1023 && sliceUsed()) await nextSlice();
    }
    for (const k of shard.meta.skipped) if (k.oid) skipped.set(`${k.path}\0${k.oid}`, s);
  }
  const lists: number[][][] = shards.map(() => refs.map(() => []));
  const liveSkipped = shards.map(() => 0);
  const added: BlobFile[] = [];
  for (const [i, v] of versions.entries()) {
    if ((i & 1023) === 1023 && sliceUsed()) await nextSlice();
    const key = `${v.path}\0${v.oid}`;
    const at = where.get(key);
    if (at !== undefined) {
      const s = Math.floor(at / SHARD_UNIT);
      for (const r of v.refs) lists[s]![r]!.push(at - s * SHARD_UNIT);
    } else {
      const s = skipped.get(key);
      if (s === undefined) added.push({ path: v.path, oid: v.oid, branches: v.refs });
      else liveSkipped[s]!++;
    }
  }
  let contentBytes = 0;
  let liveContentBytes = 0;
  const updates = shards.map((shard, s): ShardUpdate => {
    const mine = lists[s]!.map((l) => Uint32Array.from(l).sort());
    const live = new Uint8Array(shard.docCount);
    for (const l of mine) for (const d of l) live[d] = 1;
    let liveDocs = 0;
    let liveBytes = 0;
    let allBytes = 0;
    for (let d = 0; d < shard.docCount; d++) {
      const n = shard.contentLength(d);
      allBytes += n;
      if (live[d]) {
        liveDocs++;
        liveBytes += n;
      }
    }
    contentBytes += allBytes;
    liveContentBytes += liveBytes;
    return {
      entry: previous.shards[s]!,
      lists: mine,
      changed: !sameLists(shard, refs, mine),
      liveDocs,
      liveContentBytes: liveBytes,
      liveSkipped: liveSkipped[s]!,
    };
  });
  return { added, shards: updates, contentBytes, liveContentBytes };
}

/** The reason to build in full instead, or undefined when a delta run is within bounds. */
export function deltaTooLarge(prev: Manifest, plan: DeltaPlan, versions: number): string | undefined {
  const deltas = prev.shards.filter((s) => s.delta).length + (plan.added.length > 0 ? 1 : 0);
  if (deltas > MAX_DELTA_SHARDS) return `more than ${MAX_DELTA_SHARDS} delta shards`;
  if (plan.added.length > MAX_DELTA_FRACTION * versions && plan.added.length > MIN_FULL_FILES)
    return `${plan.added.length} of ${versions} file versions changed`;
  const dead = plan.contentBytes - plan.liveContentBytes;
  if (dead > MIN_DEAD_BYTES && plan.liveContentBytes < MIN_LIVE_FRACTION * plan.contentBytes) return 'less than half of the stored content is live';
  return undefined;
}

function sameLists(shard: Shard, refs: GitRef[], lists: Uint32Array[]): boolean {
  const b = shard.branches;
  if (b.names.length !== refs.length) return false;
  for (let r = 0; r < refs.length; r++) {
    if (b.names[r] !== refs[r]!.name) return false;
    const old = b.docs(r);
    const now = lists[r]!;
    if (old.length !== now.length) return false;
    for (let i = 0; i < now.length; i++) if (old[i] !== now[i]) return false;
  }
  return true;
}
