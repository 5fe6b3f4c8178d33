// Revisions named in requests (`ref=` parameters), resolved to commits through libgit2's
// revparse after a syntax check that keeps git's option and range syntax out, and the
// refs of a repository by the commit they point at (git's %D decoration).
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

/** How git's log shows a ref it decorates by default (git 2.39: branches, remote-tracking branches, tags and the stash; no notes, no other namespaces); undefined for the others. */
function decoration(name: string): string | undefined {
  if (name.startsWith('refs/heads/')) return name.slice('refs/heads/'.length);
  if (name.startsWith('refs/remotes/')) return name.slice('refs/remotes/'.length);
  if (name.startsWith('refs/tags/')) return `tag: ${name.slice('refs/tags/'.length)}`;
  return name === 'refs/stash' ? name : undefined;
}

/**
 * Commit id -> the refs pointing at it as git's `%D` decoration, as `git log --format=%D`
 * prints it: "HEAD -> main" first when HEAD is on a branch at this commit ("HEAD" alone
 * when detached here), then the others by full ref name, descending (tags, then
 * remote-tracking branches, then branches), annotated tags peeled. Tags of trees and
 * blobs are left out. Sourcebot answers `refs` in this form (API-DETAILS.md section 4).
 */
export async function decorationsByCommit(repo: NodeGit.Repository): Promise<Map<string, string>> {
  // getReferences resolves symbolic refs and names them as their targets; the names of
  // the symbolic ones (refs/remotes/origin/HEAD) come from the list of names, resolved one
  // by one (there are few).
  const [names, refs] = await Promise.all([NodeGit.Reference.list(repo), repo.getReferences()]);
  const direct = new Map<string, NodeGit.Reference>();
  for (const ref of refs) direct.set(ref.name(), ref);
  const found: Array<{ name: string; commit: Promise<string | undefined> }> = [];
  const tagsToPeel: Array<{ name: string; ref: NodeGit.Reference }> = [];
  for (const name of names) {
    if (decoration(name) === undefined) continue;
    const ref = direct.get(name);
    if (ref === undefined) found.push({ name, commit: NodeGit.Reference.nameToId(repo, name).then((id) => id.tostrS(), () => undefined) });
    else if (name.startsWith('refs/tags/')) tagsToPeel.push({ name, ref });
    else found.push({ name, commit: Promise.resolve(ref.target().tostrS()) });
  }
  // A chunk of peels at a time: each is a native call; many at once keep libgit2's threads busy.
  for (let i = 0; i < tagsToPeel.length; i += 64) {
    const chunk = tagsToPeel.slice(i, i + 64);
    const peeled = await Promise.all(chunk.map(({ ref }) => ref.peel(NodeGit.Object.TYPE.COMMIT).then((o) => o.id().tostrS(), () => undefined)));
    chunk.forEach(({ name }, j) => found.push({ name, commit: Promise.resolve(peeled[j]) }));
  }
  const byCommit = new Map<string, string[]>();
  const commits = await Promise.all(found.map((f) => f.commit));
  found.forEach(({ name }, i) => {
    const commit = commits[i];
    if (commit === undefined) return;
    const list = byCommit.get(commit);
    if (list === undefined) byCommit.set(commit, [name]);
    else list.push(name);
  });
  const head = await headState(repo);
  const out = new Map<string, string>();
  for (const [commit, list] of byCommit) {
    list.sort((a, b) => compareBytes(b, a));
    let first: string | undefined;
    if (head !== undefined && head.commit === commit) {
      const onBranch = head.branch !== undefined && list.includes(head.branch);
      first = onBranch ? `HEAD -> ${decoration(head.branch!)}` : 'HEAD';
      if (onBranch) list.splice(list.indexOf(head.branch!), 1);
    }
    const shown = list.map((name) => decoration(name)!);
    out.set(commit, (first === undefined ? shown : [first, ...shown]).join(', '));
  }
  if (head !== undefined && !out.has(head.commit)) out.set(head.commit, 'HEAD'); // detached at a commit no ref names
  return out;
}

/** HEAD's commit, and the branch it is on (undefined when detached); undefined when HEAD is unborn or unreadable. */
async function headState(repo: NodeGit.Repository): Promise<{ commit: string; branch?: string } | undefined> {
  try {
    const head = await NodeGit.Reference.lookup(repo, 'HEAD');
    const branch = head.symbolicTarget();
    if (branch === undefined || branch === '') return { commit: head.target().tostrS() };
    const commit = (await NodeGit.Reference.nameToId(repo, branch)).tostrS();
    return { commit, branch };
  } catch {
    return undefined;
  }
}

/** Orders strings by their UTF-8 bytes, as git orders names. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
