// Reading a commit's files for browsing: one file's content, every file's path, and
// directory listings. Everything comes from the object database (never a work tree), so
// bare mirrors and work trees read the same. Paths are '/'-separated and relative to the
// repository root; listings order names by their UTF-8 bytes, as git does.
//
// Tree entry kinds by git file mode: 040000 directory, 100644/100755 file, 120000 symlink
// (its blob holds the link target), 160000 submodule (a commit id of another repository,
// with no content here). Submodules are left out of listings: they have no content to
// open and no type in the result shapes; opening one is FILE_NOT_FOUND saying so.
import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';
import { blobSize, fileTooLarge } from './blob-size.ts';
import { withRepository } from './git-repo-cache.ts';
import { checkRepoPath } from './repo-path.ts';
import { resolveCommit, type RevisionOptions } from './revision.ts';

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
export async function readSource(dir: string, options: RevisionOptions & { path: string; maxBytes?: number }): Promise<SourceFile> {
  const path = checkRepoPath(options.path, { allowEmpty: false });
  return withRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
    const tree = await NodeGit.Tree.lookup(repo, commit.treeId());
    const entry = await entryAt(tree, path);
    const kind = entry === undefined ? undefined : entry.filemode() & MODE_TYPE_MASK;
    if (entry === undefined || (kind !== MODE_BLOB && kind !== MODE_LINK)) {
      const what = kind === MODE_TREE ? 'is a directory, not a file' : kind === MODE_GITLINK ? 'is a submodule (its files are in another repository)' : 'does not exist';
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

/** Every file (and symlink) of the commit's tree, sorted by path. */
export async function listFiles(dir: string, options: RevisionOptions): Promise<FileEntry[]> {
  return withRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
    const files: FileEntry[] = [];
    const walk = async (treeId: NodeGit.Oid, prefix: string): Promise<void> => {
      const tree = await NodeGit.Tree.lookup(repo, treeId);
      const below: Array<Promise<void>> = [];
      for (const e of entries(tree)) {
        const path = prefix + e.name;
        if (e.kind === MODE_TREE) below.push(walk(e.id, `${path}/`));
        else if (e.kind === MODE_BLOB || e.kind === MODE_LINK) files.push({ type: 'blob', path, name: e.name });
      }
      await Promise.all(below);
    };
    await walk(commit.treeId(), '');
    // Subtrees finish in any order; one sort on precomputed byte keys puts paths in order.
    const keyed = files.map((f) => ({ f, key: Buffer.from(f.path, 'utf8') }));
    keyed.sort((a, b) => Buffer.compare(a.key, b.key));
    return keyed.map((k) => k.f);
  });
}

/**
 * The root's children, with every directory on the way to each of `paths`, and each of
 * `paths` that is a directory, expanded (its children listed); other directories have
 * `children: []`. A path that does not exist is FILE_NOT_FOUND.
 */
export async function tree(dir: string, options: RevisionOptions & { paths: string[] }): Promise<{ tree: TreeNode }> {
  const paths = options.paths.map((p) => checkRepoPath(p, { allowEmpty: true }));
  return withRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
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
      const nodes = await Promise.all(
        sortedChildren(t, dirPath).map(async (c): Promise<TreeNode> => {
          const node: TreeNode = { type: c.type, path: c.path, name: c.name, children: [] };
          if (c.type === 'tree' && expanded.has(c.path)) node.children = await list(await NodeGit.Tree.lookup(repo, c.id), c.path);
          return node;
        }),
      );
      return nodes;
    };
    return { tree: { type: 'tree', path: '', name: 'root', children: await list(root, '') } };
  });
}

/** The immediate children of the directory `path` ('' for the root): directories first, then by name. */
export async function folderContents(dir: string, options: RevisionOptions & { path: string }): Promise<FolderEntry[]> {
  const path = checkRepoPath(options.path, { allowEmpty: true });
  return withRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
    let folder = await NodeGit.Tree.lookup(repo, commit.treeId());
    if (path !== '') {
      const entry = await entryAt(folder, path);
      if (entry === undefined || (entry.filemode() & MODE_TYPE_MASK) !== MODE_TREE) {
        const what = entry === undefined ? 'does not exist' : 'is not a directory';
        throw new ServiceError('FILE_NOT_FOUND', `${quotePath(path)} ${what} ${where(options)}`);
      }
      folder = await NodeGit.Tree.lookup(repo, entry.id());
    }
    return sortedChildren(folder, path).map(({ type, path: p, name }) => ({ type, path: p, name }));
  });
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

function entries(tree: NodeGit.Tree): Array<{ name: string; kind: number; id: NodeGit.Oid }> {
  const out: Array<{ name: string; kind: number; id: NodeGit.Oid }> = [];
  const count = tree.entryCount();
  for (let i = 0; i < count; i++) {
    const e = tree.entryByIndex(i);
    out.push({ name: e.name(), kind: e.filemode() & MODE_TYPE_MASK, id: e.id() });
  }
  return out;
}

/** A directory's files and subdirectories (not submodules): directories first, then by name bytes. */
function sortedChildren(tree: NodeGit.Tree, dirPath: string): Array<FolderEntry & { id: NodeGit.Oid; key: Buffer }> {
  const children: Array<FolderEntry & { id: NodeGit.Oid; key: Buffer }> = [];
  for (const e of entries(tree)) {
    const type = e.kind === MODE_TREE ? 'tree' : e.kind === MODE_BLOB || e.kind === MODE_LINK ? 'blob' : undefined;
    if (type === undefined) continue;
    children.push({ type, path: dirPath === '' ? e.name : `${dirPath}/${e.name}`, name: e.name, id: e.id, key: Buffer.from(e.name, 'utf8') });
  }
  children.sort((a, b) => (a.type === b.type ? Buffer.compare(a.key, b.key) : a.type === 'tree' ? -1 : 1));
  return children;
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
