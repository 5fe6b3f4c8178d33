// History: the commits that touched a file, newest first (GET /api/commits with path),
// fifty per page; each links to its commit page (message and diff).

import { apiFetch, qs } from './api.ts';
import { h } from './dom.ts';
import { breadcrumbs, errorBox, fileTabs, loading } from './file-header.ts';
import { commitUrl } from './route.ts';

interface Commit {
  hash: string;
  date: string;
  message: string;
  body: string;
  authorName: string;
  authorEmail: string;
}

const PER_PAGE = 50;

export async function historyPage(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  document.title = `History of ${path.split('/').pop()} · ${repo} · trawl`;
  const head = () => [breadcrumbs(repo, branch, path), fileTabs('commits', repo, branch, path)];
  main.replaceChildren(...head(), loading('the history'));
  const page = Math.max(1, Number(new URL(location.href).searchParams.get('page')) || 1);
  let commits: Commit[];
  let total: number;
  try {
    const res = await apiFetch(`/api/commits?${qs({ repo, path, ref: branch, page, perPage: PER_PAGE })}`);
    total = Number(res.headers.get('X-Total-Count') ?? 0);
    commits = (await res.json()) as Commit[];
  } catch (err) {
    main.replaceChildren(...head(), errorBox((err as Error).message));
    return;
  }
  const pages = Math.max(1, Math.ceil(total / PER_PAGE));
  const pageLink = (n: number, label: string) => h('a', { href: `?page=${n}`, rel: n < page ? 'prev' : 'next' }, label);
  main.replaceChildren(
    ...head(),
    h('p', { class: 'file-meta' }, `${total.toLocaleString('en-US')} ${total === 1 ? 'commit' : 'commits'} touched this file`),
    commits.length === 0
      ? h('p', { class: 'status' }, 'No commits.')
      : h(
          'ol',
          { class: 'commits' },
          commits.map((c) =>
            h(
              'li',
              {},
              h(
                'div',
                { class: 'commit-line' },
                h('a', { class: 'sha', href: commitUrl(repo, c.hash), title: 'the commit and its changes' }, c.hash.slice(0, 10)),
                h('span', { class: 'msg' }, c.message),
              ),
              h(
                'div',
                { class: 'commit-by' },
                h('span', { class: 'who', title: c.authorEmail }, c.authorName),
                ' · ',
                h('time', { datetime: c.date }, c.date.replace('T', ' ').slice(0, 16)),
              ),
              c.body.trim() ? h('details', {}, h('summary', {}, 'Message'), h('pre', { class: 'body' }, c.body.trim())) : null,
            ),
          ),
        ),
    h(
      'nav',
      { class: 'pager', 'aria-label': 'Pages', hidden: pages <= 1 },
      page > 1 ? pageLink(page - 1, '← Newer') : null,
      ` Page ${page} of ${pages} `,
      page < pages ? pageLink(page + 1, 'Older →') : null,
    ),
  );
}
