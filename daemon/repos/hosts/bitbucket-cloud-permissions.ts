// Who may read what on Bitbucket Cloud (HostPermissions), under the listing's API root and
// with its credentials (bitbucket.ts), or with an account's own OAuth token (`Bearer`) in
// their place.
//
//   GET /workspaces/{ws}/permissions/repositories/{slug}?pagelen=100
//       a repository's readers: values[] {user {type, uuid, nickname}, permission read|write|
//       admin|none}, each account's effective permission, whether granted to it, to one of
//       its groups or on the repository's project. The connection's account must administer
//       the repository.
//   GET /user/workspaces?pagelen=100                       (own token) values[].workspace.slug
//   GET /repositories/{ws}?role=member&pagelen=100         (own token) the workspace's
//       repositories the account was granted at least read on: values[].full_name
//   GET /workspaces/{ws}/members?pagelen=100               values[].user {uuid, nickname}
//   GET /users/{uuid}                                      one account
//   GET /user                                              (own token) the token's account
//   GET /user/emails?pagelen=100                           (own token) values[] {email,
//       is_primary, is_confirmed}; needs the token's `email` scope
// Pages: the body's `next` (absolute URL) beside `values`, as in the listing.
//
// An account is named by its `uuid` ("{...}"): stable. Its login is its `nickname`, since
// Bitbucket removed user names from its API; nicknames are not unique and no endpoint looks
// one up, so a login is found among the members of the connection's workspaces (or given as
// the UUID itself). What Bitbucket Cloud cannot answer:
// - acting as an account: there is no impersonation, so readableBy needs the account's own
//   token. The account-wide list of its repositories (/user/permissions/repositories) is
//   gone from the API: it is asked workspace by workspace, for the connection's workspaces
//   (repositories elsewhere are not this connection's).
// - other accounts' email addresses: readers and members carry none.

import type { BitbucketConnection } from '../../config/types.ts';
import type { AccountCredential, HostAccount, HostPermissions } from './types.ts';
import { HostError } from './types.ts';
import type { ClientConfig, Page } from './http.ts';
import { JsonClient, arr, hostPrefix, obj, optStr, str, withQuery } from './http.ts';
import { withOwnToken } from './own-token.ts';

const PAGE_SIZE = 100;
const READ_PERMISSIONS = new Set(['read', 'write', 'admin']);
const UUID = /^\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}$/i;

export function bitbucketCloudPermissions(conn: BitbucketConnection, cfg: ClientConfig): HostPermissions {
  const client = new JsonClient(cfg);
  const prefix = hostPrefix(conn.url);
  const workspaces = connectionWorkspaces(conn);
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  return {
    async readersOf(displayName, signal) {
      const [ws, slug] = parts(client, displayName);
      const path = withQuery(`/workspaces/${encodeURIComponent(ws)}/permissions/repositories/${encodeURIComponent(slug)}`, { pagelen: PAGE_SIZE });
      const reader = (v: unknown): HostAccount | undefined => {
        const row = obj(v, 'repository permission');
        return READ_PERMISSIONS.has(str(row, 'permission')) ? accountOf(row.user) : undefined;
      };
      const readers = new Map<string, HostAccount>();
      for (const a of await client.paginate(path, valuesPage(reader), { signal, notFound: `repository "${displayName}"` })) {
        if (a !== undefined) readers.set(a.id, a);
      }
      return [...readers.values()];
    },

    async readableBy(who: AccountCredential, signal) {
      if (who.token === undefined) return undefined;
      const slugOf = (v: unknown): string => str(obj(obj(v, 'workspace access').workspace, 'workspace'), 'slug').toLowerCase();
      const nameOf = (v: unknown): string => `${prefix}/${str(obj(v, 'repository'), 'full_name')}`;
      return withOwnToken(cfg, bearer(who.token), who.account.login, async (own) => {
        const accessible = new Set(await own.paginate(withQuery('/user/workspaces', { pagelen: PAGE_SIZE }), valuesPage(slugOf), { signal }));
        const names = new Set<string>();
        for (const ws of workspaces.filter((w) => accessible.has(w.toLowerCase()))) {
          const path = withQuery(`/repositories/${encodeURIComponent(ws)}`, { role: 'member', pagelen: PAGE_SIZE });
          for (const name of await own.paginate(path, valuesPage(nameOf), { signal, notFound: `workspace "${ws}"` })) names.add(name);
        }
        return [...names];
      });
    },

    async accountByLogin(login, signal) {
      if (UUID.test(login)) {
        return client.getOptional(`/users/${encodeURIComponent(login)}`, accountOf, { signal });
      }
      const member = (v: unknown): HostAccount | undefined => accountOf(obj(v, 'workspace membership').user);
      const found = new Map<string, HostAccount>();
      for (const ws of workspaces) {
        const path = withQuery(`/workspaces/${encodeURIComponent(ws)}/members`, { pagelen: PAGE_SIZE });
        for (const a of await client.paginate(path, valuesPage(member), { signal, notFound: `workspace "${ws}"` })) {
          if (a !== undefined && a.login.toLowerCase() === login.toLowerCase()) found.set(a.id, a);
        }
      }
      if (found.size > 1) {
        throw client.error(
          'not-found',
          `${found.size} accounts of the connection's workspaces have the nickname "${login}" (nicknames are not unique); name the account by its UUID`,
        );
      }
      return found.values().next().value;
    },

    accountOfToken(token, signal) {
      return withOwnToken(cfg, bearer(token), undefined, async (own) => {
        const account = await own.get('/user', accountOf, { signal });
        if (account === undefined) throw client.error('bad-response', `${client.baseUrl}/user did not name a user account`);
        const email = await primaryEmail(own, signal);
        return email === undefined ? account : { ...account, email };
      });
    },
  };
}

/** The workspaces a connection reaches: its own, and those of its projects and repositories. */
function connectionWorkspaces(conn: BitbucketConnection): string[] {
  const owner = (spec: string): string => spec.split('/')[0]!;
  return [...new Set([...conn.workspaces, ...conn.projects.map(owner), ...conn.repos.map(owner)])];
}

/** "workspace/slug" → its two parts; anything else is a caller's mistake. */
function parts(client: JsonClient, displayName: string): [string, string] {
  const m = /^([^/]+)\/([^/]+)$/.exec(displayName);
  if (m === null) throw client.error('not-found', `"${displayName}" is not a Bitbucket Cloud repository name (workspace/slug)`);
  return [m[1]!, m[2]!];
}

/** A page parser: `values` mapped by `map` (inside the parse, so that a wrong shape is a 'bad-response'), and `next`. */
function valuesPage<T>(map: (v: unknown) => T): (data: unknown) => Page<T> {
  return (data) => {
    const body = obj(data, 'page');
    const items = arr(body.values, 'values').map(map);
    const next = optStr(body, 'next');
    return next === undefined ? { items } : { items, next };
  };
}

/** A user object as an account; undefined for other principals (the bot accounts of access tokens are `app_user`). */
function accountOf(v: unknown): HostAccount | undefined {
  const user = obj(v, 'user');
  if (user.type !== undefined && user.type !== 'user') return undefined;
  return { id: str(user, 'uuid'), login: str(user, 'nickname') };
}

/** The token's confirmed primary address, lower-case; undefined when the token may not read addresses. */
async function primaryEmail(own: JsonClient, signal: AbortSignal | undefined): Promise<string | undefined> {
  try {
    const confirmedPrimary = (v: unknown): string | undefined => {
      const e = obj(v, 'email');
      return e.is_primary === true && e.is_confirmed === true ? str(e, 'email').toLowerCase() : undefined;
    };
    const emails = await own.paginate(withQuery('/user/emails', { pagelen: PAGE_SIZE }), valuesPage(confirmedPrimary), { signal });
    return emails.find((e) => e !== undefined);
  } catch (err) {
    if (err instanceof HostError && (err.kind === 'forbidden' || err.kind === 'not-found')) return undefined;
    throw err;
  }
}
