// The changes between two refs (GET /api/diff with base and head), drawn by diff-view.ts,
// under a form to pick other refs. Without refs the page is only the form, the base
// filled in with the default branch.
//
// The API lists no branches or tags, so the form suggests the refs it can see: the
// default branch (GET /api/repos) and the branches and tags that decorate the newest
// hundred commits of the default branch (GET /api/commits, git's %D decoration). Any
// other ref, commit id or revparse suffix may be typed. The commits in head and not in
// base are not listed: GET /api/commits walks from one ref and cannot leave another's
// history out.

import { apiJson, qs } from './api.ts';
import { h } from './dom.ts';
import { diffView, type Diff } from './diff-view.ts';
import { errorBox, loading, repoCrumbs } from './file-header.ts';
import { compareUrl } from './route.ts';

type Refs = { base: string; head: string };

/** The default branch, then the refs decorating its recent commits ("HEAD -> main, tag: v1"), without repeats. */
async function knownRefs(repo: string): Promise<{ defaultBranch?: string; refs: string[] }> {
  const [repos, commits] = await Promise.all([
    apiJson<Array<{ repoName: string; defaultBranch?: string }>>(`/api/repos?${qs({ query: repo, perPage: 100 })}`),
    apiJson<Array<{ refs: string }>>(`/api/commits?${qs({ repo, perPage: 100 })}`),
  ]);
  const defaultBranch = repos.find((r) => r.repoName === repo)?.defaultBranch;
  const refs = new Set<string>(defaultBranch ? [defaultBranch] : []);
  for (const c of commits) {
    for (const part of c.refs.split(', ')) {
      const name = part.replace(/^HEAD -> /, '').replace(/^tag: /, '');
      if (name !== '' && name !== 'HEAD') refs.add(name);
    }
  }
  return defaultBranch ? { defaultBranch, refs: [...refs] } : { refs: [...refs] };
}

function compareForm(repo: string, refs: Refs | null): HTMLFormElement {
  const input = (id: string, value: string) =>
    h('input', { id, name: id, list: 'compare-refs', required: true, value, autocomplete: 'off', spellcheck: 'false' });
  const base = input('compare-base', refs?.base ?? '');
  const head = input('compare-head', refs?.head ?? '');
  const options = h('datalist', { id: 'compare-refs' });
  const form = h(
    'form',
    { class: 'compare-form', 'aria-label': 'Refs to compare' },
    h('label', { for: 'compare-base' }, 'Base'),
    base,
    h('span', { class: 'dots', 'aria-hidden': 'true' }, '…'),
    h('label', { for: 'compare-head' }, 'Head'),
    head,
    h('button', { type: 'submit', class: 'primary' }, 'Compare'),
    refs ? h('a', { href: compareUrl(repo, { base: refs.head, head: refs.base }) }, 'Swap') : null,
    options,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    location.assign(compareUrl(repo, { base: base.value.trim(), head: head.value.trim() }));
  });
  // Suggestions only: the form works without them, so a failure to list refs is ignored.
  void knownRefs(repo).then(
    ({ defaultBranch, refs: names }) => {
      options.replaceChildren(...names.map((value) => h('option', { value })));
      if (!refs && defaultBranch && base.value === '') base.value = defaultBranch;
    },
    () => undefined,
  );
  return form;
}

export async function comparePage(main: HTMLElement, repo: string, refs: Refs | null): Promise<void> {
  const crumbs = repoCrumbs(repo, 'compare');
  const title = refs
    ? h('h1', { class: 'compare-title' }, 'Comparing ', h('code', {}, refs.base), ' … ', h('code', {}, refs.head))
    : h('h1', { class: 'compare-title' }, 'Compare two refs');
  document.title = refs ? `${refs.base}...${refs.head} · ${repo} · trawl` : `Compare · ${repo} · trawl`;
  const top = [crumbs, title, compareForm(repo, refs)];
  if (!refs) {
    main.replaceChildren(...top, h('p', { class: 'file-meta' }, 'The changes from the base to the head: what the head adds, as git diff base head shows it.'));
    return;
  }
  main.replaceChildren(...top, loading('the changes'));
  try {
    const diff = await apiJson<Diff>(`/api/diff?${qs({ repo, base: refs.base, head: refs.head })}`);
    main.replaceChildren(...top, diffView(repo, diff, refs));
  } catch (err) {
    main.replaceChildren(...top, errorBox((err as Error).message));
  }
}
