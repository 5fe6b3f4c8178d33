// A watch's matches, and what changed between two sets of them.
//
// A match is a line that holds a hit (line 0 and text "" for a file matched by its name
// alone). Its identity is its path and its text, not its line number: a line that only
// moved (lines added above it) is the same match, so inserting code above a watched line
// reports nothing. Identical lines of one file are told apart by their order (the first
// "TODO", the second...), so adding a second copy reports one new match.

import type { SearchResponse } from '../search/types.ts';
import type { WatchMatch } from '../store/store.ts';

/** A line's text is kept up to this many characters (a minified file's lines are long): enough to recognise it. */
export const MATCH_TEXT_CHARS = 300;

/** The matches of a search's answer, by repository id, in the answer's order. */
export function matchesByRepo(res: SearchResponse): Map<number, WatchMatch[]> {
  const out = new Map<number, WatchMatch[]>();
  for (const f of res.files) {
    let list = out.get(f.repositoryId);
    if (!list) out.set(f.repositoryId, (list = []));
    const path = f.fileName.text;
    const lines = new Set<number>();
    for (const c of f.chunks) {
      const text = c.content.split('\n');
      for (const r of c.matchRanges) {
        const line = r.start.lineNumber;
        if (lines.has(line)) continue;
        lines.add(line);
        list.push({ path, line, text: (text[line - c.contentStart.lineNumber] ?? '').slice(0, MATCH_TEXT_CHARS) });
      }
    }
    if (lines.size === 0) list.push({ path, line: 0, text: '' });
  }
  for (const list of out.values()) list.sort(byPlace);
  return out;
}

/** The matches of `after` not in `before` (added, as they are now) and of `before` not in `after` (removed, as they were). */
export function changedMatches(before: readonly WatchMatch[], after: readonly WatchMatch[]): { added: WatchMatch[]; removed: WatchMatch[] } {
  const was = keyed(before);
  const now = keyed(after);
  return { added: after.filter((_, i) => !was.has(now.keys[i]!)), removed: before.filter((_, i) => !now.has(was.keys[i]!)) };
}

/** Each match's identity (path, text, and which copy of that text in the file), in order, and the set of them. */
function keyed(list: readonly WatchMatch[]): { keys: string[]; has(key: string): boolean } {
  const copies = new Map<string, number>();
  const keys = list.map((m) => {
    const base = `${m.path}\0${m.text}`;
    const n = copies.get(base) ?? 0;
    copies.set(base, n + 1);
    return `${base}\0${n}`;
  });
  const set = new Set(keys);
  return { keys, has: (k) => set.has(k) };
}

function byPlace(a: WatchMatch, b: WatchMatch): number {
  return a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line;
}
