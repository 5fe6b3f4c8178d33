// How GitLab's lists page, for the listing (gitlab.ts) and the permission answers
// (gitlab-permissions.ts): `X-Next-Page` names the next page number and is empty on the
// last page; `Link: rel="next"` says the same. The header is preferred because GitLab drops
// Link (and X-Total) on very large lists. The next page's URL keeps every other query
// parameter of the request (`sudo` among them).

import type { HttpReply } from './http.ts';
import { nextLink, withQuery } from './http.ts';

/** The next page of a GitLab list; undefined on the last page. */
export function nextPage(reply: HttpReply): string | undefined {
  const header = reply.headers.get('x-next-page');
  if (header === null) return nextLink(reply.headers);
  return header.trim() === '' ? undefined : withQuery(reply.url, { page: header.trim() });
}
