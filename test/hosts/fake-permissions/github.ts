// GitHub's permission API as the fake serves it, in the Enterprise layout (/api/v3): a
// repository's collaborators, the token's repositories, users by login, the token's user
// and its email addresses. Credentials: `Authorization: Bearer` with the connection's TOKEN
// (a bot user with write access to every repository, as a listing token usually has) or an
// account's own token. GitHub has no impersonation. Members of an organization are
// approximated by the accounts that read one of its private repositories.

import type { IncomingHttpHeaders } from 'node:http';
import { TOKEN, USER, linkHeader, missingParam, pageOf, perPage } from '../fake-http.ts';
import type { Env, FakeAccount, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';

const NOT_FOUND: Reply = { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } };
const BAD_CREDENTIALS: Reply = { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' } };

interface Caller {
  id: number;
  login: string;
  /** Undefined for the connection's bot user. */
  account?: FakeAccount;
}

export function githubPermissions(env: Env): PermissionApi {
  const { url } = env;
  const bot: Caller = { id: 1, login: USER };
  const callerOf = (h: IncomingHttpHeaders): Caller | undefined => {
    if (h.authorization === `Bearer ${TOKEN}`) return bot;
    const account = env.accounts.find((a) => h.authorization === `Bearer ${a.token}`);
    return account === undefined ? undefined : { id: account.id, login: account.login, account };
  };
  const userJson = (id: number, login: string, type = 'User'): Record<string, unknown> => ({
    login,
    id,
    node_id: `U_${id}`,
    avatar_url: `${url}/avatars/u/${id}`,
    html_url: `${url}/${login}`,
    type,
    site_admin: false,
  });
  const page = (items: unknown[], path: string, query: URLSearchParams): Reply => {
    const n = Number(query.get('page') ?? '1');
    const p = pageOf(items, n, perPage(query, 'per_page', env, 30));
    return { status: 200, headers: linkHeader(`${url}/api/v3${path}`, query, n, p.last), body: p.items };
  };
  const reads = (a: FakeAccount, r: FakeRepo): boolean => r.private === true && r.readers?.includes(a.login) === true;

  const collaborators = (caller: Caller, owner: string, name: string, query: URLSearchParams): Reply => {
    const bad = missingParam(query, { affiliation: 'all', per_page: null });
    if (bad) return bad;
    const r = env.repos.find((x) => x.owner === owner && x.name === name);
    if (r === undefined || (r.private && caller.account !== undefined && !reads(caller.account, r))) return NOT_FOUND;
    if (caller.account !== undefined) return { status: 403, body: { message: 'Must have push access to view repository collaborators.' } };
    const readers = env.accounts.filter((a) => reads(a, r));
    const entries = readers.map((a) => ({
      ...userJson(a.id, a.login),
      permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
      role_name: 'read',
    }));
    return page(entries, `/repos/${owner}/${name}/collaborators`, query);
  };

  const userRepos = (caller: Caller, query: URLSearchParams): Reply => {
    if (query.has('type') && (query.has('affiliation') || query.has('visibility'))) {
      return { status: 422, body: { message: 'Validation Failed', errors: [{ resource: 'Search', field: 'q', code: 'invalid' }] } };
    }
    const bad = missingParam(query, { affiliation: 'owner,collaborator,organization_member', visibility: 'all', per_page: null });
    if (bad) return bad;
    const a = caller.account;
    const privates = a === undefined ? [] : env.repos.filter((r) => reads(a, r));
    const owners = new Set(privates.map((r) => r.owner));
    const publics = env.repos.filter((r) => !r.private && owners.has(r.owner));
    const items = [...privates, ...publics].map((r) => ({
      id: env.repos.indexOf(r) + 1,
      name: r.name,
      full_name: `${r.owner}/${r.name}`,
      owner: userJson(200 + env.repos.indexOf(r), r.owner, r.user ? 'User' : 'Organization'),
      private: r.private === true,
      visibility: r.private ? 'private' : 'public',
      html_url: `${url}/${r.owner}/${r.name}`,
      clone_url: `${url}/${r.owner}/${r.name}.git`,
      permissions: { admin: false, maintain: false, push: false, triage: false, pull: true },
      topics: [...(r.topics ?? [])],
    }));
    return page(items, '/user/repos', query);
  };

  const userByLogin = (login: string): Reply => {
    const account = env.accounts.find((a) => a.login.toLowerCase() === login.toLowerCase());
    if (account !== undefined) return { status: 200, body: { ...userJson(account.id, account.login), name: account.login, email: null } };
    // The owners of the data set's repositories: users (jdoe) and organizations (acme).
    const owned = env.repos.find((r) => r.owner.toLowerCase() === login.toLowerCase());
    if (owned === undefined) return NOT_FOUND;
    return { status: 200, body: userJson(300 + env.repos.indexOf(owned), owned.owner, owned.user ? 'User' : 'Organization') };
  };

  const emails = (caller: Caller, query: URLSearchParams): Reply => {
    // The bot's token was made without the user:email scope.
    if (caller.account === undefined) return NOT_FOUND;
    const a = caller.account;
    const entries = [
      { email: `${a.login}@old.example.org`, primary: false, verified: true, visibility: null },
      { email: `${a.login}@typo.example.org`, primary: false, verified: false, visibility: null },
      // Spelled as the user typed it; GitHub keeps the case.
      { email: a.email.replace(/^./, (c) => c.toUpperCase()), primary: true, verified: true, visibility: 'private' },
    ];
    return page(entries, '/user/emails', query);
  };

  return {
    route(req: FakeRequest): Reply | undefined {
      const s = req.segments;
      if (req.method !== 'GET' || s[0] !== 'api' || s[1] !== 'v3') return undefined;
      const [kind, a, b, c] = s.slice(2);
      const n = s.length - 2;
      const ours =
        (n === 4 && kind === 'repos' && c === 'collaborators') ||
        (n === 2 && kind === 'users') ||
        (n === 1 && kind === 'user') ||
        (n === 2 && kind === 'user' && (a === 'repos' || a === 'emails'));
      if (!ours) return undefined;
      const caller = callerOf(req.headers);
      if (caller === undefined) return BAD_CREDENTIALS;
      if (kind === 'repos') return collaborators(caller, a!, b!, req.query);
      if (kind === 'users') return userByLogin(a!);
      if (a === 'repos') return userRepos(caller, req.query);
      if (a === 'emails') return emails(caller, req.query);
      return { status: 200, body: { ...userJson(caller.id, caller.login), name: caller.login, email: null } };
    },
  };
}
