// The settings page's watches (docs/web-ui.md, "Watches"): the signed-in user's saved
// queries (GET /api/watches) with where their changes are POSTed and how that went, a form
// that makes one (POST /api/watches; the search page's "Watch this query" fills it in
// through the address, watch-link.ts), the signing secret of a new watch with a URL shown
// this once, deleting one after a confirmation (DELETE /api/watches/{id}), and one watch's
// changes at a time, live while they are open (watch-changes.ts). A chunk of its own: the
// search page does not load it.

import { apiFetch, apiJson, postJson } from './api.ts';
import { copyText } from './clipboard.ts';
import { confirmAction } from './confirm.ts';
import { formatCount, h } from './dom.ts';
import { DEFAULT_MATCHES, searchUrl } from './search-form.ts';
import { timeEl } from './settings-common.ts';
import { changesPanel, type ChangesPanel } from './watch-changes.ts';
import { draftFromUrl, WATCH_NAME_MAX_LENGTH, type WatchDraft } from './watch-link.ts';
import type { Watch } from './watch-types.ts';

interface Open {
  id: number;
  panel: ChangesPanel;
}

export function watchesSection(): HTMLElement {
  const heading = h('h2', { id: 'watches-title', tabindex: -1 }, 'Watches');
  const status = h('p', { class: 'status', id: 'watches-status', role: 'status' });
  const error = h('p', { class: 'form-error', id: 'watches-error', role: 'alert' });
  const list = h('div', { class: 'watches-list' }, h('p', { class: 'status' }, 'Loading your watches…'));
  const changes = h('div', { class: 'watch-changes-slot' });
  const fresh = h('div', { class: 'new-key-slot' });
  let open: Open | undefined;

  const draft = draftFromUrl(new URL(location.href));
  const form = createForm(draft, async (created) => {
    status.textContent = `The watch “${created.name}” is made.`;
    // The address no longer asks for a new watch: a reload shows the page as it is.
    if (draft) history.replaceState(history.state, '', '/settings#watches');
    await load();
    if (created.secret !== undefined) {
      const panel = secretPanel(created, () => {
        fresh.replaceChildren();
        form.name.focus();
      });
      fresh.replaceChildren(panel.element);
      panel.field.focus();
      panel.field.select();
    } else {
      showChanges(created);
    }
  });

  const load = async (): Promise<void> => {
    try {
      const watches = await apiJson<Watch[]>('/api/watches');
      list.replaceChildren(watches.length === 0 ? h('p', { class: 'status', id: 'watches-none' }, 'You have no watches.') : watchTable(watches, actions));
      if (open && !watches.some((w) => w.id === open!.id)) closeChanges();
      markOpen();
    } catch (err) {
      list.replaceChildren();
      error.textContent = `Your watches could not be loaded: ${(err as Error).message}`;
    }
  };

  /** The row's counts and last change, again from the server (after a change arrived). */
  const refreshRow = async (id: number): Promise<void> => {
    const row = list.querySelector<HTMLElement>(`tr[data-watch-id="${id}"]`);
    if (!row) return;
    try {
      fillCounts(row, await apiJson<Watch>(`/api/watches/${id}`));
    } catch {
      // The next load shows it; the change itself is on screen.
    }
  };

  const markOpen = (): void => {
    for (const b of list.querySelectorAll<HTMLButtonElement>('button.show-changes'))
      b.setAttribute('aria-expanded', String(open !== undefined && b.dataset.watchId === String(open.id)));
  };

  const closeChanges = (): void => {
    open?.panel.close();
    open = undefined;
    changes.replaceChildren();
    markOpen();
  };

  const showChanges = (w: Watch): void => {
    const was = open?.id;
    closeChanges();
    if (was === w.id) return;
    const panel = changesPanel(
      w,
      () => {
        closeChanges();
        list.querySelector<HTMLElement>(`button.show-changes[data-watch-id="${w.id}"]`)?.focus();
      },
      () => void refreshRow(w.id),
    );
    open = { id: w.id, panel };
    changes.replaceChildren(panel.element);
    markOpen();
    panel.element.querySelector<HTMLElement>('h3')?.focus();
  };

  const remove = async (w: Watch): Promise<void> => {
    const yes = await confirmAction(
      `Delete the watch “${w.name}”?`,
      `Its recorded changes are deleted with it${w.url ? ', and nothing more is POSTed to its URL' : ''}. This cannot be undone.`,
      'Delete watch',
    );
    if (!yes) return;
    error.textContent = '';
    try {
      await apiFetch(`/api/watches/${w.id}`, { method: 'DELETE' });
    } catch (err) {
      error.textContent = `The watch “${w.name}” could not be deleted: ${(err as Error).message}`;
      return;
    }
    if (open?.id === w.id) closeChanges();
    status.textContent = `The watch “${w.name}” is deleted.`;
    await load();
    heading.focus();
  };

  const actions: RowActions = { changes: showChanges, remove: (w) => void remove(w) };
  void load();
  const section = h(
    'section',
    { class: 'settings-section', id: 'watches', 'aria-labelledby': 'watches-title' },
    heading,
    h(
      'p',
      { class: 'hint' },
      'A watch is a saved query: after each change of the index, the lines that came to match it and those that no longer do are recorded as a change, listed here, and POSTed to its URL if it has one (signed with its secret).',
    ),
    status,
    error,
    list,
    fresh,
    changes,
    form.element,
  );
  if (draft || location.hash === '#watches') {
    // The section is drawn after the page loaded: the browser did not scroll to it.
    requestAnimationFrame(() => {
      section.scrollIntoView({ block: 'start' });
      if (draft) form.name.focus();
    });
  }
  return section;
}

interface RowActions {
  changes(w: Watch): void;
  remove(w: Watch): void;
}

function watchTable(watches: Watch[], actions: RowActions): HTMLElement {
  const col = (text: string) => h('th', { scope: 'col' }, text);
  return h(
    'table',
    { class: 'settings-table', id: 'watches-table' },
    h('caption', { class: 'sr-only' }, 'Your watches'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        col('Name'),
        col('Query'),
        col('URL'),
        col('Delivered'),
        col('Dead letters'),
        col('Last changed'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
      ),
    ),
    h(
      'tbody',
      {},
      watches.map((w) => watchRow(w, actions)),
    ),
  );
}

function watchRow(w: Watch, actions: RowActions): HTMLElement {
  const search = searchUrl({ query: w.query, regex: w.isRegexEnabled, caseSensitive: w.isCaseSensitivityEnabled, matches: DEFAULT_MATCHES });
  const flags = [w.isRegexEnabled ? 'regular expression' : '', w.isCaseSensitivityEnabled ? 'case-sensitive' : ''].filter((f) => f !== '');
  const row = h(
    'tr',
    { 'data-watch-id': w.id },
    h('th', { scope: 'row' }, w.name),
    h(
      'td',
      { class: 'watch-query' },
      h('a', { href: search, title: 'Search for it now' }, h('code', {}, w.query)),
      flags.length > 0 ? h('span', { class: 'watch-flags' }, ` (${flags.join(', ')})`) : null,
    ),
    h('td', { class: 'watch-url' }, w.url ? h('code', {}, w.url) : h('span', { class: 'muted' }, 'none: listed here only')),
    h('td', { class: 'watch-delivered' }),
    h('td', { class: 'watch-dead' }),
    h('td', { class: 'watch-last' }),
    h(
      'td',
      { class: 'row-actions' },
      h(
        'button',
        {
          type: 'button',
          class: 'link show-changes',
          'data-watch-id': w.id,
          'aria-expanded': 'false',
          'aria-controls': 'watch-changes',
          onclick: () => actions.changes(w),
        },
        'Changes',
        h('span', { class: 'sr-only' }, ` of ${w.name}`),
      ),
      h(
        'button',
        { type: 'button', class: 'link danger delete-watch', onclick: () => actions.remove(w) },
        'Delete',
        h('span', { class: 'sr-only' }, ` watch ${w.name}`),
      ),
    ),
  );
  fillCounts(row, w);
  return row;
}

function fillCounts(row: HTMLElement, w: Watch): void {
  const cell = (cls: string) => row.querySelector<HTMLElement>(`td.${cls}`)!;
  cell('watch-delivered').textContent = w.url ? formatCount(w.delivered) : '—';
  cell('watch-dead').textContent = w.url ? formatCount(w.deadLetters) : '—';
  cell('watch-dead').classList.toggle('form-error', w.deadLetters > 0);
  cell('watch-last').replaceChildren(timeEl(w.lastChangedAt ?? null, 'not since made'));
}

interface CreateForm {
  element: HTMLFormElement;
  name: HTMLInputElement;
}

/** The form that makes a watch, filled in from `draft` when the address carries one. */
function createForm(draft: WatchDraft | undefined, made: (w: Watch) => Promise<void>): CreateForm {
  const name = h('input', { id: 'watch-name', name: 'name', type: 'text', maxlength: WATCH_NAME_MAX_LENGTH, autocomplete: 'off', value: draft?.name });
  const query = h('input', {
    id: 'watch-query',
    name: 'query',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'off',
    value: draft?.query,
    'aria-describedby': 'watch-query-help',
  });
  const regex = h('input', { id: 'watch-regex', name: 'regex', type: 'checkbox', checked: draft?.regex ?? false });
  const caseSensitive = h('input', { id: 'watch-case', name: 'case', type: 'checkbox', checked: draft?.caseSensitive ?? false });
  const url = h('input', {
    id: 'watch-url',
    name: 'url',
    type: 'url',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'https://',
    'aria-describedby': 'watch-url-help',
  });
  const createError = h('p', { class: 'form-error', id: 'watch-create-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create watch');
  const title = h('h3', { id: 'watch-create-title' }, draft ? 'Watch this query' : 'Create a watch');
  const element = h(
    'form',
    { class: 'watch-create', 'aria-labelledby': 'watch-create-title', novalidate: true },
    title,
    h('label', { for: 'watch-name' }, 'Name'),
    h('div', { class: 'field-row' }, name),
    h('label', { for: 'watch-query' }, 'Query'),
    h('div', { class: 'field-row' }, query),
    h('div', { class: 'watch-options' }, h('label', {}, regex, ' Regular expressions'), h('label', {}, caseSensitive, ' Case-sensitive')),
    h(
      'p',
      { class: 'hint', id: 'watch-query-help' },
      'As the search box takes it. It is checked now: a query matching too many lines is refused, and its matches now are where its changes start from.',
    ),
    h('label', { for: 'watch-url' }, 'URL (optional)'),
    h('div', { class: 'field-row' }, url),
    h('p', { class: 'hint', id: 'watch-url-help' }, 'Each change is POSTed there as JSON, signed; without one, changes are listed here only.'),
    createError,
    h('div', { class: 'field-row' }, submit),
  );
  element.addEventListener('submit', async (e) => {
    e.preventDefault();
    createError.textContent = '';
    const body: Record<string, unknown> = {
      name: name.value.trim(),
      query: query.value.trim(),
      isRegexEnabled: regex.checked,
      isCaseSensitivityEnabled: caseSensitive.checked,
    };
    const missing = body.name === '' ? name : body.query === '' ? query : undefined;
    if (missing) {
      createError.textContent = missing === name ? 'Give the watch a name.' : 'Give the watch a query.';
      missing.focus();
      return;
    }
    if (url.value.trim() !== '') body.url = url.value.trim();
    submit.disabled = true;
    try {
      const created = await apiJson<Watch>('/api/watches', postJson(body));
      element.reset();
      for (const f of [name, query, url]) f.value = '';
      regex.checked = false;
      caseSensitive.checked = false;
      title.textContent = 'Create a watch';
      await made(created);
    } catch (err) {
      createError.textContent = `The watch could not be created: ${(err as Error).message}`;
      query.focus();
    } finally {
      submit.disabled = false;
    }
  });
  return { element, name };
}

/** A new watch's signing secret, once: a read-only field, a Copy button and the note that it will not be shown again. */
function secretPanel(w: Watch, done: () => void): { element: HTMLElement; field: HTMLInputElement } {
  const field = h('input', {
    id: 'watch-secret-value',
    class: 'key-value',
    type: 'text',
    readonly: true,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'watch-secret-note',
  });
  field.value = w.secret ?? '';
  const copied = h('p', { class: 'status', id: 'watch-secret-copy-status', role: 'status' });
  const copy = async (): Promise<void> => {
    const ok = await copyText(field.value, () => {
      field.focus();
      field.select();
    });
    copied.textContent = ok
      ? 'Copied to the clipboard.'
      : 'This browser does not let the page copy: the secret is selected, copy it with Ctrl+C (⌘C on a Mac).';
  };
  const element = h(
    'section',
    { class: 'new-key', 'aria-labelledby': 'watch-secret-title' },
    h('h3', { id: 'watch-secret-title' }, `The signing secret of “${w.name}”`),
    h(
      'p',
      { id: 'watch-secret-note' },
      h('strong', {}, 'Copy it now: it will not be shown again.'),
      ' Every POST to ',
      h('code', {}, w.url ?? ''),
      ' carries ',
      h('code', {}, 'X-Trawl-Signature-256: sha256=<HMAC-SHA256 of the body with this secret>'),
      '; check it before trusting what was sent. If you lose the secret, delete the watch and make it again.',
    ),
    h('label', { for: 'watch-secret-value' }, 'Signing secret'),
    h('div', { class: 'field-row' }, field, h('button', { type: 'button', id: 'copy-watch-secret', onclick: () => void copy() }, 'Copy')),
    copied,
    h('button', { type: 'button', class: 'link', id: 'watch-secret-done', onclick: done }, 'Done: I have stored it'),
  );
  return { element, field };
}
