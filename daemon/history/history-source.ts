// A repository's history as a git source the indexer builds like any other
// (index/indexer.ts): each commit of the walk (history-walk.ts) is a ref named by its id,
// the default branch's tip first, so that a file version's refs are the commits holding
// it and a search at a commit is a search of that ref (its branch lists: branch-set.ts).
// The refs are of kind 'branch' as the index knows kinds: a ref whose name is a commit id
// stands for that commit; nothing reads these refs as the repository's branches.

import type { GitRef, GitSource, GitVersion } from '../repos/git.ts';
import { readBlobSizes } from '../repos/git.ts';
import type { HistoryVersion, HistoryWalk } from './history-walk.ts';

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
    versions: () => (listed ??= Promise.resolve(newestFirst(walk.versions).map((v) => ({ path: v.path, oid: v.oid, refs: refsOf(v.commits, refOf) })))),
    gitDir,
    blobSizes: (oids) => readBlobSizes(gitDir, gitDir, oids),
    close: () => {},
  };
  if (committedAt !== undefined) source.committedAt = committedAt;
  return source;
}

/**
 * The versions (sorted by path, then blob id) with each path's versions newest first: by
 * the first commit holding each, latest first (the walk's commits are parents first), then
 * blob id. The shard builder keeps a path's versions in the order it is given them and
 * stores each as a delta against the one before it (index/version-deltas.ts): consecutive
 * versions are the ones that differ least, and a path's newest version starts its first
 * chain, stored whole, as git packs do. The versions read most (those near the tips, the
 * newest matching one a `history:yes` shows) are then the ones with the fewest deltas to
 * apply; the bytes stored are about the same either way round.
 */
function newestFirst(versions: readonly HistoryVersion[]): HistoryVersion[] {
  const out = versions.slice();
  for (let i = 0; i < out.length; ) {
    let end = i + 1;
    while (end < out.length && out[end]!.path === out[i]!.path) end++;
    if (end - i > 1) {
      const run = out.slice(i, end).sort((a, b) => b.commits[0]! - a.commits[0]! || (a.oid < b.oid ? 1 : a.oid > b.oid ? -1 : 0));
      out.splice(i, end - i, ...run);
    }
    i = end;
  }
  return out;
}

/**
 * A version's refs, ascending: its commits (ascending) mapped to their refs, which keeps
 * them in order but for the default tip's ref 0, moved to the front (no sort: a history's
 * versions hold millions of refs in all).
 */
function refsOf(commits: readonly number[], refOf: Uint32Array): number[] {
  const refs = Array.from(commits, (c) => refOf[c]!);
  const tip = refs.indexOf(0);
  if (tip > 0) {
    refs.copyWithin(1, 0, tip);
    refs[0] = 0;
  }
  return refs;
}
