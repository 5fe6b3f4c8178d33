// GitHub and GitHub Enterprise Server.
//
// API root: https://api.github.com for github.com, <url>/api/v3 for Enterprise.
//   GET /orgs/{org}/repos?per_page=100&type=all      an organization's repositories
//   GET /users/{user}/repos?per_page=100&type=owner  the repositories a user owns
//   GET /repos/{owner}/{repo}                        one repository
// Lists page with `Link: <...>; rel="next"`. Auth: `Authorization: Bearer TOKEN`. Rate
// limits: 403 (or 429) with `x-ratelimit-remaining: 0` and `x-ratelimit-reset` (epoch
// seconds), or `Retry-After` for secondary limits. A repository: full_name, html_url,
// clone_url, default_branch, fork, archived, private / visibility (public, private,
// internal), pushed_at, owner.avatar_url, topics. Git over https takes the token as the
// password of the user `x-access-token`. Who may read what: github-permissions.ts.

import type { GitHubConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { ClientConfig, HostContext, HttpReply, Page } from './http.ts';
import { JsonClient, arr, bool, compact, encodePath, hostPrefix, nextLink, obj, optObj, optStr, str, trimSlash } from './http.ts';
import { createGitHubPermissions } from './github-permissions.ts';
import { topicsFrom } from './topics.ts';

const PER_PAGE = 100;

export function createGitHubHost(conn: GitHubConnection, ctx: HostContext): CodeHost {
  const settings: ClientConfig = {
    context: ctx,
    baseUrl: apiBase(conn.url),
    headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' },
    ...(ctx.token === undefined ? {} : { auth: { authorization: `Bearer ${ctx.token}` } }),
  };
  const client = new JsonClient(settings);
  const prefix = hostPrefix(conn.url);
  const toRepo = (v: unknown): HostRepo => repoFrom(obj(v, 'repository'), prefix);
  const page = (data: unknown, reply: HttpReply): Page<HostRepo> => {
    const items = arr(data, 'repository list').map(toRepo);
    const next = nextLink(reply.headers);
    return next === undefined ? { items } : { items, next };
  };

  return {
    type: 'github',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const org of conn.orgs) {
        const path = `/orgs/${encodeURIComponent(org)}/repos?per_page=${PER_PAGE}&type=all`;
        parts.push(await client.paginate(path, page, { signal, notFound: `organization "${org}"` }));
      }
      for (const user of conn.users) {
        const path = `/users/${encodeURIComponent(user)}/repos?per_page=${PER_PAGE}&type=owner`;
        parts.push(await client.paginate(path, page, { signal, notFound: `user "${user}"` }));
      }
      for (const name of conn.repos) {
        parts.push([await client.get(`/repos/${encodePath(name)}`, toRepo, { signal, notFound: `repository "${name}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      return ctx.token === undefined ? undefined : { username: 'x-access-token', password: ctx.token };
    },
    permissions: createGitHubPermissions(settings, prefix),
  };
}

/** The REST API root of a GitHub web URL: api.github.com for github.com, <url>/api/v3 for Enterprise. */
export function apiBase(webUrl: string): string {
  const host = new URL(webUrl).hostname.toLowerCase();
  if (host === 'github.com' || host === 'www.github.com') return 'https://api.github.com';
  return `${trimSlash(webUrl)}/api/v3`;
}

function repoFrom(o: Record<string, unknown>, prefix: string): HostRepo {
  const fullName = str(o, 'full_name');
  // `visibility` is newer than `private` and adds "internal" (visible to the enterprise's
  // members, not to anonymous users: private for trawl).
  const visibility = optStr(o, 'visibility') ?? (bool(o, 'private') ? 'private' : 'public');
  return compact<HostRepo>({
    repoName: `${prefix}/${fullName}`,
    displayName: fullName,
    codeHostType: 'github',
    cloneUrl: str(o, 'clone_url'),
    externalWebUrl: str(o, 'html_url'),
    defaultBranch: optStr(o, 'default_branch'),
    isFork: bool(o, 'fork'),
    isArchived: bool(o, 'archived'),
    visibility: visibility === 'public' ? 'public' : 'private',
    pushedAt: optStr(o, 'pushed_at'),
    imageUrl: optStr(optObj(o, 'owner'), 'avatar_url'),
    topics: topicsFrom(o, 'topics'),
  });
}
