// Revisions named in requests (`ref=` parameters), resolved to commits: only what the
// repository serves, its indexed branches, its tags and the commits they reach (ids
// checked by reachable.ts), never what the reflog or an unreachable object still holds;
// and the refs of a repository by the commit they point at (git's %D decoration).
import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';
import { reachableCommit, type IndexedRefs } from './reachable.ts';
import { peelToCommits } from './refs.ts';
import { compareBytes } from './byte-order.ts';
import { commitIdForm, MIN_ID_DIGITS, parseRevision, quoteRef as quote } from './revision-syntax.ts';

/** Which repository a revision is read in, as the readers are told it. */
export interface RevisionScope {
  /** The repository's default branch name (its index's first ref). */
  defaultRef: string;
  /** Names the repository in error messages ("github.com/acme/app"). */
  label?: string;
  /** The refs the repository's index holds: the names a request may use, and where the ids it names must be reachable from. */
  indexed: IndexedRefs;
}

export interface RevisionOptions extends RevisionScope {
  /** An indexed branch, a tag, HEAD or a commit id, optionally with `~N`/`^N` steps; undefined: the default branch. */
  ref?: string;
}

/**
 * The commit `ref` names, or the default branch's when `ref` is undefined. Accepted: HEAD
 * (the default branch), the name of an indexed branch or of a tag (short or full:
 * `refs/heads/dev`, `refs/tags/v1`; annotated tags peeled), a commit id of 40 or at least
 * MIN_ID_DIGITS hex digits whose commit the indexed branches or the tags reach, each
 * optionally followed by ancestor steps (`main~1`, `main^2`, `v1.0^{commit}`). Anything
 * else is INVALID_GIT_REF; an unreachable commit gets the message of a missing one, so
 * that the answer does not tell which ids the object database still holds.
 */
export async function resolveCommit(repo: NodeGit.Repository, ref: string | undefined, scope: RevisionScope): Promise<NodeGit.Commit> {
  const where = scope.label === undefined ? 'in this repository' : `in ${scope.label}`;
  if (ref === undefined) return defaultCommit(repo, scope, where);
  const { base, suffix } = parseRevision(ref);
  const form = commitIdForm(base);
  const asked: Asked = { ref, scope, where };
  const commit =
    (form === 'full' ? undefined : await namedCommit(repo, base, asked)) ?? (form === undefined ? undefined : await commitById(repo, base, form, asked));
  if (commit === undefined) throw unknownName(ref, base, scope, where);
  if (suffix === '') return commit;
  // Ancestor steps from a commit the refs reach reach only commits they reach too.
  let obj: NodeGit.Object;
  try {
    obj = await NodeGit.Revparse.single(repo, commit.sha() + suffix);
  } catch {
    throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} does not resolve to a commit ${where}`);
  }
  const stepped = await toCommit(repo, obj);
  if (stepped === undefined) throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} names a ${typeName(obj.type())}, not a commit, ${where}`);
  return stepped;
}

/** The default branch's commit: the branch by its full name (a tag called like it must not win), or HEAD when the index read a detached HEAD. */
async function defaultCommit(repo: NodeGit.Repository, scope: RevisionScope, where: string): Promise<NodeGit.Commit> {
  const commit = await refCommit(repo, scope.defaultRef === 'HEAD' ? 'HEAD' : `refs/heads/${scope.defaultRef}`);
  if (commit === undefined || commit === 'no commit')
    throw new ServiceError('INVALID_GIT_REF', `the default branch ${quote(scope.defaultRef)} does not resolve to a commit ${where}`);
  return commit;
}

/** A revision as asked for: the `ref` parameter, the repository's scope, and how errors name the repository ("in github.com/acme/app"). */
interface Asked {
  ref: string;
  scope: RevisionScope;
  where: string;
}

/** The commit of HEAD, an indexed branch or a tag named `base`; undefined when it names none of them. */
async function namedCommit(repo: NodeGit.Repository, base: string, asked: Asked): Promise<NodeGit.Commit | undefined> {
  const { ref, scope, where } = asked;
  if (base === 'HEAD') return defaultCommit(repo, scope, where);
  const branch = base.startsWith('refs/heads/') ? base.slice('refs/heads/'.length) : base;
  // An indexed branch before a tag of the same name, as the index names them (git.ts leaves such a tag out).
  const indexedBranch = scope.indexed.refs.some((r) => r.kind === 'branch' && r.name === branch && r.name !== 'HEAD');
  const full = indexedBranch ? `refs/heads/${branch}` : base.startsWith('refs/tags/') ? base : base.startsWith('refs/') ? undefined : `refs/tags/${base}`;
  const commit = full === undefined ? undefined : await refCommit(repo, full);
  if (commit === 'no commit') throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} names a tag of a tree or file, not a commit, ${where}`);
  return commit;
}

/** The commit the full ref name `name` points at (through symbolic refs and tag objects); 'no commit' for a tag of a tree or file; undefined when there is no such ref. */
async function refCommit(repo: NodeGit.Repository, name: string): Promise<NodeGit.Commit | 'no commit' | undefined> {
  const ref = await NodeGit.Reference.lookup(repo, name).catch(() => undefined);
  if (ref === undefined) return undefined;
  const [id] = await peelToCommits([ref]);
  return id === undefined ? 'no commit' : NodeGit.Commit.lookup(repo, id);
}

/** The commit of a commit id (or a tag object's), when the indexed refs reach it; undefined when the id names no such commit. */
async function commitById(repo: NodeGit.Repository, base: string, form: 'full' | 'abbreviated', asked: Asked): Promise<NodeGit.Commit | undefined> {
  const { ref, scope, where } = asked;
  const hex = base.toLowerCase();
  let obj: NodeGit.Object;
  try {
    const oid = NodeGit.Oid.fromString(hex.padEnd(40, '0'));
    obj =
      form === 'full'
        ? await NodeGit.Object.lookup(repo, oid, NodeGit.Object.TYPE.ANY)
        : await NodeGit.Object.lookupPrefix(repo, oid, hex.length, NodeGit.Object.TYPE.ANY);
  } catch (err) {
    // libgit2 says EAMBIGUOUS (-5) for a prefix of several objects, ENOTFOUND for none.
    if ((err as { errno?: number } | undefined)?.errno === -5) {
      throw new ServiceError('INVALID_GIT_REF', `ref ${quote(ref)} is ambiguous ${where} (use more digits of the commit id)`);
    }
    return undefined;
  }
  const commit = await toCommit(repo, obj);
  if (commit === undefined) return undefined;
  const reached = await reachableCommit(repo, scope.indexed, commit.sha()).catch(() => false);
  return reached ? commit : undefined;
}

/** INVALID_GIT_REF for a base that names no indexed branch, tag or reachable commit, saying what would. */
function unknownName(ref: string, base: string, scope: RevisionScope, where: string): ServiceError {
  const branches = scope.indexed.refs.filter((r) => r.kind === 'branch').map((r) => r.name);
  const shown = branches.length > 10 ? `${branches.slice(0, 10).join(', ')}, …` : branches.join(', ');
  const hint = /^[0-9a-fA-F]+$/.test(base) && base.length < MIN_ID_DIGITS ? ` (a commit id needs at least ${MIN_ID_DIGITS} hex digits)` : '';
  return new ServiceError(
    'INVALID_GIT_REF',
    `ref ${quote(ref)} does not resolve to a commit ${where}${hint}: name an indexed branch (${shown}), a tag, or the id of a commit they reach`,
  );
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
 * blobs are left out. Sourcebot answers `refs` in this form (docs/http-api.md section 13).
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
    if (ref === undefined)
      found.push({
        name,
        commit: NodeGit.Reference.nameToId(repo, name).then(
          (id) => id.tostrS(),
          () => undefined,
        ),
      });
    else if (name.startsWith('refs/tags/')) tagsToPeel.push({ name, ref });
    else found.push({ name, commit: Promise.resolve(ref.target().tostrS()) });
  }
  const peeled = await peelToCommits(tagsToPeel.map((t) => t.ref));
  tagsToPeel.forEach(({ name }, j) => found.push({ name, commit: Promise.resolve(peeled[j]) }));
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
