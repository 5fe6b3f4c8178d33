// The settings page's code-host accounts: the signed-in user's accounts on the code hosts,
// linked for the permission sync (GET /api/ee/users/{id}/accounts): how each was linked,
// when what it may read was last asked of the host, and why the last attempt failed. Owners
// link and unlink accounts through the API; single sign-on with a host links its account.

import { apiJson } from './api.ts';
import { h } from './dom.ts';

interface Linked {
  connection: string;
  login: string;
  linkedBy: 'sign-in' | 'owner' | 'email';
  permissionsSyncedAt: string | null;
  permissionsError: string | null;
}

const HOW: Record<Linked['linkedBy'], string> = {
  'sign-in': 'signed in with the host',
  owner: 'linked by an owner',
  email: 'matched by verified email',
};

export function linkedAccountsSection(userId: string): HTMLElement {
  const heading = h('h2', { id: 'accounts-title' }, 'Code host accounts');
  const body = h('div', { id: 'accounts-body' }, h('p', { class: 'status', role: 'status' }, 'Loading your code host accounts…'));
  const error = h('p', { class: 'form-error', id: 'accounts-error', role: 'alert' });
  void (async () => {
    try {
      const accounts = await apiJson<Linked[]>(`/api/ee/users/${encodeURIComponent(userId)}/accounts`);
      body.replaceChildren(accounts.length === 0 ? h('p', { id: 'accounts-none' }, 'No code host account is linked to you.') : accountTable(accounts));
    } catch (err) {
      body.replaceChildren();
      error.textContent = `Your code host accounts could not be loaded: ${(err as Error).message}`;
    }
  })();
  return h(
    'section',
    { class: 'settings-section', 'aria-labelledby': 'accounts-title' },
    heading,
    h(
      'p',
      { class: 'hint' },
      'With repository permissions from the code hosts, you see the private repositories these accounts may read there, as the last sync found them.',
    ),
    body,
    error,
  );
}

function accountTable(accounts: Linked[]): HTMLElement {
  const col = (text: string) => h('th', { scope: 'col' }, text);
  return h(
    'table',
    { class: 'settings-table', id: 'accounts-table' },
    h('caption', { class: 'sr-only' }, 'Your code host accounts'),
    h('thead', {}, h('tr', {}, col('Connection'), col('Account'), col('Linked'), col('Permissions synced'))),
    h(
      'tbody',
      {},
      accounts.map((a) =>
        h(
          'tr',
          {},
          h('td', {}, a.connection),
          h('td', {}, a.login),
          h('td', {}, HOW[a.linkedBy]),
          h(
            'td',
            {},
            a.permissionsSyncedAt === null ? 'not yet' : new Date(a.permissionsSyncedAt).toLocaleString(),
            a.permissionsError === null ? '' : h('span', { class: 'form-error' }, ` (last attempt failed: ${a.permissionsError})`),
          ),
        ),
      ),
    ),
  );
}
