// Blame: for each run of lines, the commit that last changed them (GET /api/blame), shown
// beside the highlighted file; each commit links to its commit page (message and diff).

import { apiJson, qs } from './api.ts';
import { codeView } from './code-view.ts';
import { hashSpan } from './ranges.ts';
import { escapeHtml } from './html.ts';
import { breadcrumbs, errorBox, fileTabs, loading } from './file-header.ts';
import { commitUrl } from './route.ts';
import { loadLanguage } from './syntax.ts';

interface Blame {
  ranges: Array<{ hash: string; path: string; startLine: number; lineCount: number }>;
  commits: Record<string, { hash: string; date: string; message: string; authorName: string; authorEmail: string }>;
}

export async function blamePage(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  document.title = `Blame ${path.split('/').pop()} · ${repo} · trawl`;
  const head = () => [breadcrumbs(repo, branch, path), fileTabs('blame', repo, branch, path)];
  main.replaceChildren(...head(), loading('blame'));
  const params = { repo, path, ref: branch };
  let blame: Blame;
  let file: { source: string; language: string; externalWebUrl?: string };
  try {
    [blame, file] = await Promise.all([apiJson<Blame>(`/api/blame?${qs(params)}`), apiJson<{ source: string; language: string }>(`/api/source?${qs(params)}`)]);
  } catch (err) {
    main.replaceChildren(...head(), errorBox((err as Error).message));
    return;
  }
  const starts = new Map<number, Blame['ranges'][number]>();
  for (const r of blame.ranges) starts.set(r.startLine, r);
  const cell = (line: number): string => {
    const r = starts.get(line);
    if (!r) return '<td class="blame"></td>';
    const c = blame.commits[r.hash];
    const when = c ? c.date.slice(0, 10) : '';
    const who = c ? c.authorName : '';
    const msg = c ? c.message : '';
    const href = commitUrl(repo, r.hash);
    return `<td class="blame start"><a href="${escapeHtml(href)}" title="${escapeHtml(`${r.hash}\n${who} <${c?.authorEmail ?? ''}>\n${msg}`)}">${escapeHtml(r.hash.slice(0, 8))}</a> <span class="when">${escapeHtml(when)}</span> <span class="who">${escapeHtml(who)}</span> <span class="msg">${escapeHtml(msg)}</span></td>`;
  };
  const view = codeView(file.source, await loadLanguage(file.language, path), cell);
  main.replaceChildren(breadcrumbs(repo, branch, path), fileTabs('blame', repo, branch, path, file.externalWebUrl), view.element);
  const land = () => view.target(hashSpan(location.hash)?.from, true);
  land();
  window.addEventListener('hashchange', land);
}
