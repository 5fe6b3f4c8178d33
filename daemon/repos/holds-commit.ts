// Whether a directory is a git repository that holds a given commit. A cluster node asks it
// of a repository's git source before reading that source itself instead of forwarding the
// request to the node that built the index (http/local-source.ts): a directory of that name
// that lacks the indexed commit is another repository, or a copy older than the index, and
// its answers would not be the ones the index was built from.

import NodeGit from 'nodegit';
import { isGitRepository } from './git-dir.ts';
import { withRepository } from './git-repo-cache.ts';

export async function holdsCommit(dir: string, commit: string): Promise<boolean> {
  // A plain file-system check first: most directories that are not the repository fail here.
  if (!isGitRepository(dir)) return false;
  try {
    return await withRepository(dir, async (repo) => (await NodeGit.Commit.lookup(repo, commit)).sha() === commit);
  } catch {
    // Unreadable, or the object is missing: not this repository at that commit.
    return false;
  }
}
