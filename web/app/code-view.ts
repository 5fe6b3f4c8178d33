// A file's lines as a table: line-number links (#L<n>), syntax-highlighted code and, for
// blame, extra cells before each line. The rows are built as one HTML string
// (syntax.ts escapes every character of the source, line numbers are integers) and the
// DOM parses them in one go instead of creating nodes by hand. The file view itself uses
// the virtualised viewer (code-viewer.ts); this table is for pages that need a column
// beside every line.

import type { Language } from '@codemirror/language';
import { h } from './dom.ts';
import { highlightedLines } from './syntax.ts';

export interface CodeView {
  element: HTMLElement;
  /** Marks the line the URL's #L<n> names and scrolls to it. */
  target(line: number | undefined, scroll: boolean): void;
  lineCount: number;
}

export function codeView(source: string, language: Language | undefined, extraCells?: (line: number) => string): CodeView {
  const text = source.endsWith('\n') ? source.slice(0, -1) : source;
  const lines = highlightedLines(text, language);
  const parts: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    parts.push(
      `<tr id="L${n}">${extraCells ? extraCells(n) : ''}<td class="ln"><a href="#L${n}" aria-label="line ${n}">${n}</a></td><td class="code">${lines[i]}</td></tr>`,
    );
  }
  const tbody = h('tbody');
  tbody.innerHTML = parts.join('');
  const table = h('table', { class: 'code-table source', 'aria-label': 'File content' }, tbody);
  let current: HTMLElement | undefined;
  return {
    element: h('div', { class: 'code-scroll' }, table),
    lineCount: lines.length,
    target(line, scroll) {
      current?.classList.remove('target');
      current = line === undefined ? undefined : (tbody.querySelector<HTMLElement>(`#L${line}`) ?? undefined);
      if (!current) return;
      current.classList.add('target');
      if (scroll) current.scrollIntoView({ block: 'center' });
    },
  };
}
