// "Watch this query": the search page links to the settings page's watches with the query
// and its flags in the address, and the watches section opens its form filled with them.
// The parameters have names of their own (not q, regex, case), so that the header's search
// box on the settings page does not take them for a search. A context chosen beside the
// search box becomes the query's own `context:` filter: a watch has no selector, and
// without it would watch every repository its owner may see. Free of the DOM, so that Node
// tests can run it.

import { namesContext } from './query-context.ts';

/** The watch form's fields, from the address. */
export interface WatchDraft {
  name: string;
  query: string;
  regex: boolean;
  caseSensitive: boolean;
}

/** The server's bound on a watch's name (NewWatch.name). */
export const WATCH_NAME_MAX_LENGTH = 100;

/** A search's parameters (search-form.ts SearchParams), as far as a watch takes them. */
export interface WatchedSearch {
  query: string;
  regex: boolean;
  caseSensitive: boolean;
  context?: string;
}

/** The settings page with the watch form filled in with this search. */
export function watchUrl(p: WatchedSearch): string {
  const query = p.context !== undefined && !namesContext(p.query) ? `context:${p.context} ${p.query.trim()}` : p.query.trim();
  const u = new URLSearchParams({ watch: query });
  if (p.regex) u.set('watch-regex', '1');
  if (p.caseSensitive) u.set('watch-case', '1');
  return `/settings?${u.toString()}#watches`;
}

/** The draft an address carries (watchUrl), or undefined when it carries none. */
export function draftFromUrl(url: URL): WatchDraft | undefined {
  const query = url.searchParams.get('watch');
  if (query === null || query.trim() === '') return undefined;
  return {
    // A name to start from: the query, as long as a name may be.
    name: [...query.trim()].slice(0, WATCH_NAME_MAX_LENGTH).join(''),
    query,
    regex: url.searchParams.get('watch-regex') === '1',
    caseSensitive: url.searchParams.get('watch-case') === '1',
  };
}
