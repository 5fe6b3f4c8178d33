// The size of a file at a commit, found without reading the file: the check that lets a
// request refuse a huge file (settings.http.maxSourceBytes) before a byte of it is loaded.
//
// libgit2 knows an object's size from its header alone (a loose object's first inflated
// bytes; a packed one's entry header, or for a delta the result size at the head of the
// delta), but nodegit exposes no odb read_header, and Blob.lookup inflates the whole object
// (the file's size in RSS, and as much again for content()). A diff does use the header:
// filling in a file's size for its patch, it reads the header, and a blob over the diff's
// max_size is marked binary and never loaded. So the size is asked of a one-path diff from
// the empty tree with max_size 1: for a large file, loose or packed (whole or as a delta),
// the size comes at once and the RSS does not grow.

import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';

/** Bytes of the file (or symlink) at `path` in `tree`, which the caller knows is there. */
export async function blobSize(repo: NodeGit.Repository, tree: NodeGit.Tree, path: string): Promise<number> {
  const d = await NodeGit.Diff.treeToTree(repo, null, tree, { pathspec: [path], flags: NodeGit.Diff.OPTION.DISABLE_PATHSPEC_MATCH, maxSize: 1 });
  if (d.numDeltas() !== 1) throw new Error(`blobSize: ${JSON.stringify(path)} is not one file of the tree (${d.numDeltas()} entries)`);
  const [patch] = await d.patches([0]);
  return patch!.newFile().size();
}

/**
 * 413 FILE_TOO_LARGE for a file of `size` bytes over `max` (settings.http.maxSourceBytes);
 * `at` says where it was looked for ("at "main" in widgets").
 */
export function fileTooLarge(path: string, size: number, max: number, at: string): ServiceError {
  const n = (x: number) => x.toLocaleString('en-US');
  return new ServiceError(
    'FILE_TOO_LARGE',
    `${JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path)} ${at} is ${n(size)} bytes, over this server's limit of ${n(max)} bytes for a file's content (settings.http.maxSourceBytes)`,
  );
}
