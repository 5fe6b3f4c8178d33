// The file view at a result's webUrl: the file at its branch or ref in the code viewer
// (code-viewer.ts: virtualised, highlighted by the file's grammar once it has loaded), the
// search's matches marked (?hl=, parseHighlights), the #L<n> or #L<a>-L<b> range marked and
// scrolled to, the symbol outline beside it, code navigation (code-nav.ts) in the same
// side column, and tabs to blame and history. main.ts loads this module on demand, so
// CodeMirror is downloaded by the pages that show code only.

import { ApiError } from './api.ts';
import { codeViewer, type CodeViewer } from './code-viewer.ts';
import { showWordMenu, type NavContext } from './code-nav.ts';
import { h } from './dom.ts';
import { fetchFile, type FileRequests, type OutlineSymbol, type Source } from './file-fetch.ts';
import { breadcrumbs, errorBox, fileTabs, loading } from './file-header.ts';
import { hashSpan, parseHighlights, spanHash } from './ranges.ts';
import { loadLanguage } from './syntax.ts';

/** `requests`: fetchFile's, started before this module loaded (main.ts). */
export async function filePage(
  main: HTMLElement,
  repo: string,
  branch: string,
  path: string,
  requests: FileRequests = fetchFile(repo, branch, path),
): Promise<void> {
  document.title = `${path.split('/').pop()} · ${repo} · trawl`;
  main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blob', repo, branch, path), loading('the file'));
  const outline = requests.outline;
  let file: Source;
  try {
    file = await requests.file;
  } catch (err) {
    main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blob', repo, branch, path), errorBox((err as Error).message));
    return;
  }
  if (file.source.includes('\u0000')) {
    // A binary file: its bytes as text would be noise.
    main.replaceChildren(
      breadcrumbs(repo, branch, path),
      fileTabs('blob', repo, branch, path, file.externalWebUrl),
      h('p', { class: 'notice' }, `Binary file (${new TextEncoder().encode(file.source).length.toLocaleString('en-US')} bytes as served); not shown.`),
    );
    return;
  }
  // The grammar's chunk is fetched while the viewer is built; the code shows plain until then.
  const language = loadLanguage(file.language, path);
  const marks = parseHighlights(new URL(location.href).searchParams.get('hl'));
  const aside = h('aside', { class: 'outline', 'aria-label': 'Symbol outline' }, h('h2', {}, 'Outline'), h('p', { class: 'status' }, 'Loading…'));
  const panel = h('aside', { class: 'nav-panel', id: 'nav-panel', 'aria-label': 'Code navigation', hidden: true });
  const nav: NavContext = {
    repo,
    path,
    panel,
    onOpen: () => {
      aside.hidden = true;
      panel.hidden = false;
    },
    onClose: () => {
      panel.hidden = true;
      aside.hidden = false;
      viewer.view.focus();
    },
  };
  const viewer: CodeViewer = codeViewer({
    source: file.source,
    hitLines: marks.lines,
    matches: marks.ranges,
    onWord: (word, at) => void showWordMenu(word, at, nav),
    onRange: (span) => {
      history.replaceState(null, '', spanHash(span));
      land(false);
    },
  });
  const hits = marks.lines.size;
  const meta = h(
    'p',
    { class: 'file-meta' },
    `${viewer.lineCount.toLocaleString('en-US')} lines`,
    file.language ? ` · ${file.language}` : '',
    hits > 0 ? ` · ${hits} matched ${hits === 1 ? 'line' : 'lines'} highlighted` : '',
    file.blobSha ? h('span', { class: 'sha', title: 'git blob' }, ` · ${file.blobSha.slice(0, 10)}`) : '',
  );
  main.replaceChildren(
    breadcrumbs(repo, branch, path),
    fileTabs('blob', repo, branch, path, file.externalWebUrl),
    meta,
    h('div', { class: 'file-layout' }, h('div', { class: 'file-code' }, viewer.element), h('div', { class: 'file-side' }, aside, panel)),
  );
  const first = marks.lines.size > 0 ? Math.min(...marks.lines) : undefined;
  function land(scroll: boolean): void {
    viewer.target(hashSpan(location.hash) ?? (first === undefined ? undefined : { from: first, to: first }), scroll);
  }
  // For the web benchmark and the tests: when the line landed on is on screen (ms since the
  // navigation began), and which line that was.
  const landed = () => {
    const span = hashSpan(location.hash);
    const line = span?.from ?? first ?? 1;
    delete main.dataset.landedAt;
    void viewer.whenDrawn(line).then((t) => {
      main.dataset.landedLine = String(line);
      main.dataset.landedAt = t.toFixed(1);
    });
  };
  land(true);
  landed();
  window.addEventListener('hashchange', () => {
    land(true);
    landed();
  });
  void language.then((lang) => {
    viewer.setLanguage(lang);
    main.dataset.language = lang ? lang.name : 'plain';
  });
  renderOutline(aside, await outline);
}

/** Symbols listed in the outline at most. */
const OUTLINE_MAX = 2_000;

function renderOutline(aside: HTMLElement, result: { symbols: OutlineSymbol[] } | Error): void {
  const title = h('h2', {}, 'Outline');
  if (result instanceof Error) {
    aside.replaceChildren(title, h('p', { class: 'status' }, result instanceof ApiError ? `No outline: ${result.message}` : 'No outline.'));
    return;
  }
  if (result.symbols.length === 0) {
    aside.replaceChildren(title, h('p', { class: 'status' }, 'No symbols in this file.'));
    return;
  }
  // A generated file can define tens of thousands of symbols; the list stays short enough to draw.
  const shown = result.symbols.slice(0, OUTLINE_MAX);
  const rest = result.symbols.length - shown.length;
  const note =
    rest > 0
      ? [h('p', { class: 'status' }, `The first ${OUTLINE_MAX.toLocaleString('en-US')} of ${result.symbols.length.toLocaleString('en-US')} symbols.`)]
      : [];
  aside.replaceChildren(
    title,
    ...note,
    h(
      'ul',
      {},
      shown.map((s) =>
        h(
          'li',
          { class: s.parent ? 'nested' : undefined },
          h(
            'a',
            {
              href: spanHash({ from: s.line, to: Math.max(s.endLine, s.line) }),
              title: `${s.kind}${s.parent ? ` in ${s.parent.symbol}` : ''}, line ${s.line}`,
            },
            h('span', { class: `kind kind-${s.kind.replace(/[^a-z]/gi, '')}` }, s.kind.slice(0, 1)),
            s.symbol,
          ),
        ),
      ),
    ),
  );
}
