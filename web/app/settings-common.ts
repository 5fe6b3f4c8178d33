// What the settings page's sections share: how a time is shown, and a JSON request of
// any method (api.ts postJson is for POST only; the members section PATCHes).

import { h } from './dom.ts';

/** A time as the reader's locale writes it, with the exact instant in `datetime` (and as a tooltip). */
export function timeEl(iso: string | null, never = 'never'): HTMLElement | string {
  if (iso === null) return never;
  const at = new Date(iso);
  return h('time', { datetime: iso, title: at.toISOString() }, at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
}

/** A request init carrying `body` as JSON. */
export function jsonInit(method: 'POST' | 'PATCH', body: unknown): RequestInit {
  return { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } };
}
