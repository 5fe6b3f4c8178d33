// Bitbucket Cloud and Bitbucket Server / Data Center: two different APIs under one
// connection type, chosen by `deploymentType`.
//
// Cloud. API root https://api.bitbucket.org/2.0 for https://bitbucket.org, else <url>/2.0.
//   GET /repositories/{workspace}?pagelen=100                        a workspace's repositories
//   GET /repositories/{workspace}?pagelen=100&q=project.key="KEY"    one project's
//   GET /workspaces/{workspace}/projects/{KEY}                       whether the project exists
//   GET /repositories/{workspace}/{slug}                             one repository
// Pages: the body's `next` (absolute URL; absent on the last page) beside `values`. Auth:
// basic user:app-password (or API token), or `Bearer` for workspace/repository access
// tokens (no user). Rate limits: 429. A repository: full_name, links.html.href,
// links.clone[{name: "https"}].href (carries "user@"), mainbranch.name, parent (forks),
// is_private, updated_on, links.avatar.href; Cloud has no archived state. Git over https:
// the user and app password, or `x-token-auth` and an access token.
//
// Server / Data Center. API root <url>/rest/api/1.0.
//   GET /projects/{KEY}/repos?limit=100&start=N             a project's repositories
//   GET /projects/{KEY}/repos/{slug}                        one repository
//   GET /projects/{KEY}/repos/{slug}/default-branch         {id: "refs/heads/main", displayId}
//       (before 7.x: /branches/default; both 404 or 204 for an empty repository)
// Pages: `isLastPage` and `nextPageStart` in the body. Auth: `Bearer` HTTP access token.
// Rate limits: 429 with Retry-After. A repository: slug, project.key, links.self[0].href
// (the browse page), links.clone[{name: "http"}].href, origin (forks), archived (8.0+),
// public (or project.public). repoName is host/KEY/slug.

import type { BitbucketConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { ClientConfig, HostContext, HttpReply, Page } from './http.ts';
import {
  JsonClient,
  arr,
  basicAuth,
  bool,
  compact,
  encodePath,
  hostPrefix,
  isObject,
  mapLimit,
  obj,
  optObj,
  optStr,
  str,
  stripCredentials,
  trimSlash,
  withQuery,
} from './http.ts';
import { ShapeError } from './http.ts';
import { bitbucketCloudPermissions } from './bitbucket-cloud-permissions.ts';
import { bitbucketServerPermissions } from './bitbucket-server-permissions.ts';

const PAGE_SIZE = 100;
const BRANCH_CONCURRENCY = 4;

export function createBitbucketHost(conn: BitbucketConnection, ctx: HostContext): CodeHost {
  return conn.deploymentType === 'cloud' ? createCloudHost(conn, ctx) : createServerHost(conn, ctx);
}

function createCloudHost(conn: BitbucketConnection, ctx: HostContext): CodeHost {
  const host = new URL(conn.url).hostname.toLowerCase();
  const isBitbucketOrg = host === 'bitbucket.org' || host === 'www.bitbucket.org';
  let auth: Record<string, string> | undefined;
  if (ctx.token !== undefined) {
    auth = { authorization: conn.user === undefined ? `Bearer ${ctx.token}` : basicAuth(conn.user, ctx.token) };
  }
  const cfg: ClientConfig = {
    context: ctx,
    baseUrl: isBitbucketOrg ? 'https://api.bitbucket.org/2.0' : `${trimSlash(conn.url)}/2.0`,
    ...(auth === undefined ? {} : { auth }),
  };
  const client = new JsonClient(cfg);
  const prefix = hostPrefix(conn.url);
  const toRepo = (v: unknown): HostRepo => cloudRepo(obj(v, 'repository'), prefix);
  const page = (data: unknown): Page<HostRepo> => {
    const body = obj(data, 'repository page');
    const items = arr(body.values, 'values').map(toRepo);
    const next = optStr(body, 'next');
    return next === undefined ? { items } : { items, next };
  };

  return {
    type: 'bitbucketCloud',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const ws of conn.workspaces) {
        const path = `/repositories/${encodeURIComponent(ws)}?pagelen=${PAGE_SIZE}`;
        parts.push(await client.paginate(path, page, { signal, notFound: `workspace "${ws}"` }));
      }
      for (const spec of conn.projects) {
        const [ws, key] = splitFirst(spec);
        // A filter on a project that does not exist matches nothing rather than failing:
        // ask for the project itself so that a typo is reported.
        await client.get(`/workspaces/${encodeURIComponent(ws)}/projects/${encodeURIComponent(key)}`, () => undefined, {
          signal,
          notFound: `project "${spec}"`,
        });
        const path = withQuery(`/repositories/${encodeURIComponent(ws)}`, { pagelen: PAGE_SIZE, q: `project.key="${key}"` });
        parts.push(await client.paginate(path, page, { signal, notFound: `workspace "${ws}"` }));
      }
      for (const name of conn.repos) {
        parts.push([await client.get(`/repositories/${encodePath(name)}`, toRepo, { signal, notFound: `repository "${name}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      if (ctx.token === undefined) return undefined;
      return { username: conn.user ?? 'x-token-auth', password: ctx.token };
    },
    permissions: bitbucketCloudPermissions(conn, cfg),
  };
}

function cloudRepo(o: Record<string, unknown>, prefix: string): HostRepo {
  const fullName = str(o, 'full_name');
  const links = optObj(o, 'links');
  const clone = links?.clone === undefined ? [] : arr(links.clone, 'links.clone');
  const https = clone.find((c) => isObject(c) && c.name === 'https');
  const cloneHref = isObject(https) ? optStr(https, 'href') : undefined;
  if (cloneHref === undefined) throw new ShapeError(`repository "${fullName}" has no https clone link`);
  return compact<HostRepo>({
    repoName: `${prefix}/${fullName}`,
    displayName: fullName,
    codeHostType: 'bitbucketCloud',
    cloneUrl: stripCredentials(cloneHref),
    externalWebUrl: str(obj(optObj(links, 'html'), 'links.html'), 'href'),
    defaultBranch: optStr(optObj(o, 'mainbranch'), 'name'),
    isFork: optObj(o, 'parent') !== undefined,
    isArchived: false,
    visibility: bool(o, 'is_private') ? 'private' : 'public',
    pushedAt: optStr(o, 'updated_on'),
    imageUrl: optStr(optObj(links, 'avatar'), 'href'),
  });
}

function createServerHost(conn: BitbucketConnection, ctx: HostContext): CodeHost {
  const webUrl = trimSlash(conn.url);
  const cfg: ClientConfig = {
    context: ctx,
    baseUrl: `${webUrl}/rest/api/1.0`,
    ...(ctx.token === undefined ? {} : { auth: { authorization: `Bearer ${ctx.token}` } }),
  };
  const client = new JsonClient(cfg);
  const prefix = hostPrefix(webUrl);
  const page = (data: unknown, reply: HttpReply): Page<Record<string, unknown>> => {
    const body = obj(data, 'repository page');
    const items = arr(body.values, 'values').map((v) => obj(v, 'repository'));
    if (bool(body, 'isLastPage', true)) return { items };
    const start = body.nextPageStart;
    if (typeof start !== 'number') throw new ShapeError('isLastPage is false but nextPageStart is missing');
    return { items, next: withQuery(reply.url, { start }) };
  };
  // Servers before 7.x lack /default-branch; once one answers only the legacy path, use it.
  let legacyDefaultBranch = false;
  const defaultBranch = async (key: string, slug: string, signal: AbortSignal | undefined): Promise<string | undefined> => {
    const base = `/projects/${encodeURIComponent(key)}/repos/${encodeURIComponent(slug)}`;
    const parse = (data: unknown): string | undefined => optStr(obj(data, 'branch'), 'displayId');
    if (!legacyDefaultBranch) {
      const branch = await client.getOptional(`${base}/default-branch`, parse, { signal });
      if (branch !== undefined) return branch;
    }
    const legacy = await client.getOptional(`${base}/branches/default`, parse, { signal });
    if (legacy !== undefined) legacyDefaultBranch = true;
    return legacy;
  };
  const toRepo = async (o: Record<string, unknown>, signal: AbortSignal | undefined): Promise<HostRepo> => {
    const slug = str(o, 'slug');
    const project = obj(o.project, 'project');
    const key = str(project, 'key');
    return serverRepo(o, project, prefix, await defaultBranch(key, slug, signal));
  };

  return {
    type: 'bitbucketServer',
    async listRepos(signal) {
      const raw: Array<Record<string, unknown>> = [];
      for (const key of conn.projects) {
        const path = `/projects/${encodeURIComponent(key)}/repos?limit=${PAGE_SIZE}&start=0`;
        for (const r of await client.paginate(path, page, { signal, notFound: `project "${key}"` })) raw.push(r);
      }
      for (const name of conn.repos) {
        const [key, slug] = splitFirst(name);
        const path = `/projects/${encodeURIComponent(key)}/repos/${encodeURIComponent(slug)}`;
        raw.push(await client.get(path, (d) => obj(d, 'repository'), { signal, notFound: `repository "${name}"` }));
      }
      try {
        return await mapLimit(raw, BRANCH_CONCURRENCY, (o) => toRepo(o, signal));
      } catch (err) {
        if (err instanceof ShapeError) throw client.error('bad-response', `unexpected repository from ${client.baseUrl}: ${err.message}`);
        throw err;
      }
    },
    gitCredentials() {
      if (ctx.token === undefined) return undefined;
      // Personal HTTP access tokens stand in for the owner's password; project and
      // repository tokens ignore the user name.
      return { username: conn.user ?? 'x-token-auth', password: ctx.token };
    },
    permissions: bitbucketServerPermissions(conn, cfg),
  };
}

function serverRepo(o: Record<string, unknown>, project: Record<string, unknown>, prefix: string, branch: string | undefined): HostRepo {
  const slug = str(o, 'slug');
  const key = str(project, 'key');
  const links = obj(o.links, 'links');
  const clone = arr(links.clone, 'links.clone').find((c) => isObject(c) && c.name === 'http');
  const self = arr(links.self, 'links.self')[0];
  return compact<HostRepo>({
    repoName: `${prefix}/${key}/${slug}`,
    displayName: `${key}/${slug}`,
    codeHostType: 'bitbucketServer',
    cloneUrl: stripCredentials(str(obj(clone, `http clone link of ${key}/${slug}`), 'href')),
    externalWebUrl: str(obj(self, `self link of ${key}/${slug}`), 'href'),
    defaultBranch: branch,
    isFork: optObj(o, 'origin') !== undefined,
    isArchived: bool(o, 'archived'),
    visibility: bool(o, 'public') || bool(project, 'public') ? 'public' : 'private',
  });
}

/** "a/b/c" → ["a", "b/c"]: the owner, then the rest. */
function splitFirst(spec: string): [string, string] {
  const i = spec.indexOf('/');
  return i < 0 ? [spec, ''] : [spec.slice(0, i), spec.slice(i + 1)];
}
