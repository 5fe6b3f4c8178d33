// `history:yes`: since when a line of a default branch's file is there. A match's line was
// introduced by the first commit of the default branch's first-parent line from which the
// file (at the same path) holds that line, as a whole line, at every commit up to the tip:
// the newest commit of that line whose first parent's file lacks it (or that made the file).
//
// One `git log --first-parent` of the file's path gives each change of it along that line,
// every commit diffed against its first parent (a merge too: what it brought to the default
// branch), renames not followed (a renamed file is a new path). Counting each line's copies
// from the oldest change on, the introducing commit is the last one that took a line's count
// from zero.

import { runGit } from '../repos/git-command.ts';
import { PATCH_OPTIONS, parsePatchLog } from './diff-log.ts';

/** The largest log of one file's changes read. */
const LOG_MAX_BYTES = 256 * 1024 * 1024;

export interface Introduced {
  id: string;
  /** The commit's committer date (ISO 8601). */
  committedAt: string;
}

/** For each line of `lines` (texts without line ends) that the file `path` holds at `tip`: the commit that introduced it. */
export async function linesIntroduced(gitDir: string, tip: string, path: string, lines: readonly string[]): Promise<Map<string, Introduced>> {
  const log = await runGit(
    gitDir,
    ['-c', 'log.showSignature=false', 'log', '--first-parent', '--diff-merges=first-parent', '--no-renames', '--reverse', ...PATCH_OPTIONS, tip, '--', path],
    LOG_MAX_BYTES,
  );
  const wanted = new Set(lines);
  const count = new Map<string, number>();
  const since = new Map<string, Introduced>();
  for (const d of parsePatchLog(log)) {
    const before = new Map<string, number>();
    for (const f of d.files) {
      if (f.path !== path) continue;
      for (const h of f.hunks) {
        for (const l of h.lines) {
          const text = l.text.toString('utf8');
          if (!wanted.has(text)) continue;
          if (!before.has(text)) before.set(text, count.get(text) ?? 0);
          count.set(text, (count.get(text) ?? 0) + (l.added ? 1 : -1));
        }
      }
    }
    for (const [text, was] of before) {
      if (was === 0 && (count.get(text) ?? 0) > 0) since.set(text, { id: d.commit.id, committedAt: d.commit.committer.date });
    }
  }
  for (const text of [...since.keys()]) if ((count.get(text) ?? 0) <= 0) since.delete(text);
  return since;
}
