// One commit (GET /api/commit): its message, author, date, hash, parents and refs, then its
// changes (GET /api/diff, drawn by diff-view.ts) against its first parent, which is what
// `git show --first-parent` and the code hosts show for a merge. A root commit has no
// parent: it is diffed against git's empty tree, which the API reads as "no files", so
// every file of the commit shows as added.

import { apiJson, qs } from './api.ts';
import { copyText } from './clipboard.ts';
import { h } from './dom.ts';
import { diffView, type Diff } from './diff-view.ts';
import { errorBox, loading, repoCrumbs } from './file-header.ts';
import { commitUrl, viewUrl } from './route.ts';

interface Commit {
  hash: string;
  date: string;
  message: string;
  body: string;
  refs: string;
  authorName: string;
  authorEmail: string;
  parents: string[];
}

/** git's empty tree (daemon/repos/diff.ts EMPTY_TREE): the base of a root commit's diff. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A copy button for the hash (clipboard.ts: selected for Ctrl+C where the page may not copy). */
function copyButton(target: HTMLElement): HTMLElement[] {
  const said = h('span', { class: 'copied', role: 'status' });
  const copy = async () => {
    const copied = await copyText(target.textContent ?? '', () => getSelection()?.selectAllChildren(target));
    said.textContent = copied ? 'Copied' : 'Selected: copy it with Ctrl+C';
  };
  return [h('button', { type: 'button', class: 'copy', onclick: () => void copy() }, 'Copy'), said];
}

/** git's %D decoration ("HEAD -> main, tag: v1") as one label per ref. */
function refLabels(refs: string): HTMLElement[] {
  return refs
    .split(', ')
    .filter((r) => r !== '')
    .map((r) => h('span', { class: r.startsWith('tag: ') ? 'ref tag' : 'ref' }, r));
}

function header(repo: string, c: Commit): HTMLElement {
  const hash = h('code', { class: 'sha full' }, c.hash);
  const parents =
    c.parents.length === 0
      ? ['none: this is a first commit']
      : c.parents.map((p, i) => [i > 0 ? ' ' : null, h('a', { class: 'sha', href: commitUrl(repo, p), title: `parent ${p}` }, p.slice(0, 10))]);
  return h(
    'header',
    { class: 'commit-head' },
    h('h1', { class: 'commit-subject' }, c.message || '(no message)'),
    c.body ? h('pre', { class: 'commit-body' }, c.body) : null,
    h(
      'dl',
      { class: 'commit-meta' },
      h('dt', {}, 'Author'),
      h('dd', {}, h('span', { class: 'who' }, c.authorName), ' ', h('span', { class: 'email' }, `<${c.authorEmail}>`)),
      h('dt', {}, 'Date'),
      h('dd', {}, h('time', { datetime: c.date }, `${c.date.replace('T', ' ').slice(0, 16)} UTC`)),
      h('dt', {}, 'Commit'),
      h('dd', {}, hash, ' ', copyButton(hash)),
      h('dt', {}, c.parents.length > 1 ? 'Parents' : 'Parent'),
      h('dd', { class: 'parents' }, parents),
      c.refs ? [h('dt', {}, 'Refs'), h('dd', {}, refLabels(c.refs))] : null,
    ),
    h('p', {}, h('a', { href: viewUrl('tree', repo, c.hash, '') }, 'Browse the files at this commit')),
  );
}

export async function commitPage(main: HTMLElement, repo: string, sha: string): Promise<void> {
  document.title = `Commit ${sha.slice(0, 10)} · ${repo} · trawl`;
  main.replaceChildren(repoCrumbs(repo, `commit ${sha.slice(0, 10)}`), loading('the commit'));
  let commit: Commit;
  try {
    commit = await apiJson<Commit>(`/api/commit?${qs({ repo, ref: sha })}`);
  } catch (err) {
    main.replaceChildren(repoCrumbs(repo, `commit ${sha.slice(0, 10)}`), errorBox((err as Error).message));
    return;
  }
  document.title = `${commit.message} · ${commit.hash.slice(0, 10)} · ${repo} · trawl`;
  const top = [repoCrumbs(repo, `commit ${commit.hash.slice(0, 10)}`), header(repo, commit)];
  const base = commit.parents[0] ?? EMPTY_TREE;
  const note =
    commit.parents.length === 0
      ? h('p', { class: 'file-meta' }, 'The first commit of its history: every file is new.')
      : commit.parents.length > 1
        ? h('p', { class: 'file-meta' }, 'A merge: these are its changes against its first parent.')
        : null;
  main.replaceChildren(...top, loading('the changes'));
  try {
    const diff = await apiJson<Diff>(`/api/diff?${qs({ repo, base, head: commit.hash })}`);
    main.replaceChildren(...top, ...(note ? [note] : []), diffView(repo, diff, { base, head: commit.hash }));
  } catch (err) {
    main.replaceChildren(...top, errorBox((err as Error).message));
  }
}
