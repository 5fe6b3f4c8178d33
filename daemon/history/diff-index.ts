// Keeps a repository's diff records (diff-store.ts) in line with its history walk: the
// records of commits the walk still holds are kept, those it no longer reaches dropped, and
// git is asked only for the diffs of the commits the records do not cover yet. The records
// list the commits in the walk's order, parents first (history-walk.ts). The whole file is
// written again; the kept commits' lines are copied from the old records' tables by their
// ids (diff-store.ts updateRecords), which on hono takes half the time of reading them back
// as diffs and encoding those.

import { logDiffs } from './diff-log.ts';
import { encodeRecords, readRecords, updateRecords, writeRecords } from './diff-store.ts';

export interface DiffIndexSummary {
  /** Commits whose diffs were read from git in this run. */
  added: number;
  /** Commits dropped (no longer in the history). */
  dropped: number;
  /** The records file's size. */
  bytes: number;
}

/** Brings the diff records of `repoId` up to the history of `commits` (ids, parents first) read from `gitDir`. */
export async function indexDiffs(o: {
  dataDir: string;
  repoId: number;
  gitDir: string;
  commits: readonly string[];
  leftOut?: number;
}): Promise<DiffIndexSummary> {
  const old = readRecords(o.dataDir, o.repoId);
  const wanted = new Set(o.commits);
  const covered = old === undefined ? new Set<string>() : old.done;
  const missing = o.commits.filter((id) => !covered.has(id));
  const dropped = old === undefined ? 0 : [...old.done].filter((id) => !wanted.has(id)).length;
  if (old !== undefined && missing.length === 0 && dropped === 0 && old.leftOut === (o.leftOut ?? 0)) return { added: 0, dropped: 0, bytes: old.bytes };
  const fresh = await logDiffs(o.gitDir, missing);
  const bytes = old === undefined ? encodeRecords(o.commits, fresh, o.leftOut ?? 0) : updateRecords(old, o.commits, fresh, o.leftOut ?? 0);
  writeRecords(o.dataDir, o.repoId, bytes);
  return { added: missing.length, dropped, bytes: bytes.length };
}
