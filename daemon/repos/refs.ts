// The branches and tags of a repository (a bare mirror or a working copy), with their
// commits: what git.ts selects the refs to index from.

import NodeGit from 'nodegit';
import { errorText } from '../errors.ts';

/** Every branch (refs/heads/*) and tag (refs/tags/*, annotated tags peeled to their commit) of a (bare or not) repository, with its commit id. */
export async function listRefs(repoPath: string): Promise<{ branches: Map<string, string>; tags: Map<string, string>; head?: string }> {
  let repo: NodeGit.Repository;
  try {
    repo = await NodeGit.Repository.open(repoPath);
  } catch (err) {
    throw new Error(`not a git repository: ${repoPath} (${errorText(err)})`, { cause: err });
  }
  try {
    const branches = new Map<string, string>();
    const tagRefs: NodeGit.Reference[] = [];
    // One native call for all references. Symbolic ones come back resolved and named as
    // their targets (refs/heads/alias -> refs/heads/main is seen as main).
    for (const ref of await repo.getReferences()) {
      const name = ref.name();
      if (name.startsWith('refs/heads/')) branches.set(name.slice('refs/heads/'.length), ref.target().tostrS());
      else if (name.startsWith('refs/tags/')) tagRefs.push(ref);
    }
    // A tag names a commit directly (lightweight) or through a tag object (annotated).
    const tags = new Map<string, string>();
    const commits = await peelToCommits(tagRefs);
    const peeled = tagRefs.map((ref, i): [string, string | undefined] => [ref.name().slice('refs/tags/'.length), commits[i]]);
    for (const [name, id] of peeled.sort(byName)) if (id !== undefined) tags.set(name, id);
    const sortedBranches = new Map([...branches].sort(byName));

    const result: { branches: Map<string, string>; tags: Map<string, string>; head?: string } = {
      branches: sortedBranches,
      tags,
    };
    const head = await headBranch(repo);
    if (head !== undefined && sortedBranches.has(head)) result.head = head;
    return result;
  } catch (err) {
    throw new Error(`repository ${repoPath}: cannot list references (${errorText(err)})`, { cause: err });
  } finally {
    repo.cleanup().catch(() => {});
  }
}

/**
 * The commit each reference names, following tag objects down to it (annotated tags);
 * undefined for a reference to a tree or blob, or one that cannot be read. A chunk of
 * peels at a time: each is a native call, and many at once keep libgit2's threads busy.
 */
export async function peelToCommits(refs: readonly NodeGit.Reference[]): Promise<Array<string | undefined>> {
  const out: Array<string | undefined> = [];
  for (let i = 0; i < refs.length; i += 64) {
    const chunk = refs.slice(i, i + 64);
    out.push(
      ...(await Promise.all(
        chunk.map((ref) =>
          ref.peel(NodeGit.Object.TYPE.COMMIT).then(
            (o) => o.id().tostrS(),
            () => undefined,
          ),
        ),
      )),
    );
  }
  return out;
}

function byName(a: [string, unknown], b: [string, unknown]): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
}

/** Short name of the branch HEAD points at; undefined when HEAD is detached or missing. */
async function headBranch(repo: NodeGit.Repository): Promise<string | undefined> {
  let head: NodeGit.Reference;
  try {
    head = await NodeGit.Reference.lookup(repo, 'HEAD');
  } catch {
    return undefined;
  }
  if (head.type() !== NodeGit.Reference.TYPE.SYMBOLIC) return undefined;
  const target = head.symbolicTarget();
  return target?.startsWith('refs/heads/') === true ? target.slice('refs/heads/'.length) : undefined;
}
