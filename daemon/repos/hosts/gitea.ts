// Gitea and Forgejo (gitea.com, codeberg.org, self-hosted).
//
// API root, auth and pages: gitea-api.ts.
//   GET /orgs/{org}/repos?limit=50&page=N    an organization's repositories
//   GET /users/{user}/repos?limit=50&page=N  a user's repositories
//   GET /repos/{owner}/{repo}                one repository
// Rate limits (usually a proxy in front): 429 with Retry-After. A repository: full_name,
// html_url, clone_url, default_branch, fork, archived, private, internal, updated_at (Gitea
// reports no push time), owner.avatar_url, topics (lower-case on Gitea already). Git over
// https accepts the token as the password of any user name. Who may read what:
// gitea-permissions.ts.

import type { GiteaConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { HostContext } from './http.ts';
import { ShapeError, bool, compact, encodePath, hostPrefix, obj, optObj, optStr, str } from './http.ts';
import { firstPage, giteaClient, giteaPages } from './gitea-api.ts';
import { createGiteaPermissions } from './gitea-permissions.ts';

export function createGiteaHost(conn: GiteaConnection, ctx: HostContext): CodeHost {
  const client = giteaClient(ctx, conn.url, ctx.token === undefined ? undefined : { token: ctx.token });
  const prefix = hostPrefix(conn.url);
  const toRepo = (v: unknown): HostRepo => repoFrom(obj(v, 'repository'), prefix);

  return {
    type: 'gitea',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const org of conn.orgs) {
        const path = firstPage(`/orgs/${encodeURIComponent(org)}/repos`);
        parts.push(await client.paginate(path, giteaPages(toRepo), { signal, notFound: `organization "${org}"` }));
      }
      for (const user of conn.users) {
        const path = firstPage(`/users/${encodeURIComponent(user)}/repos`);
        parts.push(await client.paginate(path, giteaPages(toRepo), { signal, notFound: `user "${user}"` }));
      }
      for (const name of conn.repos) {
        parts.push([await client.get(`/repos/${encodePath(name)}`, toRepo, { signal, notFound: `repository "${name}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      return ctx.token === undefined ? undefined : { username: 'oauth2', password: ctx.token };
    },
    permissions: createGiteaPermissions({ context: ctx, url: conn.url, prefix }),
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
    topics: topicsOf(o),
  });
}

/** The repository's topics, lower-case; undefined when it has none (older Gitea sends no field, newer null or []). */
function topicsOf(o: Record<string, unknown>): string[] | undefined {
  const v = o.topics;
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) throw new ShapeError('field "topics" is not a list of strings');
  return v.length === 0 ? undefined : v.map((t: string) => t.toLowerCase());
}
