// GitLab's answers about who may read what (HostPermissions), on the connection's API
// settings (gitlab.ts). Lists page as gitlab-pages.ts reads them.
//
//   GET /projects/{path}/members/all?per_page=100
//       Repository-driven: the project's members, with those inherited from its ancestor
//       groups and those of the groups it is shared with, each once at its highest level.
//       A member: id, username, state (active, blocked, ...), access_level,
//       membership_state (active, awaiting: over the seat limit, no access yet), and
//       email, which GitLab shows administrators only. Kept: active accounts whose active
//       membership is Reporter (20) or above; Guests (10), Planners (15) and minimal access
//       (5) cannot read a private project's code. Members of a shared group are listed
//       only when the group is public or the asker belongs to it: the connection's token
//       should be an administrator's.
//   GET /projects?membership=true&min_access_level=20&simple=true&per_page=100
//       Account-driven: the projects the account reads as a Reporter or above, inherited
//       and shared memberships included; path_with_namespace of each. Asked with the
//       account's own token (`Authorization: Bearer`, which GitLab takes for OAuth tokens
//       and personal access tokens alike), or with the connection's token and
//       `sudo=<account id>`, which needs an administrator's token with the sudo scope
//       (403 otherwise).
//   GET /users?username={login}   a list of at most one user: id, username.
//   GET /user                     the token's user: id, username, email (the primary
//                                 address), confirmed_at (null while it is unconfirmed).
//
// What GitLab cannot answer: "internal" projects are readable by every signed-in account
// that is not external, and administrators read every project; neither list names them,
// since neither is a membership.

import type { AccountCredential, HostAccount, HostPermissions } from './types.ts';
import type { ClientConfig, GetOptions, HttpReply, Page } from './http.ts';
import { JsonClient, ShapeError, arr, obj, optStr, str } from './http.ts';
import { nextPage } from './gitlab-pages.ts';
import { withOwnToken } from './own-token.ts';

const PER_PAGE = 100;
/** GitLab's Reporter role: the lowest that reads a private project's code. */
const REPORTER = 20;
const READABLE = `/projects?membership=true&min_access_level=${REPORTER}&simple=true&per_page=${PER_PAGE}`;

export function createGitLabPermissions(settings: ClientConfig, prefix: string): HostPermissions {
  const client = new JsonClient(settings);
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
  const projectNames = (c: JsonClient, path: string, opts: GetOptions): Promise<string[]> =>
    c.paginate(
      path,
      listPage('project list', (v) => `${prefix}/${str(obj(v, 'project'), 'path_with_namespace')}`),
      opts,
    );

  return {
    async readableBy(who: AccountCredential, signal) {
      let names: string[];
      if (who.token !== undefined) {
        names = await withOwnToken(settings, bearer(who.token), who.account.login, (c) => projectNames(c, READABLE, { signal }));
      } else if (settings.auth !== undefined) {
        const { id, login } = who.account;
        names = await projectNames(client, `${READABLE}&sudo=${encodeURIComponent(id)}`, { signal, notFound: `account "${login}" (id ${id})` });
      } else {
        return undefined; // no token of the connection's to act as the account with
      }
      return [...new Set(names)];
    },
    async readersOf(displayName, signal) {
      const path = `/projects/${encodeURIComponent(displayName)}/members/all?per_page=${PER_PAGE}`;
      const members = await client.paginate(
        path,
        listPage('member list', (v) => readerFrom(obj(v, 'member'))),
        { signal, notFound: `project "${displayName}"` },
      );
      const byId = new Map<string, HostAccount>();
      for (const m of members) if (m !== undefined && !byId.has(m.id)) byId.set(m.id, m);
      return [...byId.values()];
    },
    async accountByLogin(login, signal) {
      const path = `/users?username=${encodeURIComponent(login)}`;
      const users = await client.get(path, (data) => arr(data, 'user list').map((u) => obj(u, 'user')), { signal });
      // GitLab matches user names without regard to case.
      const user = users.find((u) => str(u, 'username').toLowerCase() === login.toLowerCase());
      return user === undefined ? undefined : accountFrom(user);
    },
    accountOfToken(token, signal) {
      return withOwnToken(settings, bearer(token), undefined, (c) => c.get('/user', (data) => accountFrom(obj(data, 'user')), { signal }));
    },
  };
}

/** A page parser for GitLab lists: each item through `item`. */
function listPage<T>(what: string, item: (v: unknown) => T): (data: unknown, reply: HttpReply) => Page<T> {
  return (data, reply) => {
    const items = arr(data, what).map(item);
    const next = nextPage(reply);
    return next === undefined ? { items } : { items, next };
  };
}

/** A member who can read the project's code, as an account; undefined for any other member. */
function readerFrom(o: Record<string, unknown>): HostAccount | undefined {
  const level = o.access_level;
  if (typeof level !== 'number') throw new ShapeError('field "access_level" is missing or not a number');
  if (level < REPORTER) return undefined;
  // A blocked, banned or deactivated account cannot sign in to read anything; an
  // awaiting membership (over the seat limit) gives no access until approved.
  const state = optStr(o, 'state');
  if (state !== undefined && state !== 'active') return undefined;
  if ((optStr(o, 'membership_state') ?? 'active') !== 'active') return undefined;
  return accountFrom(o);
}

/**
 * An account from a user or member answer. The email is taken when the answer carries one
 * and does not say it is unconfirmed (`confirmed_at: null`, which /user answers).
 */
function accountFrom(o: Record<string, unknown>): HostAccount {
  const id = o.id;
  if (typeof id !== 'number' && typeof id !== 'string') throw new ShapeError('field "id" is missing or not a number');
  const account: HostAccount = { id: String(id), login: str(o, 'username') };
  const email = optStr(o, 'email');
  if (email !== undefined && !('confirmed_at' in o && o.confirmed_at === null)) account.email = email.toLowerCase();
  return account;
}
