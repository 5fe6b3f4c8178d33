// Keeps a repository's diff records (diff-store.ts) in line with its history walk: the
// records of commits the walk still holds are kept, those it no longer reaches dropped, and
// git is asked only for the diffs of the commits the records do not cover yet.
//
// Commits added to a history whose records lose none go to the records' tail: the tail is
// written again with them (its own lines copied by their ids, diff-store.ts updateRecords),
// and the base stays as it is, so that one new commit costs a tail's rewrite, not every
// commit's. The base is written whole (with the tail's commits, the tail removed) when
// commits are dropped, when the tail would hold more than TAIL_MAX_COMMITS, or more bytes
// than TAIL_MIN_BYTES and a quarter of the base's, and when there is no base (or one written before bases had ids). Each
// file lists its commits in the walk's order, parents first (history-walk.ts); a tail's come
// after its base's, which keeps parents first across the two.

import { randomBytes } from 'node:crypto';
import { logDiffs, type LoggedDiff } from './diff-log.ts';
import { encodeRecords, readRecords, recordedDiffs, recordsToUpdate, updateRecords, writeRecords, writeRecordsTail, type DiffRecords } from './diff-store.ts';

/** The most commits a tail holds before it is folded into its base. */
export const TAIL_MAX_COMMITS = 256;
/** A tail this small is never too large for its base: rewriting it costs next to nothing. */
const TAIL_MIN_BYTES = 64 * 1024;

export interface DiffIndexSummary {
  /** Commits whose diffs were read from git in this run. */
  added: number;
  /** Commits dropped (no longer in the history). */
  dropped: number;
  /** The records' size: base and tail. */
  bytes: number;
  /** Which file this run wrote: the tail alone, or the base whole ('none': nothing changed). */
  wrote: 'tail' | 'base' | 'none';
}

/** Brings the diff records of `repoId` up to the history of `commits` (ids, parents first) read from `gitDir`. */
export async function indexDiffs(o: {
  dataDir: string;
  repoId: number;
  gitDir: string;
  commits: readonly string[];
  leftOut?: number;
}): Promise<DiffIndexSummary> {
  const leftOut = o.leftOut ?? 0;
  // The base's meta alone: a new commit goes to the tail, and the base's tables are read only to fold it.
  const held = recordsToUpdate(o.dataDir, o.repoId);
  const tail = held?.tail;
  const inBase = new Set(held?.base.commits);
  const wanted = new Set(o.commits);
  const covered = new Set([...inBase, ...(tail?.commits ?? [])]);
  const missing = o.commits.filter((id) => !covered.has(id));
  const dropped = [...covered].filter((id) => !wanted.has(id)).length;
  const heldBytes = (held?.base.bytes ?? 0) + (tail?.bytes ?? 0);
  if (held !== undefined && missing.length === 0 && dropped === 0 && (tail ?? held.base).leftOut === leftOut)
    return { added: 0, dropped: 0, bytes: heldBytes, wrote: 'none' };
  const fresh = await logDiffs(o.gitDir, missing);
  let added = missing.length;
  const id = held?.base.id;
  if (held !== undefined && id !== undefined && dropped === 0) {
    // The tail's commits: those of the walk its base does not hold, in the walk's order.
    const after = o.commits.filter((c) => !inBase.has(c));
    const bytes = after.length > TAIL_MAX_COMMITS ? undefined : tailBytes(tail, after, fresh, leftOut, id);
    if (bytes !== undefined && bytes.length <= Math.max(TAIL_MIN_BYTES, held.base.bytes / 4)) {
      writeRecordsTail(o.dataDir, o.repoId, bytes);
      return { added, dropped, bytes: held.base.bytes + bytes.length, wrote: 'tail' };
    }
  }
  // One base of every commit: the old base's tables copied, the tail's commits and the fresh ones added.
  const base = held === undefined ? undefined : readRecords(o.dataDir, o.repoId)?.[0];
  const link = { id: randomBytes(8).toString('hex') };
  const kept = tail === undefined ? [] : recordedDiffs(tail).filter((d) => wanted.has(d.id));
  // A base whose meta reads but whose tables do not (damaged in place): its commits are read from git again.
  if (held !== undefined && base === undefined) {
    const again = held.base.commits.filter((c) => wanted.has(c));
    fresh.push(...(await logDiffs(o.gitDir, again)));
    added += again.length;
  }
  const bytes =
    base === undefined ? encodeRecords(o.commits, [...kept, ...fresh], leftOut, link) : updateRecords(base, o.commits, [...kept, ...fresh], leftOut, link);
  writeRecords(o.dataDir, o.repoId, bytes);
  return { added, dropped, bytes: bytes.length, wrote: 'base' };
}

/** The tail of commits `after` (the walk's past the base's): the old tail's lines kept, the fresh commits' added. */
function tailBytes(tail: DiffRecords | undefined, after: readonly string[], fresh: readonly LoggedDiff[], leftOut: number, base: string): Buffer {
  return tail === undefined ? encodeRecords(after, fresh, leftOut, { base }) : updateRecords(tail, after, fresh, leftOut, { base });
}
