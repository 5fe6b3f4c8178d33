// Gerrit.
//
// REST root: <url> for anonymous access, <url>/a with HTTP basic auth (user and HTTP
// password). Every JSON answer starts with the line `)]}'` (against XSSI).
//   GET /projects/?d&t&n=100&S=skip  the projects the caller may see, as a map
//        name -> {id, state, web_links, description}; more follow when the last entry
//        carries `_more_projects: true`, fetched with S (skip) advanced by the count
//   GET /projects/{name}             one project (name URL-encoded, '/' as %2F)
//   GET /projects/{name}/HEAD        the default branch as a JSON string "refs/heads/main"
// Project states: ACTIVE, READ_ONLY (trawl: archived), HIDDEN (left out). Gerrit has no
// forks, owners' avatars or push times. Clone URL <url>/<project>, or <url>/a/<project>
// when authenticated; the web page is the project's gitiles link when web_links has one,
// else <url>/plugins/gitiles/<project>. With a token configured the host is taken to
// require sign-in, so its projects are private; without one they are public.

import type { GerritConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { HostContext, Page } from './http.ts';
import { HostError } from './types.ts';
import { JsonClient, arr, basicAuth, compact, encodePath, hostPrefix, isObject, mapLimit, obj, optStr, trimSlash } from './http.ts';

const PAGE_SIZE = 100;
const HEAD_CONCURRENCY = 4;
// Gerrit's own configuration repositories: permissions and accounts, no code.
const SYSTEM_PROJECTS = new Set(['All-Projects', 'All-Users']);

interface ProjectEntry {
  name: string;
  state: string;
  webLinks: Array<{ name: string; url: string }>;
}

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

  const listAll = async (signal: AbortSignal | undefined): Promise<ProjectEntry[]> => {
    let skip = 0;
    const page = (data: unknown): Page<ProjectEntry> => {
      const map = obj(data, 'project map');
      const items: ProjectEntry[] = [];
      let more = false;
      for (const [name, v] of Object.entries(map)) {
        const info = obj(v, `project "${name}"`);
        // The flag sits on the last entry; JSON.parse moves integer-like names first, so
        // look at every entry rather than trust the order.
        if (info._more_projects === true) more = true;
        items.push(entryFrom(name, info));
      }
      skip += items.length;
      const next = more && items.length > 0 ? `/projects/?d&t&n=${PAGE_SIZE}&S=${skip}` : undefined;
      return next === undefined ? { items } : { items, next };
    };
    const all = await client.paginate(`/projects/?d&t&n=${PAGE_SIZE}&S=0`, page, { signal, xssiPrefix: true });
    return all.filter((p) => !SYSTEM_PROJECTS.has(p.name));
  };

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
        for (const p of await listAll(signal)) {
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
  };
}

function entryFrom(name: string, info: Record<string, unknown>): ProjectEntry {
  const links = info.web_links === undefined ? [] : arr(info.web_links, 'web_links');
  const webLinks: ProjectEntry['webLinks'] = [];
  for (const l of links) {
    if (isObject(l) && typeof l.url === 'string') webLinks.push({ name: String(l.name ?? ''), url: l.url });
  }
  return { name, state: optStr(info, 'state') ?? 'ACTIVE', webLinks };
}
