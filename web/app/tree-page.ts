// A repository's folder: its entries (GET /api/folder_contents), folders first, each
// linking to the folder or file view. The repository page is its root at the default
// branch (GET /api/repos tells which that is).

import { apiJson, qs } from './api.ts';
import { h } from './dom.ts';
import { breadcrumbs, errorBox, loading } from './file-header.ts';
import { viewUrl } from './route.ts';

interface Entry {
  type: 'tree' | 'blob';
  path: string;
  name: string;
}

interface RepoListing {
  repoName: string;
  defaultBranch?: string;
  externalWebUrl?: string;
}

export async function repoPage(main: HTMLElement, repo: string): Promise<void> {
  main.replaceChildren(loading('the repository'));
  try {
    const list = await apiJson<RepoListing[]>(`/api/repos?${qs({ query: repo, perPage: 100 })}`);
    const found = list.find((r) => r.repoName === repo);
    if (!found) throw new Error(`no repository named ${repo}`);
    await treePage(main, repo, found.defaultBranch ?? 'HEAD', '');
  } catch (err) {
    main.replaceChildren(errorBox((err as Error).message));
  }
}

export async function treePage(main: HTMLElement, repo: string, branch: string, path: string): Promise<void> {
  document.title = `${path || repo} · trawl`;
  main.replaceChildren(breadcrumbs(repo, branch, path), loading('the folder'));
  let entries: Entry[];
  try {
    entries = await apiJson<Entry[]>(`/api/folder_contents?${qs({ repoName: repo, revisionName: branch, path: path || undefined })}`);
  } catch (err) {
    main.replaceChildren(breadcrumbs(repo, branch, path), errorBox((err as Error).message));
    return;
  }
  main.replaceChildren(
    breadcrumbs(repo, branch, path),
    entries.length === 0
      ? h('p', { class: 'status' }, 'This folder is empty.')
      : h(
          'ul',
          { class: 'tree' },
          entries.map((e) =>
            h(
              'li',
              { class: e.type },
              h(
                'a',
                { href: viewUrl(e.type === 'tree' ? 'tree' : 'blob', repo, branch, e.path) },
                h('span', { class: 'icon', 'aria-hidden': 'true' }, e.type === 'tree' ? '▸' : '·'),
                e.name,
                e.type === 'tree' ? '/' : '',
              ),
            ),
          ),
        ),
  );
}
