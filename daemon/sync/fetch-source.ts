// Where a sync reads a repository from: a remote one is mirrored (bare) into the data dir
// and fetched; one already on this machine (a local path or a file:// URL) is read in place.
// A clone URL its connection may not fetch (repos/hosts/clone-url.ts) is refused here too,
// whoever listed it.

import { isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Connection } from '../config/types.ts';
import { mirrorsDir } from '../index/data-dir.ts';
import { isGitRepository } from '../repos/git-dir.ts';
import { cloneUrlRefusal } from '../repos/hosts/clone-url.ts';
import type { CodeHost, HostRepo } from '../repos/hosts/types.ts';
import { syncMirror } from '../repos/mirror.ts';
import type { RepoRecord } from '../store/store.ts';

/** A listed repository, as much of it as reading it takes (sync.ts Work). */
export interface ListedRepo {
  connection: Connection;
  host: CodeHost;
  record: Pick<RepoRecord, 'repoId'>;
  hostRepo: Pick<HostRepo, 'cloneUrl'>;
}

/**
 * Where the repository is read from. Remote repositories are mirrored (bare) into the data
 * dir and fetched, once `fetchTurn` gives a turn (given back after). A repository already
 * on this machine is read in place: it is as durable as a copy would be, a copy would
 * double its disk use, and reading it directly sees a new commit without a fetch.
 */
export async function fetchSource(dataDir: string, w: ListedRepo, fetchTurn?: () => Promise<() => void>): Promise<{ path: string; defaultBranch?: string }> {
  const { connection, host } = w;
  const { repoId } = w.record;
  const { cloneUrl } = w.hostRepo;
  // The listing refused it already, unless it was listed elsewhere: a cluster's queued job,
  // from a leader whose configuration differs or which predates the check.
  const refusal = cloneUrlRefusal(connection, cloneUrl);
  if (refusal !== undefined) throw new Error(refusal);
  const local = localPath(cloneUrl);
  if (local !== undefined) {
    if (!isGitRepository(local)) throw new Error(`${local} is not a git repository (or no longer exists)`);
    return { path: local };
  }
  const credentials = host.gitCredentials();
  // A code host is fetched from `syncConcurrency` repositories at a time, however many are read at once.
  const release = await fetchTurn?.();
  try {
    return await syncMirror(cloneUrl, mirrorPath(dataDir, repoId), credentials ? { credentials } : {});
  } finally {
    release?.();
  }
}

/** The directory of a local clone URL (absolute path or file://), else undefined. */
function localPath(url: string): string | undefined {
  if (url.startsWith('file://')) return fileURLToPath(url);
  return isAbsolute(url) ? url : undefined;
}

export function mirrorPath(dataDir: string, repoId: number): string {
  return join(mirrorsDir(dataDir), `${repoId}.git`);
}
