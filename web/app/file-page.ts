// The file view at a result's webUrl: the file at its branch or ref with line numbers and
// syntax highlighting, the lines of the search's matches highlighted (?hl=), the line of
// #L<n> marked and scrolled to, the symbol outline beside it, and tabs to blame and
// history.

import { ApiError, apiJson, qs } from './api.ts';
import { codeView, hashLine } from './code-view.ts';
import { h } from './dom.ts';
import { breadcrumbs, errorBox, fileTabs, loading } from './file-header.ts';
import { parseLineList } from './ranges.ts';

interface Source {
  source: string;
  language: string;
  path: string;
  repo: string;
  webUrl: string;
  externalWebUrl?: string;
  blobSha?: string;
}

interface OutlineSymbol {
  symbol: string;
  kind: string;
  line: number;
  endLine: number;
  parent?: { symbol: string; kind: string };
}

export async function filePage(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  document.title = `${path.split('/').pop()} · ${repo} · trawl`;
  main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blob', repo, branch, path), loading('the file'));
  const params = { repo, path, ref: branch };
  const outline = apiJson<{ symbols: OutlineSymbol[] }>(`/api/outline?${qs(params)}`).catch((err: Error) => err);
  let file: Source;
  try {
    file = await apiJson<Source>(`/api/source?${qs(params)}`);
  } catch (err) {
    main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blob', repo, branch, path), errorBox((err as Error).message));
    return;
  }
  if (file.source.includes('\u0000')) {
    // A binary file: its bytes as text would be noise.
    main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blob', repo, branch, path, file.externalWebUrl),
      h('p', { class: 'notice' }, `Binary file (${new TextEncoder().encode(file.source).length.toLocaleString('en-US')} bytes as served); not shown.`));
    return;
  }
  const hits = parseLineList(new URL(location.href).searchParams.get('hl'));
  const view = codeView(file.source, file.language, hits);
  const meta = h('p', { class: 'file-meta' },
    `${view.lineCount.toLocaleString('en-US')} lines`, file.language ? ` · ${file.language}` : '',
    hits.size > 0 ? ` · ${hits.size} matched ${hits.size === 1 ? 'line' : 'lines'} highlighted` : '',
    file.blobSha ? h('span', { class: 'sha', title: 'git blob' }, ` · ${file.blobSha.slice(0, 10)}`) : '',
  );
  const aside = h('aside', { class: 'outline', 'aria-label': 'Symbol outline' }, h('h2', {}, 'Outline'), h('p', { class: 'status' }, 'Loading…'));
  main.replaceChildren(
    breadcrumbs(repo, branch, path),
    fileTabs('blob', repo, branch, path, file.externalWebUrl),
    meta,
    h('div', { class: 'file-layout' }, h('div', { class: 'file-code' }, view.element), aside),
  );
  const land = () => view.target(hashLine(location.hash) ?? (hits.size > 0 ? Math.min(...hits) : undefined), true);
  land();
  window.addEventListener('hashchange', land);
  renderOutline(aside, await outline);
}

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
  aside.replaceChildren(title, h('ul', {}, result.symbols.map((s) =>
    h('li', { class: s.parent ? 'nested' : undefined },
      h('a', { href: `#L${s.line}`, title: `${s.kind}${s.parent ? ` in ${s.parent.symbol}` : ''}, line ${s.line}` },
        h('span', { class: `kind kind-${s.kind.replace(/[^a-z]/gi, '')}` }, s.kind.slice(0, 1)),
        s.symbol,
      ),
    ))));
}
