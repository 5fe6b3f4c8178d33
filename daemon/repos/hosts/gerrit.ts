// Gerrit.
//
// REST root: <url> for anonymous access, <url>/a with HTTP basic auth (user and HTTP
// password). Every JSON answer starts with the line `)]}'` (against XSSI).
//   GET /projects/?d&t&n=100&S=skip  the projects the caller may see (gerrit-projects.ts)
//   GET /projects/{name}             one project (name URL-encoded, '/' as %2F)
//   GET /projects/{name}/HEAD        the default branch as a JSON string "refs/heads/main"
// Project states: ACTIVE, READ_ONLY (trawl: archived), HIDDEN (left out). Gerrit has no
// forks, owners' avatars, push times or repository topics. Clone URL <url>/<project>, or
// <url>/a/<project> when authenticated; the web page is the project's gitiles link when
// web_links has one, else <url>/plugins/gitiles/<project>. With a token configured the
// host is taken to require sign-in, so its projects are private; without one they are
// public. Who may read what: gerrit-permissions.ts.

import type { GerritConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { HostContext } from './http.ts';
import { HostError } from './types.ts';
import { JsonClient, basicAuth, compact, encodePath, hostPrefix, mapLimit, obj, optStr, trimSlash } from './http.ts';
import { entryFrom, listProjects } from './gerrit-projects.ts';
import type { ProjectEntry } from './gerrit-projects.ts';
import { createGerritPermissions } from './gerrit-permissions.ts';

const HEAD_CONCURRENCY = 4;

/** `matchGlob(glob, name)` is the same matcher the excludes use (index.ts). */
export function createGerritHost(conn: GerritConnection, ctx: HostContext, matchGlob: (glob: string, name: string) => boolean): CodeHost {
  const webUrl = trimSlash(conn.url);
  const authenticated = ctx.token !== undefined;
  if (authenticated && conn.user === undefined) {
    throw new HostError('unauthorized', `connection "${ctx.name}": a Gerrit token is an HTTP password; set "user" to the account it belongs to`);
  }
  const client = new JsonClient({
    context: ctx,
    baseUrl: authenticated ? `${webUrl}/a` : webUrl,
    ...(authenticated ? { auth: { authorization: basicAuth(conn.user!, ctx.token!) } } : {}),
  });
  const prefix = hostPrefix(webUrl);

  const getOne = (name: string, signal: AbortSignal | undefined): Promise<ProjectEntry> =>
    client.get(
      `/projects/${encodeURIComponent(name)}`,
      (data) => {
        const info = obj(data, 'project');
        return entryFrom(optStr(info, 'name') ?? name, info);
      },
      { signal, notFound: `project "${name}"`, xssiPrefix: true },
    );

  const defaultBranch = async (name: string, signal: AbortSignal | undefined): Promise<string | undefined> => {
    const head = await client.getOptional(`/projects/${encodeURIComponent(name)}/HEAD`, (data) => (typeof data === 'string' ? data : undefined), {
      signal,
      xssiPrefix: true,
    });
    return head?.replace(/^refs\/heads\//, '');
  };

  const toRepo = (p: ProjectEntry, branch: string | undefined): HostRepo => {
    const gitiles = p.webLinks.find((l) => /gitiles|browse/i.test(l.name)) ?? p.webLinks[0];
    return compact<HostRepo>({
      repoName: `${prefix}/${p.name}`,
      displayName: p.name,
      codeHostType: 'gerrit',
      cloneUrl: `${webUrl}${authenticated ? '/a' : ''}/${encodePath(p.name)}`,
      externalWebUrl: gitiles === undefined ? `${webUrl}/plugins/gitiles/${encodePath(p.name)}` : new URL(gitiles.url, `${webUrl}/`).href,
      defaultBranch: branch,
      isFork: false,
      isArchived: p.state === 'READ_ONLY',
      visibility: authenticated ? 'private' : 'public',
    });
  };

  return {
    type: 'gerrit',
    async listRepos(signal) {
      const literals = conn.projects.filter((p) => !/[*?]/.test(p));
      const globs = conn.projects.filter((p) => /[*?]/.test(p));
      const selected: ProjectEntry[] = [];
      if (conn.projects.length === 0 || globs.length > 0) {
        for (const p of await listProjects(client, signal)) {
          if (conn.projects.length === 0 || globs.some((g) => matchGlob(g, p.name))) selected.push(p);
        }
      }
      for (const name of literals) selected.push(await getOne(name, signal));
      const visible = selected.filter((p) => p.state !== 'HIDDEN');
      const branches = await mapLimit(visible, HEAD_CONCURRENCY, (p) => defaultBranch(p.name, signal));
      return visible.map((p, i) => toRepo(p, branches[i]));
    },
    gitCredentials() {
      return authenticated ? { username: conn.user!, password: ctx.token! } : undefined;
    },
    permissions: createGerritPermissions({ context: ctx, url: webUrl, prefix, connection: client, user: conn.user }),
  };
}
