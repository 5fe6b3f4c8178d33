// What a change of a repository's index touched, read from git: the lines added and
// removed between the refs the watches last saw and the refs indexed now, and the paths of
// the files they are in. The watches use it to skip the watches that cannot have changed
// (watches/watch-filter.ts); when it cannot be told (a ref added or removed, a commit git
// no longer has, a file libgit2 took for binary or too large, lines that are not UTF-8, a
// diff too large to be worth reading), every watch is evaluated.
//
// Read in this process through libgit2 (diff-lines.ts, in a few native calls; a
// change of many files through the API's bounded diff): starting `git diff` cost more
// than the rest of a check. Renames are not looked for: a renamed file is its old path's
// lines removed and its new path's added, which is what it is to a watch.

import { diff, MAX_DIFF_FILES } from './diff.ts';
import { patchLines, type PatchLines } from './diff-lines.ts';

/** A ref as an index recorded it: its name and the commit it pointed at. */
export interface RefAt {
  name: string;
  commit: string;
}

/** A diff larger than this is not read: evaluating every watch costs less than reading it. */
export const DIFF_MAX_BYTES = 8 * 1024 * 1024;
/** A file larger than this on either side is not read (then every watch is evaluated). */
const FILE_MAX_BYTES = 2 * 1024 * 1024;

export interface ChangedText {
  /** The lines added and removed, without their +/- sign, each ended by "\n". */
  lines: Buffer;
  /** The paths of the files changed, added or deleted. */
  paths: string[];
}

/**
 * The lines and paths that differ between `before` and `after` (the same refs by name, some
 * moved), from the git repository at `source`; undefined when it cannot be told.
 */
export async function changedText(source: string, before: readonly RefAt[], after: readonly RefAt[]): Promise<ChangedText | undefined> {
  if (before.length !== after.length || after.length === 0) return undefined;
  const was = new Map(before.map((r) => [r.name, r.commit]));
  const lines: string[] = [];
  const paths = new Set<string>();
  let chars = 0;
  for (const ref of after) {
    const old = was.get(ref.name);
    if (old === undefined) return undefined;
    if (old === ref.commit) continue;
    let changed: PatchLines | undefined;
    try {
      // The commits come from the index's own manifests; one git no longer has (a forced
      // push, collected) fails the lookup, and every watch is evaluated.
      changed = (await patchLines(source, old, ref.commit, FILE_MAX_BYTES)) ?? (await largerChange(source, old, ref.commit));
    } catch {
      return undefined;
    }
    if (changed === undefined) return undefined;
    for (const f of changed.files) {
      // A file changed in place that libgit2 took for binary, or too large to read: what its
      // lines did is not known. One added or deleted as binary is not in the index.
      if (f.tooLarge || (f.binary && f.oldPath !== null && f.newPath !== null && !f.sameContent)) return undefined;
      if (f.oldPath !== null) paths.add(f.oldPath);
      if (f.newPath !== null) paths.add(f.newPath);
    }
    for (const line of changed.lines) {
      // Bytes that are not UTF-8 came back as U+FFFD: what they were is not known here.
      if (line.includes('\uFFFD')) return undefined;
      lines.push(line);
      chars += line.length + 1;
    }
    if (chars > DIFF_MAX_BYTES) return undefined;
  }
  return { lines: Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`), paths: [...paths] };
}

/**
 * A change of more files than patchLines reads, through the API's diff, whose text stops
 * at its bounds; undefined when it stopped (then every watch is evaluated).
 */
async function largerChange(source: string, base: string, head: string): Promise<PatchLines | undefined> {
  const changed = await diff(source, { trusted: true, base, head, contextLines: 0, renames: false, maxBytes: FILE_MAX_BYTES });
  if (changed.truncated || changed.files.length >= MAX_DIFF_FILES) return undefined;
  const lines: string[] = [];
  const files = changed.files.map((f) => {
    for (const h of f.hunks) for (const line of h.body.split('\n')) if (line[0] === '+' || line[0] === '-') lines.push(line.slice(1));
    // A file changed in place without hunks is one libgit2 took for binary, or whose mode
    // alone changed: this diff does not say which, so it counts as binary.
    const binary = f.hunks.length === 0;
    return { oldPath: f.oldPath, newPath: f.newPath, sameContent: false, binary, tooLarge: f.tooLarge === true };
  });
  return { files, lines };
}
