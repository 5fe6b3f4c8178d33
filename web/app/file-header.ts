// The header of the file and folder pages: breadcrumbs (repository, then each folder),
// the branch, and tabs between the views of a file (code, blame, history).

import { h } from './dom.ts';
import { repoUrl, viewUrl, type View } from './route.ts';

export function breadcrumbs(repo: string, branch: string, path: string): HTMLElement {
  const parts = path.split('/').filter((p) => p !== '');
  const items: HTMLElement[] = [h('li', {}, h('a', { href: repoUrl(repo), class: 'repo-link' }, repo))];
  parts.forEach((name, i) => {
    const last = i === parts.length - 1;
    const sub = parts.slice(0, i + 1).join('/');
    items.push(h('li', {}, last ? h('span', { 'aria-current': 'page' }, name) : h('a', { href: viewUrl('tree', repo, branch, sub) }, name)));
  });
  return h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumbs' }, h('ol', {}, items), h('span', { class: 'branch', title: 'branch or ref' }, branch));
}

/** The breadcrumbs of a repository's page that is not a path (a commit, a comparison): the repository, then `label`. */
export function repoCrumbs(repo: string, label: string): HTMLElement {
  return h(
    'nav',
    { class: 'crumbs', 'aria-label': 'Breadcrumbs' },
    h('ol', {}, h('li', {}, h('a', { href: repoUrl(repo), class: 'repo-link' }, repo)), h('li', {}, h('span', { 'aria-current': 'page' }, label))),
  );
}

export function fileTabs(active: View, repo: string, branch: string, path: string, external?: string): HTMLElement {
  const tab = (view: View, label: string) =>
    h(
      'a',
      { href: viewUrl(view, repo, branch, path), class: view === active ? 'tab active' : 'tab', 'aria-current': view === active ? 'page' : undefined },
      label,
    );
  return h(
    'nav',
    { class: 'tabs', 'aria-label': 'File views' },
    tab('blob', 'Code'),
    tab('blame', 'Blame'),
    tab('commits', 'History'),
    external ? h('a', { href: external, class: 'tab external', rel: 'noopener noreferrer' }, 'View on code host ↗') : null,
  );
}

export function errorBox(message: string): HTMLElement {
  return h('p', { class: 'notice error', role: 'alert' }, message);
}

export function loading(what: string): HTMLElement {
  return h('p', { class: 'status', role: 'status' }, `Loading ${what}…`);
}
