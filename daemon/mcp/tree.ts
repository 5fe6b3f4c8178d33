// The list_tree tool's view of a repository: from the list of every file path (POST
// /api/files), the directories and files under one directory down to a depth. REST has
// no such listing (/api/tree expands named paths only, /api/folder_contents one level),
// and one file list answers any depth in one call. The list may hold 10^5 paths: it is
// gone through in time slices (runtime/time-slices.ts), as the listing was made.

import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { byteCompare } from '../search/rank-order.ts';

export type Include = 'files' | 'directories' | 'both';

export interface TreeEntry {
  type: 'tree' | 'blob';
  /** The path in the repository (what read_file and list_tree take). */
  path: string;
  name: string;
  /** For a directory: the files anywhere below it. */
  fileCount?: number;
}

interface Dir {
  dirs: Map<string, Dir>;
  files: string[];
  fileCount: number;
}

export type TreeListing =
  | {
      kind: 'directory';
      base: string;
      entries: TreeEntry[];
      /** Files anywhere below `base`. */
      fileCount: number;
      /** Of those, the files within `depth` levels (listed unless `include` is 'directories'). */
      shallowFileCount: number;
    }
  | { kind: 'file'; base: string }
  | { kind: 'missing'; base: string };

/** `path` as the tool takes it (`/`, `./src/`, `src`) as a directory path; '' is the root. */
export function normalizeDir(path: string): string {
  return path.replace(/^\.?\/+/, '').replace(/\/+$/, '');
}

/**
 * The entries under `base` to `depth` levels (1: its immediate children), in tree order:
 * depth first, each directory followed by what it contains, and within a directory the
 * subdirectories before the files, each by name in byte order (as /api/tree sorts).
 * `include` leaves out files or directories; a directory left out is still descended into.
 */
export async function listTree(paths: readonly string[], path: string, depth: number, include: Include): Promise<TreeListing> {
  const base = normalizeDir(path);
  const prefix = base === '' ? '' : `${base}/`;
  const root: Dir = { dirs: new Map(), files: [], fileCount: 0 };
  let isFile = false;
  let shallowFileCount = 0;
  for (const p of paths) {
    if (sliceUsed()) await nextSlice();
    if (p === base) isFile = true;
    if (!p.startsWith(prefix)) continue;
    let dir = root;
    dir.fileCount++;
    // Directories are followed down to `depth` only: deeper ones are never listed, their
    // files only counted in the deepest listed one. (A whole repository has 10^5 paths.)
    let from = prefix.length;
    let level = 1;
    let slash = p.indexOf('/', from);
    while (slash >= 0 && level <= depth) {
      const part = p.slice(from, slash);
      let next = dir.dirs.get(part);
      if (!next) dir.dirs.set(part, (next = { dirs: new Map(), files: [], fileCount: 0 }));
      next.fileCount++;
      dir = next;
      from = slash + 1;
      level++;
      slash = p.indexOf('/', from);
    }
    if (slash < 0 && level <= depth) {
      shallowFileCount++;
      dir.files.push(p.slice(from));
    }
  }
  if (root.fileCount === 0) return isFile ? { kind: 'file', base } : { kind: 'missing', base };
  const entries: TreeEntry[] = [];
  const walk = async (dir: Dir, at: string, level: number): Promise<void> => {
    if (sliceUsed()) await nextSlice();
    for (const name of byteOrder(dir.dirs.keys())) {
      const sub = dir.dirs.get(name)!;
      const p = `${at}${name}`;
      if (include !== 'files') entries.push({ type: 'tree', path: p, name, fileCount: sub.fileCount });
      if (level < depth) await walk(sub, `${p}/`, level + 1);
    }
    if (include === 'directories') return;
    for (const name of byteOrder(dir.files)) {
      if (sliceUsed()) await nextSlice();
      entries.push({ type: 'blob', path: `${at}${name}`, name });
    }
  };
  await walk(root, prefix, 1);
  return { kind: 'directory', base, entries, fileCount: root.fileCount, shallowFileCount };
}

/** Names in the order of their UTF-8 bytes. */
function byteOrder(names: Iterable<string>): string[] {
  return Array.from(names).sort(byteCompare);
}

/** How deep an entry is below `base` (1: a child of it). */
export function levelOf(entryPath: string, base: string): number {
  const rel = base === '' ? entryPath : entryPath.slice(base.length + 1);
  return rel.split('/').length;
}
