// A git repository as an index source: the files of the selected branches and tags, read
// from the object database (not the working tree), so that what is indexed is exactly a
// set of commits. A file whose blob is the same on several refs is one version, listed
// once with every ref that holds it.
import { availableParallelism } from 'node:os';
import { basename, resolve } from 'node:path';
import NodeGit from 'nodegit';
import { errorText } from '../errors.ts';
import { catFileAvailable, objectSizes } from './cat-file.ts';
import { isGitRepository } from './git-dir.ts';
import { compileRefGlob } from './glob.ts';
import type { CodeHostType } from './hosts/types.ts';
import { listRefs } from './refs.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { compareBytes } from './byte-order.ts';
import { treeEntries, type TreeEntries } from './tree-entries.ts';

/** A branch or tag selected for indexing, and the commit it points at. */
export interface GitRef {
  /** Short name: "main", "release/1.2", "v1.0". */
  name: string;
  kind: 'branch' | 'tag';
  commit: string;
}

/** One version of one file: a path and its blob, on the refs that hold exactly this blob there. */
export interface GitVersion {
  /** '/'-separated, relative to the repository root. */
  path: string;
  /** Blob id, 40 hex digits. */
  oid: string;
  /** Indexes into GitSource.refs, ascending. */
  refs: number[];
}

/** Which refs to index besides the default branch (which is always indexed). */
export interface RevisionSelection {
  /** Branch name globs (`*` matches any run of characters, `/` included). */
  branches?: string[];
  tags?: string[];
  /** The default branch as the code host names it; else the repository's HEAD. */
  defaultBranch?: string;
}

export interface GitSource {
  name: string;
  codeHostType: CodeHostType;
  remoteUrl?: string;
  /** The default branch's name (refs[0].name); "HEAD" when HEAD is detached. */
  branch: string;
  /** The default branch's commit. */
  commit: string;
  /** When that commit was made (its committer time, ISO 8601): the push time of a repository read from plain git. Undefined for a time Date cannot hold (a damaged commit). */
  committedAt?: string;
  /** refs[0] is the default branch; then branches, then tags, each sorted by name. */
  refs: GitRef[];
  /**
   * Every file version of the refs' trees, sorted by path bytes, then blob id. Listed on
   * the first call (a large tree takes about a second), so that a run that finds its refs
   * unmoved never reads a tree.
   */
  versions(): Promise<GitVersion[]>;
  /** The directory git reads (a work tree's or a bare repository's): build workers read blobs from it (cat-file.ts). */
  gitDir: string;
  /**
   * Sizes of the blobs, in order, from their headers (nothing is inflated), through `git
   * cat-file`; an error when git is not on PATH or a blob is missing.
   */
  blobSizes(oids: readonly string[]): Promise<number[]>;
  close(): void;
}

/**
 * Sizes of the blobs `oids` in the repository at `gitDir` (GitSource.blobSizes), from their
 * headers; `label` names the repository in errors.
 */
export async function readBlobSizes(label: string, gitDir: string, oids: readonly string[]): Promise<number[]> {
  if (!catFileAvailable()) throw new Error(`repository ${label}: indexing a git repository needs the git command on PATH`);
  let sizes: number[];
  try {
    sizes = await objectSizes(gitDir, oids);
  } catch (err) {
    throw new Error(`repository ${label}: cannot read the sizes of its blobs (${errorText(err)})`, { cause: err });
  }
  const missing = sizes.indexOf(-1);
  if (missing >= 0) throw new Error(`repository ${label}: cannot read blob ${oids[missing]} (missing)`);
  return sizes;
}

// nodegit locks a repository object for each call, so one handle reads one
// object at a time; separate handles on the same directory let libgit2 read the
// trees of a listing on several threads. (Blobs are read by git itself, cat-file.ts.)
const HANDLES = Math.max(1, Math.min(4, availableParallelism()));

/**
 * Opens the repository at `dir` and resolves the selected refs; versions() lists every
 * file version of their trees. Submodules and symlinks are skipped: neither has content of its own in
 * this repository.
 */
export async function openGitSource(dir: string, selection: RevisionSelection = {}): Promise<GitSource> {
  const absDir = resolve(dir);
  if (!isGitRepository(absDir)) throw new Error(`not a git repository: ${dir}`);
  let repo: NodeGit.Repository;
  try {
    repo = await NodeGit.Repository.open(absDir);
  } catch (err) {
    throw new Error(`not a git repository: ${dir} (${errorText(err)})`, { cause: err });
  }
  const refs = await selectRefs(repo, absDir, dir, selection);
  const tipTime = new Date((await NodeGit.Commit.lookup(repo, refs[0]!.commit)).time() * 1000);

  const remoteUrl = await originUrl(repo);
  const fromRemote = remoteUrl === undefined ? undefined : repoNameFromRemote(remoteUrl);
  const handles = new Handles([{ repo }]);
  for (let i = 1; i < HANDLES; i++) handles.add({ repo: await NodeGit.Repository.open(absDir) });
  let listed: Promise<GitVersion[]> | undefined;
  let closed = false;
  const source: GitSource = {
    name: fromRemote?.name ?? basename(absDir).replace(/\.git$/, ''),
    codeHostType: fromRemote?.codeHostType ?? 'genericGitHost',
    branch: refs[0]!.name,
    commit: refs[0]!.commit,
    refs,
    versions(): Promise<GitVersion[]> {
      if (closed) return Promise.reject(new Error(`git source ${dir} is closed`));
      listed ??= listVersions(handles, refs).catch((err: unknown) => {
        throw new Error(`repository ${dir}: cannot list the trees of ${refs.map((r) => r.name).join(', ')} (${errorText(err)})`, { cause: err });
      });
      return listed;
    },
    gitDir: absDir,
    async blobSizes(oids: readonly string[]): Promise<number[]> {
      if (closed) throw new Error(`git source ${dir} is closed`);
      return readBlobSizes(dir, absDir, oids);
    },
    close(): void {
      if (closed) return;
      closed = true;
      // Releases libgit2's caches and pack file handles now rather than at GC.
      for (const h of handles.all) h.repo.cleanup().catch(() => {});
    },
  };
  if (remoteUrl !== undefined) source.remoteUrl = remoteUrl;
  if (!Number.isNaN(tipTime.getTime())) source.committedAt = tipTime.toISOString();
  return source;
}

/**
 * The default branch first (the host's choice when it exists here, else HEAD), then the
 * branches and the tags matching the selection's globs. A tag named like a selected
 * branch is left out: `branch:` could not tell them apart.
 */
async function selectRefs(repo: NodeGit.Repository, absDir: string, dir: string, selection: RevisionSelection): Promise<GitRef[]> {
  const all = await listRefs(absDir);
  let head: GitRef;
  if (selection.defaultBranch !== undefined && all.branches.has(selection.defaultBranch)) {
    head = { name: selection.defaultBranch, kind: 'branch', commit: all.branches.get(selection.defaultBranch)! };
  } else {
    if (repo.headUnborn() === 1) throw new Error(`repository ${dir} has no commits (HEAD is unborn)`);
    const commit = await repo.getHeadCommit();
    if (commit === null) throw new Error(`repository ${dir}: cannot resolve HEAD to a commit`);
    const name = repo.headDetached() === 1 ? 'HEAD' : (await repo.head()).shorthand();
    head = { name, kind: 'branch', commit: commit.sha() };
  }
  const refs: GitRef[] = [head];
  const taken = new Set([head.name]);
  const pick = (names: Map<string, string>, globs: string[] | undefined, kind: GitRef['kind']): void => {
    if (!globs || globs.length === 0) return;
    const patterns = globs.map(compileRefGlob);
    for (const name of [...names.keys()].sort()) {
      if (taken.has(name) || !patterns.some((p) => p.test(name))) continue;
      taken.add(name);
      refs.push({ name, kind, commit: names.get(name)! });
    }
  };
  pick(all.branches, selection.branches, 'branch');
  pick(all.tags, selection.tags, 'tag');
  return refs;
}

async function originUrl(repo: NodeGit.Repository): Promise<string | undefined> {
  try {
    const url = (await NodeGit.Remote.lookup(repo, 'origin')).url();
    return url === '' ? undefined : url;
  } catch {
    return undefined; // no remote named origin
  }
}

interface Handle {
  repo: NodeGit.Repository;
}

/** Hands each call to the repository handle with the fewest calls pending. */
class Handles {
  readonly all: Handle[];
  private readonly pending: number[];

  constructor(initial: Handle[]) {
    this.all = initial.slice();
    this.pending = initial.map(() => 0);
  }

  add(h: Handle): void {
    this.all.push(h);
    this.pending.push(0);
  }

  async use<T>(fn: (h: Handle) => Promise<T>): Promise<T> {
    let best = 0;
    for (let i = 1; i < this.pending.length; i++) if (this.pending[i]! < this.pending[best]!) best = i;
    this.pending[best]!++;
    try {
      return await fn(this.all[best]!);
    } finally {
      this.pending[best]!--;
    }
  }
}

/**
 * Every file version of the refs' trees, sorted by path bytes, then blob id. No sizes: tree
 * entries carry none and nodegit does not expose libgit2's header-only read
 * (git_odb_read_header); blobSizes asks git for them.
 *
 * First every tree the refs hold is read, level by level, each level's reads together on
 * the handles; tree-entries.ts keeps them between listings, so that after a push only the
 * trees it made are read. Then the trees are walked without waiting. Git orders a tree's
 * entries by name, a subtree's name compared as if it ended in "/", so a walk in that order
 * gives one ref's paths in byte order: its listing needs no sort (it is checked, and sorted
 * if a malformed tree broke the order). With several refs a subtree is walked once per
 * (path, tree id) however many refs hold it, so refs that share most of their tree
 * (branches of one repository) cost little more than one, and a version is listed once
 * with every ref that holds it.
 */
async function listVersions(handles: Handles, refs: GitRef[]): Promise<GitVersion[]> {
  const lookup = (id: string) => handles.use((h) => NodeGit.Tree.lookup(h.repo, id));
  const roots: string[] = [];
  for (const ref of refs) roots.push((await handles.use((h) => NodeGit.Commit.lookup(h.repo, ref.commit))).treeId().tostrS());
  const trees = new Map<string, TreeEntries>();
  let level = [...new Set(roots)];
  while (level.length > 0) {
    const read = await Promise.all(level.map((id) => treeEntries(id, lookup)));
    const below = new Set<string>();
    read.forEach((t, i) => {
      trees.set(level[i]!, t);
      for (let e = 0; e < t.names.length; e++) if (t.isTree[e]) below.add(t.oids[e]!);
    });
    level = [...below].filter((id) => !trees.has(id));
  }

  const one = refs.length === 1;
  const versions: GitVersion[] = [];
  const byKey = new Map<string, GitVersion>();
  const walked = new Map<string, GitVersion[]>();
  // Depth first, each tree in its order, with a stack of the trees being walked: the walk of
  // a large tree runs on the thread that serves requests, in time slices (runtime/time-slices.ts).
  let steps = 0;
  const walk = async (rootId: string): Promise<GitVersion[]> => {
    const out: GitVersion[] = [];
    const stack: Array<{ prefix: string; tree: TreeEntries; next: number; from: number; key: string }> = [];
    const enter = (prefix: string, treeId: string): void => {
      const key = one ? '' : `${prefix}\0${treeId}`;
      const done = one ? undefined : walked.get(key);
      if (done) for (const v of done) out.push(v);
      else stack.push({ prefix, tree: trees.get(treeId)!, next: 0, from: out.length, key });
    };
    enter('', rootId);
    while (stack.length > 0) {
      if ((++steps & 1023) === 0 && sliceUsed()) await nextSlice();
      const at = stack[stack.length - 1]!;
      const { tree } = at;
      if (at.next === tree.names.length) {
        stack.pop();
        if (!one) walked.set(at.key, out.slice(at.from));
        continue;
      }
      const e = at.next++;
      const path = at.prefix + tree.names[e]!;
      const oid = tree.oids[e]!;
      if (tree.isTree[e]) {
        enter(`${path}/`, oid);
        continue;
      }
      let v = one ? undefined : byKey.get(`${path}\0${oid}`);
      if (v === undefined) {
        v = { path, oid, refs: [] };
        versions.push(v);
        if (!one) byKey.set(`${path}\0${oid}`, v);
      }
      out.push(v);
    }
    return out;
  };
  for (let r = 0; r < refs.length; r++) for (const v of await walk(roots[r]!)) v.refs.push(r);
  const order = (a: GitVersion, b: GitVersion) => compareBytes(a.path, b.path) || (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0);
  let sorted = one;
  for (let i = 1; sorted && i < versions.length; i++) sorted = order(versions[i - 1]!, versions[i]!) < 0;
  return sorted ? versions : versions.sort(order);
}

/**
 * Repository name in host/path form ("github.com/org/repo") for a remote
 * URL, the way code hosts name repositories in links; undefined for local
 * paths and file:// URLs, which name no host. Credentials, ports and a
 * trailing ".git" are dropped, and host-specific path decorations (Azure's
 * "_git/", Bitbucket Server's "scm/", Gerrit's "a/") are removed so that the
 * HTTPS and SSH remotes of one repository give the same name.
 */
export function repoNameFromRemote(url: string): { name: string; codeHostType: CodeHostType } | undefined {
  const parsed = splitRemote(url.trim());
  if (parsed === undefined) return undefined;
  let host = parsed.host.toLowerCase();
  let segments = parsed.path.split('/').filter((s) => s !== '' && s !== '.');
  const last = segments.length - 1;
  if (last >= 0 && segments[last]!.endsWith('.git')) segments[last] = segments[last]!.slice(0, -4);
  segments = segments.filter((s) => s !== '');

  const type = codeHostType(host);
  if (type === 'azuredevops') {
    // ssh.dev.azure.com:v3/org/project/repo, vs-ssh.visualstudio.com:v3/org/project/repo
    if (segments[0] === 'v3' && (host === 'ssh.dev.azure.com' || host === 'vs-ssh.visualstudio.com')) {
      segments = segments.slice(1);
      host = host === 'ssh.dev.azure.com' ? 'dev.azure.com' : `${segments.shift() ?? ''}.visualstudio.com`;
    }
    segments = segments.filter((s) => s !== '_git');
  } else if (type === 'bitbucketServer' && segments[0] === 'scm') {
    segments = segments.slice(1);
  } else if (type === 'gerrit' && segments[0] === 'a') {
    segments = segments.slice(1);
  }
  if (segments.length === 0 || host === '') return undefined;
  return { name: `${host}/${segments.join('/')}`, codeHostType: type };
}

const REMOTE_SCHEMES = new Set(['http', 'https', 'ssh', 'git', 'git+ssh', 'ssh+git', 'git+https', 'git+http']);

/** Host and path of a URL or of scp-like syntax ("user@host:path"). */
function splitRemote(url: string): { host: string; path: string } | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url);
  if (scheme !== null) {
    if (!REMOTE_SCHEMES.has(scheme[1]!.toLowerCase())) return undefined; // file:// and the like
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    let path = u.pathname;
    try {
      path = decodeURIComponent(path);
    } catch {
      // keep it encoded
    }
    return { host: stripBrackets(u.hostname), path };
  }
  // scp-like syntax only when a colon comes before the first slash, as git
  // decides it; a single letter before the colon is a Windows drive.
  const scp = /^(?:[^@/]+@)?(\[[^\]]+\]|[^:/]+):(.*)$/.exec(url);
  if (scp === null || scp[1]!.length < 2) return undefined;
  return { host: stripBrackets(scp[1]!), path: scp[2]! };
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function codeHostType(host: string): CodeHostType {
  if (host === 'github.com' || host.startsWith('github.')) return 'github';
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return 'gitlab';
  if (host === 'bitbucket.org') return 'bitbucketCloud';
  if (host.startsWith('bitbucket.')) return 'bitbucketServer';
  if (host === 'dev.azure.com' || host === 'ssh.dev.azure.com' || host.endsWith('.visualstudio.com')) return 'azuredevops';
  if (host === 'gitea.com' || host === 'codeberg.org' || host.startsWith('gitea.')) return 'gitea';
  if (host.endsWith('.googlesource.com') || host.startsWith('gerrit.') || host.startsWith('review.')) return 'gerrit';
  return 'genericGitHost';
}
