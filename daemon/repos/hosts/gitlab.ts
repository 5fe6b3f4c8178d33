// GitLab (gitlab.com and self-managed).
//
// API root: <url>/api/v4. Paths name groups and projects by their URL-encoded full path
// ("group%2Fsub").
//   GET /groups/{path}/projects?include_subgroups=true&per_page=100  a group and its subgroups
//   GET /users/{user}/projects?per_page=100                          a user's own projects
//   GET /projects/{path}                                             one project
// Lists page as gitlab-pages.ts reads them. Auth: `PRIVATE-TOKEN: TOKEN`. Rate limits: 429
// with `RateLimit-Reset` (epoch seconds) and `Retry-After`. A project: path_with_namespace,
// web_url, http_url_to_repo, default_branch (null when empty), forked_from_project (present
// for forks), archived, visibility (public, internal, private), last_activity_at,
// avatar_url or namespace.avatar_url (may be relative to the host), topics (tag_list before
// GitLab 14.5). Git over https takes the token as the password of the user `oauth2`. Who may
// read what: gitlab-permissions.ts.

import type { GitLabConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { ClientConfig, HostContext, HttpReply, Page } from './http.ts';
import { JsonClient, arr, bool, compact, hostPrefix, obj, optObj, optStr, str, trimSlash } from './http.ts';
import { nextPage } from './gitlab-pages.ts';
import { createGitLabPermissions } from './gitlab-permissions.ts';
import { topicsFrom } from './topics.ts';

const PER_PAGE = 100;

export function createGitLabHost(conn: GitLabConnection, ctx: HostContext): CodeHost {
  const webUrl = trimSlash(conn.url);
  const settings: ClientConfig = {
    context: ctx,
    baseUrl: `${webUrl}/api/v4`,
    ...(ctx.token === undefined ? {} : { auth: { 'private-token': ctx.token } }),
  };
  const client = new JsonClient(settings);
  const prefix = hostPrefix(webUrl);
  const toRepo = (v: unknown): HostRepo => repoFrom(obj(v, 'project'), prefix, webUrl);
  const page = (data: unknown, reply: HttpReply): Page<HostRepo> => {
    const items = arr(data, 'project list').map(toRepo);
    const next = nextPage(reply);
    return next === undefined ? { items } : { items, next };
  };

  return {
    type: 'gitlab',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const group of conn.groups) {
        const path = `/groups/${encodeURIComponent(group)}/projects?include_subgroups=true&per_page=${PER_PAGE}`;
        parts.push(await client.paginate(path, page, { signal, notFound: `group "${group}"` }));
      }
      for (const user of conn.users) {
        const path = `/users/${encodeURIComponent(user)}/projects?per_page=${PER_PAGE}`;
        parts.push(await client.paginate(path, page, { signal, notFound: `user "${user}"` }));
      }
      for (const project of conn.projects) {
        const path = `/projects/${encodeURIComponent(project)}`;
        parts.push([await client.get(path, toRepo, { signal, notFound: `project "${project}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      return ctx.token === undefined ? undefined : { username: 'oauth2', password: ctx.token };
    },
    permissions: createGitLabPermissions(settings, prefix),
  };
}

function repoFrom(o: Record<string, unknown>, prefix: string, webUrl: string): HostRepo {
  const path = str(o, 'path_with_namespace');
  const avatar = optStr(o, 'avatar_url') ?? optStr(optObj(o, 'namespace'), 'avatar_url');
  return compact<HostRepo>({
    repoName: `${prefix}/${path}`,
    displayName: path,
    codeHostType: 'gitlab',
    cloneUrl: str(o, 'http_url_to_repo'),
    externalWebUrl: str(o, 'web_url'),
    defaultBranch: optStr(o, 'default_branch'),
    isFork: optObj(o, 'forked_from_project') !== undefined,
    isArchived: bool(o, 'archived'),
    // "internal" projects are visible to every signed-in user, not to anonymous ones.
    visibility: optStr(o, 'visibility') === 'public' ? 'public' : 'private',
    pushedAt: optStr(o, 'last_activity_at'),
    imageUrl: avatar === undefined ? undefined : new URL(avatar, `${webUrl}/`).href,
    topics: topicsFrom(o, 'topics') ?? topicsFrom(o, 'tag_list'),
  });
}
