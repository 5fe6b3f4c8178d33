// Repositories a sync finds up to date without opening them: the refs stamp their index
// recorded is their source's still (repos/ref-stamp.ts), and the index is sound and lacks
// nothing (stampedIndex). Their records are written together when the pass ends
// (UnchangedRecords), since most repositories of a pass are usually these.

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../index/data-dir.ts';
import { indexProblem, type HeaderChecks } from '../index/index-health.ts';
import { sameRepo } from '../index/indexer.ts';
import { loadManifest, symbolsPending, type Manifest, type ManifestRepo } from '../index/manifest.ts';
import type { Logger } from '../runtime/logger.ts';
import type { RepoRecord, Store } from '../store/store.ts';

/**
 * The repository's index when its source's refs stamp is the one it was built from, it is
 * sound, holds the same metadata, lacks nothing (its symbols, when wanted) and no run left
 * its lock: then nothing is to be done, and the repository is not even opened. Undefined
 * otherwise.
 */
export function stampedIndex(
  dataDir: string,
  repoId: number,
  wanted: { stamp: (recorded: string) => boolean; repo: ManifestRepo; symbols: boolean },
  headers: HeaderChecks,
): Manifest | undefined {
  const { stamp, repo, symbols } = wanted;
  // A lock left by a run that was killed (or one running now): the whole way, which takes it
  // over and removes what that run left.
  if (existsSync(join(shardsDir(dataDir, repoId), 'lock'))) return undefined;
  const m = loadManifest(dataDir, repoId);
  if (m === undefined || 'unreadable' in m || m.version !== 2 || m.sourceStamp === undefined || !stamp(m.sourceStamp)) return undefined;
  if (m.subset || (symbols && symbolsPending(m))) return undefined;
  // The tip's commit time comes with the refs, which the stamp says did not move.
  const { committedAt: _c, ...indexed } = m.repo;
  if (!sameRepo(indexed, repo)) return undefined;
  return indexProblem(dataDir, m, headers) === undefined ? m : undefined;
}

/**
 * The records of the repositories a pass found up to date by their ref stamps, written
 * together when it ends, a thousand to a transaction rather than one each (a transaction
 * each took a large part of a pass that changed nothing). A pass stopped before then leaves
 * them as they were: they said what is still true but the time.
 */
export class UnchangedRecords {
  #pending: Array<{ repoId: number; patch: Partial<RepoRecord> }> = [];

  add(repoId: number, patch: Partial<RepoRecord>): void {
    this.#pending.push({ repoId, patch });
  }

  async write(store: Store, log: Logger): Promise<void> {
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length; i += 1000) {
      const chunk = pending.slice(i, i + 1000);
      try {
        await store.atomically(async () => {
          for (const { repoId, patch } of chunk) await store.updateRepo(repoId, patch);
        });
      } catch (err) {
        log.warn(
          { repos: chunk.length, err: (err as Error).message },
          'recording the repositories found up to date failed; their records keep the previous pass',
        );
      }
    }
  }
}
