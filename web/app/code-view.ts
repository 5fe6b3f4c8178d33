// A file's lines as a table: line-number links (#L<n>) and syntax-highlighted code. The
// rows are built as one HTML string: the highlighter escapes every character of the
// source itself (web/highlight), line numbers are integers, and the DOM then parses
// 20,000 lines in one go instead of creating 60,000 nodes by hand.

import { highlightLines } from '../highlight/highlight.ts';
import { h } from './dom.ts';

export interface CodeView {
  element: HTMLElement;
  /** Marks the line the URL's #L<n> names and scrolls to it. */
  target(line: number | undefined, scroll: boolean): void;
  lineCount: number;
}

/** The line a fragment names: "#L12" or "#L12-L20" (the first). */
export function hashLine(hash: string): number | undefined {
  const m = /^#L(\d+)(?:-L?\d+)?$/.exec(hash);
  return m ? Number(m[1]) : undefined;
}

export function codeView(source: string, language: string, hits: Set<number>, extraCells?: (line: number) => string): CodeView {
  const text = source.endsWith('\n') ? source.slice(0, -1) : source;
  const lines = highlightLines(language, text);
  const parts: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    parts.push(`<tr id="L${n}"${hits.has(n) ? ' class="hit"' : ''}>${extraCells ? extraCells(n) : ''}<td class="ln"><a href="#L${n}" aria-label="line ${n}">${n}</a></td><td class="code">${lines[i]}</td></tr>`);
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
