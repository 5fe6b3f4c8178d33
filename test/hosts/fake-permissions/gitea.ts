// Gitea's permission API (/api/v1) over the data set, in Gitea's shapes: collaborators and
// team members paged by `limit`/`page` with only X-Total-Count, a repository's teams in one
// list (405 for a user's repository), /user/repos with Link headers and
// `permissions.pull`, users by login, the token's own user.
//
// Who reads a private repository (FakeRepo.readers): on a user's repository the readers are
// collaborators; on an organization's, the readers at even positions are collaborators and
// those at odd positions members of the team "<name>-developers" (code: read), and every
// other account is in "<name>-triage", a team for issues only (code: none), which
// /user/repos still lists, with pull false. An account in any team of an organization
// also gets the organization's public repositories from /user/repos. Repository owners
// that are users are users of the host too (ids from 900), besides the accounts.
//
// Credentials: `Authorization: token T`. TOKEN is the connection's, a site administrator
// ("trawl-bot", id 1), who may add `Sudo: <login>` to act as that user; an account's
// FakeAccount.token is its own. Any other token is left to the listing fake (401).

import type { IncomingHttpHeaders } from 'node:http';
import type { Env, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';
import { TOKEN, USER, linkHeader, missingParam, pageOf, perPage } from '../fake-http.ts';

interface User {
  id: number;
  login: string;
  email: string;
  admin: boolean;
  token?: string;
}

interface Team {
  id: number;
  name: string;
  repo: FakeRepo;
  code: 'read' | 'none';
  members: User[];
}

export function giteaPermissions(env: Env): PermissionApi {
  const { url } = env;
  const bot: User = { id: 1, login: USER, email: `${USER}@example.com`, admin: true };
  const owners = [...new Set(env.repos.filter((r) => r.user).map((r) => r.owner))];
  const users: User[] = [
    bot,
    ...env.accounts.map((a) => ({ id: a.id, login: a.login, email: a.email, admin: false, token: a.token })),
    ...owners.filter((o) => !env.accounts.some((a) => a.login === o)).map((login, i) => ({ id: 900 + i, login, email: `${login}@example.org`, admin: false })),
  ];
  const user = (login: string | undefined): User | undefined => users.find((u) => u.login.toLowerCase() === login?.toLowerCase());
  const account = (login: string): User => user(login)!;
  const readersOf = (r: FakeRepo): User[] => (r.private ? (r.readers ?? []).map(account) : []);
  // Gitea never lists a repository's owner among its collaborators.
  const collaborators = (r: FakeRepo): User[] => readersOf(r).filter((u, i) => (r.user ? u.login !== r.owner : i % 2 === 0));
  // Derived on every request, so that a test changing the data set's readers (or a
  // repository's name) changes the host's answers.
  const teams = (): Team[] =>
    env.repos.flatMap((r, i): Team[] => {
      if (r.user || !r.private) return [];
      const readers = readersOf(r);
      return [
        { id: 1000 + 2 * i, name: `${r.name}-developers`, repo: r, code: 'read', members: readers.filter((_, j) => j % 2 === 1) },
        { id: 1001 + 2 * i, name: `${r.name}-triage`, repo: r, code: 'none', members: users.filter((u) => u.token !== undefined && !readers.includes(u)) },
      ];
    });
  const readsCode = (u: User, r: FakeRepo): boolean => u.admin || !r.private || readersOf(r).includes(u);
  const inOrg = (u: User, org: string): boolean => teams().some((t) => t.repo.owner === org && t.members.includes(u));
  const listed = (u: User, r: FakeRepo): boolean =>
    r.owner === u.login ||
    collaborators(r).includes(u) ||
    teams().some((t) => t.repo === r && t.members.includes(u)) ||
    (!r.user && !r.private && inOrg(u, r.owner));

  const userJson = (u: User): unknown => ({
    id: u.id,
    login: u.login,
    username: u.login,
    full_name: '',
    email: u.email,
    avatar_url: `${url}/avatars/${u.login}`,
  });
  const repoJson = (u: User, r: FakeRepo): unknown => ({
    id: env.repos.indexOf(r) + 1,
    owner: userJson(user(r.owner) ?? { id: 2, login: r.owner, email: '', admin: false }),
    name: r.name,
    full_name: `${r.owner}/${r.name}`,
    private: r.private === true,
    permissions: { admin: false, push: false, pull: readsCode(u, r) },
  });
  const teamJson = (t: Team): unknown => ({
    id: t.id,
    name: t.name,
    permission: t.code === 'read' ? 'read' : 'none',
    units: ['repo.code', 'repo.issues'],
    units_map: { 'repo.code': t.code, 'repo.issues': 'write', 'repo.pulls': 'none' },
    includes_all_repositories: false,
  });
  const notFound: Reply = { status: 404, body: { errors: null, message: 'not found', url: `${url}/api/swagger` } };
  /** Collaborators and team members: pages with X-Total-Count, no Link. */
  const counted = (items: User[], query: URLSearchParams): Reply => {
    const bad = missingParam(query, { limit: null });
    if (bad) return bad;
    const p = pageOf(items, Number(query.get('page') ?? '1'), perPage(query, 'limit', env, 30));
    return { status: 200, headers: { 'x-total-count': String(items.length) }, body: p.items.map(userJson) };
  };

  return {
    route(req: FakeRequest): Reply | undefined {
      const s = req.segments;
      if (req.method !== 'GET' || s[0] !== 'api' || s[1] !== 'v1') return undefined;
      const who = caller(req.headers, users);
      if (who === undefined) return undefined;
      if ('refused' in who) return who.refused;
      const me = who.user;
      const [kind, a, b, c] = s.slice(2);
      if (s.length === 3 && kind === 'user') return { status: 200, body: userJson(me) };
      if (s.length === 4 && kind === 'user' && a === 'repos') {
        const bad = missingParam(req.query, { limit: null });
        if (bad) return bad;
        const mine = env.repos.filter((r) => listed(me, r));
        const page = Number(req.query.get('page') ?? '1');
        const p = pageOf(mine, page, perPage(req.query, 'limit', env, 30));
        const headers = { ...linkHeader(`${url}/api/v1/user/repos`, req.query, page, p.last), 'x-total-count': String(mine.length) };
        return { status: 200, headers, body: p.items.map((r) => repoJson(me, r)) };
      }
      if (s.length === 4 && kind === 'users') {
        const u = user(a);
        return u === undefined ? notFound : { status: 200, body: userJson(u) };
      }
      if (s.length === 4 && kind === 'orgs') {
        const org = env.repos.some((r) => !r.user && r.owner === a);
        return org ? { status: 200, body: { id: 500, name: a, username: a, full_name: '', visibility: 'public' } } : notFound;
      }
      if (s.length === 5 && kind === 'teams' && b === 'members') {
        const team = teams().find((t) => String(t.id) === a);
        return team === undefined ? notFound : counted(team.members, req.query);
      }
      if (s.length === 6 && kind === 'repos') {
        const r = env.repos.find((x) => x.owner === a && x.name === b);
        if (r === undefined || !readsCode(me, r)) return notFound;
        if (c === 'collaborators') return counted(collaborators(r), req.query);
        if (c !== 'teams') return undefined;
        if (r.user) return { status: 405, body: { message: 'repo is not owned by an organization', url: `${url}/api/swagger` } };
        return {
          status: 200,
          body: teams()
            .filter((t) => t.repo === r)
            .map(teamJson),
        };
      }
      return undefined;
    },
  };
}

/** Who the credentials name: a user, a refusal, or undefined (not a token of this fake: the listing fake answers). */
function caller(headers: IncomingHttpHeaders, users: User[]): { user: User } | { refused: Reply } | undefined {
  const m = /^token (.+)$/.exec(headers.authorization ?? '');
  if (m === null) return undefined;
  const self = m[1] === TOKEN ? users[0]! : users.find((u) => u.token !== undefined && u.token === m[1]);
  if (self === undefined) return undefined;
  const sudo = headers.sudo;
  if (typeof sudo !== 'string') return { user: self };
  if (!self.admin) return { refused: { status: 403, body: { message: 'Only administrators allowed to sudo.' } } };
  const as = users.find((u) => u.login.toLowerCase() === sudo.toLowerCase());
  return as === undefined ? { refused: { status: 404, body: { message: 'GetUserByName', url: '' } } } : { user: as };
}
