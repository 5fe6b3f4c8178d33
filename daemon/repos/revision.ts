// Revisions named in requests (`ref=` parameters), resolved to commits through libgit2's
// revparse after a syntax check that keeps git's option and range syntax out, and the
// branch and tag names of a repository by the commit they point at.
import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';

/**
 * The commit `ref` names, or the default branch's when `ref` is undefined. Accepted: branch
 * and tag names (annotated tags peeled), full ref names, full or abbreviated (4+ hex
 * digits) commit ids, HEAD, and revparse suffixes (`main~1`, `main^2`, `v1.0^{commit}`).
 * Anything else, or a name that does not resolve to a commit, is INVALID_GIT_REF.
 * `label` names the repository in messages.
 */
export async function resolveCommit(
  repo: NodeGit.Repository,
  ref: string | undefined,
  defaultRef: string,
  label?: string,
): Promise<NodeGit.Commit> {
  const where = label === undefined ? 'in this repository' : `in ${label}`;
  if (ref === undefined) {
    checkRefSyntax(defaultRef);
    // The default branch by its full name first: a tag called like the branch must not win
    // (git's own lookup order tries refs/tags before refs/heads).
    const commit =
      (await peelToCommit(repo, `refs/heads/${defaultRef}`).catch(() => undefined)) ??
      (await peelToCommit(repo, defaultRef).catch(() => undefined));
    if (commit === undefined) {
      throw new ServiceError('INVALID_GIT_REF', `the default branch ${quote(defaultRef)} does not resolve to a commit ${where}`);
    }
    return commit;
  }
  checkRefSyntax(ref);
  let obj: NodeGit.Object;
  try {
    obj = await NodeGit.Revparse.single(repo, ref);
  } catch (err) {
    // libgit2 says ENOTFOUND, EAMBIGUOUS (an abbreviation of several objects) or
    // EINVALIDSPEC; each means the request named no single commit.
    const ambiguous = (err as { errno?: number } | undefined)?.errno === -5;
    throw new ServiceError(
      'INVALID_GIT_REF',
      ambiguous ? `ref ${quote(ref)} is ambiguous ${where} (use more digits of the commit id)` : `ref ${quote(ref)} does not resolve to a commit ${where}`,
    );
  }
  const commit = await toCommit(repo, obj);
  if (commit === undefined) {
    throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} names a ${typeName(obj.type())}, not a commit, ${where}`);
  }
  return commit;
}

/**
 * Rejects what is not one revision, or could be read as something else by code that
 * hands refs on: an empty string, a leading "-" (an option to git), NUL, whitespace and
 * other control characters (never valid in ref names), ".." (a range; "..." too), ":"
 * and "{/" (`:/text` and `rev^{/text}` search commit messages through the whole history,
 * a cost a request should not be able to ask for; `rev:path` names a file, not a commit).
 */
function checkRefSyntax(ref: string): void {
  let problem: string | undefined;
  if (ref === '') problem = 'it is empty';
  else if (ref.startsWith('-')) problem = 'it must not start with "-"';
  else if (ref.includes('\0')) problem = 'it contains a NUL byte';
  else if (/[\s\x00-\x1f\x7f]/.test(ref)) problem = 'it contains whitespace or control characters';
  else if (ref.includes('..')) problem = 'ranges ("a..b") are not accepted, name one revision';
  else if (ref.includes(':') || ref.includes('{/')) problem = 'it contains ":" or a message search ("^{/text}")';
  if (problem !== undefined) throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} is not valid: ${problem}`);
}

async function peelToCommit(repo: NodeGit.Repository, spec: string): Promise<NodeGit.Commit | undefined> {
  return toCommit(repo, await NodeGit.Revparse.single(repo, spec));
}

/** The commit an object is or (through tag objects) points at; undefined for trees and blobs. */
async function toCommit(repo: NodeGit.Repository, obj: NodeGit.Object): Promise<NodeGit.Commit | undefined> {
  let id: NodeGit.Oid;
  if (obj.type() === NodeGit.Object.TYPE.COMMIT) id = obj.id();
  else if (obj.type() === NodeGit.Object.TYPE.TAG) {
    try {
      const peeled = await obj.peel(NodeGit.Object.TYPE.COMMIT);
      id = peeled.id();
    } catch {
      return undefined; // a tag of a tree or blob
    }
  } else return undefined;
  return NodeGit.Commit.lookup(repo, id);
}

function typeName(type: number): string {
  switch (type) {
    case NodeGit.Object.TYPE.TREE:
      return 'tree';
    case NodeGit.Object.TYPE.BLOB:
      return 'file';
    case NodeGit.Object.TYPE.TAG:
      return 'tag of a tree or file';
    default:
      return 'non-commit object';
  }
}

/** A ref as shown in messages: JSON-quoted (so control characters are visible), at most 100 characters. */
function quote(ref: string): string {
  return JSON.stringify(ref.length > 100 ? `${ref.slice(0, 100)}…` : ref);
}

/**
 * Commit id -> short names ("main", "v1.0") of the branches and tags pointing at it,
 * annotated tags peeled; each list sorted. Tags of trees and blobs are left out.
 */
export async function refNamesByCommit(repo: NodeGit.Repository): Promise<Map<string, string[]>> {
  const byCommit = new Map<string, string[]>();
  const add = (commit: string, name: string): void => {
    const names = byCommit.get(commit);
    if (names === undefined) byCommit.set(commit, [name]);
    else names.push(name);
  };
  const tags: NodeGit.Reference[] = [];
  // Symbolic references come back resolved (and named as their targets).
  for (const ref of await repo.getReferences()) {
    const name = ref.name();
    if (name.startsWith('refs/heads/')) add(ref.target().tostrS(), name.slice('refs/heads/'.length));
    else if (name.startsWith('refs/tags/')) tags.push(ref);
  }
  // A chunk of peels at a time: each is a native call; many at once keep libgit2's threads busy.
  for (let i = 0; i < tags.length; i += 64) {
    const peeled = await Promise.all(
      tags.slice(i, i + 64).map((ref) => ref.peel(NodeGit.Object.TYPE.COMMIT).then((o) => o.id().tostrS(), () => undefined)),
    );
    peeled.forEach((commit, j) => {
      if (commit !== undefined) add(commit, tags[i + j]!.name().slice('refs/tags/'.length));
    });
  }
  for (const names of byCommit.values()) names.sort(compareBytes);
  return byCommit;
}

/** Orders strings by their UTF-8 bytes, as git orders names. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
