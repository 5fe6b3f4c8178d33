// Diffs for the HTTP API (GET /api/diff): the changes between two revisions as unified
// hunks, read through nodegit.

import NodeGit from 'nodegit';
import { checkRepoPath } from './repo-path.ts';
import { withRepository } from './git-repo-cache.ts';
import { resolveCommit, type RevisionScope } from './revision.ts';

export interface DiffHunk {
  oldRange: { start: number; lines: number };
  newRange: { start: number; lines: number };
  /** The hunk header's text after the second "@@" (git's function context), when any. */
  heading?: string;
  /** The hunk's lines, each prefixed with '+', '-' or ' ', joined with '\n'. */
  body: string;
}

export interface DiffFile {
  /** null for an added file. */
  oldPath: string | null;
  /** null for a deleted file. */
  newPath: string | null;
  /** Empty for binary files, for changes of mode or name only, and for files over `maxBytes`. */
  hunks: DiffHunk[];
  /** Either side is larger than `maxBytes`: no hunks (neither side was read). */
  tooLarge?: true;
}

/**
 * A diff stops after this many files or this many characters of hunk bodies, and then
 * says `truncated: true`: the response stays bounded for any pair of revisions. The
 * cut falls between hunks; the last file may then have only its first hunks.
 */
export const MAX_DIFF_FILES = 1000;
export const MAX_DIFF_TEXT = 10 * 1024 * 1024;
/**
 * git's empty tree. As `base` (or `head`) it names no files at all, as it does for
 * `git diff 4b825dc… <commit>`: the diff of a root commit, which has no parent to diff
 * against, is its whole tree as added files. libgit2 keeps no such object, so it is
 * recognised here by its id and diffed as a missing tree.
 */
export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
// Patches per native call: each call copies every line of its patches out of libgit2.
const PATCH_BATCH = 50;

/**
 * The changes from `base` to `head` (their trees, or none for EMPTY_TREE; three lines of
 * context unless `contextLines` says otherwise; renames detected as git does by default,
 * 50% similarity, unless `renames` is false), restricted to `path` (a file or a
 * directory prefix) when given. Files in libgit2's order (by path). A file larger than
 * `maxBytes` on either side gets no hunks and `tooLarge`: libgit2 reads its size from the
 * object's header and never loads it (max_size; blob-size.ts says more).
 */
export async function diff(
  dir: string,
  options: (RevisionScope | { trusted: true }) & { base: string; head: string; path?: string; maxBytes?: number; contextLines?: number; renames?: boolean },
): Promise<{ files: DiffFile[]; truncated?: true }> {
  const path = options.path === undefined ? '' : checkRepoPath(options.path, { allowEmpty: true });
  return withRepository(dir, async (repo) => {
    // `trusted`: the caller names full commit ids it read from its own index, looked up as
    // they are; a request's names are resolved within what the index holds.
    const commitOf = (ref: string) => ('trusted' in options ? NodeGit.Commit.lookup(repo, ref) : resolveCommit(repo, ref, options));
    const treeOf = async (ref: string): Promise<NodeGit.Tree | null> => (ref === EMPTY_TREE ? null : NodeGit.Tree.lookup(repo, (await commitOf(ref)).treeId()));
    // One after the other: when both are bad, the error names the base.
    const baseTree = await treeOf(options.base);
    const headTree = await treeOf(options.head);
    const opts: NodeGit.DiffOptions = { contextLines: options.contextLines ?? 3 };
    if (options.maxBytes !== undefined) opts.maxSize = options.maxBytes;
    // DISABLE_PATHSPEC_MATCH: the path is literal (no globs); it still matches as a
    // directory prefix ("src" matches "src/a.ts", not "srcx").
    if (path !== '') Object.assign(opts, { pathspec: [path], flags: NodeGit.Diff.OPTION.DISABLE_PATHSPEC_MATCH });
    const d = await NodeGit.Diff.treeToTree(repo, baseTree, headTree, opts);
    if (options.renames !== false) await d.findSimilar({ flags: NodeGit.Diff.FIND.RENAMES });
    const files: DiffFile[] = [];
    let budget = MAX_DIFF_TEXT;
    let truncated = d.numDeltas() > MAX_DIFF_FILES;
    const deltas = Math.min(d.numDeltas(), MAX_DIFF_FILES);
    batches: for (let i = 0; i < deltas; i += PATCH_BATCH) {
      const indexes = Array.from({ length: Math.min(PATCH_BATCH, deltas - i) }, (_, k) => i + k);
      for (const patch of await d.patches(indexes)) {
        const file: DiffFile = {
          oldPath: patch.isAdded() ? null : patch.oldFile().path(),
          newPath: patch.isDeleted() ? null : patch.newFile().path(),
          hunks: [],
        };
        files.push(file);
        // libgit2 made this patch binary (no hunks) without loading either side (max_size).
        if (options.maxBytes !== undefined && Math.max(patch.oldFile().size(), patch.newFile().size()) > options.maxBytes) file.tooLarge = true;
        for (const h of await patch.hunks()) {
          const hunk = await readHunk(h);
          if (hunk.body.length > budget) {
            truncated = true;
            break batches;
          }
          budget -= hunk.body.length;
          file.hunks.push(hunk);
        }
      }
    }
    return truncated ? { files, truncated: true } : { files };
  });
}

async function readHunk(h: NodeGit.ConvenientHunk): Promise<DiffHunk> {
  const L = NodeGit.Diff.LINE;
  const out: string[] = [];
  for (const line of await h.lines()) {
    const origin = line.origin();
    if (origin === L.CONTEXT_EOFNL || origin === L.ADD_EOFNL || origin === L.DEL_EOFNL) {
      out.push('\\ No newline at end of file');
      continue;
    }
    const prefix = origin === L.ADDITION ? '+' : origin === L.DELETION ? '-' : ' ';
    // rawContent: the line with its newline, if it has one (content() slices by bytes
    // after decoding, which cuts lines that are not valid UTF-8).
    const text = line.rawContent();
    out.push(prefix + (text.endsWith('\n') ? text.slice(0, -1) : text));
  }
  // header(): "@@ -a,b +c,d @@ heading\n".
  const heading = /^@@[^@]*@@(.*)$/s.exec(h.header())?.[1]?.trim();
  const hunk: DiffHunk = {
    oldRange: { start: h.oldStart(), lines: h.oldLines() },
    newRange: { start: h.newStart(), lines: h.newLines() },
    body: out.join('\n'),
  };
  if (heading) hunk.heading = heading;
  return hunk;
}
