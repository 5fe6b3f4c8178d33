// Azure DevOps Services (and Server, with its collection URL as `url`).
//
// API root: <url>, https://dev.azure.com by default; every call carries api-version=7.1.
//   GET /{org}/_apis/projects?$top=100[&continuationToken=T]     an organization's projects;
//       more follow while the answer has an `x-ms-continuationtoken` header
//   GET /{org}/{project}/_apis/git/repositories                  a project's repositories (one page)
//   GET /{org}/{project}/_apis/git/repositories/{repo}           one repository
// Lists are `{count, value: [...]}`. Auth: basic with an empty user and the PAT as the
// password; a missing or rejected PAT gets 203 and an HTML sign-in page rather than 401.
// Rate limits: 429 with Retry-After. A repository: name, webUrl, remoteUrl (carries
// "org@"), defaultBranch ("refs/heads/main"; absent when empty), isFork, isDisabled
// (trawl: archived, since a disabled repository can be neither read nor pushed), and its
// project's visibility and lastUpdateTime. repoName is host/org/project/repo.

import type { AzureDevOpsConnection } from '../../config/types.ts';
import type { CodeHost, HostRepo } from './types.ts';
import type { ClientConfig, HostContext, HttpReply, Page } from './http.ts';
import { JsonClient, arr, basicAuth, bool, compact, hostPrefix, mapLimit, obj, optObj, optStr, str, stripCredentials, trimSlash, withQuery } from './http.ts';
import { azureDevOpsPermissions } from './azuredevops-permissions.ts';

const API_VERSION = '7.1';
const PAGE_SIZE = 100;
const PROJECT_CONCURRENCY = 4;

export function createAzureDevOpsHost(conn: AzureDevOpsConnection, ctx: HostContext): CodeHost {
  const cfg: ClientConfig = {
    context: ctx,
    baseUrl: trimSlash(conn.url),
    signInStatus: 203,
    ...(ctx.token === undefined ? {} : { auth: { authorization: basicAuth('', ctx.token) } }),
  };
  const client = new JsonClient(cfg);
  const prefix = hostPrefix(conn.url);

  const projectsOf = (org: string, signal: AbortSignal | undefined): Promise<string[]> => {
    const page = (data: unknown, reply: HttpReply): Page<string> => {
      const items = arr(obj(data, 'project list').value, 'value').map((p) => str(obj(p, 'project'), 'name'));
      const token = reply.headers.get('x-ms-continuationtoken');
      return token === null || token === '' ? { items } : { items, next: withQuery(reply.url, { continuationToken: token }) };
    };
    const path = `/${encodeURIComponent(org)}/_apis/projects?api-version=${API_VERSION}&$top=${PAGE_SIZE}`;
    return client.paginate(path, page, { signal, notFound: `organization "${org}"` });
  };

  const reposOf = (org: string, project: string, signal: AbortSignal | undefined): Promise<HostRepo[]> => {
    const path = `/${encodeURIComponent(org)}/${encodeURIComponent(project)}/_apis/git/repositories?api-version=${API_VERSION}`;
    return client.get(path, (data) => arr(obj(data, 'repository list').value, 'value').map((r) => repoFrom(obj(r, 'repository'), org, prefix)), {
      signal,
      notFound: `project "${org}/${project}"`,
    });
  };

  return {
    type: 'azuredevops',
    async listRepos(signal) {
      const parts: HostRepo[][] = [];
      for (const org of conn.orgs) {
        const projects = await projectsOf(org, signal);
        parts.push(...(await mapLimit(projects, PROJECT_CONCURRENCY, (p) => reposOf(org, p, signal))));
      }
      for (const spec of conn.projects) {
        const [org, project] = split(spec, 2);
        parts.push(await reposOf(org, project, signal));
      }
      for (const spec of conn.repos) {
        const [org, project, name] = split(spec, 3);
        const path =
          `/${encodeURIComponent(org)}/${encodeURIComponent(project)}/_apis/git/repositories/${encodeURIComponent(name)}` + `?api-version=${API_VERSION}`;
        parts.push([await client.get(path, (d) => repoFrom(obj(d, 'repository'), org, prefix), { signal, notFound: `repository "${spec}"` })]);
      }
      return parts.flat();
    },
    gitCredentials() {
      // Azure ignores the user name of a PAT but git wants one.
      return ctx.token === undefined ? undefined : { username: 'pat', password: ctx.token };
    },
    permissions: azureDevOpsPermissions(conn, cfg),
  };
}

function repoFrom(o: Record<string, unknown>, org: string, prefix: string): HostRepo {
  const project = obj(o.project, 'project');
  const displayName = `${org}/${str(project, 'name')}/${str(o, 'name')}`;
  return compact<HostRepo>({
    repoName: `${prefix}/${displayName}`,
    displayName,
    codeHostType: 'azuredevops',
    cloneUrl: stripCredentials(str(o, 'remoteUrl')),
    externalWebUrl: str(o, 'webUrl'),
    defaultBranch: optStr(o, 'defaultBranch')?.replace(/^refs\/heads\//, ''),
    isFork: bool(o, 'isFork'),
    isArchived: bool(o, 'isDisabled'),
    visibility: optStr(project, 'visibility') === 'public' ? 'public' : 'private',
    pushedAt: optStr(optObj(o, 'project'), 'lastUpdateTime'),
  });
}

/** "org/project/repo" into `n` parts; the last keeps any further slashes. */
function split(spec: string, n: number): string[] {
  const parts = spec.split('/');
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join('/')];
}
