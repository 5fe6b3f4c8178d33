// A repository's history as a git source the indexer builds like any other
// (index/indexer.ts): each commit of the walk (history-walk.ts) is a ref named by its id,
// the default branch's tip first, so that a file version's refs are the commits holding
// it and a search at a commit is a search of that ref (its branch lists: branch-set.ts).
// The refs are of kind 'branch' as the index knows kinds: a ref whose name is a commit id
// stands for that commit; nothing reads these refs as the repository's branches.

import type { GitRef, GitSource, GitVersion } from '../repos/git.ts';
import { readBlobSizes } from '../repos/git.ts';
import type { HistoryWalk } from './history-walk.ts';

/** The walk as a source; `defaultTip`: the default branch's commit, which leads the refs. */
export function historySource(gitDir: string, walk: HistoryWalk, defaultTip: string, committedAt: string | undefined): GitSource {
  // Ref i+1.. are the walk's commits in its order, the default tip moved to the front.
  const tipAt = walk.commits.indexOf(defaultTip);
  if (tipAt < 0) throw new Error(`history of ${gitDir}: the default branch's commit ${defaultTip} is not in its walk`);
  const order = [tipAt, ...walk.commits.keys()].filter((c, i) => i === 0 || c !== tipAt);
  const refOf = new Uint32Array(walk.commits.length);
  order.forEach((c, r) => {
    refOf[c] = r;
  });
  const refs: GitRef[] = order.map((c) => ({ name: walk.commits[c]!, kind: 'branch', commit: walk.commits[c]! }));
  let listed: Promise<GitVersion[]> | undefined;
  const source: GitSource = {
    name: gitDir,
    codeHostType: 'genericGitHost',
    branch: defaultTip,
    commit: defaultTip,
    refs,
    versions: () =>
      (listed ??= Promise.resolve(
        walk.versions.map((v) => ({
          path: v.path,
          oid: v.oid,
          refs: Array.from(v.commits, (c) => refOf[c]!).sort((a, b) => a - b),
        })),
      )),
    gitDir,
    blobSizes: (oids) => readBlobSizes(gitDir, gitDir, oids),
    close: () => {},
  };
  if (committedAt !== undefined) source.committedAt = committedAt;
  return source;
}
