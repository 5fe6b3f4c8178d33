// The lines of a diff hunk (GET /api/diff) with their old and new line numbers and their
// code highlighted. A hunk holds two texts woven together: the old side (context and
// removed lines) and the new side (context and added lines). Each side is highlighted as
// one text and the lines are woven back in diff order, so a token that spans lines (a
// block comment, a template string) keeps its colour on every line it covers. The parse
// starts at the hunk's first line, not the file's: a hunk that begins inside a comment
// reads its first lines as code, which is all three lines of context can tell.

import type { Language } from '@codemirror/language';
import { escapeHtml } from './html.ts';
import { highlightedLines } from './syntax.ts';

export interface DiffHunk {
  oldRange: { start: number; lines: number };
  newRange: { start: number; lines: number };
  heading?: string;
  /** Lines prefixed with ' ', '-', '+' or '\' ("\ No newline at end of file"), joined with '\n'. */
  body: string;
}

export interface DiffLine {
  kind: 'context' | 'add' | 'del' | 'note';
  /** Line numbers in the old and the new file; absent on the side the line is not in. */
  old?: number;
  new?: number;
  /** The code (without its +/- sign) as escaped HTML with tok-* spans. */
  html: string;
}

export function hunkLines(hunk: DiffHunk, language: Language | undefined): DiffLine[] {
  const raw = hunk.body === '' ? [] : hunk.body.split('\n');
  const oldSide: string[] = [];
  const newSide: string[] = [];
  for (const line of raw) {
    const sign = line[0];
    if (sign === ' ' || sign === '-') oldSide.push(line.slice(1));
    if (sign === ' ' || sign === '+') newSide.push(line.slice(1));
  }
  const oldHtml = oldSide.length > 0 ? highlightedLines(oldSide.join('\n'), language) : [];
  const newHtml = newSide.length > 0 ? highlightedLines(newSide.join('\n'), language) : [];
  const out: DiffLine[] = [];
  let o = 0;
  let n = 0;
  for (const line of raw) {
    const sign = line[0];
    const at = { old: hunk.oldRange.start + o, new: hunk.newRange.start + n };
    if (sign === ' ') {
      out.push({ kind: 'context', ...at, html: newHtml[n] ?? '' });
      o++;
      n++;
    } else if (sign === '-') out.push({ kind: 'del', old: at.old, html: oldHtml[o++] ?? '' });
    else if (sign === '+') out.push({ kind: 'add', new: at.new, html: newHtml[n++] ?? '' });
    else out.push({ kind: 'note', html: escapeHtml(line.replace(/^\\ ?/, '')) });
  }
  return out;
}

/** Added and removed lines of a file's hunks. */
export function lineCounts(hunks: DiffHunk[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const hunk of hunks) {
    for (const line of hunk.body.split('\n')) {
      if (line[0] === '+') added++;
      else if (line[0] === '-') removed++;
    }
  }
  return { added, removed };
}
