// Who may read what on Bitbucket Server / Data Center (HostPermissions), under the listing's
// API root <url>/rest/api/1.0 and with its credentials (bitbucket.ts), or with an account's
// own HTTP access token (`Bearer`) in their place.
//
//   GET /projects/{KEY}/repos/{slug}/permissions/users       values[] {user, permission}:
//       REPO_READ, REPO_WRITE or REPO_ADMIN, each of which reads the repository
//   GET /projects/{KEY}/repos/{slug}/permissions/groups      values[] {group {name}, permission}
//   GET /projects/{KEY}/permissions/users                    PROJECT_READ, PROJECT_WRITE or
//   GET /projects/{KEY}/permissions/groups                   PROJECT_ADMIN: every repository
//       of the project
//   GET /projects/{KEY}/permissions/{PROJECT_READ|PROJECT_WRITE}/all   {permitted}: whether
//       the project grants it to every licensed user
//   GET /admin/permissions/users                             global permissions: ADMIN and
//   GET /admin/permissions/groups                            SYS_ADMIN read every repository
//   GET /admin/groups/more-members?context={group}           values[] user: a group's members
//   GET /repos?permission=REPO_READ                          (own token) every repository the
//       account can read
//   GET /users?filter={text}                                 users whose name, display name or
//       address contains the text
//   GET /profile/recent/repos?limit=1                        (own token) answered for signed-in
//       users only; like every answer to one, it names the user in its X-AUSERNAME header
// Pages: `isLastPage` and `nextPageStart` in the body, asked for with start and limit, as in
// the listing. A user: {id (a number: the account's id), name (its login, case-insensitive),
// active}. The permission lists need the connection's account to administer the
// repository, its project and the server (global permissions).
//
// What Bitbucket Server cannot answer:
// - acting as an account: there is no impersonation, so readableBy needs the account's own
//   token; and no endpoint names a token's user, hence the X-AUSERNAME header.
// - a list of readers where a project grants read to every licensed user: readersOf is
//   undefined then (the account-driven answers hold).
// - verified email addresses: users may change their own `emailAddress` without any
//   confirmation, so none is reported.
// Deactivated users (active false) cannot sign in and are left out of the readers. Whether
// a repository is public (anyone may read it) is the listing's visibility.

import type { BitbucketConnection } from '../../config/types.ts';
import type { HostAccount, HostPermissions } from './types.ts';
import type { ClientConfig, HttpReply, Page } from './http.ts';
import { JsonClient, ShapeError, arr, bool, hostPrefix, obj, str, trimSlash, withQuery } from './http.ts';
import { withOwnToken } from './own-token.ts';

const PAGE_SIZE = 100;
const REPO_READ = new Set(['REPO_READ', 'REPO_WRITE', 'REPO_ADMIN']);
const PROJECT_READ = new Set(['PROJECT_READ', 'PROJECT_WRITE', 'PROJECT_ADMIN']);
const READS_EVERYTHING = new Set(['ADMIN', 'SYS_ADMIN']);

/** A user, or the group, holding a permission. */
interface Grant {
  user?: Reader;
  group?: string;
  permission: string;
}

interface Reader {
  account: HostAccount;
  active: boolean;
}

export function bitbucketServerPermissions(conn: BitbucketConnection, cfg: ClientConfig): HostPermissions {
  const client = new JsonClient(cfg);
  const prefix = hostPrefix(trimSlash(conn.url));
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  const all = <T>(c: JsonClient, path: string, map: (v: unknown) => T, signal: AbortSignal | undefined, notFound?: string): Promise<T[]> =>
    c.paginate(withQuery(path, { limit: PAGE_SIZE, start: 0 }), startPage(map), { signal, ...(notFound === undefined ? {} : { notFound }) });

  /** The users named `login` (case-insensitive), as `c` may see them. */
  const usersNamed = async (c: JsonClient, login: string, signal: AbortSignal | undefined): Promise<HostAccount[]> => {
    const users = await all(c, withQuery('/users', { filter: login }), readerOf, signal);
    return users.filter((u) => u.account.login.toLowerCase() === login.toLowerCase()).map((u) => u.account);
  };

  return {
    async readersOf(displayName, signal) {
      const [key, slug] = parts(client, displayName);
      const project = `/projects/${encodeURIComponent(key)}`;
      const repo = `${project}/repos/${encodeURIComponent(slug)}`;
      for (const permission of ['PROJECT_READ', 'PROJECT_WRITE']) {
        const everyone = await client.get(`${project}/permissions/${permission}/all`, (d) => bool(obj(d, 'permission check'), 'permitted'), {
          signal,
          notFound: `project "${key}"`,
        });
        if (everyone) return undefined;
      }
      const grants = [
        ...(await all(client, `${repo}/permissions/users`, grantOf, signal, `repository "${displayName}"`)).filter((g) => REPO_READ.has(g.permission)),
        ...(await all(client, `${repo}/permissions/groups`, grantOf, signal, `repository "${displayName}"`)).filter((g) => REPO_READ.has(g.permission)),
        ...(await all(client, `${project}/permissions/users`, grantOf, signal, `project "${key}"`)).filter((g) => PROJECT_READ.has(g.permission)),
        ...(await all(client, `${project}/permissions/groups`, grantOf, signal, `project "${key}"`)).filter((g) => PROJECT_READ.has(g.permission)),
        ...(await all(client, '/admin/permissions/users', grantOf, signal)).filter((g) => READS_EVERYTHING.has(g.permission)),
        ...(await all(client, '/admin/permissions/groups', grantOf, signal)).filter((g) => READS_EVERYTHING.has(g.permission)),
      ];
      const readers: Reader[] = grants.flatMap((g) => (g.user === undefined ? [] : [g.user]));
      const groups = new Set(grants.flatMap((g) => (g.group === undefined ? [] : [g.group])));
      for (const group of groups) {
        const members = await all(client, withQuery('/admin/groups/more-members', { context: group }), readerOf, signal, `group "${group}"`);
        readers.push(...members);
      }
      const byId = new Map<string, HostAccount>();
      for (const r of readers) if (r.active) byId.set(r.account.id, r.account);
      return [...byId.values()];
    },

    async readableBy(who, signal) {
      if (who.token === undefined) return undefined;
      const nameOf = (v: unknown): string => {
        const r = obj(v, 'repository');
        return `${prefix}/${str(obj(r.project, 'project'), 'key')}/${str(r, 'slug')}`;
      };
      const names = await withOwnToken(cfg, bearer(who.token), who.account.login, (own) =>
        all(own, withQuery('/repos', { permission: 'REPO_READ' }), nameOf, signal),
      );
      return [...new Set(names)];
    },

    async accountByLogin(login, signal) {
      const [account] = await usersNamed(client, login, signal);
      return account;
    },

    accountOfToken(token, signal) {
      const userName = (_data: unknown, reply: HttpReply): string => {
        const name = reply.headers.get('x-ausername');
        if (name === null || name === '') throw new ShapeError('no X-AUSERNAME header names the signed-in user');
        return name;
      };
      return withOwnToken(cfg, bearer(token), undefined, async (own) => {
        const name = await own.get(withQuery('/profile/recent/repos', { limit: 1 }), userName, { signal });
        const [account] = await usersNamed(own, name, signal);
        if (account === undefined) throw client.error('bad-response', `the server signed the token in as "${name}", who is not among its users`);
        return account;
      });
    },
  };
}

/** "KEY/slug" → its two parts; anything else is a caller's mistake. */
function parts(client: JsonClient, displayName: string): [string, string] {
  const m = /^([^/]+)\/([^/]+)$/.exec(displayName);
  if (m === null) throw client.error('not-found', `"${displayName}" is not a Bitbucket Server repository name (KEY/slug)`);
  return [m[1]!, m[2]!];
}

/** A page parser: `values` mapped by `map` (inside the parse: a wrong shape is a 'bad-response'), and the next `start`. */
function startPage<T>(map: (v: unknown) => T): (data: unknown, reply: HttpReply) => Page<T> {
  return (data, reply) => {
    const body = obj(data, 'page');
    const items = arr(body.values, 'values').map(map);
    if (bool(body, 'isLastPage', true)) return { items };
    const start = body.nextPageStart;
    if (typeof start !== 'number') throw new ShapeError('isLastPage is false but nextPageStart is missing');
    return { items, next: withQuery(reply.url, { start }) };
  };
}

function readerOf(v: unknown): Reader {
  const user = obj(v, 'user');
  const id = user.id;
  if (typeof id !== 'number') throw new ShapeError('field "id" of a user is not a number');
  return { account: { id: String(id), login: str(user, 'name') }, active: bool(user, 'active', true) };
}

function grantOf(v: unknown): Grant {
  const row = obj(v, 'permission');
  const permission = str(row, 'permission');
  if (row.group !== undefined) return { group: str(obj(row.group, 'group'), 'name'), permission };
  return { user: readerOf(row.user), permission };
}
