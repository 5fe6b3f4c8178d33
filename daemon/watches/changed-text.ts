// What a change of a repository's index touched, read from git: the lines added and
// removed between the refs the watches last saw and the refs indexed now, and the paths of
// the files they are in. The watches use it to skip the watches that cannot have changed
// (watch-filter.ts); when it cannot be told (a ref added or removed, a commit git no longer
// has, a diff too large to be worth reading), every watch is evaluated.

import { runGit } from '../repos/git-command.ts';
import type { IndexedRef } from '../store/store.ts';

/** A diff larger than this is not read: evaluating every watch costs less than reading it. */
export const DIFF_MAX_BYTES = 8 * 1024 * 1024;

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
export async function changedText(source: string, before: readonly IndexedRef[], after: readonly IndexedRef[]): Promise<ChangedText | undefined> {
  if (before.length !== after.length) return undefined;
  const was = new Map(before.map((r) => [r.name, r.commit]));
  const lines: Buffer[] = [];
  const paths = new Set<string>();
  let bytes = 0;
  for (const ref of after) {
    const old = was.get(ref.name);
    if (old === undefined) return undefined;
    if (old === ref.commit) continue;
    let out: Buffer;
    try {
      out = await runGit(
        source,
        ['-c', 'core.quotePath=false', 'diff', '--no-color', '--no-ext-diff', '--no-renames', '--unified=0', '--no-prefix', old, ref.commit, '--'],
        DIFF_MAX_BYTES - bytes,
      );
    } catch {
      return undefined;
    }
    bytes += out.length;
    if (!readDiff(out, lines, paths)) return undefined;
  }
  return { lines: Buffer.concat(lines), paths: [...paths] };
}

/**
 * Adds a unified diff's changed lines and paths; false when a path is quoted (unusual bytes:
 * not read here). A file's header runs from its "diff --git" line to its first hunk ("@@"):
 * only there do "--- " and "+++ " name it (a removed line "-- x" reads "--- x" in a hunk).
 */
function readDiff(out: Buffer, lines: Buffer[], paths: Set<string>): boolean {
  let at = 0;
  let header = false;
  while (at < out.length) {
    let end = out.indexOf(10, at);
    if (end < 0) end = out.length;
    const first = out[at];
    if (first === 0x64 /* d */ && out.toString('latin1', at, at + 11) === 'diff --git ') header = true;
    else if (first === 0x40 /* @ */ && out[at + 1] === 0x40) header = false;
    else if (header && (first === 0x2b || first === 0x2d) && out[at + 1] === first && out[at + 2] === first && out[at + 3] === 0x20) {
      const path = out.toString('utf8', at + 4, end);
      if (path.startsWith('"')) return false;
      if (path !== '/dev/null') paths.add(path);
    } else if (!header && (first === 0x2b || first === 0x2d)) {
      lines.push(out.subarray(at + 1, end), NEWLINE);
    }
    at = end + 1;
  }
  return true;
}

const NEWLINE = Buffer.from('\n');
