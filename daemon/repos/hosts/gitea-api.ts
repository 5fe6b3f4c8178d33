// What Gitea's (and Forgejo's) API asks of every client, shared by the listing (gitea.ts)
// and the permission API (gitea-permissions.ts).
//
// API root: <url>/api/v1. Auth: `Authorization: token TOKEN`; a site administrator's token
// acts as another user with the header `Sudo: <login>`. Lists are numbered pages from 1,
// asked for with `limit` and `page`. Where more pages follow, most lists send
// `Link: rel="next"`; some (a repository's collaborators, a team's members) send only
// `X-Total-Count`, the number of items on all pages. A server that sends neither is read
// until a page comes back shorter than asked (50 is the default MAX_RESPONSE_ITEMS).

import { JsonClient, arr, nextLink, trimSlash, withQuery } from './http.ts';
import type { ClientConfig, HostContext, HttpReply, Page } from './http.ts';

export const GITEA_LIMIT = 50;

/** Who a request is sent as: a token, and the user a site administrator's token acts as. */
export interface GiteaCredentials {
  token: string;
  sudo?: string;
}

/** A client of the API of the Gitea at `url`; anonymous without credentials. */
export function giteaClient(context: HostContext, url: string, as?: GiteaCredentials): JsonClient {
  return new JsonClient({ ...giteaSettings(context, url), auth: as === undefined ? {} : giteaAuth(as) });
}

/** The settings of a client of the API of the Gitea at `url`, without credentials. */
export function giteaSettings(context: HostContext, url: string): ClientConfig {
  return { context, baseUrl: `${trimSlash(url)}/api/v1` };
}

/** The credential headers that send a request as `as`. */
export function giteaAuth(as: GiteaCredentials): Record<string, string> {
  const auth: Record<string, string> = { authorization: `token ${as.token}` };
  if (as.sudo !== undefined) auth.sudo = as.sudo;
  return auth;
}

/** `path` asking for the first page of GITEA_LIMIT items. */
export function firstPage(path: string): string {
  return withQuery(path, { limit: GITEA_LIMIT, page: 1 });
}

/**
 * The page callback of one list (a fresh one per list: it counts the items read so far,
 * which X-Total-Count is compared with).
 */
export function giteaPages<T>(toItem: (v: unknown) => T): (data: unknown, reply: HttpReply) => Page<T> {
  let read = 0;
  return (data, reply) => {
    const items = arr(data, 'list').map(toItem);
    read += items.length;
    const following = (): string => {
      const current = Number(new URL(reply.url).searchParams.get('page') ?? '1');
      return withQuery(reply.url, { page: current + 1 });
    };
    let next: string | undefined;
    const total = reply.headers.get('x-total-count');
    if (reply.headers.get('link') !== null) next = nextLink(reply.headers);
    else if (total !== null && /^\d+$/.test(total.trim())) next = read < Number(total) && items.length > 0 ? following() : undefined;
    else if (items.length >= GITEA_LIMIT) next = following();
    return next === undefined ? { items } : { items, next };
  };
}
