// The settings page's API keys: the signed-in user's live keys (GET /api/keys: name, the
// key's first characters, created, last used), a form that creates one (POST /api/keys)
// and shows it this once, and revoking one (DELETE /api/keys/{id}) after a confirmation.
// The new key is shown in a read-only field, never put in the address or any storage;
// "Done" removes it from the page. Copying uses the clipboard where the browser allows it,
// and otherwise selects the key for the person to copy themselves.

import type { ListedKey } from '../../daemon/auth/credential-listing.ts';
import { KEY_NAME_MAX_LENGTH } from '../../daemon/auth/key-name.ts';
import { apiFetch, apiJson, postJson } from './api.ts';
import { copyText } from './clipboard.ts';
import { confirmAction } from './confirm.ts';
import { h } from './dom.ts';
import { timeEl } from './settings-common.ts';

interface CreatedKey {
  id: string;
  name: string;
  key: string;
  createdAt: string;
}

export function apiKeysSection(): HTMLElement {
  const heading = h('h2', { id: 'keys-title', tabindex: -1 }, 'API keys');
  const status = h('p', { class: 'status', id: 'keys-status', role: 'status' });
  const error = h('p', { class: 'form-error', id: 'keys-error', role: 'alert' });
  const list = h('div', { class: 'keys-list' }, h('p', { class: 'status' }, 'Loading your keys…'));
  const fresh = h('div', { class: 'new-key-slot' });

  const name = h('input', {
    id: 'key-name',
    name: 'name',
    type: 'text',
    required: true,
    maxlength: KEY_NAME_MAX_LENGTH,
    autocomplete: 'off',
    'aria-describedby': 'key-name-help key-create-error',
  });
  const createError = h('p', { class: 'form-error', id: 'key-create-error', role: 'alert' });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Create key');
  const form = h(
    'form',
    { class: 'key-create', 'aria-labelledby': 'key-create-title' },
    h('h3', { id: 'key-create-title' }, 'Create a key'),
    h('label', { for: 'key-name' }, 'Name'),
    h('div', { class: 'field-row' }, name, submit),
    h(
      'p',
      { class: 'hint', id: 'key-name-help' },
      'What the key is for ("laptop", "CI"), to tell your keys apart. The key acts as you, with your repositories and your daily limit.',
    ),
    createError,
  );

  const load = async (): Promise<void> => {
    try {
      const keys = (await apiJson<ListedKey[]>('/api/keys')).filter((k) => k.revokedAt === null);
      list.replaceChildren(keys.length === 0 ? h('p', { class: 'status' }, 'You have no API keys.') : keyTable(keys, revoke));
    } catch (err) {
      list.replaceChildren();
      error.textContent = `Your keys could not be loaded: ${(err as Error).message}`;
    }
  };

  const revoke = async (key: ListedKey): Promise<void> => {
    const yes = await confirmAction(
      `Revoke the key “${key.name}”?`,
      'Programs that use it stop working at once, and so do the browser sessions signed in with it (this one too, if you signed in with it). This cannot be undone.',
      'Revoke key',
    );
    if (!yes) return;
    error.textContent = '';
    try {
      await apiFetch(`/api/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
    } catch (err) {
      error.textContent = `The key “${key.name}” could not be revoked: ${(err as Error).message}`;
      return;
    }
    status.textContent = `The key “${key.name}” is revoked.`;
    await load();
    // Its row is gone: the section is where the person was.
    heading.focus();
  };

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    createError.textContent = '';
    const value = name.value.trim();
    if (value === '') {
      createError.textContent = 'Give the key a name.';
      name.focus();
      return;
    }
    submit.disabled = true;
    try {
      const created = await apiJson<CreatedKey>('/api/keys', postJson({ name: value }));
      name.value = '';
      status.textContent = '';
      const panel = newKeyPanel(created, () => {
        fresh.replaceChildren();
        name.focus();
      });
      fresh.replaceChildren(panel.element);
      await load();
      panel.field.focus();
      panel.field.select();
    } catch (err) {
      createError.textContent = `The key could not be created: ${(err as Error).message}`;
      name.focus();
    } finally {
      submit.disabled = false;
    }
  });

  void load();
  return h(
    'section',
    { class: 'settings-section', 'aria-labelledby': 'keys-title' },
    heading,
    h(
      'p',
      { class: 'hint' },
      'Send a key as ',
      h('code', {}, 'Authorization: Bearer <key>'),
      ' from scripts, editors and agents, or sign in to this page with it.',
    ),
    status,
    error,
    list,
    fresh,
    form,
  );
}

function keyTable(keys: ListedKey[], revoke: (k: ListedKey) => Promise<void>): HTMLElement {
  const col = (text: string) => h('th', { scope: 'col' }, text);
  return h(
    'table',
    { class: 'settings-table', id: 'keys-table' },
    h('caption', { class: 'sr-only' }, 'Your API keys'),
    h(
      'thead',
      {},
      h('tr', {}, col('Name'), col('Key'), col('Created'), col('Last used'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions'))),
    ),
    h(
      'tbody',
      {},
      keys.map((k) =>
        h(
          'tr',
          { 'data-key-id': k.id },
          h('th', { scope: 'row' }, k.name),
          h('td', {}, h('code', { title: "The key's first characters" }, `${k.hint}…`)),
          h('td', {}, timeEl(k.createdAt)),
          h('td', {}, timeEl(k.lastUsedAt)),
          h(
            'td',
            { class: 'row-actions' },
            h(
              'button',
              { type: 'button', class: 'link danger revoke', onclick: () => void revoke(k) },
              'Revoke',
              h('span', { class: 'sr-only' }, ` key ${k.name}`),
            ),
          ),
        ),
      ),
    ),
  );
}

/** The new key, once: a read-only field, a Copy button and the note that it will not be shown again. */
function newKeyPanel(created: CreatedKey, done: () => void): { element: HTMLElement; field: HTMLInputElement } {
  const field = h('input', {
    id: 'new-key-value',
    class: 'key-value',
    type: 'text',
    readonly: true,
    spellcheck: 'false',
    autocomplete: 'off',
    'aria-describedby': 'new-key-note',
  });
  field.value = created.key;
  const copied = h('p', { class: 'status', id: 'copy-status', role: 'status' });
  const copy = h('button', { type: 'button', id: 'copy-key', onclick: () => void copyKey(field, copied) }, 'Copy');
  const element = h(
    'section',
    { class: 'new-key', 'aria-labelledby': 'new-key-title' },
    h('h3', { id: 'new-key-title' }, `Your new key “${created.name}”`),
    h(
      'p',
      { id: 'new-key-note' },
      h('strong', {}, 'Copy it now: it will not be shown again.'),
      ' Only a keyed hash of it is stored. If you lose it, revoke it and create another.',
    ),
    h('label', { for: 'new-key-value' }, 'New API key'),
    h('div', { class: 'field-row' }, field, copy),
    copied,
    h('button', { type: 'button', class: 'link', id: 'new-key-done', onclick: done }, 'Done: I have stored it'),
  );
  return { element, field };
}

async function copyKey(field: HTMLInputElement, status: HTMLElement): Promise<void> {
  const copied = await copyText(field.value, () => {
    field.focus();
    field.select();
  });
  status.textContent = copied ? 'Copied to the clipboard.' : 'This browser does not let the page copy: the key is selected, copy it with Ctrl+C (⌘C on a Mac).';
}
