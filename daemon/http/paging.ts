// Paged lists: X-Total-Count and an RFC 8288 Link header with first, prev, next and last
// (docs/http-api.md section 13). Links repeat the request's other parameters.

/** One page of a list at `baseUrl` + `path`, asked with `query`: its number, its size, and the items in the whole list. */
interface PageAsked {
  baseUrl: string;
  path: string;
  query: Record<string, unknown>;
  page: number;
  perPage: number;
  total: number;
}

export function pageHeaders({ baseUrl, path, query, page, perPage, total }: PageAsked): Array<[string, string]> {
  const last = Math.max(1, Math.ceil(total / perPage));
  const link = (p: number, rel: string): string => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && k !== 'page') params.set(k, String(v));
    params.set('page', String(p));
    return `<${baseUrl}${path}?${params.toString()}>; rel="${rel}"`;
  };
  const links = [link(1, 'first')];
  if (page > 1) links.push(link(Math.min(page - 1, last), 'prev'));
  if (page < last) links.push(link(page + 1, 'next'));
  links.push(link(last, 'last'));
  const headers: Array<[string, string]> = [['X-Total-Count', String(total)]];
  // Links repeat every parameter four times: with long ones (a 4 KB path) they would pass
  // the 16 KB of headers common clients accept, so they are left out then.
  const value = links.join(', ');
  if (value.length <= MAX_LINK_HEADER) headers.push(['Link', value]);
  return headers;
}

const MAX_LINK_HEADER = 8 * 1024;

/** The items of one page. */
export function pageOf<T>(items: T[], page: number, perPage: number): T[] {
  return items.slice((page - 1) * perPage, page * perPage);
}

export const PAGE_HEADERS = {
  'X-Total-Count': { description: 'Items in the whole list.', schema: { type: 'integer' } },
  Link: {
    description: 'RFC 8288 links to the first, previous, next and last pages (left out when longer than 8 KB, from very long parameters).',
    schema: { type: 'string' },
  },
};
