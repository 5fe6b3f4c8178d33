// The search box's context selector: which search context (a named set of repositories,
// GET /api/contexts) the search runs in. "All repositories" is context:global. A signed-in
// member's default context (GET /api/default_context) is preselected, as the server applies
// it to a search that names none; a context in the address (`context=`) wins over it. Only a
// context the person chose (here or in the address) is sent with the search: until then
// the server's own default applies, so the page never searches elsewhere than it shows,
// even before the list has loaded. A native <select>: the keyboard works as everywhere.

import { apiFetch, apiJson } from './api.ts';
import { h } from './dom.ts';

export const GLOBAL = 'global';

interface Listed {
  name: string;
  description?: string;
}

export interface ContextSelect {
  element: HTMLElement;
  select: HTMLSelectElement;
  /** The context the person chose (here or in the address); undefined: the server's default applies. */
  chosen(): string | undefined;
  /** Shows the choice of another search (the address after back or forward). */
  show(context: string | undefined): void;
}

export function contextSelect(initial: string | undefined, onChange: () => void): ContextSelect {
  let chosen = initial;
  let defaultName: string | undefined;
  const select = h('select', { id: 'context', title: 'Search context: which repositories to search' }, option(GLOBAL, 'All repositories'));
  if (initial !== undefined && initial !== GLOBAL) select.append(option(initial, initial));
  select.value = initial ?? GLOBAL;
  select.addEventListener('change', () => {
    chosen = select.value;
    onChange();
  });
  const element = h('span', { class: 'context-choice' }, h('label', { for: 'context', class: 'sr-only' }, 'Search context'), select);

  const shown = () => chosen ?? defaultName ?? GLOBAL;
  void (async () => {
    // The list, like the page's other requests, waits for a sign-in where one is needed; the
    // default is asked quietly after it (an anonymous caller has none, and is not asked to
    // sign in for it).
    let contexts: Listed[];
    try {
      contexts = await apiJson<Listed[]>('/api/contexts');
    } catch {
      return; // "All repositories" stays
    }
    defaultName = (await quietJson<{ context: string | null }>('/api/default_context'))?.context ?? undefined;
    select.replaceChildren(
      option(GLOBAL, 'All repositories'),
      ...contexts.map((c) => {
        const o = option(c.name, c.name === defaultName ? `${c.name} (your default)` : c.name);
        if (c.description) o.title = c.description;
        return o;
      }),
    );
    // A context in the address that no longer exists stays shown: the search says it is unknown.
    if (!contexts.some((c) => c.name === shown()) && shown() !== GLOBAL) select.append(option(shown(), shown()));
    select.value = shown();
  })();

  return {
    element,
    select,
    chosen: () => chosen,
    show(context) {
      chosen = context;
      if (![...select.options].some((o) => o.value === shown())) select.append(option(shown(), shown()));
      select.value = shown();
    },
  };
}

function option(value: string, text: string): HTMLOptionElement {
  return h('option', { value }, text);
}

async function quietJson<T>(path: string): Promise<T | undefined> {
  try {
    return (await (await apiFetch(path, {}, false)).json()) as T;
  } catch {
    return undefined;
  }
}
