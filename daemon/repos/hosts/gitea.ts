// Gitea and Forgejo (gitea.com, codeberg.org, self-hosted).
//
// API root: <url>/api/v1.
//   GET /orgs/{org}/repos?limit=50&page=N    an organization's repositories
//   GET /users/{user}/repos?limit=50&page=N  a user's repositories
//   GET /repos/{owner}/{repo}                one repository
// Pages are numbered from 1. Gitea sends `Link: rel="next"` while more pages follow; a
// server that sends no Link header at all is read until a page comes back short (50 is
// the default MAX_RESPONSE_ITEMS, and a server configured lower does send Link). Auth:
// `Authorization: token TOKEN`. Rate limits (usually a proxy in front): 429 with
// Retry-After. A repository: full_name, html_url, clone_url, default_branch, fork,
// archived, private, internal, updated_at (Gitea reports no push time), owner.avatar_url.
// Git over https accepts the token as the password of any user name.

import type { GiteaConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { HostContext, HttpReply, Page } from './http.ts';
import { JsonClient, arr, bool, compact, encodePath, hostPrefix, nextLink, obj, optObj, optStr, str, trimSlash, withQuery } from './http.ts';

const LIMIT = 50;

export function createGiteaHost(conn: GiteaConnection, ctx: HostContext): CodeHost {
  const client = new JsonClient({
    context: ctx,
    baseUrl: `${trimSlash(conn.url)}/api/v1`,
    ...(ctx.token === undefined ? {} : { auth: { authorization: `token ${ctx.token}` } }),
  });
  const prefix = hostPrefix(conn.url);
  const toRepo = (v: unknown): HostRepo => repoFrom(obj(v, 'repository'), prefix);
  const page = (data: unknown, reply: HttpReply): Page<HostRepo> => {
    const items = arr(data, 'repository list').map(toRepo);
    let next: string | undefined;
    if (reply.headers.get('link') !== null) next = nextLink(reply.headers);
    else if (items.length >= LIMIT) {
      const current = Number(new URL(reply.url).searchParams.get('page') ?? '1');
      next = withQuery(reply.url, { page: current + 1 });
    }
    return next === undefined ? { items } : { items, next };
  };

  return {
    type: 'gitea',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const org of conn.orgs) {
        const path = `/orgs/${encodeURIComponent(org)}/repos?limit=${LIMIT}&page=1`;
        parts.push(await client.paginate(path, page, { signal, notFound: `organization "${org}"` }));
      }
      for (const user of conn.users) {
        const path = `/users/${encodeURIComponent(user)}/repos?limit=${LIMIT}&page=1`;
        parts.push(await client.paginate(path, page, { signal, notFound: `user "${user}"` }));
      }
      for (const name of conn.repos) {
        parts.push([await client.get(`/repos/${encodePath(name)}`, toRepo, { signal, notFound: `repository "${name}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      return ctx.token === undefined ? undefined : { username: 'oauth2', password: ctx.token };
    },
  };
}

function repoFrom(o: Record<string, unknown>, prefix: string): HostRepo {
  const fullName = str(o, 'full_name');
  return compact<HostRepo>({
    repoName: `${prefix}/${fullName}`,
    displayName: fullName,
    codeHostType: 'gitea',
    cloneUrl: str(o, 'clone_url'),
    externalWebUrl: str(o, 'html_url'),
    defaultBranch: optStr(o, 'default_branch'),
    isFork: bool(o, 'fork'),
    isArchived: bool(o, 'archived'),
    // "internal" repositories are visible to signed-in users only.
    visibility: bool(o, 'private') || bool(o, 'internal') ? 'private' : 'public',
    pushedAt: optStr(o, 'updated_at'),
    imageUrl: optStr(optObj(o, 'owner'), 'avatar_url'),
  });
}
