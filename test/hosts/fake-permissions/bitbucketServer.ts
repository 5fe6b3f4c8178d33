// Bitbucket Server / Data Center's permission API (/rest/api/1.0) in its real shapes. Each
// reader of a private repository (FakeRepo.readers) holds its permission somewhere a real
// server keeps one: on the repository, on its project or globally (ADMIN, SYS_ADMIN), and
// directly or through a group; a wider grant is used only when the account reads every
// private repository it would reach, so that the data set's readers stay the truth. Noise
// a client must leave out: global LICENSED_USER and PROJECT_CREATE. Pages: start & limit
// (capped at the page size), isLastPage, nextPageStart. The connection's Bearer TOKEN is an
// administrator; an account's Bearer FakeAccount.token asks as that user, and answers to it
// carry the X-AUSERNAME header.

import type { IncomingHttpHeaders } from 'node:http';
import { TOKEN, perPage } from '../fake-http.ts';
import type { Env, FakeAccount, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';

type Level = 'repo' | 'project' | 'global';

/** Where an account's permission to read a repository is kept. */
interface Grant {
  login: string;
  level: Level;
  /** The project key (project and repository levels) and the slug (repository level). */
  key?: string;
  slug?: string;
  /** Granted to a group holding the account rather than to the account. */
  group?: string;
  permission: string;
}

const key = (r: FakeRepo): string => r.owner.toUpperCase();
const LEVELS: readonly Level[] = ['repo', 'project', 'global'];

/** The grants behind the data set's readers: a deterministic mix of levels and of users and groups. */
export function serverGrants(repos: readonly FakeRepo[], accounts: readonly FakeAccount[]): Grant[] {
  const privates = repos.filter((r) => r.private === true && !r.hidden);
  const reads = (login: string, r: FakeRepo): boolean => (r.readers ?? []).includes(login);
  const grants = new Map<string, Grant>();
  accounts.forEach((a, i) => {
    for (const r of privates.filter((x) => reads(a.login, x))) {
      let level = LEVELS[i % 3]!;
      if (level === 'global' && !privates.every((x) => reads(a.login, x))) level = 'project';
      if (level === 'project' && !privates.filter((x) => key(x) === key(r)).every((x) => reads(a.login, x))) level = 'repo';
      const viaGroup = i % 2 === 1;
      const grant: Grant = { login: a.login, level, permission: permissionName(level, i) };
      if (level !== 'global') grant.key = key(r);
      if (level === 'repo') grant.slug = r.name;
      if (viaGroup)
        grant.group = level === 'global' ? 'stash-admins' : level === 'project' ? `${key(r).toLowerCase()}-team` : `${key(r).toLowerCase()}-${r.name}-readers`;
      grants.set(`${level} ${grant.key} ${grant.slug} ${grant.group} ${a.login}`, grant);
    }
  });
  return [...grants.values()];
}

function permissionName(level: Level, i: number): string {
  if (level === 'global') return i % 4 < 2 ? 'ADMIN' : 'SYS_ADMIN';
  const name = level === 'repo' ? 'REPO' : 'PROJECT';
  return `${name}_${['READ', 'WRITE', 'ADMIN'][i % 3]}`;
}

export function bitbucketServerPermissions(env: Env): PermissionApi {
  // Derived on every request, so that a test changing the data set's readers changes the host's answers.
  const grants = (): Grant[] => serverGrants(env.repos, env.accounts);
  const user = (a: FakeAccount): Record<string, unknown> => ({
    name: a.login,
    emailAddress: a.email,
    active: true,
    displayName: a.login[0]!.toUpperCase() + a.login.slice(1),
    id: a.id,
    slug: a.login,
    type: 'NORMAL',
    links: { self: [{ href: `${env.url}/users/${a.login}` }] },
  });
  const byLogin = (login: string): FakeAccount => env.accounts.find((a) => a.login === login)!;
  const page = (items: readonly unknown[], query: URLSearchParams, headers: Record<string, string> = {}): Reply => {
    const start = Number(query.get('start') ?? '0');
    const limit = perPage(query, 'limit', env, 25);
    const values = items.slice(start, start + limit);
    const isLastPage = start + limit >= items.length;
    const body: Record<string, unknown> = { size: values.length, limit, isLastPage, values, start };
    if (!isLastPage) body.nextPageStart = start + limit;
    return { status: 200, headers, body };
  };
  const error = (status: number, message: string): Reply => ({ status, body: { errors: [{ context: null, message, exceptionName: null }] } });
  const badRequest = (message: string): Reply => error(400, `fake: ${message}`);

  /** The rows of a permission list: users and their permission, or groups and theirs. */
  const rows = (of: Grant[], kind: string): unknown[] => {
    if (kind === 'users') return of.filter((g) => g.group === undefined).map((g) => ({ user: user(byLogin(g.login)), permission: g.permission }));
    const groups = new Map<string, string>();
    for (const g of of) if (g.group !== undefined) groups.set(g.group, g.permission);
    return [...groups].map(([name, permission]) => ({ group: { name }, permission }));
  };
  const globalNoise = (kind: string): unknown[] =>
    kind === 'users'
      ? env.accounts
          .filter((a, i) => i % 2 === 0 && !grants().some((g) => g.level === 'global' && g.login === a.login))
          .map((a) => ({ user: user(a), permission: 'PROJECT_CREATE' }))
      : [{ group: { name: 'stash-users' }, permission: 'LICENSED_USER' }];
  const membersOf = (group: string): FakeAccount[] => {
    if (group === 'stash-users') return [...env.accounts];
    return [
      ...new Set(
        grants()
          .filter((g) => g.group === group)
          .map((g) => g.login),
      ),
    ].map(byLogin);
  };

  /** The administrator's lists. */
  const administered = (s: string[], query: URLSearchParams): Reply | undefined => {
    const [first, projectKey, third, fourth, fifth, sixth] = s;
    if (first === 'admin' && s.length === 3 && projectKey === 'permissions' && (third === 'users' || third === 'groups')) {
      return page(
        [
          ...rows(
            grants().filter((g) => g.level === 'global'),
            third,
          ),
          ...globalNoise(third),
        ],
        query,
      );
    }
    if (first === 'admin' && s.length === 3 && projectKey === 'groups' && third === 'more-members') {
      const context = query.get('context');
      if (context === null) return badRequest('expected query parameter context');
      const members = membersOf(context);
      return members.length === 0 ? error(404, `Group ${context} does not exist.`) : page(members.map(user), query);
    }
    if (first !== 'projects') return undefined;
    const inProject = env.repos.filter((r) => key(r) === projectKey);
    if (inProject.length === 0) return error(404, `Project ${projectKey} does not exist.`);
    if (s.length === 4 && third === 'permissions' && (fourth === 'users' || fourth === 'groups')) {
      return page(
        rows(
          grants().filter((g) => g.level === 'project' && g.key === projectKey),
          fourth,
        ),
        query,
      );
    }
    if (s.length === 5 && third === 'permissions' && fifth === 'all') {
      if (fourth !== 'PROJECT_READ' && fourth !== 'PROJECT_WRITE') return badRequest(`no default permission ${fourth}`);
      return { status: 200, body: { permitted: false } };
    }
    if (s.length === 6 && third === 'repos' && fifth === 'permissions' && (sixth === 'users' || sixth === 'groups')) {
      if (!inProject.some((r) => r.name === fourth)) return error(404, `Repository ${projectKey}/${fourth} does not exist.`);
      return page(
        rows(
          grants().filter((g) => g.level === 'repo' && g.key === projectKey && g.slug === fourth),
          sixth,
        ),
        query,
      );
    }
    return undefined;
  };

  /** What any signed-in user may ask, as `a` (undefined: the connection's own account, which reads everything). */
  const signedIn = (a: FakeAccount | undefined, s: string[], query: URLSearchParams): Reply | undefined => {
    const name = a?.login ?? 'trawl-bot';
    const headers = { 'x-ausername': name };
    if (s.length === 1 && s[0] === 'repos') {
      const permission = query.get('permission');
      if (permission !== null && permission !== 'REPO_READ') return badRequest(`unsupported permission ${permission}`);
      const visible = env.repos.filter((r) => !r.hidden && (r.private !== true || a === undefined || (r.readers ?? []).includes(a.login)));
      const json = (r: FakeRepo): unknown => ({
        slug: r.name,
        id: env.repos.indexOf(r) + 1,
        name: r.name,
        public: r.private !== true,
        project: { key: key(r) },
      });
      return page(visible.map(json), query, headers);
    }
    if (s.length === 1 && s[0] === 'users') {
      const filter = (query.get('filter') ?? '').toLowerCase();
      const matching = env.accounts.filter((x) => [x.login, x.email].some((f) => f.toLowerCase().includes(filter)));
      return page(matching.map(user), query, headers);
    }
    if (s.length === 3 && s[0] === 'profile' && s[1] === 'recent' && s[2] === 'repos') {
      return page([], query, headers);
    }
    return undefined;
  };

  const accountOf = (h: IncomingHttpHeaders): FakeAccount | undefined => env.accounts.find((a) => h.authorization === `Bearer ${a.token}`);

  return {
    route(req: FakeRequest) {
      const [rest, api, version, ...s] = req.segments;
      if (req.method !== 'GET' || rest !== 'rest' || api !== 'api' || version !== '1.0') return undefined;
      const a = accountOf(req.headers);
      if (a !== undefined) {
        const answer = signedIn(a, s, req.query);
        if (answer !== undefined) return answer;
        return administered(s, req.query) === undefined ? undefined : error(403, 'You are not permitted to access this resource');
      }
      // The connection's administrator; any other credential is the listing fake's to refuse.
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return undefined;
      return administered(s, req.query) ?? signedIn(undefined, s, req.query);
    },
  };
}
