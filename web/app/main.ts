// The web UI's entry point (bundled by daemon/web/assets.ts). The daemon serves one
// shell page for every UI path; this reads the path, starts the browser-session check, and
// draws the page at once: its requests do not wait for the check (api.ts says how a
// refused one waits for it and for sign-in), so a search in the address is on its way
// before GET /api/session answers. Pages are separate documents: links are plain links, so the back
// button, new tabs and bookmarks work as anywhere else.

import { byId, h } from './dom.ts';
import { fetchFile } from './file-fetch.ts';
import { historyPage } from './history-page.ts';
import { installKeyboardShortcuts } from './keyboard-shortcuts.ts';
import { parseRoute } from './route.ts';
import { paramsFromUrl, searchForm, searchUrl } from './search-form.ts';
import { SearchPage } from './search-page.ts';
import { canBrowse, requireSignIn, startSession } from './session.ts';
import { settingsPage } from './settings-page.ts';
import { repoPage, treePage } from './tree-page.ts';

async function start(): Promise<void> {
  const main = byId('main');
  const route = parseRoute(location.pathname);
  const initial = paramsFromUrl(new URL(location.href));
  let page: SearchPage | undefined;
  const form = searchForm(route.page === 'search' ? initial : { ...initial, query: '' }, (p) => {
    if (page) void page.run(p, true);
    else location.assign(searchUrl(p));
  });
  byId('search-slot').append(form.element);
  installKeyboardShortcuts({ input: form.input, links: () => (page ? page.links() : []) });

  // Not cancellable: without anonymous access the page waits for a key (its requests too).
  const sessionChecked = startSession();
  void sessionChecked.then(() => canBrowse() || requireSignIn());

  switch (route.page) {
    case 'search': {
      page = new SearchPage(form);
      main.replaceChildren(page.element);
      window.addEventListener('popstate', () => {
        const p = paramsFromUrl(new URL(location.href));
        form.show(p);
        if (p.query) void page!.run(p, false);
      });
      if (initial.query.trim()) await page.run(initial, false);
      else form.input.focus();
      return;
    }
    case 'settings':
      return settingsPage(main, sessionChecked);
    case 'repo':
      return repoPage(main, route.repo);
    case 'tree':
      return treePage(main, route.repo, route.branch, route.path);
    // The pages that show code load on demand: CodeMirror and the grammars are chunks
    // the search page never downloads.
    case 'blob': {
      const requests = fetchFile(route.repo, route.branch, route.path);
      return (await import('./file-page.ts')).filePage(main, route.repo, route.branch, route.path, requests);
    }
    case 'blame':
      return (await import('./blame-page.ts')).blamePage(main, route.repo, route.branch, route.path);
    case 'commits':
      return historyPage(main, route.repo, route.branch, route.path);
    case 'commit':
      return (await import('./commit-page.ts')).commitPage(main, route.repo, route.sha);
    case 'compare':
      return (await import('./compare-page.ts')).comparePage(main, route.repo, route.refs);
    default:
      document.title = 'Not found · trawl';
      main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'This address is not a page of trawl. ', h('a', { href: '/' }, 'Search')));
  }
}

start().catch((err: unknown) => {
  const main = document.getElementById('main');
  main?.replaceChildren(h('p', { class: 'notice error', role: 'alert' }, `The page could not start: ${(err as Error).message}`));
});
