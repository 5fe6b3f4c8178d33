// One search result (a file) as a list item: its path (name matches marked), repository,
// branches (a commit of a history search: its short id) and language, then, for a
// `history:yes` search, the spans of the default branch's history during which the file
// held matches (each end a link to its commit), then its chunks with line numbers and the
// matches marked (a type:commit or type:diff result: the commit, then its message lines or
// hunks that matched). Links go to the file view at the result's webUrl, with the matched
// lines to highlight (?hl=) and the line to land on (#L<n>).

import type { CommitInfo, CommitRef, FileResult } from '../../daemon/search/types.ts';
import { h } from './dom.ts';
import { commitUrl, viewUrl } from './route.ts';
import { formatHighlights, pieces, spansByLine } from './ranges.ts';

/** Chunks shown per file before "show more"; a file with thousands of matches stays short. */
const CHUNKS_SHOWN = 3;

export function matchCount(f: FileResult): number {
  return f.chunks.reduce((n, c) => n + c.matchRanges.length, 0) + f.fileName.matchRanges.length;
}

/** The lines of a file that hold a match, for ?hl=. */
function matchedLines(f: FileResult): number[] {
  const lines: number[] = [];
  for (const c of f.chunks) for (const r of c.matchRanges) for (let n = r.start.lineNumber; n <= r.end.lineNumber; n++) lines.push(n);
  return lines;
}

export function fileLink(f: FileResult, line?: number): string {
  const lines = matchedLines(f);
  const target = line ?? lines[0];
  // The exact ranges while a link can hold them (ranges.ts formatHighlights), else the lines.
  const hl = lines.length > 0 ? `?hl=${formatHighlights(f.chunks.flatMap((c) => c.matchRanges))}` : '';
  return `${f.webUrl}${hl}${target !== undefined ? `#L${target}` : ''}`;
}

export function renderResult(f: FileResult, index: number): HTMLElement {
  if (f.commit) return renderCommit(f, f.commit, index);
  const nameSpans = f.fileName.matchRanges.length > 0 ? spansByLine([f.fileName.text], 1, f.fileName.matchRanges).get(1) : undefined;
  const path = pieces(f.fileName.text, nameSpans).map((p) => (p.marked ? h('mark', {}, p.text) : p.text));
  const n = matchCount(f);
  const chunks = f.chunks.map((c) => renderChunk(f, c));
  const hidden = chunks.slice(CHUNKS_SHOWN);
  const more =
    hidden.length > 0
      ? h(
          'button',
          {
            type: 'button',
            class: 'link more',
            onclick: (e: Event) => {
              for (const c of hidden) c.hidden = false;
              (e.currentTarget as HTMLElement).remove();
            },
          },
          `Show ${hidden.length} more ${hidden.length === 1 ? 'chunk' : 'chunks'} in this file`,
        )
      : null;
  for (const c of hidden) c.hidden = true;
  return h(
    'li',
    { class: 'result', 'data-index': index },
    h(
      'div',
      { class: 'result-head' },
      h('a', { class: 'path', href: fileLink(f), 'data-result-link': true }, path),
      h('span', { class: 'repo', title: 'repository' }, f.repository),
      f.branches.length > 0 ? h('span', { class: 'branch', title: f.branches.join(', ') }, f.branches.map(shortRef).join(', ')) : null,
      f.language ? h('span', { class: 'lang' }, f.language) : null,
      h('span', { class: 'count' }, `${n} ${n === 1 ? 'match' : 'matches'}`),
    ),
    f.history ? renderHistory(f) : null,
    chunks,
    more,
  );
}

/** A commit id as its first 8 digits; a branch or tag name as it is. */
function shortRef(name: string): string {
  return /^[0-9a-f]{40}$/.test(name) ? name.slice(0, 8) : name;
}

function commitLink(f: FileResult, c: CommitRef): HTMLElement {
  return h('a', { class: 'commit', href: commitUrl(f.repository, c.id), title: c.date }, c.id.slice(0, 8));
}

/** The spans of a `history:yes` result: "from <commit> (date) to <commit> (date)", or "still there". */
function renderHistory(f: FileResult): HTMLElement {
  const history = f.history!;
  const day = (c: CommitRef) => c.date.slice(0, 10);
  return h(
    'div',
    { class: 'result-history' },
    h('span', { class: 'label' }, `${history.changes.length} ${history.changes.length === 1 ? 'change' : 'changes'}; held matches `),
    history.spans.map((span, i) =>
      h(
        'span',
        { class: 'span' },
        i > 0 ? ', ' : '',
        'from ',
        commitLink(f, span.appeared),
        ` (${day(span.appeared)}) `,
        span.gone ? ['until ', commitLink(f, span.gone), ` (${day(span.gone)})`] : 'until now',
      ),
    ),
  );
}

/**
 * A type:commit result: the commit (short id and first line, linked to its page), its
 * repository, author and date, then the message lines that matched. A type:diff result also
 * names the changed file, linked to it as it was after the commit (before it, when the
 * commit deleted it: its first parent), and its chunks are the hunks.
 */
function renderCommit(f: FileResult, c: CommitInfo, index: number): HTMLElement {
  const n = matchCount(f);
  return h(
    'li',
    { class: 'result commit-result', 'data-index': index },
    h(
      'div',
      { class: 'result-head' },
      h('a', { class: 'path', href: f.webUrl, 'data-result-link': true }, h('span', { class: 'sha' }, c.id.slice(0, 10)), ' ', c.message.split('\n')[0] ?? ''),
      f.diff ? diffFileLink(f, c, f.diff) : null,
      h('span', { class: 'repo', title: 'repository' }, f.repository),
      h('span', { class: 'author', title: c.author.email }, c.author.name),
      h('span', { class: 'date', title: `committed ${c.committer.date}` }, c.committer.date.slice(0, 10)),
      h('span', { class: 'count' }, `${n} ${n === 1 ? 'match' : 'matches'}`),
    ),
    f.chunks.map((ch) => renderChunk(f, ch)),
  );
}

/** The file a diff result changed, at the commit (a deletion: at its parent, where it still is). */
function diffFileLink(f: FileResult, c: CommitInfo, diff: NonNullable<FileResult['diff']>): HTMLElement {
  // A deleted file's one hunk is `@@ -1,N +0,0 @@`.
  const deleted = f.chunks.length === 1 && f.chunks[0]!.hunk?.newStart === 0 && f.chunks[0]!.hunk.newLines === 0 && f.chunks[0]!.hunk.oldStart === 1;
  const at = deleted && diff.parent !== null ? diff.parent : c.id;
  return h('a', { class: 'diff-path', href: viewUrl('blob', f.repository, at, diff.path) }, diff.oldPath ? `${diff.oldPath} → ${diff.path}` : diff.path);
}

function renderChunk(f: FileResult, c: FileResult['chunks'][number]): HTMLElement {
  const lines = c.content.split('\n');
  const first = c.contentStart.lineNumber;
  const spans = spansByLine(lines, first, c.matchRanges);
  const rows = lines.map((text, i) => {
    const n = first + i;
    const marks = spans.get(n);
    return h(
      'tr',
      { class: marks ? 'hit' : undefined },
      // A commit's message lines link to the commit's page.
      h('td', { class: 'ln' }, h('a', { href: f.commit ? f.webUrl : fileLink(f, n), tabindex: -1, 'aria-label': `line ${n}` }, n)),
      h(
        'td',
        { class: 'code' },
        pieces(text, marks).map((p) => (p.marked ? h('mark', {}, p.text) : p.text)),
      ),
    );
  });
  const symbols =
    c.symbols.length > 0
      ? h(
          'div',
          { class: 'chunk-symbols' },
          h('span', { class: 'label' }, 'defines '),
          c.symbols.map((s) => h('span', { class: 'sym', title: s.kind }, s.parent ? `${s.parent.symbol}.` : '', s.symbol)),
        )
      : null;
  return h('div', { class: 'chunk' }, symbols, h('table', { class: 'code-table' }, h('tbody', {}, rows)));
}
