// GitLab's permission API as the fake serves it (/api/v4): a project's members with the
// inherited ones, the projects the caller is a member of, users by user name, and the
// token's user. Credentials: `PRIVATE-TOKEN` with the connection's TOKEN (an administrator,
// who may act as anyone with `sudo=<id or user name>`) or an account's own token, which
// GitLab also takes as `Authorization: Bearer`; a request carrying both headers is refused
// here, since trawl must never send both.
//
// Membership: every account is a member of every private project. The project's readers
// are Developers, Reporters, Maintainers or Owners; everyone else is a Guest, a Planner or
// has minimal access, which lets them see the project but not read its code. Public
// projects have no members.

import type { IncomingHttpHeaders } from 'node:http';
import { NOW_MS, TOKEN, missingParam, pageOf, perPage } from '../fake-http.ts';
import type { Env, FakeAccount, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';

const READER_LEVELS = [30, 20, 40, 50];
const OTHER_LEVELS = [10, 15, 5];
const ADMIN = { id: 1, username: 'root' };

const notFound = (what: string): Reply => ({ status: 404, body: { message: `404 ${what} Not Found` } });

interface Caller {
  admin: boolean;
  /** Undefined for the administrator acting as no one. */
  account?: FakeAccount;
}

export function gitlabPermissions(env: Env): PermissionApi {
  const { url } = env;
  const path = (r: FakeRepo): string => `${r.owner}/${r.name}`;
  /** The account's access level on the project; undefined when it is no member. */
  const levelOf = (a: FakeAccount, r: FakeRepo): number | undefined => {
    if (!r.private) return undefined;
    const reader = r.readers?.indexOf(a.login) ?? -1;
    if (reader >= 0) return READER_LEVELS[reader % READER_LEVELS.length];
    return OTHER_LEVELS[env.accounts.indexOf(a) % OTHER_LEVELS.length];
  };
  const userJson = (a: FakeAccount): Record<string, unknown> => ({
    id: a.id,
    username: a.login,
    name: a.login[0]!.toUpperCase() + a.login.slice(1),
    state: 'active',
    locked: false,
    avatar_url: `${url}/uploads/-/system/user/avatar/${a.id}/avatar.png`,
    web_url: `${url}/${a.login}`,
  });
  const list = (items: unknown[], query: URLSearchParams): Reply => {
    const n = Number(query.get('page') ?? '1');
    const size = perPage(query, 'per_page', env, 20);
    const p = pageOf(items, n, size);
    const headers = {
      'x-page': String(n),
      'x-per-page': String(size),
      'x-next-page': n < p.last ? String(n + 1) : '',
      'x-prev-page': n > 1 ? String(n - 1) : '',
      'x-total': String(items.length),
      'x-total-pages': String(p.last),
    };
    return { status: 200, headers, body: p.items };
  };

  /** Who is asking: the token's user, or the one an administrator acts as; a Reply when the request is refused. */
  const callerOf = (h: IncomingHttpHeaders, query: URLSearchParams): Caller | Reply => {
    const privateToken = h['private-token'];
    const bearer = /^Bearer (.+)$/.exec(h.authorization ?? '')?.[1];
    if (privateToken !== undefined && bearer !== undefined) return { status: 400, body: { message: 'fake: two credentials in one request' } };
    const token = privateToken ?? bearer;
    let caller: Caller;
    if (token === TOKEN) caller = { admin: true };
    else {
      const account = env.accounts.find((a) => a.token === token);
      if (account === undefined) return { status: 401, body: { message: '401 Unauthorized' } };
      caller = { admin: false, account };
    }
    const sudo = query.get('sudo');
    if (sudo === null) return caller;
    if (!caller.admin) return { status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } };
    const as = env.accounts.find((a) => String(a.id) === sudo || a.login.toLowerCase() === sudo.toLowerCase());
    return as === undefined ? notFound(`User with ID or username '${sudo}'`) : { admin: false, account: as };
  };

  const members = (caller: Caller, id: string, query: URLSearchParams): Reply => {
    const bad = missingParam(query, { per_page: null });
    if (bad) return bad;
    const r = env.repos.find((x) => path(x) === id);
    if (r === undefined || (r.private && !caller.admin && levelOf(caller.account!, r) === undefined)) return notFound('Project');
    const entries = env.accounts.flatMap((a) => {
      const level = levelOf(a, r);
      if (level === undefined) return [];
      const entry: Record<string, unknown> = {
        ...userJson(a),
        access_level: level,
        created_at: '2024-01-02T03:04:05.000Z',
        expires_at: null,
        membership_state: 'active',
      };
      // GitLab shows a member's address to administrators only.
      if (caller.admin) entry.email = a.email;
      return [entry];
    });
    return list(entries, query);
  };

  const memberProjects = (caller: Caller, query: URLSearchParams): Reply => {
    const bad = missingParam(query, { membership: 'true', simple: 'true', per_page: null });
    if (bad) return bad;
    const min = Number(query.get('min_access_level') ?? '0');
    const a = caller.account;
    const projects = a === undefined ? [] : env.repos.filter((r) => (levelOf(a, r) ?? -1) >= min);
    const items = projects.map((r) => ({
      id: env.repos.indexOf(r) + 1,
      name: r.name,
      name_with_namespace: `${r.owner} / ${r.name}`,
      path: r.name,
      path_with_namespace: path(r),
      created_at: '2023-01-01T00:00:00.000Z',
      default_branch: r.defaultBranch === undefined ? 'main' : r.defaultBranch,
      topics: [...(r.topics ?? [])],
      http_url_to_repo: `${url}/${path(r)}.git`,
      web_url: `${url}/${path(r)}`,
      last_activity_at: r.pushedAt ?? null,
      namespace: { id: 7, name: r.owner, path: r.owner, kind: r.user ? 'user' : 'group', full_path: r.owner },
    }));
    return list(items, query);
  };

  const usersNamed = (query: URLSearchParams): Reply => {
    const bad = missingParam(query, { username: null });
    if (bad) return bad;
    const name = query.get('username')!.toLowerCase();
    return { status: 200, body: env.accounts.filter((a) => a.login.toLowerCase() === name).map(userJson) };
  };

  const currentUser = (caller: Caller): Reply => {
    const a = caller.account;
    if (a === undefined) return { status: 200, body: { ...ADMIN, name: 'Administrator', state: 'active', is_admin: true, email: 'admin@example.com' } };
    const confirmed = new Date(NOW_MS - 86_400_000).toISOString();
    return { status: 200, body: { ...userJson(a), email: a.email, confirmed_at: confirmed, commit_email: a.email, two_factor_enabled: false } };
  };

  return {
    route(req: FakeRequest): Reply | undefined {
      const s = req.segments;
      if (req.method !== 'GET' || s[0] !== 'api' || s[1] !== 'v4') return undefined;
      const [kind, id, third, fourth] = s.slice(2);
      const n = s.length - 2;
      const ours =
        (n === 4 && kind === 'projects' && third === 'members' && fourth === 'all') ||
        (n === 1 && (kind === 'projects' || kind === 'users' || kind === 'user'));
      if (!ours) return undefined;
      const caller = callerOf(req.headers, req.query);
      if ('status' in caller) return caller;
      if (n === 4) return members(caller, id!, req.query);
      if (kind === 'projects') return memberProjects(caller, req.query);
      if (kind === 'users') return usersNamed(req.query);
      return currentUser(caller);
    },
  };
}
