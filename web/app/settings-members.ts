// The settings page's members, for owners: every member of the organization (GET
// /api/ee/users) with a button that suspends them or makes them active again and a field
// for their daily request limit (PATCH /api/ee/users/{id}). Both need the license's
// org-management entitlement: without it the server's 403 says what is missing, and the
// section shows that message instead of the table. The owner's own row has no suspend
// button (the server refuses it too: an owner cannot lock themselves out).

import { ApiError, apiJson, postJson } from './api.ts';
import { h } from './dom.ts';
import { timeEl } from './settings-common.ts';

interface Member {
  id: string;
  name: string;
  email: string;
  role: 'owner' | 'member';
  suspendedAt: string | null;
  lastActivityAt: string | null;
  dailyLimit: number | null;
}

/** The server's bound (UserChange.dailyLimit). */
const MAX_LIMIT = 2147483647;

export function membersSection(selfId: string): HTMLElement {
  const heading = h('h2', { id: 'members-title', tabindex: -1 }, 'Members');
  const status = h('p', { class: 'status', id: 'members-status', role: 'status' });
  const error = h('p', { class: 'form-error', id: 'members-error', role: 'alert' });
  const body = h('div', { class: 'members-list' }, h('p', { class: 'status' }, 'Loading the members…'));

  /** Sends a change; the row is redrawn from the answer and `focus` picks what gets focus in it. */
  const change = async (m: Member, patch: { suspended?: boolean; dailyLimit?: number | null }, said: (u: Member) => string, focus: string): Promise<void> => {
    error.textContent = '';
    let updated: Member;
    try {
      updated = await apiJson<Member>(`/api/ee/users/${encodeURIComponent(m.id)}`, postJson(patch, {}, 'PATCH'));
    } catch (err) {
      error.textContent = `${who(m)} could not be changed: ${(err as Error).message}`;
      return;
    }
    const old = body.querySelector(`tr[data-user-id="${CSS.escape(m.id)}"]`);
    const fresh = row(updated, selfId, change);
    old?.replaceWith(fresh);
    status.textContent = said(updated);
    fresh.querySelector<HTMLElement>(focus)?.focus();
  };

  void (async () => {
    try {
      const users = await apiJson<Member[]>('/api/ee/users');
      body.replaceChildren(memberTable(users, selfId, change));
    } catch (err) {
      // Not entitled (or no longer an owner): the server's message says which.
      if (err instanceof ApiError && err.statusCode === 403) body.replaceChildren(h('p', { class: 'notice', id: 'members-unavailable' }, err.message));
      else {
        body.replaceChildren();
        error.textContent = `The members could not be loaded: ${(err as Error).message}`;
      }
    }
  })();

  return h(
    'section',
    { class: 'settings-section', 'aria-labelledby': 'members-title' },
    heading,
    h(
      'p',
      { class: 'hint' },
      "Suspending a member stops all of their keys, tokens and browser sessions at once; making them active again lets their keys work again. An empty daily limit means the server's default.",
    ),
    status,
    error,
    body,
  );
}

type Change = (m: Member, patch: { suspended?: boolean; dailyLimit?: number | null }, said: (u: Member) => string, focus: string) => Promise<void>;

function memberTable(users: Member[], selfId: string, change: Change): HTMLElement {
  const col = (text: string) => h('th', { scope: 'col' }, text);
  return h(
    'table',
    { class: 'settings-table', id: 'members-table' },
    h('caption', { class: 'sr-only' }, 'Organization members'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        col('Name'),
        col('Email'),
        col('Role'),
        col('Status'),
        col('Last active'),
        col('Daily limit (requests)'),
        h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
      ),
    ),
    h(
      'tbody',
      {},
      users.map((u) => row(u, selfId, change)),
    ),
  );
}

function row(u: Member, selfId: string, change: Change): HTMLTableRowElement {
  const self = u.id === selfId;
  const limitId = `limit-${u.id}`;
  const limit = h('input', {
    id: limitId,
    name: 'dailyLimit',
    type: 'number',
    min: 0,
    max: MAX_LIMIT,
    step: 1,
    inputmode: 'numeric',
    placeholder: 'default',
    class: 'limit-input',
  });
  limit.value = u.dailyLimit === null ? '' : String(u.dailyLimit);
  const limitForm = h(
    'form',
    { class: 'limit-form' },
    h('label', { for: limitId, class: 'sr-only' }, `Daily limit of ${who(u)}`),
    limit,
    h('button', { type: 'submit', class: 'set-limit' }, 'Set', h('span', { class: 'sr-only' }, ` the daily limit of ${who(u)}`)),
  );
  limitForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = limit.value.trim();
    const n = text === '' ? null : Number(text);
    if (n !== null && (!Number.isInteger(n) || n < 0 || n > MAX_LIMIT)) {
      limit.setCustomValidity('A whole number of requests per day, or empty for the default.');
      limit.reportValidity();
      return;
    }
    limit.setCustomValidity('');
    void change(
      u,
      { dailyLimit: n },
      (x) => (x.dailyLimit === null ? `${who(x)}: the default daily limit applies.` : `${who(x)}: ${x.dailyLimit} requests per day.`),
      '.limit-input',
    );
  });
  limit.addEventListener('input', () => limit.setCustomValidity(''));

  const suspended = u.suspendedAt !== null;
  const toggle = self
    ? h('span', { class: 'hint' }, 'you')
    : h(
        'button',
        {
          type: 'button',
          class: suspended ? 'link unsuspend' : 'link danger suspend',
          onclick: () =>
            void change(
              u,
              { suspended: !suspended },
              (x) => (x.suspendedAt === null ? `${who(x)} is active again.` : `${who(x)} is suspended: their keys and sessions stop working now.`),
              '.suspend, .unsuspend',
            ),
        },
        suspended ? 'Unsuspend' : 'Suspend',
        h('span', { class: 'sr-only' }, ` ${who(u)}`),
      );

  return h(
    'tr',
    { 'data-user-id': u.id, class: suspended ? 'suspended' : undefined },
    h('th', { scope: 'row' }, u.name || u.email),
    h('td', {}, u.email),
    h('td', {}, u.role),
    h('td', { class: 'member-status' }, suspended ? ['Suspended since ', timeEl(u.suspendedAt)] : 'Active'),
    h('td', {}, timeEl(u.lastActivityAt)),
    h('td', {}, limitForm),
    h('td', { class: 'row-actions' }, toggle),
  );
}

function who(u: Member): string {
  return u.name || u.email;
}
