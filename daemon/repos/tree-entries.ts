// The entries of git trees that a listing of versions reads (git.ts), kept between listings.
// A tree is named by its content, so what is kept for an id never goes stale, whichever
// repository it was read from. Reading a tree's entries through nodegit costs several
// native calls per entry on the main thread: listing a large repository again after a push
// would pay them for every file, though a push changes only the trees on the paths of the
// files it touches. With the entries kept, it reads those trees alone.
//
// At most MAX_ENTRIES entries are kept over all trees, the least recently read first out:
// enough for a repository the size of Linux, or for thousands of small ones together.
import type NodeGit from 'nodegit';

const MODE_TYPE_MASK = 0o170000;
const MODE_TREE = 0o040000;
const MODE_BLOB = 0o100000; // 100644 and 100755 (and legacy 100664)

const MAX_ENTRIES = 200_000;

/** The blobs and subtrees of one tree, in the tree's order; symlinks (120000) and submodule commits (160000) are left out. */
export interface TreeEntries {
  names: string[];
  /** Blob or tree ids, 40 hex digits. */
  oids: string[];
  /** Whether entry i is a subtree (else a blob). */
  isTree: boolean[];
}

// A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
const kept = new Map<string, TreeEntries>();
let keptEntries = 0;

/** The entries of the tree `treeId`, kept or read through `lookup`. */
export async function treeEntries(treeId: string, lookup: (id: string) => Promise<NodeGit.Tree>): Promise<TreeEntries> {
  const hit = kept.get(treeId);
  if (hit) {
    kept.delete(treeId);
    kept.set(treeId, hit);
    return hit;
  }
  const tree = await lookup(treeId);
  const entries: TreeEntries = { names: [], oids: [], isTree: [] };
  const count = tree.entryCount();
  for (let i = 0; i < count; i++) {
    const entry = tree.entryByIndex(i);
    const mode = entry.filemode() & MODE_TYPE_MASK;
    if (mode !== MODE_TREE && mode !== MODE_BLOB) continue;
    entries.names.push(entry.name());
    entries.oids.push(entry.id().tostrS());
    entries.isTree.push(mode === MODE_TREE);
  }
  keep(treeId, entries);
  return entries;
}

function keep(treeId: string, entries: TreeEntries): void {
  if (kept.has(treeId)) return;
  kept.set(treeId, entries);
  keptEntries += entries.names.length;
  for (const [id, e] of kept) {
    if (keptEntries <= MAX_ENTRIES) break;
    kept.delete(id);
    keptEntries -= e.names.length;
  }
}

/** How many trees and entries are kept (for tests). */
export function keptTrees(): { trees: number; entries: number } {
  return { trees: kept.size, entries: keptEntries };
}
