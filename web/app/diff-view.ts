// A diff (GET /api/diff) as the commit and compare pages show it: a summary, the changed
// files with their added and removed line counts, then each file's hunks as a table of
// old and new line numbers (linking to the file at either side) and highlighted code.
//
// A file is drawn plain at once and again highlighted when its language's grammar has
// loaded (syntax.ts loads each on first use). Large diffs stay cheap: a file with more
// than LARGE_FILE_LINES lines of hunks, and every file once PAGE_LINES lines are drawn,
// starts collapsed behind a button. The API marks neither binary files nor mode changes:
// a file with no hunks that is not tooLarge is one of those, an empty file, or a pure rename,
// and its label says which of these it can be.

import type { Language } from '@codemirror/language';
import { hunkLines, lineCounts, type DiffHunk } from './diff-lines.ts';
import { formatCount, h } from './dom.ts';
import { escapeHtml } from './html.ts';
import { viewUrl } from './route.ts';
import { loadLanguage } from './syntax.ts';

export interface DiffFile {
  /** null for an added file. */
  oldPath: string | null;
  /** null for a deleted file. */
  newPath: string | null;
  hunks: DiffHunk[];
  tooLarge?: true;
}

export interface Diff {
  files: DiffFile[];
  truncated?: true;
}

/** A file longer than this (in hunk lines) is mostly noise to read through: generated code, lock files, vendored trees. */
const LARGE_FILE_LINES = 400;
/** Lines drawn open on one page before the rest start collapsed: every line is a table row, parsed twice (plain, then highlighted). */
const PAGE_LINES = 3000;

type Status = 'added' | 'deleted' | 'renamed' | 'modified';

function statusOf(f: DiffFile): Status {
  if (f.oldPath === null) return 'added';
  if (f.newPath === null) return 'deleted';
  return f.oldPath === f.newPath ? 'modified' : 'renamed';
}

/** Why a file without hunks shows no text. */
function emptyReason(f: DiffFile, status: Status): string {
  if (f.tooLarge) return 'This file is too large to show its changes.';
  if (status === 'renamed') return 'Renamed without changes to its content.';
  if (status === 'modified') return 'No text changes: a binary file, or only the file mode changed.';
  return `No text to show: a binary or empty file was ${status}.`;
}

function counts(added: number, removed: number): HTMLElement {
  return h(
    'span',
    { class: 'diff-counts' },
    h('span', { class: 'added-count' }, `+${formatCount(added)}`),
    h('span', { class: 'sr-only' }, ' added lines,'),
    ' ',
    h('span', { class: 'removed-count' }, `−${formatCount(removed)}`),
    h('span', { class: 'sr-only' }, ' removed lines'),
  );
}

/** The table rows of a file's hunks as one HTML string (every text in it escaped). */
function rowsHtml(f: DiffFile, language: Language | undefined, oldHref: string, newHref: string): string {
  const parts: string[] = [];
  const ln = (href: string, side: string, n: number | undefined) =>
    n === undefined ? '<td class="ln"></td>' : `<td class="ln"><a href="${href}#L${n}" aria-label="${side} line ${n}">${n}</a></td>`;
  for (const hunk of f.hunks) {
    const { oldRange: o, newRange: n } = hunk;
    const heading = hunk.heading ? ` ${escapeHtml(hunk.heading)}` : '';
    parts.push(
      `<tr class="hunk"><td class="ln" colspan="2"></td><td class="sign"></td><td class="code">@@ -${o.start},${o.lines} +${n.start},${n.lines} @@${heading}</td></tr>`,
    );
    for (const line of hunkLines(hunk, language)) {
      const sign = line.kind === 'add' ? '+' : line.kind === 'del' ? '−' : '';
      parts.push(
        `<tr class="${line.kind}">${ln(oldHref, 'old', line.old)}${ln(newHref, 'new', line.new)}<td class="sign">${sign}</td><td class="code">${line.html}</td></tr>`,
      );
    }
  }
  return parts.join('');
}

/** The file's hunks as a table, highlighted once its grammar has loaded. */
function fileTable(repo: string, f: DiffFile, sides: { base: string; head: string }): HTMLElement {
  const path = f.newPath ?? f.oldPath ?? '';
  const oldHref = f.oldPath === null ? '' : escapeHtml(viewUrl('blob', repo, sides.base, f.oldPath));
  const newHref = f.newPath === null ? '' : escapeHtml(viewUrl('blob', repo, sides.head, f.newPath));
  const tbody = h('tbody');
  tbody.innerHTML = rowsHtml(f, undefined, oldHref, newHref);
  void loadLanguage(undefined, path).then((language) => {
    if (language) tbody.innerHTML = rowsHtml(f, language, oldHref, newHref);
  });
  return h('div', { class: 'code-scroll' }, h('table', { class: 'code-table diff-table', 'aria-label': `Changes to ${path}` }, tbody));
}

export function diffView(repo: string, diff: Diff, sides: { base: string; head: string }): HTMLElement {
  if (diff.files.length === 0) return h('p', { class: 'status' }, 'No changes.');
  let added = 0;
  let removed = 0;
  let drawn = 0;
  const items: HTMLElement[] = [];
  const sections: HTMLElement[] = [];
  diff.files.forEach((f, i) => {
    const status = statusOf(f);
    const c = lineCounts(f.hunks);
    added += c.added;
    removed += c.removed;
    const id = `diff-${i + 1}`;
    const path = f.newPath ?? f.oldPath ?? '';
    const name = status === 'renamed' ? `${f.oldPath} → ${f.newPath}` : path;
    const badge = h('span', { class: `diff-status ${status}` }, status);
    items.push(h('li', {}, badge, ' ', h('a', { href: `#${id}` }, name), ' ', counts(c.added, c.removed)));

    const href = f.newPath === null ? viewUrl('blob', repo, sides.base, f.oldPath ?? '') : viewUrl('blob', repo, sides.head, f.newPath);
    const head = h(
      'div',
      { class: 'diff-file-head' },
      h('h3', { id: `${id}-name` }, badge.cloneNode(true), ' ', h('a', { href, title: 'the file at this side of the diff' }, name)),
      counts(c.added, c.removed),
    );
    const lines = f.hunks.reduce((n, hunk) => n + hunk.body.split('\n').length, 0);
    let body: HTMLElement;
    if (f.hunks.length === 0) body = h('p', { class: 'diff-note' }, emptyReason(f, status));
    else if (lines > LARGE_FILE_LINES || drawn + lines > PAGE_LINES) {
      const show = h('button', { type: 'button', class: 'link' }, 'Show the diff');
      body = h('p', { class: 'diff-note' }, `A large diff (${formatCount(lines)} lines) is collapsed. `, show);
      show.addEventListener('click', () => body.replaceWith(fileTable(repo, f, sides)));
    } else {
      drawn += lines;
      body = fileTable(repo, f, sides);
    }
    sections.push(h('section', { class: 'diff-file', id, 'aria-labelledby': `${id}-name` }, head, body));
  });
  const files = diff.files.length;
  return h(
    'div',
    { class: 'diff' },
    h('h2', { class: 'diff-summary' }, `${formatCount(files)} ${files === 1 ? 'file' : 'files'} changed `, counts(added, removed)),
    diff.truncated ? h('p', { class: 'notice truncated' }, 'This diff was cut at 1,000 files or 10 MB of changes: the files after that are not shown.') : null,
    h('ol', { class: 'diff-files' }, items),
    sections,
  );
}
