// Repositories indexed from a local path (`trawl index PATH`): registered in the embedded
// store under the name the indexer detects (origin remote's host/path, else the directory's
// base name) or the one the operator gives, and marked indexed when the run succeeds.

import { indexPath, type IndexOptions, type RegisterRepo } from '../index/indexer.ts';
import { localRepoMeta } from '../index/detect-repo.ts';
import type { IndexSummary } from '../index/index-summary.ts';
import { openStore } from '../store/open.ts';
import type { Store } from '../store/store.ts';
import { displayName } from '../repos/web-urls.ts';
import { readManifest } from '../index/manifest.ts';
import { syncHistory, type HistorySummary } from '../history/history-index.ts';

export interface LocalIndexOptions extends Omit<IndexOptions, 'register'> {
  /** Repository name instead of the detected one. */
  name?: string;
  /** An open store; default: the data dir's embedded store, opened for this call. */
  store?: Store;
}

export async function indexLocal(path: string, options: LocalIndexOptions): Promise<IndexSummary> {
  const store = options.store ?? openStore(options.dataDir);
  try {
    const summary = await indexPath(path, { ...options, register: registerLocal(store, options.name) });
    const now = new Date().toISOString();
    await store.updateRepo(summary.repoId, {
      state: 'indexed',
      indexedAt: summary.mode === 'unchanged' ? ((await store.getRepo(summary.repoId))?.indexedAt ?? now) : now,
      lastSuccessAt: now,
      failures: 0,
      lastError: undefined,
      lastErrorAt: undefined,
      nextAttemptAt: undefined,
      indexedRefs: summary.refs,
    });
    return summary;
  } finally {
    if (!options.store) await store.close();
  }
}

/** Registers (or finds) the repository in the store; local repositories are public. */
export function registerLocal(store: Store, name?: string): RegisterRepo {
  return async (d) => {
    const repoName = name ?? d.name;
    const external = d.codeHostType !== 'genericGitHost' && repoName.includes('/') ? `https://${repoName}` : undefined;
    const rec = await store.upsertRepo({
      repoName,
      displayName: displayName(repoName),
      codeHostType: d.codeHostType,
      cloneUrl: d.source,
      isFork: false,
      isArchived: false,
      visibility: 'public',
      defaultBranch: d.defaultBranch,
      ...(external ? { externalWebUrl: external } : {}),
    });
    const repo = localRepoMeta(d, repoName);
    if (external) repo.externalWebUrl = external;
    return { repoId: rec.repoId, repo };
  };
}

/**
 * Indexes the history of a repository `trawl index --history` just indexed (history/
 * history-index.ts): every commit its indexed refs reach; 'unchanged' when it holds them all.
 */
export async function indexLocalHistory(
  summary: IndexSummary,
  options: Pick<LocalIndexOptions, 'dataDir' | 'maxFileSize' | 'workers' | 'symbols'> & { maxCommits?: number },
): Promise<HistorySummary | 'unchanged'> {
  if (summary.kind !== 'git') throw new Error(`${summary.source} is not a git repository: it has no history to index`);
  const manifest = readManifest(options.dataDir, summary.repoId);
  if (manifest?.repo === undefined) throw new Error(`${summary.source}: its index is not readable`);
  const done = await syncHistory({
    enabled: true,
    dataDir: options.dataDir,
    repoId: summary.repoId,
    repo: manifest.repo,
    gitDir: summary.source,
    refs: summary.refs,
    ...(options.maxCommits !== undefined ? { maxCommits: options.maxCommits } : {}),
    ...(options.maxFileSize !== undefined ? { maxFileSize: options.maxFileSize } : {}),
    ...(options.workers !== undefined ? { workers: options.workers } : {}),
    ...(options.symbols !== undefined ? { symbols: options.symbols } : {}),
  });
  if (done === 'retired') throw new Error('internal: a history enabled was retired');
  return done;
}
