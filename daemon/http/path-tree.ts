// The tree of a directory repository (one that has no git, served from its index), made
// from the list of its file paths with repos/browse.ts's rules for git trees: the root's
// children, every directory on the way to each asked-for path and each one that is a
// directory expanded; directories first, then files, each by name bytes. One pass over the
// paths, in time slices (runtime/time-slices.ts): a directory may hold 10^5 files, and up
// to a thousand paths may be asked for, so no asked-for path is checked against every file.

import { ServiceError } from '../errors.ts';
import type { TreeNode } from '../repos/browse.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { byteCompare } from '../search/rank-order.ts';

/** The tree of `paths` (each a file) with `expand` expanded; FILE_NOT_FOUND for the first of `expand` that is neither a file nor a directory. */
export async function pathTree(paths: readonly string[], expand: readonly string[]): Promise<TreeNode> {
  const root: TreeNode = { type: 'tree', path: '', name: 'root', children: [] };
  const dirs = new Map<string, TreeNode>([['', root]]);
  const open = new Set<string>(['']);
  for (const p of expand) {
    const parts = p.split('/');
    for (let i = 1; i <= parts.length; i++) open.add(parts.slice(0, i).join('/'));
  }
  const asked = new Set(expand);
  const files = new Set<string>();
  const dirNode = (path: string): TreeNode => {
    let node = dirs.get(path);
    if (node) return node;
    const parent = parentOf(path);
    node = { type: 'tree', path, name: baseName(path), children: [] };
    dirs.set(path, node);
    const up = dirNode(parent);
    if (open.has(parent)) up.children.push(node);
    return node;
  };
  for (const f of paths) {
    if (sliceUsed()) await nextSlice();
    if (asked.has(f)) files.add(f);
    const parent = parentOf(f);
    const node = dirNode(parent);
    if (open.has(parent)) node.children.push({ type: 'blob', path: f, name: baseName(f), children: [] });
  }
  // Every directory that holds a file has its node now.
  for (const p of expand) {
    if (p !== '' && !files.has(p) && !dirs.has(p)) throw new ServiceError('FILE_NOT_FOUND', `no file or folder "${p}"`);
  }
  const pending: TreeNode[] = [root];
  for (let n = pending.pop(); n !== undefined; n = pending.pop()) {
    if (sliceUsed()) await nextSlice();
    n.children.sort((a, b) => (a.type !== b.type ? (a.type === 'tree' ? -1 : 1) : byteCompare(a.name, b.name)));
    for (const c of n.children) if (c.children.length > 0) pending.push(c);
  }
  return root;
}

/** The node at `path` below `root`, or undefined. */
export function nodeAt(root: TreeNode, path: string): TreeNode | undefined {
  if (path === '') return root;
  let node: TreeNode | undefined = root;
  for (const part of path.split('/')) {
    node = node?.children.find((c) => c.name === part);
  }
  return node;
}

export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function parentOf(path: string): string {
  const at = path.lastIndexOf('/');
  return at < 0 ? '' : path.slice(0, at);
}
