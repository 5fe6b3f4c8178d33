// The lines a change added and removed, read in as few native calls as nodegit allows: the
// watches read one after every push (changed-text.ts), and each nodegit call is a
// trip to its thread pool. The API's diff (diff.ts) copies every hunk and line out one call
// at a time, which a small change pays for several times over; here the two commits and
// their trees are looked up side by side, and the whole patch comes back as one text.
//
// Only small changes are read so (at most PATCH_MAX_FILES files): the text is made whole
// before its size can be seen, and each file in it may be up to `maxBytes` on either side.

import NodeGit from 'nodegit';
import { withRepository } from './git-repo-cache.ts';

/** A change of more files than this is not read here (its text could be large). */
export const PATCH_MAX_FILES = 16;

/** libgit2's delta statuses (git_delta_t) and flags (git_diff_flag_t) read here. */
const ADDED = 1;
const DELETED = 2;
const BINARY = 1;

export interface ChangedFile {
  /** null for an added file. */
  oldPath: string | null;
  /** null for a deleted file. */
  newPath: string | null;
  /** Its content is the same on both sides (only its mode changed). */
  sameContent: boolean;
  /** libgit2 took a side for binary: its lines are not in the text. */
  binary: boolean;
  /** A side is over `maxBytes`: it was not read, and its lines are not in the text. */
  tooLarge: boolean;
}

export interface PatchLines {
  files: ChangedFile[];
  /** Every line added or removed, without its +/- sign. */
  lines: string[];
}

/**
 * The files and lines that differ between the commits `base` and `head` (full ids, looked up
 * as they are), no renames looked for; undefined when more than PATCH_MAX_FILES files
 * differ. Throws when a commit is not in the repository.
 */
export function patchLines(dir: string, base: string, head: string, maxBytes: number): Promise<PatchLines | undefined> {
  return withRepository(dir, async (repo) => {
    const commits = await Promise.all([NodeGit.Commit.lookup(repo, base), NodeGit.Commit.lookup(repo, head)]);
    const [was, now] = await Promise.all(commits.map((c) => NodeGit.Tree.lookup(repo, c.treeId())));
    const d = await NodeGit.Diff.treeToTree(repo, was!, now!, { contextLines: 0, maxSize: maxBytes });
    const count = d.numDeltas();
    if (count === 0) return { files: [], lines: [] };
    if (count > PATCH_MAX_FILES) return undefined;
    const text = await d.toBuf(NodeGit.Diff.FORMAT.PATCH);
    // Making the text loaded each side's size and told which are binary: the deltas say so now.
    const files: ChangedFile[] = [];
    for (let i = 0; i < count; i++) {
      const delta = d.getDelta(i);
      const status = delta.status();
      files.push({
        oldPath: status === ADDED ? null : delta.oldFile().path(),
        newPath: status === DELETED ? null : delta.newFile().path(),
        sameContent: delta.oldFile().id().equal(delta.newFile().id()) !== 0,
        binary: (delta.flags() & BINARY) !== 0,
        tooLarge: Math.max(delta.oldFile().size(), delta.newFile().size()) > maxBytes,
      });
    }
    return { files, lines: hunkLines(text) };
  });
}

/**
 * The added and removed lines of a unified patch with no context lines. A hunk starts at its
 * "@@" header and holds only lines that start with '+', '-' or '\' ("\ No newline at end of
 * file"); the next file's "diff --git" header, or any line not so marked, ends it, so that
 * the "---" and "+++" lines that name a file are never taken for lines of one.
 */
export function hunkLines(patch: string): string[] {
  const out: string[] = [];
  let inHunk = false;
  for (const line of patch.split('\n')) {
    const sign = line[0];
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && (sign === '+' || sign === '-')) out.push(line.slice(1));
    else if (sign !== '\\') inHunk = false;
  }
  return out;
}
