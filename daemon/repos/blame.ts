// Blame for the HTTP API (GET /api/blame): which commit last changed each line of a file,
// read through nodegit on a handle of its own (git-repo-cache.ts says why).

import NodeGit from 'nodegit';
import { ServiceError } from '../errors.ts';
import { blobSize, fileTooLarge } from './blob-size.ts';
import { entryAt, isFileMode, isSubmoduleMode, where } from './browse.ts';
import { withOwnRepository } from './git-repo-cache.ts';
import { authorFields, isoDate, splitMessage } from './history.ts';
import { checkRepoPath } from './repo-path.ts';
import { resolveCommit, type RevisionOptions } from './revision.ts';

export interface BlameRange {
  hash: string;
  /** The file's path in that commit. */
  path: string;
  /** 1-based. */
  startLine: number;
  lineCount: number;
}

export interface BlameCommit {
  hash: string;
  date: string;
  message: string;
  authorName: string;
  authorEmail: string;
  /** authorName and authorEmail again, as `@sourcebot/mcp` 1.0.x reads commits. */
  author_name: string;
  author_email: string;
  /** The first parent and the file's path there, when the parent has that path. */
  previous?: { hash: string; path: string };
}

/**
 * Which commit last changed each line of the file at `path`, as runs of lines, with
 * those commits. Renames are followed as libgit2's blame follows them (its own rename
 * detection between a commit and its parent). Binary and empty files: no ranges. With
 * `maxBytes`, a larger file is FILE_TOO_LARGE, found from its size alone (blob-size.ts).
 *
 * libgit2's blame is slow on long histories (several times slower than git blame on a
 * file changed by thousands of commits) and cannot be interrupted, so it runs on a
 * repository handle of its own, leaving the shared one to other requests.
 */
export async function blame(
  dir: string,
  options: RevisionOptions & { path: string; maxBytes?: number },
): Promise<{ ranges: BlameRange[]; commits: Record<string, BlameCommit> }> {
  const path = checkRepoPath(options.path, { allowEmpty: false });
  return withOwnRepository(dir, async (repo) => {
    const commit = await resolveCommit(repo, options.ref, options);
    const tree = await NodeGit.Tree.lookup(repo, commit.treeId());
    const entry = await entryAt(tree, path);
    if (entry === undefined || !isFileMode(entry.filemode())) {
      const what = entry === undefined ? 'does not exist' : isSubmoduleMode(entry.filemode()) ? 'is a submodule, not a file' : 'is a directory, not a file';
      throw new ServiceError('FILE_NOT_FOUND', `${JSON.stringify(path)} ${what} ${where(options)}`);
    }
    if (options.maxBytes !== undefined) {
      const size = await blobSize(repo, tree, path);
      if (size > options.maxBytes) throw fileTooLarge(path, size, options.maxBytes, where(options));
    }
    const blob = await NodeGit.Blob.lookup(repo, entry.id());
    if (blob.rawsize() === 0 || blob.isBinary() === 1) return { ranges: [], commits: {} };
    const result = await NodeGit.Blame.file(repo, path, { newestCommit: commit.id() });
    const ranges: BlameRange[] = [];
    const pathOf = new Map<string, string>(); // commit -> the file's path in it (first seen)
    const count = result.getHunkCount();
    for (let i = 0; i < count; i++) {
      const h = result.getHunkByIndex(i);
      const hash = h.finalCommitId().tostrS();
      ranges.push({ hash, path: h.origPath(), startLine: h.finalStartLineNumber(), lineCount: h.linesInHunk() });
      if (!pathOf.has(hash)) pathOf.set(hash, h.origPath());
    }
    const commits: Record<string, BlameCommit> = {};
    await Promise.all(
      [...pathOf].map(async ([hash, filePath]) => {
        const c = await NodeGit.Commit.lookup(repo, hash);
        const a = c.author();
        const info: BlameCommit = {
          hash,
          date: isoDate(a.when().time()),
          message: splitMessage(c.message()).subject,
          ...authorFields(a),
        };
        if (c.parentcount() > 0) {
          const parent = await NodeGit.Commit.lookup(repo, c.parentId(0));
          const there = await entryAt(await NodeGit.Tree.lookup(repo, parent.treeId()), filePath);
          if (there !== undefined) info.previous = { hash: parent.sha(), path: filePath };
        }
        commits[hash] = info;
      }),
    );
    return { ranges, commits };
  });
}
