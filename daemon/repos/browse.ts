// Reading a commit's files for browsing: one file's content, every file's path, and
// directory listings. Everything comes from the object database (never a work tree), so
// bare mirrors and work trees read the same. Paths are '/'-separated and relative to the
// repository root; listings order names by their UTF-8 bytes, as git does.
//
// A listing reads every entry of the trees it walks on the thread that serves every
// request (nodegit's entry accessors are synchronous): it does so in time slices
// (runtime/time-slices.ts), so that a repository of 10^5 files holds that thread for a
// slice at a time, not for the whole walk.
//
// Tree entry kinds by git file mode: 040000 directory, 100644/100755 file, 120000 symlink
// (its blob holds the link target), 160000 submodule (a commit id of another repository,
// with no content here). Submodules are left out of listings: they have no content to
// open and no type in the result shapes; opening one is FILE_NOT_FOUND saying so.
import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { blobSize, fileTooLarge } from './blob-size.ts';
import { withRepository } from './git-repo-cache.ts';
import { checkRepoPath } from './repo-path.ts';
import { resolveCommit, type RevisionOptions } from './revision.ts';

/**
 * A revision to read, and optionally the commit it resolved to: what resolveRevision
 * returned for these very options (checked there), not resolved again.
 */
export interface ResolvedRevision extends RevisionOptions {
  commit?: string;
}

export interface SourceFile {
  source: Buffer;
  blobSha: string;
  path: string;
  /** The commit the ref resolved to. */
  commit: string;
}

export interface FileEntry {
  type: 'blob';
  path: string;
  name: string;
}

export interface FolderEntry {
  type: 'tree' | 'blob';
  path: string;
  name: string;
}

export interface TreeNode extends FolderEntry {
  children: TreeNode[];
}

const MODE_TYPE_MASK = 0o170000;
const MODE_TREE = 0o040000;
const MODE_BLOB = 0o100000;
const MODE_LINK = 0o120000;
const MODE_GITLINK = 0o160000;

/**
 * The content of the file (or symlink: its target text) at `path`. With `maxBytes`, a
 * larger file is FILE_TOO_LARGE, found from its size alone (blob-size.ts): never loaded.
 */
export async function readSource(dir: string, options: ResolvedRevision & { path: string; maxBytes?: number }): Promise<SourceFile> {
  const path = checkRepoPath(options.path, { allowEmpty: false });
  return withRepository(dir, async (repo) => {
    const commit = await commitOf(repo, options);
    const tree = await NodeGit.Tree.lookup(repo, commit.treeId());
    const entry = await entryAt(tree, path);
    const kind = entry === undefined ? undefined : entry.filemode() & MODE_TYPE_MASK;
    if (entry === undefined || (kind !== MODE_BLOB && kind !== MODE_LINK)) {
      const what =
        kind === MODE_TREE ? 'is a directory, not a file' : kind === MODE_GITLINK ? 'is a submodule (its files are in another repository)' : 'does not exist';
      throw new ServiceError('FILE_NOT_FOUND', `${quotePath(path)} ${what} ${where(options)}`);
    }
    if (options.maxBytes !== undefined) {
      const size = await blobSize(repo, tree, path);
      if (size > options.maxBytes) throw fileTooLarge(path, size, options.maxBytes, where(options));
    }
    const blob = await NodeGit.Blob.lookup(repo, entry.id());
    return { source: blob.content(), blobSha: entry.id().tostrS(), path, commit: commit.sha() };
  });
}

/** The commit id `options` names (INVALID_GIT_REF when none): what a listing of it is the same for. */
export async function resolveRevision(dir: string, options: RevisionOptions): Promise<string> {
  return withRepository(dir, async (repo) => (await resolveCommit(repo, options.ref, options)).sha());
}

/** Every file (and symlink) of the commit's tree, sorted by path. */
export async function listFiles(dir: string, options: ResolvedRevision): Promise<FileEntry[]> {
  return withRepository(dir, async (repo) => {
    const commit = await commitOf(repo, options);
    const files: FileEntry[] = [];
    // Depth first, each directory's entries in the byte order of their names (a
    // directory's as "name/": everything under it starts so): the paths come out in the
    // byte order of the whole path, with no sort of the whole list. The subdirectories of
    // a directory are looked up together, on libgit2's threads, while it is read.
    const walk = async (tree: NodeGit.Tree, prefix: string): Promise<void> => {
      const list = await sortedEntries(tree);
      const below = list.filter((e) => e.kind === MODE_TREE).map((e) => NodeGit.Tree.lookup(repo, e.id!));
      // Each is awaited in its turn; one that fails first must not be an unhandled rejection meanwhile.
      for (const p of below) p.catch(() => undefined);
      let next = 0;
      for (const e of list) {
        const path = prefix + e.name;
        if (e.kind === MODE_TREE) await walk(await below[next++]!, `${path}/`);
        else if (e.kind === MODE_BLOB || e.kind === MODE_LINK) files.push({ type: 'blob', path, name: e.name });
        if (sliceUsed()) await nextSlice();
      }
    };
    await walk(await NodeGit.Tree.lookup(repo, commit.treeId()), '');
    return files;
  });
}

/**
 * The root's children, with every directory on the way to each of `paths`, and each of
 * `paths` that is a directory, expanded (its children listed); other directories have
 * `children: []`. A path that does not exist is FILE_NOT_FOUND.
 */
export async function tree(dir: string, options: ResolvedRevision & { paths: string[] }): Promise<{ tree: TreeNode }> {
  const paths = options.paths.map((p) => checkRepoPath(p, { allowEmpty: true }));
  return withRepository(dir, async (repo) => {
    const commit = await commitOf(repo, options);
    const root = await NodeGit.Tree.lookup(repo, commit.treeId());
    const expanded = new Set<string>(['']);
    for (const path of paths) {
      if (path === '') continue;
      const entry = await entryAt(root, path);
      if (entry === undefined) throw new ServiceError('FILE_NOT_FOUND', `${quotePath(path)} does not exist ${where(options)}`);
      const parts = path.split('/');
      for (let i = 1; i < parts.length; i++) expanded.add(parts.slice(0, i).join('/'));
      if ((entry.filemode() & MODE_TYPE_MASK) === MODE_TREE) expanded.add(path);
    }
    const list = async (t: NodeGit.Tree, dirPath: string): Promise<TreeNode[]> => {
      const nodes: TreeNode[] = [];
      // The expanded subdirectories are read at once (libgit2 looks them up on its threads).
      const below: Array<Promise<void>> = [];
      for (const c of await sortedChildren(t, dirPath)) {
        const node: TreeNode = { type: c.type, path: c.path, name: c.name, children: [] };
        nodes.push(node);
        if (c.type === 'tree' && expanded.has(c.path)) {
          below.push(
            (async () => {
              node.children = await list(await NodeGit.Tree.lookup(repo, c.id!), c.path);
            })(),
          );
        }
      }
      await Promise.all(below);
      return nodes;
    };
    return { tree: { type: 'tree', path: '', name: 'root', children: await list(root, '') } };
  });
}

/** The immediate children of the directory `path` ('' for the root): directories first, then by name. */
export async function folderContents(dir: string, options: ResolvedRevision & { path: string }): Promise<FolderEntry[]> {
  const path = checkRepoPath(options.path, { allowEmpty: true });
  return withRepository(dir, async (repo) => {
    const commit = await commitOf(repo, options);
    let folder = await NodeGit.Tree.lookup(repo, commit.treeId());
    if (path !== '') {
      const entry = await entryAt(folder, path);
      if (entry === undefined || (entry.filemode() & MODE_TYPE_MASK) !== MODE_TREE) {
        const what = entry === undefined ? 'does not exist' : 'is not a directory';
        throw new ServiceError('FILE_NOT_FOUND', `${quotePath(path)} ${what} ${where(options)}`);
      }
      folder = await NodeGit.Tree.lookup(repo, entry.id());
    }
    return (await sortedChildren(folder, path)).map(({ type, path: p, name }) => ({ type, path: p, name }));
  });
}

/** The commit of `options`: the one given, or the ref resolved. */
async function commitOf(repo: NodeGit.Repository, options: ResolvedRevision): Promise<NodeGit.Commit> {
  return options.commit !== undefined ? NodeGit.Commit.lookup(repo, options.commit) : resolveCommit(repo, options.ref, options);
}

/** The tree entry at `path` below `tree`, or undefined when there is none. */
export async function entryAt(tree: NodeGit.Tree, path: string): Promise<NodeGit.TreeEntry | undefined> {
  try {
    return await tree.entryByPath(path);
  } catch (err) {
    if ((err as { errno?: number } | undefined)?.errno === -3) return undefined; // GIT_ENOTFOUND
    throw err;
  }
}

/** File modes a reader can open as content: regular files and symlinks. */
export function isFileMode(mode: number): boolean {
  const kind = mode & MODE_TYPE_MASK;
  return kind === MODE_BLOB || kind === MODE_LINK;
}

export function isTreeMode(mode: number): boolean {
  return (mode & MODE_TYPE_MASK) === MODE_TREE;
}

export function isSubmoduleMode(mode: number): boolean {
  return (mode & MODE_TYPE_MASK) === MODE_GITLINK;
}

interface Entry {
  name: string;
  kind: number;
  /** A directory's tree id (read for directories only: an id is another native object per entry). */
  id?: NodeGit.Oid;
}

/**
 * A tree's entries, read in time slices, in the byte order of their names with a
 * directory's as "name/": git's own order, which trees are stored in (the sort only
 * checks it, one comparison per entry).
 */
async function sortedEntries(tree: NodeGit.Tree): Promise<Entry[]> {
  const out: Array<Entry & { key: Buffer }> = [];
  const count = tree.entryCount();
  for (let i = 0; i < count; i++) {
    if (sliceUsed()) await nextSlice();
    const e = tree.entryByIndex(i);
    const name = e.name();
    const kind = e.filemode() & MODE_TYPE_MASK;
    const entry: Entry & { key: Buffer } = { name, kind, key: Buffer.from(kind === MODE_TREE ? `${name}/` : name, 'utf8') };
    if (kind === MODE_TREE) entry.id = e.id();
    out.push(entry);
  }
  out.sort((a, b) => Buffer.compare(a.key, b.key));
  return out;
}

type Child = FolderEntry & { id?: NodeGit.Oid; key: Buffer };

/** A directory's files and subdirectories (not submodules), read in time slices: directories first, then by name bytes. */
async function sortedChildren(tree: NodeGit.Tree, dirPath: string): Promise<Child[]> {
  const dirs: Child[] = [];
  const files: Child[] = [];
  const count = tree.entryCount();
  for (let i = 0; i < count; i++) {
    if (sliceUsed()) await nextSlice();
    const e = tree.entryByIndex(i);
    const kind = e.filemode() & MODE_TYPE_MASK;
    if (kind !== MODE_TREE && kind !== MODE_BLOB && kind !== MODE_LINK) continue;
    const name = e.name();
    const child: Child = {
      type: kind === MODE_TREE ? 'tree' : 'blob',
      path: dirPath === '' ? name : `${dirPath}/${name}`,
      name,
      key: Buffer.from(name, 'utf8'),
    };
    if (kind === MODE_TREE) {
      child.id = e.id();
      dirs.push(child);
    } else files.push(child);
  }
  // Each in git's order already, or nearly (it compares a directory as "name/"): about
  // one comparison per entry, where sorting both kinds together would take n log n.
  const byName = (a: Child, b: Child) => Buffer.compare(a.key, b.key);
  dirs.sort(byName);
  files.sort(byName);
  return dirs.concat(files);
}

function quotePath(path: string): string {
  return JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
}

/** "at main in github.com/acme/app": where a path was looked for. */
export function where(options: RevisionOptions): string {
  const ref = options.ref ?? options.defaultRef;
  const shown = JSON.stringify(ref.length > 100 ? `${ref.slice(0, 100)}…` : ref);
  return options.label === undefined ? `at ${shown}` : `at ${shown} in ${options.label}`;
}
