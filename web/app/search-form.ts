// The query box in the page header: the whole query language, the search context
// (context-select.ts), regex and case toggles, a hint for the filter under the caret, and a
// place for the server's parse error. On the search page it runs the search in place;
// elsewhere it navigates to the search page.

import { contextSelect } from './context-select.ts';
import { h } from './dom.ts';

export interface SearchParams {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  /** The match limit asked for (the `matches` field of the request). */
  matches: number;
  /** The search context chosen (the `context` field); undefined: the server's default applies. */
  context?: string;
}

export const DEFAULT_MATCHES = 500;
export const MAX_MATCHES = 100_000;

export const FILTERS: Array<[string, string, string]> = [
  ['repo:', 'repository name matches (regex); alias r:', 'repo:^github\\.com/org/'],
  ['file:', 'file path matches (regex); alias f:', 'file:\\.go$'],
  ['lang:', 'language name (exact, case-insensitive)', 'lang:rust'],
  ['sym:', 'a symbol definition whose name matches', 'sym:^parse'],
  ['branch:', 'branch or tag (glob *; branch:* searches all indexed); aliases rev:, b:', 'branch:release-*'],
  ['case:', 'yes / no / auto (auto: sensitive when the pattern has an uppercase letter)', 'case:yes'],
  ['content:', 'search file content only; alias c:', 'content:"TODO"'],
  ['regex:', 'one term as a regular expression, even in literal mode', 'regex:fo+bar'],
  ['archived:', 'yes (default) / no / only', 'archived:no'],
  ['fork:', 'yes (default) / no / only', 'fork:no'],
  ['visibility:', 'public / private / any (default)', 'visibility:public'],
  ['context:', 'only the repositories of a search context (the list beside the box); context:global for all', 'context:backend'],
];

const ALIASES: Record<string, string> = { 'r:': 'repo:', 'f:': 'file:', 'rev:': 'branch:', 'b:': 'branch:', 'c:': 'content:' };

/** A context's name (daemon/config/contexts.ts CONTEXT_NAME); anything else in the address is ignored. */
const CONTEXT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function paramsFromUrl(url: URL): SearchParams {
  const m = Number(url.searchParams.get('matches'));
  const context = url.searchParams.get('context') ?? '';
  const p: SearchParams = {
    query: url.searchParams.get('q') ?? '',
    regex: url.searchParams.get('regex') === '1',
    caseSensitive: url.searchParams.get('case') === '1',
    matches: Number.isInteger(m) && m >= 1 && m <= MAX_MATCHES ? m : DEFAULT_MATCHES,
  };
  if (CONTEXT_NAME.test(context)) p.context = context;
  return p;
}

export function searchUrl(p: SearchParams): string {
  const u = new URLSearchParams({ q: p.query });
  if (p.context !== undefined) u.set('context', p.context);
  if (p.regex) u.set('regex', '1');
  if (p.caseSensitive) u.set('case', '1');
  if (p.matches !== DEFAULT_MATCHES) u.set('matches', String(p.matches));
  return `/?${u.toString()}`;
}

export interface SearchForm {
  element: HTMLFormElement;
  input: HTMLInputElement;
  /** Shows the server's message under the box (undefined clears it). */
  showError(message: string | undefined, query?: string): void;
  params(): SearchParams;
  /** Shows another search's parameters (the address after back or forward). */
  show(p: SearchParams): void;
}

/** The filter the caret is in (or just after), for the hint line. */
export function filterAt(text: string, caret: number): string | undefined {
  const before = text.slice(0, caret);
  const word = /(?:^|[\s(])-?([a-z]+:)[^\s]*$/.exec(before);
  if (!word) return undefined;
  const name = ALIASES[word[1]!] ?? word[1]!;
  return FILTERS.some(([f]) => f === name) ? name : undefined;
}

const DEFAULT_HINT = 'Terms are ANDed; "or" between terms, -term to exclude, "quoted phrases". Press / to search, ↑ ↓ to move through results.';

export function searchForm(initial: SearchParams, onSearch: (p: SearchParams) => void): SearchForm {
  const input = h('input', {
    id: 'q',
    name: 'q',
    type: 'search',
    value: initial.query,
    autocomplete: 'off',
    spellcheck: 'false',
    autocapitalize: 'off',
    placeholder: 'Search code: spin_lock lang:c file:^kernel/',
    'aria-label': 'Search query',
    'aria-describedby': 'query-hint query-error',
  });
  const regex = h('input', { id: 'opt-regex', type: 'checkbox', checked: initial.regex });
  const caseSensitive = h('input', { id: 'opt-case', type: 'checkbox', checked: initial.caseSensitive });
  const hint = h('p', { id: 'query-hint', class: 'hint' }, DEFAULT_HINT);
  const error = h('div', { id: 'query-error', class: 'query-error', role: 'alert' });
  const help = h(
    'details',
    { class: 'syntax' },
    h('summary', {}, 'Query syntax'),
    h(
      'table',
      {},
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'filter'), h('th', { scope: 'col' }, 'meaning'), h('th', { scope: 'col' }, 'example'))),
      h(
        'tbody',
        {},
        FILTERS.map(([f, what, ex]) => h('tr', {}, h('td', {}, h('code', {}, f)), h('td', {}, what), h('td', {}, h('code', {}, ex)))),
      ),
    ),
    h(
      'p',
      {},
      'Negate a filter or group with -: ',
      h('code', {}, '-file:test'),
      ', ',
      h('code', {}, '-(a or b)'),
      '. Parentheses group. With ',
      h('strong', {}, '.*'),
      ' on, every term is an RE2 regular expression; with ',
      h('strong', {}, 'Aa'),
      ' on, matching is case-sensitive.',
    ),
  );
  // Choosing a context re-runs a search that is on screen, as the toggles do.
  const context = contextSelect(initial.context, () => input.value.trim() !== '' && onSearch(params()));
  const params = (): SearchParams => {
    const p: SearchParams = { query: input.value, regex: regex.checked, caseSensitive: caseSensitive.checked, matches: initial.matches };
    const chosen = context.chosen();
    if (chosen !== undefined) p.context = chosen;
    return p;
  };
  const form = h(
    'form',
    { class: 'search-form', role: 'search', action: '/', method: 'get' },
    h(
      'div',
      { class: 'search-row' },
      input,
      context.element,
      h(
        'label',
        { class: 'toggle', title: 'Regular expressions', for: 'opt-regex' },
        regex,
        h('span', { 'aria-hidden': 'true' }, '.*'),
        h('span', { class: 'sr-only' }, 'Regular expressions'),
      ),
      h(
        'label',
        { class: 'toggle', title: 'Case-sensitive', for: 'opt-case' },
        caseSensitive,
        h('span', { 'aria-hidden': 'true' }, 'Aa'),
        h('span', { class: 'sr-only' }, 'Case-sensitive'),
      ),
      h('button', { type: 'submit', class: 'primary' }, 'Search'),
    ),
    hint,
    error,
    help,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (input.value.trim() === '') {
      showError('Type a query first.');
      return;
    }
    onSearch(params());
  });
  const updateHint = () => {
    const f = filterAt(input.value, input.selectionStart ?? input.value.length);
    const row = f ? FILTERS.find(([name]) => name === f) : undefined;
    hint.textContent = row ? `${row[0]} ${row[1]} — e.g. ${row[2]}` : DEFAULT_HINT;
  };
  input.addEventListener('input', () => {
    updateHint();
    if (input.getAttribute('aria-invalid')) showError(undefined);
  });
  input.addEventListener('keyup', updateHint);
  input.addEventListener('click', updateHint);
  // Toggling an option re-runs a search that is on screen.
  for (const box of [regex, caseSensitive]) box.addEventListener('change', () => input.value.trim() !== '' && onSearch(params()));

  function showError(message: string | undefined, query?: string): void {
    error.replaceChildren();
    if (message === undefined) {
      input.removeAttribute('aria-invalid');
      return;
    }
    input.setAttribute('aria-invalid', 'true');
    error.append(h('p', {}, message));
    // The parser names the column (1-based, code points) of what it could not take.
    const col = /column (\d+)/.exec(message);
    if (col && query !== undefined) {
      const chars = [...query];
      const at = Math.min(Number(col[1]) - 1, chars.length);
      error.append(h('pre', { class: 'caret', 'aria-hidden': 'true' }, chars.slice(0, at).join(''), h('span', { class: 'caret-at' }, chars[at] ?? ' ')));
    }
  }
  const show = (p: SearchParams): void => {
    input.value = p.query;
    context.show(p.context);
  };
  return { element: form, input, showError, params, show };
}
