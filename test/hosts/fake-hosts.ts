// Fake code hosts for the shared CodeHost suite: one node:http server per host type on
// 127.0.0.1 (port 0), serving one abstract data set in that host's real REST shape (paths,
// query parameters, pagination, auth header, error and rate-limit answers). Pages are
// capped at `pageSize` whatever the client asks for, as real hosts cap them, so that
// small data sets still take several pages. Query parameters whose absence would change
// the answer on the real host are required here (HTTP 400 otherwise), so a client that
// forgets them fails the suite. Faults queued in `faults` are served to the next requests
// before anything else.

import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCOUNTS, NOW_MS, TOKEN, USER, basic, bearer, branchOf, linkHeader, missingParam, pageOf, perPage, retryAfter, withUser } from './fake-http.ts';
import type { Env, FakeAccount, FakeRepo, PermissionApi, Reply } from './fake-http.ts';
import { PERMISSION_FAKES } from './fake-permissions/index.ts';

export { ACCOUNTS, NOW_MS, TOKEN, USER } from './fake-http.ts';
export type { FakeAccount, FakeRepo } from './fake-http.ts';

export const DATASET: readonly FakeRepo[] = [
  { owner: 'acme', name: 'api', group: 'core', defaultBranch: 'main', pushedAt: '2024-05-01T10:00:00Z', topics: ['backend', 'go'] },
  {
    owner: 'acme',
    name: 'web',
    group: 'web',
    defaultBranch: 'trunk',
    private: true,
    pushedAt: '2024-04-01T09:00:00Z',
    readers: ['alice', 'bob', 'carol', 'dave'],
    topics: ['frontend'],
  },
  { owner: 'acme', name: 'docs', group: 'docs' },
  { owner: 'acme', name: 'lib-fork', group: 'attic', fork: true },
  { owner: 'acme', name: 'old', group: 'attic', archived: true },
  { owner: 'acme', name: 'legacy-one', group: 'legacy' },
  { owner: 'acme', name: 'legacy-two', group: 'legacy' },
  { owner: 'jdoe', name: 'dotfiles', user: true, group: 'home' },
  { owner: 'jdoe', name: 'notes', user: true, group: 'home', private: true, readers: ['bob', 'jdoe'] },
  { owner: 'other', name: 'tool', group: 'tools' },
  { owner: 'other', name: 'ignored', group: 'misc' },
];

export type FakeKind = 'github' | 'gitlab' | 'gitea' | 'gerrit' | 'bitbucketCloud' | 'bitbucketServer' | 'azuredevops';

/** `after`: requests answered normally before this fault is served (default 0: the next one). */
export type Fault = ({ kind: 'rate-limit'; seconds: number } | { kind: 'status'; status: number }) & { after?: number };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface FakeOptions {
  repos?: readonly FakeRepo[];
  pageSize?: number;
  /** Bitbucket Server before 7.x: no /default-branch, only /branches/default. */
  legacyBitbucket?: boolean;
  /**
   * The clone URL the answer gives instead of the host's own (undefined: its own): sync
   * tests point it at a git server, the hostile-answer tests at local paths, other hosts,
   * other schemes. Gerrit's answers carry none: trawl builds its clone URLs from the url.
   */
  cloneUrl?: (r: FakeRepo) => string | undefined;
  /** The repository's web page the answer gives instead of the host's own (undefined: its own). */
  webUrl?: (r: FakeRepo) => string | undefined;
  /** The host's accounts (default ACCOUNTS): whom the permission fakes know. */
  accounts?: readonly FakeAccount[];
}

export interface FakeHost {
  /** The host's web URL, what a connection's `url` is set to. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  readonly faults: Fault[];
  close(): Promise<void>;
}

interface HostApi {
  authorized(headers: IncomingHttpHeaders, segments: string[]): boolean;
  unauthorized(headers: IncomingHttpHeaders): Reply;
  rateLimited(seconds: number): Reply;
  serverError(status: number): Reply;
  route(segments: string[], query: URLSearchParams): Reply;
}

export async function startFake(kind: FakeKind, options: FakeOptions = {}): Promise<FakeHost> {
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  let api: HostApi | undefined;
  let permissions: PermissionApi | undefined;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers });
    const u = new URL(req.url ?? '/', 'http://fake');
    // Decoded per segment, so that an encoded '/' (GitLab "group%2Fsub") stays inside its segment.
    const segments = u.pathname.split('/').slice(1).map(decodeURIComponent);
    let reply: Reply;
    let permission: Reply | undefined;
    const head = faults[0];
    let fault: Fault | undefined;
    if (head !== undefined && (head.after ?? 0) > 0) head.after = head.after! - 1;
    else fault = faults.shift();
    if (fault !== undefined) reply = fault.kind === 'rate-limit' ? api!.rateLimited(fault.seconds) : api!.serverError(fault.status);
    else if ((permission = permissions?.route({ method: req.method ?? 'GET', segments, query: u.searchParams, headers: req.headers }))) reply = permission;
    else if (req.method !== 'GET') reply = { status: 405, body: { message: 'fake: only GET' } };
    else if (!api!.authorized(req.headers, segments)) reply = api!.unauthorized(req.headers);
    else reply = api!.route(segments, u.searchParams);
    send(res, reply);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const env: Env = {
    url,
    repos: options.repos ?? DATASET,
    pageSize: options.pageSize ?? 3,
    legacyBitbucket: options.legacyBitbucket === true,
    ...(options.cloneUrl ? { cloneUrl: options.cloneUrl } : {}),
    ...(options.webUrl ? { webUrl: options.webUrl } : {}),
    accounts: options.accounts ?? ACCOUNTS,
  };
  api = FAKES[kind](env);
  permissions = PERMISSION_FAKES[kind]?.(env);
  return {
    url,
    requests,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, reply: Reply): void {
  const headers: Record<string, string> = { ...reply.headers };
  let body = '';
  if (reply.raw !== undefined) body = reply.raw;
  else if (reply.body !== undefined) {
    body = JSON.stringify(reply.body);
    headers['content-type'] ??= 'application/json';
  }
  res.writeHead(reply.status, headers);
  res.end(body);
}

const FAKES: Record<FakeKind, (env: Env) => HostApi> = {
  github,
  gitlab,
  gitea,
  gerrit,
  bitbucketCloud,
  bitbucketServer,
  azuredevops,
};

// ---- GitHub: /api/v3 (Enterprise layout), Link pagination, Bearer ----

function github(env: Env): HostApi {
  const { url } = env;
  const json = (r: FakeRepo): unknown => ({
    id: env.repos.indexOf(r) + 1,
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    owner: { login: r.owner, type: r.user ? 'User' : 'Organization', avatar_url: `${url}/avatars/${r.owner}.png` },
    private: r.private === true,
    visibility: r.private ? 'private' : 'public',
    html_url: env.webUrl?.(r) ?? `${url}/${r.owner}/${r.name}`,
    clone_url: env.cloneUrl?.(r) ?? `${url}/${r.owner}/${r.name}.git`,
    ssh_url: `git@127.0.0.1:${r.owner}/${r.name}.git`,
    default_branch: branchOf(r) ?? 'main',
    fork: r.fork === true,
    archived: r.archived === true,
    pushed_at: r.pushedAt ?? null,
    topics: [...(r.topics ?? [])],
  });
  const notFound: Reply = { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
  const list = (repos: FakeRepo[], path: string, query: URLSearchParams): Reply => {
    const page = Number(query.get('page') ?? '1');
    const p = pageOf(repos, page, perPage(query, 'per_page', env, 30));
    return { status: 200, headers: linkHeader(`${url}/api/v3${path}`, query, page, p.last), body: p.items.map(json) };
  };
  return {
    authorized: bearer,
    unauthorized: () => ({ status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } }),
    rateLimited: (seconds) => ({
      status: 403,
      headers: {
        'x-ratelimit-limit': '5000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(NOW_MS / 1000 + seconds),
      },
      body: { message: 'API rate limit exceeded for user ID 1.' },
    }),
    serverError: (status) => ({ status, body: { message: 'Server Error' } }),
    route(s, query) {
      if (s[0] !== 'api' || s[1] !== 'v3') return notFound;
      const [kind, owner, third] = s.slice(2);
      if (s.length === 5 && kind === 'orgs' && third === 'repos') {
        const bad = missingParam(query, { per_page: null, type: 'all' });
        if (bad) return bad;
        const repos = env.repos.filter((r) => r.owner === owner && !r.user);
        return repos.length === 0 ? notFound : list(repos, `/orgs/${owner}/repos`, query);
      }
      if (s.length === 5 && kind === 'users' && third === 'repos') {
        const bad = missingParam(query, { per_page: null, type: 'owner' });
        if (bad) return bad;
        const repos = env.repos.filter((r) => r.owner === owner);
        return repos.length === 0 ? notFound : list(repos, `/users/${owner}/repos`, query);
      }
      if (s.length === 5 && kind === 'repos') {
        const r = env.repos.find((x) => x.owner === owner && x.name === third);
        return r === undefined ? notFound : { status: 200, body: json(r) };
      }
      return notFound;
    },
  };
}

// ---- GitLab: /api/v4, ids are URL-encoded paths, X-Next-Page, PRIVATE-TOKEN ----

function gitlab(env: Env): HostApi {
  const { url } = env;
  // GitLab keeps a topic's case as it was typed (the first one here is shouted); tag_list is
  // the older name of the field, still sent.
  const typedTopics = (r: FakeRepo): string[] => (r.topics ?? []).map((t, i) => (i === 0 ? t.toUpperCase() : t));
  const json = (r: FakeRepo): unknown => {
    const path = `${r.owner}/${r.name}`;
    const project: Record<string, unknown> = {
      id: env.repos.indexOf(r) + 1,
      name: r.name,
      path: r.name,
      path_with_namespace: path,
      namespace: { full_path: r.owner, kind: r.user ? 'user' : 'group', avatar_url: `/uploads/-/system/group/avatar/${r.owner}.png` },
      web_url: env.webUrl?.(r) ?? `${url}/${path}`,
      http_url_to_repo: env.cloneUrl?.(r) ?? `${url}/${path}.git`,
      ssh_url_to_repo: `git@127.0.0.1:${path}.git`,
      default_branch: branchOf(r),
      visibility: r.private ? 'private' : 'public',
      archived: r.archived === true,
      last_activity_at: r.pushedAt ?? null,
      avatar_url: null,
      topics: typedTopics(r),
      tag_list: typedTopics(r),
    };
    if (r.fork) project.forked_from_project = { id: 999, path_with_namespace: 'upstream/lib' };
    return project;
  };
  const notFound = (what: string): Reply => ({ status: 404, body: { message: `404 ${what} Not Found` } });
  const list = (repos: FakeRepo[], query: URLSearchParams): Reply => {
    const page = Number(query.get('page') ?? '1');
    const size = perPage(query, 'per_page', env, 20);
    const p = pageOf(repos, page, size);
    return {
      status: 200,
      headers: {
        'x-page': String(page),
        'x-per-page': String(size),
        'x-next-page': page < p.last ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
        'x-total': String(repos.length),
        'x-total-pages': String(p.last),
      },
      body: p.items.map(json),
    };
  };
  return {
    authorized: (h) => h['private-token'] === TOKEN,
    unauthorized: () => ({ status: 401, body: { message: '401 Unauthorized' } }),
    // RateLimit-Reset only (no Retry-After), so the epoch-seconds path is the one exercised.
    rateLimited: (seconds) => ({
      status: 429,
      headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': String(NOW_MS / 1000 + seconds), 'content-type': 'text/plain' },
      raw: 'Retry later\n',
    }),
    serverError: (status) => ({ status, body: { message: '500 Internal Server Error' } }),
    route(s, query) {
      if (s[0] !== 'api' || s[1] !== 'v4') return notFound('Page');
      const [kind, id, third] = s.slice(2);
      if (s.length === 5 && kind === 'groups' && third === 'projects') {
        const bad = missingParam(query, { per_page: null });
        if (bad) return bad;
        const subgroups = query.get('include_subgroups') === 'true';
        const inGroup = env.repos.filter((r) => !r.user && (r.owner === id || r.owner.startsWith(`${id}/`)));
        if (inGroup.length === 0) return notFound('Group');
        return list(subgroups ? inGroup : inGroup.filter((r) => r.owner === id), query);
      }
      if (s.length === 5 && kind === 'users' && third === 'projects') {
        const repos = env.repos.filter((r) => r.user && r.owner === id);
        return repos.length === 0 ? notFound('User') : list(repos, query);
      }
      if (s.length === 4 && kind === 'projects') {
        const r = env.repos.find((x) => `${x.owner}/${x.name}` === id);
        return r === undefined ? notFound('Project') : { status: 200, body: json(r) };
      }
      return notFound('Page');
    },
  };
}

// ---- Gitea: /api/v1, limit & page, Link, "Authorization: token" ----

function gitea(env: Env): HostApi {
  const { url } = env;
  const json = (r: FakeRepo): unknown => ({
    id: env.repos.indexOf(r) + 1,
    owner: { id: 1, login: r.owner, avatar_url: `${url}/avatars/${r.owner}` },
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    private: r.private === true,
    internal: false,
    fork: r.fork === true,
    archived: r.archived === true,
    empty: branchOf(r) === null,
    html_url: env.webUrl?.(r) ?? `${url}/${r.owner}/${r.name}`,
    clone_url: env.cloneUrl?.(r) ?? `${url}/${r.owner}/${r.name}.git`,
    ssh_url: `git@127.0.0.1:${r.owner}/${r.name}.git`,
    default_branch: branchOf(r) ?? '',
    updated_at: r.pushedAt ?? '2024-01-01T00:00:00Z',
    // Gitea keeps a repository's topics as a list that is null until one is added.
    topics: r.topics === undefined ? null : [...r.topics],
  });
  const notFound: Reply = { status: 404, body: { errors: null, message: 'not found', url: `${url}/api/swagger` } };
  const list = (repos: FakeRepo[], path: string, query: URLSearchParams): Reply => {
    const bad = missingParam(query, { limit: null });
    if (bad) return bad;
    const page = Number(query.get('page') ?? '1');
    const p = pageOf(repos, page, perPage(query, 'limit', env, 30));
    return {
      status: 200,
      headers: { ...linkHeader(`${url}/api/v1${path}`, query, page, p.last), 'x-total-count': String(repos.length) },
      body: p.items.map(json),
    };
  };
  return {
    authorized: (h) => h.authorization === `token ${TOKEN}`,
    unauthorized: () => ({ status: 401, body: { message: 'user does not exist [uid: 0, name: ]', url: `${url}/api/swagger` } }),
    rateLimited: (seconds) => retryAfter(429, seconds, { message: 'too many requests' }),
    serverError: (status) => ({ status, body: { message: 'internal error' } }),
    route(s, query) {
      if (s[0] !== 'api' || s[1] !== 'v1') return notFound;
      const [kind, owner, third] = s.slice(2);
      if (s.length === 5 && kind === 'orgs' && third === 'repos') {
        const repos = env.repos.filter((r) => r.owner === owner && !r.user);
        return repos.length === 0 ? notFound : list(repos, `/orgs/${owner}/repos`, query);
      }
      if (s.length === 5 && kind === 'users' && third === 'repos') {
        const repos = env.repos.filter((r) => r.owner === owner);
        return repos.length === 0 ? notFound : list(repos, `/users/${owner}/repos`, query);
      }
      if (s.length === 5 && kind === 'repos') {
        const r = env.repos.find((x) => x.owner === owner && x.name === third);
        return r === undefined ? notFound : { status: 200, body: json(r) };
      }
      return notFound;
    },
  };
}

// ---- Gerrit: /a/ with basic auth, )]}' prefix, n/S paging with _more_projects ----

const XSSI = ")]}'\n";

function gerrit(env: Env): HostApi {
  interface Project {
    name: string;
    state: 'ACTIVE' | 'READ_ONLY' | 'HIDDEN';
    head: string | null;
  }
  const system = (name: string): Project => ({ name, state: 'ACTIVE', head: 'refs/heads/master' });
  // Derived on every request, so that a test renaming a repository of the data set renames the project.
  const projects = (): Project[] =>
    [
      system('All-Projects'),
      system('All-Users'),
      ...env.repos.map((r): Project => {
        const branch = branchOf(r);
        return {
          name: `${r.owner}/${r.name}`,
          state: r.hidden ? 'HIDDEN' : r.archived ? 'READ_ONLY' : 'ACTIVE',
          head: branch === null ? null : `refs/heads/${branch}`,
        };
      }),
    ].sort((a, b) => (a.name < b.name ? -1 : 1));
  const info = (p: Project): Record<string, unknown> => {
    const r = env.repos.find((x) => `${x.owner}/${x.name}` === p.name);
    const web = r === undefined ? undefined : env.webUrl?.(r);
    return { id: encodeURIComponent(p.name), state: p.state, web_links: [{ name: 'browse', url: web ?? `/plugins/gitiles/${p.name}`, target: '_blank' }] };
  };
  const json = (body: unknown): Reply => ({ status: 200, headers: { 'content-type': 'application/json' }, raw: XSSI + JSON.stringify(body) });
  const notFound = (name: string): Reply => ({ status: 404, headers: { 'content-type': 'text/plain' }, raw: `Not found: ${name}` });
  return {
    // Anonymous requests are allowed outside /a/; under it, basic auth is required.
    authorized: (h, s) => s[0] !== 'a' || basic(h, USER),
    unauthorized: () => ({ status: 401, headers: { 'content-type': 'text/plain' }, raw: 'Unauthorized' }),
    rateLimited: (seconds) => ({ status: 429, headers: { 'retry-after': String(seconds), 'content-type': 'text/plain' }, raw: 'Too Many Requests' }),
    serverError: (status) => ({ status, headers: { 'content-type': 'text/plain' }, raw: 'Internal server error' }),
    route(segments, query) {
      const s = segments[0] === 'a' ? segments.slice(1) : segments;
      if (s[0] !== 'projects') return notFound(s.join('/'));
      if (s.length === 2 && s[1] === '') {
        const bad = missingParam(query, { d: null, t: null, n: null });
        if (bad) return bad;
        const n = Math.min(Number(query.get('n')), env.pageSize);
        const skip = Number(query.get('S') ?? '0');
        const all = projects();
        const page = all.slice(skip, skip + n);
        const map: Record<string, unknown> = {};
        for (const p of page) map[p.name] = { ...info(p), description: `the ${p.name} project` };
        if (skip + n < all.length && page.length > 0) (map[page[page.length - 1]!.name] as Record<string, unknown>)._more_projects = true;
        return json(map);
      }
      const p = projects().find((x) => x.name === s[1]);
      if (p === undefined) return notFound(s[1] ?? '');
      if (s.length === 2) return json({ ...info(p), name: p.name });
      if (s.length === 3 && s[2] === 'HEAD') return p.head === null ? notFound('HEAD') : json(p.head);
      return notFound(s.join('/'));
    },
  };
}

// ---- Bitbucket Cloud: /2.0, body `next`, basic user:token or Bearer ----

function bitbucketCloud(env: Env): HostApi {
  const { url } = env;
  const json = (r: FakeRepo): unknown => {
    const full = `${r.owner}/${r.name}`;
    const branch = branchOf(r);
    return {
      type: 'repository',
      uuid: `{${env.repos.indexOf(r)}}`,
      name: r.name,
      slug: r.name,
      full_name: full,
      is_private: r.private === true,
      parent: r.fork ? { type: 'repository', full_name: 'upstream/lib' } : null,
      mainbranch: branch === null ? null : { type: 'branch', name: branch },
      updated_on: r.pushedAt ?? '2024-01-01T00:00:00.000000+00:00',
      project: { type: 'project', key: r.group },
      workspace: { type: 'workspace', slug: r.owner },
      links: {
        html: { href: env.webUrl?.(r) ?? `${url}/${full}` },
        avatar: { href: `${url}/${full}/avatar/32` },
        clone: [
          { name: 'https', href: env.cloneUrl?.(r) ?? withUser(`${url}/${full}.git`, USER) },
          { name: 'ssh', href: `git@127.0.0.1:${full}.git` },
        ],
      },
    };
  };
  const notFound = (message: string): Reply => ({ status: 404, body: { type: 'error', error: { message } } });
  return {
    authorized: (h) => basic(h, USER) || bearer(h),
    unauthorized: () => ({ status: 401, body: { type: 'error', error: { message: 'Invalid credentials' } } }),
    rateLimited: (seconds) => retryAfter(429, seconds, { type: 'error', error: { message: 'Rate limit for this resource has been exceeded' } }),
    serverError: (status) => ({ status, body: { type: 'error', error: { message: 'Something went wrong' } } }),
    route(s, query) {
      if (s[0] !== '2.0') return notFound('Resource not found');
      const [kind, ws, third, fourth] = s.slice(1);
      if (s.length === 3 && kind === 'repositories') {
        let repos = env.repos.filter((r) => r.owner === ws);
        if (repos.length === 0) return notFound(`No workspace with identifier '${ws}'.`);
        const q = query.get('q');
        if (q !== null) {
          const m = /^project\.key="([^"]*)"$/.exec(q);
          if (m === null) return { status: 400, body: { type: 'error', error: { message: `fake: unsupported q ${q}` } } };
          repos = repos.filter((r) => r.group === m[1]);
        }
        const page = Number(query.get('page') ?? '1');
        const size = perPage(query, 'pagelen', env, 10);
        const p = pageOf(repos, page, size);
        const body: Record<string, unknown> = { pagelen: size, size: repos.length, page, values: p.items.map(json) };
        if (page < p.last) {
          const next = new URLSearchParams(query);
          next.set('page', String(page + 1));
          body.next = `${url}/2.0/repositories/${ws}?${next.toString()}`;
        }
        return { status: 200, body };
      }
      if (s.length === 4 && kind === 'repositories') {
        const r = env.repos.find((x) => x.owner === ws && x.name === third);
        return r === undefined ? notFound('Repository not found') : { status: 200, body: json(r) };
      }
      if (s.length === 5 && kind === 'workspaces' && third === 'projects') {
        const found = env.repos.some((r) => r.owner === ws && r.group === fourth);
        return found ? { status: 200, body: { type: 'project', key: fourth, name: fourth } } : notFound('Project not found');
      }
      return notFound('Resource not found');
    },
  };
}

// ---- Bitbucket Server / Data Center: /rest/api/1.0, start & isLastPage, Bearer ----

function bitbucketServer(env: Env): HostApi {
  const { url } = env;
  const key = (r: FakeRepo): string => r.owner.toUpperCase();
  const json = (r: FakeRepo): unknown => {
    const k = key(r);
    const repo: Record<string, unknown> = {
      slug: r.name,
      id: env.repos.indexOf(r) + 1,
      name: r.name,
      scmId: 'git',
      state: 'AVAILABLE',
      forkable: true,
      public: r.private !== true,
      archived: r.archived === true,
      project: { key: k, id: 1, name: r.owner, public: false, type: 'NORMAL' },
      links: {
        clone: [
          { href: env.cloneUrl?.(r) ?? withUser(`${url}/scm/${k.toLowerCase()}/${r.name}.git`, 'admin'), name: 'http' },
          { href: `ssh://git@127.0.0.1:7999/${k.toLowerCase()}/${r.name}.git`, name: 'ssh' },
        ],
        self: [{ href: env.webUrl?.(r) ?? `${url}/projects/${k}/repos/${r.name}/browse` }],
      },
    };
    if (r.fork) repo.origin = { slug: 'lib', project: { key: 'UPSTREAM' } };
    return repo;
  };
  const notFound = (message: string): Reply => ({
    status: 404,
    body: { errors: [{ context: null, message, exceptionName: 'com.atlassian.bitbucket.NoSuchEntityException' }] },
  });
  return {
    authorized: bearer,
    unauthorized: () => ({
      status: 401,
      body: { errors: [{ context: null, message: 'Authentication failed. Please check your credentials and try again.' }] },
    }),
    rateLimited: (seconds) => retryAfter(429, seconds, { errors: [{ message: 'Rate limit exceeded' }] }),
    serverError: (status) => ({ status, body: { errors: [{ message: 'An error occurred while processing the request.' }] } }),
    route(s, query) {
      if (s[0] !== 'rest' || s[1] !== 'api' || s[2] !== '1.0' || s[3] !== 'projects') return notFound('Not found');
      const [projectKey, repos, slug, ...rest] = s.slice(4);
      const inProject = env.repos.filter((r) => key(r) === projectKey);
      if (inProject.length === 0) return notFound(`Project ${projectKey} does not exist.`);
      if (repos !== 'repos') return notFound('Not found');
      if (slug === undefined) {
        const bad = missingParam(query, { limit: null });
        if (bad) return bad;
        const start = Number(query.get('start') ?? '0');
        const limit = perPage(query, 'limit', env, 25);
        const values = inProject.slice(start, start + limit);
        const isLastPage = start + limit >= inProject.length;
        const body: Record<string, unknown> = { size: values.length, limit, isLastPage, values: values.map(json), start };
        if (!isLastPage) body.nextPageStart = start + limit;
        return { status: 200, body };
      }
      const r = inProject.find((x) => x.name === slug);
      if (r === undefined) return notFound(`Repository ${projectKey}/${slug} does not exist.`);
      if (rest.length === 0) return { status: 200, body: json(r) };
      const branch = branchOf(r);
      const isDefault =
        (rest.length === 1 && rest[0] === 'default-branch' && !env.legacyBitbucket) || (rest.length === 2 && rest[0] === 'branches' && rest[1] === 'default');
      if (!isDefault) return notFound('Not found');
      if (branch === null) return notFound('The repository has no default branch.');
      return { status: 200, body: { id: `refs/heads/${branch}`, displayId: branch, type: 'BRANCH', isDefault: true } };
    },
  };
}

// ---- Azure DevOps: /{org}/_apis/..., api-version, x-ms-continuationtoken, basic :PAT ----

function azuredevops(env: Env): HostApi {
  const { url } = env;
  const projectsOf = (org: string): Array<{ name: string; repos: FakeRepo[] }> => {
    const names = [...new Set(env.repos.filter((r) => r.owner === org).map((r) => r.group))];
    return names.map((name) => ({ name, repos: env.repos.filter((r) => r.owner === org && r.group === name) }));
  };
  const projectJson = (org: string, p: { name: string; repos: FakeRepo[] }): Record<string, unknown> => ({
    id: `${org}-${p.name}-id`,
    name: p.name,
    url: `${url}/${org}/_apis/projects/${p.name}`,
    state: 'wellFormed',
    revision: 7,
    visibility: p.repos.some((r) => r.private) ? 'private' : 'public',
    lastUpdateTime: p.repos
      .map((r) => r.pushedAt ?? '2024-01-01T00:00:00Z')
      .sort()
      .at(-1),
  });
  const json = (r: FakeRepo): unknown => {
    const project = projectsOf(r.owner).find((p) => p.name === r.group)!;
    const branch = branchOf(r);
    const web = `${url}/${r.owner}/${r.group}/_git/${r.name}`;
    const repo: Record<string, unknown> = {
      id: `${r.name}-id`,
      name: r.name,
      url: `${url}/${r.owner}/${r.group}/_apis/git/repositories/${r.name}`,
      project: projectJson(r.owner, project),
      size: 1024,
      remoteUrl: env.cloneUrl?.(r) ?? withUser(web, r.owner),
      sshUrl: `git@ssh.127.0.0.1:v3/${r.owner}/${r.group}/${r.name}`,
      webUrl: env.webUrl?.(r) ?? web,
      isDisabled: r.archived === true,
      isInMaintenance: false,
      isFork: r.fork === true,
    };
    if (branch !== null) repo.defaultBranch = `refs/heads/${branch}`;
    return repo;
  };
  const notFound = (message: string, typeKey: string): Reply => ({ status: 404, body: { $id: '1', message, typeKey, errorCode: 0 } });
  return {
    authorized: (h) => basic(h, undefined),
    // Azure answers a request without credentials with a sign-in page, not 401.
    unauthorized: (h) =>
      h.authorization === undefined
        ? { status: 203, headers: { 'content-type': 'text/html' }, raw: '<html><body>Azure DevOps Services | Sign In</body></html>' }
        : { status: 401, headers: { 'content-type': 'text/html' }, raw: '<html>Access Denied: The Personal Access Token used has expired.</html>' },
    rateLimited: (seconds) => retryAfter(429, seconds, { message: 'Request was blocked due to exceeding usage of resource' }),
    serverError: (status) => ({ status, body: { message: 'TF400898: An Internal Error Occurred.' } }),
    route(s, query) {
      const bad = missingParam(query, { 'api-version': '7.1' });
      if (bad) return bad;
      const [org, second, third, fourth, fifth, repoName] = s;
      const projects = projectsOf(org ?? '');
      if (projects.length === 0) return notFound(`The organization ${org} could not be found.`, 'UnauthorizedRequestException');
      if (s.length === 3 && second === '_apis' && third === 'projects') {
        const top = perPage(query, '$top', env, 100);
        const start = Number(query.get('continuationToken') ?? '0');
        const page = projects.slice(start, start + top);
        const headers: Record<string, string> = start + top < projects.length ? { 'x-ms-continuationtoken': String(start + top) } : {};
        return { status: 200, headers, body: { count: page.length, value: page.map((p) => projectJson(org!, p)) } };
      }
      if ((s.length === 5 || s.length === 6) && third === '_apis' && fourth === 'git' && fifth === 'repositories') {
        const project = projects.find((p) => p.name === second);
        if (project === undefined) {
          return notFound(`TF200016: The following project does not exist: ${second}.`, 'ProjectDoesNotExistWithNameException');
        }
        if (s.length === 5) return { status: 200, body: { count: project.repos.length, value: project.repos.map(json) } };
        const r = project.repos.find((x) => x.name === repoName);
        return r === undefined
          ? notFound(`TF401019: The Git repository with name or identifier ${repoName} does not exist.`, 'GitRepositoryNotFoundException')
          : { status: 200, body: json(r) };
      }
      return notFound('The resource cannot be found.', 'NotFoundException');
    },
  };
}
