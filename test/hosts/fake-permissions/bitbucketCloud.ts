// Bitbucket Cloud's permission API (/2.0) in its real shapes: a repository's effective
// permissions per user (read, write, admin; "none" for an account denied it), the
// workspaces an account can access and its repositories there (role=member), workspace
// members, accounts by UUID, and the token's own account and addresses. Pages carry an
// absolute `next`. The connection's credentials (basic USER:TOKEN or Bearer TOKEN) read the
// permission lists; an account's own token (Bearer FakeAccount.token) reads what it may.

import type { IncomingHttpHeaders } from 'node:http';
import { USER, basic, bearer, pageOf, perPage } from '../fake-http.ts';
import type { Env, FakeAccount, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';

/** The account's UUID, as Bitbucket writes it: braces around a GUID. */
export function cloudUuid(a: FakeAccount): string {
  return `{00000000-0000-4000-8000-${String(a.id).padStart(12, '0')}}`;
}

const PERMISSIONS = ['read', 'write', 'admin'] as const;

export function bitbucketCloudPermissions(env: Env): PermissionApi {
  const { url } = env;
  const user = (a: FakeAccount): Record<string, unknown> => ({
    type: 'user',
    uuid: cloudUuid(a),
    nickname: a.login,
    display_name: a.login[0]!.toUpperCase() + a.login.slice(1),
    account_id: `557058:${cloudUuid(a).slice(1, -1)}`,
    links: { avatar: { href: `${url}/account/${a.login}/avatar` } },
  });
  const repository = (r: FakeRepo): Record<string, unknown> => ({
    type: 'repository',
    uuid: `{${env.repos.indexOf(r)}}`,
    name: r.name,
    slug: r.name,
    full_name: `${r.owner}/${r.name}`,
    is_private: r.private === true,
    workspace: { type: 'workspace', slug: r.owner },
    project: { type: 'project', key: r.group },
  });
  const reads = (a: FakeAccount, r: FakeRepo): boolean => r.private === true && (r.readers ?? []).includes(a.login);
  /** The workspaces where the account was granted something: it is a member there. */
  const workspacesOf = (a: FakeAccount): string[] => [...new Set(env.repos.filter((r) => reads(a, r)).map((r) => r.owner))];
  const ok = (body: unknown): Reply => ({ status: 200, body });
  const notFound = (message: string): Reply => ({ status: 404, body: { type: 'error', error: { message } } });
  const list = (items: readonly unknown[], path: string, query: URLSearchParams): Reply => {
    const page = Number(query.get('page') ?? '1');
    const size = perPage(query, 'pagelen', env, 10);
    const p = pageOf(items, page, size);
    const body: Record<string, unknown> = { pagelen: size, size: items.length, page, values: p.items };
    if (page < p.last) {
      const next = new URLSearchParams(query);
      next.set('page', String(page + 1));
      body.next = `${url}/2.0${path}?${next.toString()}`;
    }
    return ok(body);
  };
  const accountOf = (h: IncomingHttpHeaders): FakeAccount | undefined => env.accounts.find((a) => h.authorization === `Bearer ${a.token}`);

  /** What the connection's administrator account may ask: permission lists, members, accounts. */
  const administered = (s: string[], query: URLSearchParams): Reply | undefined => {
    const [kind, ws, third, fourth, slug] = s;
    if (kind === 'workspaces' && s.length === 5 && third === 'permissions' && fourth === 'repositories') {
      const r = env.repos.find((x) => x.owner === ws && x.name === slug);
      if (r === undefined) return notFound('Repository not found');
      const rows = env.accounts.flatMap((a, i) => {
        if (reads(a, r)) return [{ type: 'repository_permission', user: user(a), repository: repository(r), permission: PERMISSIONS[i % 3] }];
        // Denied on a private repository its workspace's members could otherwise read.
        return r.private === true ? [{ type: 'repository_permission', user: user(a), repository: repository(r), permission: 'none' }] : [];
      });
      return list(rows, `/workspaces/${ws}/permissions/repositories/${slug}`, query);
    }
    if (kind === 'workspaces' && s.length === 3 && third === 'members') {
      if (!env.repos.some((r) => r.owner === ws)) return notFound(`No workspace with identifier '${ws}'.`);
      const members = env.accounts.filter((a) => workspacesOf(a).includes(ws!));
      const rows = members.map((a) => ({ type: 'workspace_membership', user: user(a), workspace: { type: 'workspace', slug: ws } }));
      return list(rows, `/workspaces/${ws}/members`, query);
    }
    if (kind === 'users' && s.length === 2) {
      const a = env.accounts.find((x) => cloudUuid(x) === ws);
      return a === undefined ? notFound(`${ws} is not a valid user`) : ok(user(a));
    }
    return undefined;
  };

  /** What an account's own token may ask about itself. */
  const own = (a: FakeAccount, s: string[], query: URLSearchParams): Reply | undefined => {
    const [kind, second, third] = s;
    if (kind === 'user' && s.length === 1) return ok(user(a));
    if (kind === 'user' && s.length === 2 && second === 'emails') {
      const rows = [
        { type: 'email', email: `${a.login}@old.example.com`, is_primary: false, is_confirmed: true },
        { type: 'email', email: a.email.toUpperCase(), is_primary: true, is_confirmed: true },
      ];
      return list(rows, '/user/emails', query);
    }
    if (kind === 'user' && s.length === 2 && second === 'workspaces') {
      const rows = workspacesOf(a).map((ws) => ({ type: 'workspace_access', administrator: false, workspace: { type: 'workspace', slug: ws } }));
      return list(rows, '/user/workspaces', query);
    }
    if (kind === 'repositories' && s.length === 2 && third === undefined) {
      const inWorkspace = env.repos.filter((r) => r.owner === second);
      if (inWorkspace.length === 0) return notFound(`No workspace with identifier '${second}'.`);
      const role = query.get('role');
      if (role !== null && role !== 'member') return { status: 400, body: { type: 'error', error: { message: `fake: unsupported role ${role}` } } };
      // role=member: only what the account was granted; without it, the public ones too.
      const visible = inWorkspace.filter((r) => reads(a, r) || (role === null && r.private !== true));
      return list(visible.map(repository), `/repositories/${second}`, query);
    }
    return undefined;
  };

  return {
    route(req: FakeRequest) {
      const [root, ...s] = req.segments;
      if (req.method !== 'GET' || root !== '2.0') return undefined;
      const a = accountOf(req.headers);
      if (a !== undefined) {
        // Permission lists are for the repository's administrators.
        if (s[0] === 'workspaces' && s[2] === 'permissions')
          return { status: 403, body: { type: 'error', error: { message: 'You do not have access to this resource.' } } };
        return own(a, s, req.query) ?? notFound('Resource not found');
      }
      // The connection's credentials; anything else is the listing fake's to refuse.
      if (basic(req.headers, USER) || bearer(req.headers)) return administered(s, req.query);
      return undefined;
    },
  };
}
