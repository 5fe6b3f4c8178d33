// What the settings page's sections share: how a time is shown.

import { h } from './dom.ts';

/** A time as the reader's locale writes it, with the exact instant in `datetime` (and as a tooltip). */
export function timeEl(iso: string | null, never = 'never'): HTMLElement | string {
  if (iso === null) return never;
  const at = new Date(iso);
  return h('time', { datetime: iso, title: at.toISOString() }, at.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }));
}
