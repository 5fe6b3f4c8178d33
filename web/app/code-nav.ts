// Code navigation on the file view: clicking a word of the code offers "Go to definition"
// and "Find references" in a small menu at the click; either fills the side panel with what
// POST /api/find_definitions or /api/find_references answers, across every repository the
// reader may see, grouped by file, the file's own repository first. Each line links to the
// file view with the match marked (?hl=) and landed on (#L). One definition in all is
// opened at once, as editors do; the panel still lists it for the way back.
//
// The symbol endpoints search the index, so results are from the indexed branches whatever
// ref the file is shown at (a blame's old commit included); the panel says so.

import type { Range } from '../../daemon/search/types.ts';
import { ApiError, apiJson, postJson } from './api.ts';
import { h } from './dom.ts';
import { formatHighlights, pieces, spansByLine } from './ranges.ts';

interface FoundFile {
  fileName: string;
  repository: string;
  webUrl: string;
  language: string;
  matches: Array<{ lineContent: string; range: Range }>;
}

interface FindResponse {
  stats: { matchCount: number };
  files: FoundFile[];
}

export type NavKind = 'definitions' | 'references';

export interface NavContext {
  repo: string;
  path: string;
  /** Where the results go; replaced by each lookup. */
  panel: HTMLElement;
  /** A lookup starts: show the panel (it takes the outline's place). */
  onOpen: () => void;
  /** Closes the panel (the outline comes back). */
  onClose: () => void;
}

const ENDPOINT: Record<NavKind, string> = { definitions: '/api/find_definitions', references: '/api/find_references' };
const TITLE: Record<NavKind, string> = { definitions: 'Definitions', references: 'References' };

/** The menu offered at a clicked word; removes any earlier one. Escape or a click elsewhere closes it. */
export function showWordMenu(word: string, at: { x: number; y: number }, ctx: NavContext): HTMLElement {
  document.getElementById('nav-menu')?.remove();
  // Escape gives the focus back to where the click left it (the code), as a menu should.
  const returnTo = document.activeElement instanceof HTMLElement ? document.activeElement : undefined;
  const close = () => {
    menu.remove();
    document.removeEventListener('keydown', onKey, true);
    document.removeEventListener('mousedown', onOutside, true);
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    close();
    returnTo?.focus();
  };
  const onOutside = (e: MouseEvent) => {
    if (!menu.contains(e.target as Node)) close();
  };
  const item = (kind: NavKind, label: string) =>
    h(
      'button',
      {
        type: 'button',
        role: 'menuitem',
        'data-nav': kind,
        onclick: () => {
          close();
          void lookUp(kind, word, ctx);
        },
      },
      label,
    );
  const menu = h(
    'div',
    { id: 'nav-menu', class: 'nav-menu', role: 'menu', 'aria-label': `Navigate from ${word}` },
    h('div', { class: 'nav-word', 'aria-hidden': 'true' }, word),
    item('definitions', 'Go to definition'),
    item('references', 'Find references'),
  );
  menu.style.left = `${Math.min(at.x, window.innerWidth - 200)}px`;
  menu.style.top = `${at.y + 14}px`;
  document.body.append(menu);
  document.addEventListener('keydown', onKey, true);
  // After this click has finished, so that it does not close the menu it opened.
  setTimeout(() => document.addEventListener('mousedown', onOutside, true));
  menu.querySelector('button')?.focus();
  return menu;
}

/** Runs one lookup into the panel. */
export async function lookUp(kind: NavKind, word: string, ctx: NavContext): Promise<void> {
  const heading = h('h2', { id: 'nav-title' }, `${TITLE[kind]} of `, h('code', {}, word));
  const closeButton = h('button', { type: 'button', class: 'link nav-close', onclick: ctx.onClose, 'aria-label': 'Close the panel' }, '×');
  const status = h('p', { class: 'status', role: 'status' }, 'Looking…');
  ctx.panel.replaceChildren(h('div', { class: 'nav-head' }, heading, closeButton), status);
  ctx.onOpen();
  ctx.panel.setAttribute('aria-labelledby', 'nav-title');
  let res: FindResponse;
  try {
    res = await apiJson<FindResponse>(ENDPOINT[kind], postJson({ symbolName: word }));
  } catch (err) {
    status.textContent = '';
    ctx.panel.append(h('p', { class: 'notice error', role: 'alert' }, err instanceof ApiError ? err.message : `The lookup failed: ${(err as Error).message}`));
    return;
  }
  // The file's own repository first, then the rest as ranked.
  const files = [...res.files].sort((a, b) => Number(b.repository === ctx.repo) - Number(a.repository === ctx.repo));
  const n = files.reduce((k, f) => k + f.matches.length, 0);
  status.textContent =
    n === 0
      ? `No ${kind} of ${word} in the indexed branches.`
      : `${n.toLocaleString('en-US')} ${n === 1 ? kind.slice(0, -1) : kind} in ${files.length} ${files.length === 1 ? 'file' : 'files'}${res.stats.matchCount > n ? ` (of ${res.stats.matchCount.toLocaleString('en-US')})` : ''}, from the indexed branches.`;
  ctx.panel.append(
    h(
      'ul',
      { class: 'nav-files' },
      files.map((f) =>
        h(
          'li',
          {},
          h('div', { class: 'nav-file' }, h('span', { class: 'repo' }, f.repository), ' ', h('span', { class: 'path' }, f.fileName)),
          h(
            'ul',
            { class: 'nav-lines' },
            f.matches.map((m) => {
              const line = m.range.start.lineNumber;
              const spans = spansByLine([m.lineContent], line, [m.range]).get(line);
              return h(
                'li',
                {},
                h(
                  'a',
                  { href: `${f.webUrl}?hl=${formatHighlights([m.range])}#L${line}` },
                  h('span', { class: 'ln' }, line),
                  h(
                    'code',
                    {},
                    pieces(m.lineContent, spans).map((p) => (p.marked ? h('mark', {}, p.text) : p.text)),
                  ),
                ),
              );
            }),
          ),
        ),
      ),
    ),
  );
  if (kind === 'definitions' && n === 1) {
    const only = files[0]!;
    const here = only.repository === ctx.repo && only.fileName === ctx.path;
    const line = only.matches[0]!.range.start.lineNumber;
    // In this file only the fragment changes: the viewer scrolls, the panel stays.
    if (here) location.hash = `#L${line}`;
    else location.assign(`${only.webUrl}?hl=${formatHighlights([only.matches[0]!.range])}#L${line}`);
  }
}
