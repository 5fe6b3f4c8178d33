// Whether this node can itself read what a browsing route reads of a repository, or must
// have another node run the request (forward.ts). One node alone always can: it lists only
// what it indexed. A node of a cluster lists every repository of the cluster (catalog.ts),
// and reads:
//
// - a directory from its index: every shard of the published index must be here
//   (Catalog.holdsIndex);
// - a git repository from the git source its builder indexed (CatalogRepo.source), when
//   that path is this node's to read: its own mirror of the repository (every node keeps
//   mirrors at the same place in its data dir, so with the same data-dir path on every
//   machine the builder's path is this node's mirror), or a repository read in place (a
//   `git` connection to a local path the nodes share: the record's clone URL is that path).
//   Another node's mirror is not, even where this node can see it (two nodes on one
//   machine): its owner removes or fetches into it when it likes. And the directory must
//   hold the commit the index was built at (its default branch's), or it is another
//   repository, or a copy older than the index.

import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdsCommit } from '../repos/holds-commit.ts';
import { mirrorPath } from '../sync/fetch-source.ts';
import type { Catalog, CatalogRepo } from './catalog.ts';

/** What a route reads: `git` (history: a directory has none, and is answered without reading) or `source` (git, or a directory's index). */
export type Reads = 'git' | 'source';

export async function readsHere(catalog: Catalog, dataDir: string, repo: CatalogRepo, reads: Reads): Promise<boolean> {
  if (repo.kind === 'directory') return reads === 'git' || catalog.holdsIndex(repo);
  const source = repo.source;
  if (source === undefined) return false;
  const own = resolve(source) === resolve(mirrorPath(dataDir, repo.repoId)) || inPlace(catalog.recordOf(repo.repoId)?.cloneUrl, source);
  if (!own) return false;
  const indexed = repo.refs[0]?.commit;
  return indexed !== undefined && (await holdsCommit(source, indexed));
}

/** Whether the repository is read where its clone URL points (a local path or file:// URL), and that is `source`. */
function inPlace(cloneUrl: string | undefined, source: string): boolean {
  if (cloneUrl === undefined) return false;
  let path: string | undefined;
  if (cloneUrl.startsWith('file://')) {
    try {
      path = fileURLToPath(cloneUrl);
    } catch {
      return false;
    }
  } else if (isAbsolute(cloneUrl)) path = cloneUrl;
  return path !== undefined && resolve(path) === resolve(source);
}
