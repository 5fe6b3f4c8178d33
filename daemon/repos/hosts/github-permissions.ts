// GitHub's answers about who may read what (HostPermissions), on the connection's API
// settings (github.ts). Lists page with `Link: rel="next"`, as the listing does.
//
//   GET /repos/{owner}/{repo}/collaborators?affiliation=all&per_page=100
//       Repository-driven: everyone with access to the repository (outside and direct
//       collaborators, members through teams and child teams or through the organization's
//       base role, and the organization's owners). An entry: id, login, permissions
//       {pull, triage, push, maintain, admin}; one whose permissions say no pull is left
//       out. No email addresses. The connection's token needs write access to the
//       repository (403 otherwise) and, for an organization's, membership of it (classic
//       tokens: the repo and read:org scopes).
//   GET /user/repos?affiliation=owner,collaborator,organization_member&visibility=all&per_page=100
//       Account-driven, with the account's own token: the repositories it owns,
//       collaborates on and reaches through its organizations and teams; full_name of each.
//   GET /users/{login}   id, login, type (User, Organization, Bot); 404 when there is none.
//   GET /user            the token's account: id, login.
//   GET /user/emails?per_page=100
//       The token's addresses: email, primary, verified. It needs the user:email scope
//       (classic tokens) or the email addresses permission (fine-grained), so a 403 or 404
//       there means only that no address is known.
//
// What GitHub cannot answer: one token cannot ask as another account (the REST API has no
// impersonation; Enterprise Server's site administrators could mint a token per user, but
// that creates credentials on the host), so readableBy needs the account's own token.
// Internal repositories (Enterprise) are readable by every member of the enterprise, which
// neither list names.

import type { AccountCredential, HostAccount, HostPermissions } from './types.ts';
import { HostError } from './types.ts';
import type { ClientConfig, HttpReply, Page } from './http.ts';
import { JsonClient, ShapeError, arr, bool, encodePath, nextLink, obj, optObj, optStr, str } from './http.ts';
import { withOwnToken } from './own-token.ts';

const PER_PAGE = 100;
const READABLE = `/user/repos?affiliation=owner,collaborator,organization_member&visibility=all&per_page=${PER_PAGE}`;

export function createGitHubPermissions(settings: ClientConfig, prefix: string): HostPermissions {
  const client = new JsonClient(settings);
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  return {
    async readableBy(who: AccountCredential, signal) {
      if (who.token === undefined) return undefined;
      const names = await withOwnToken(settings, bearer(who.token), who.account.login, (c) =>
        c.paginate(
          READABLE,
          listPage('repository list', (v) => `${prefix}/${str(obj(v, 'repository'), 'full_name')}`),
          { signal },
        ),
      );
      return [...new Set(names)];
    },
    async readersOf(displayName, signal) {
      const path = `/repos/${encodePath(displayName)}/collaborators?affiliation=all&per_page=${PER_PAGE}`;
      const entries = await client.paginate(
        path,
        listPage('collaborator list', (v) => readerFrom(obj(v, 'collaborator'))),
        {
          signal,
          notFound: `repository "${displayName}"`,
        },
      );
      const byId = new Map<string, HostAccount>();
      for (const a of entries) if (a !== undefined && !byId.has(a.id)) byId.set(a.id, a);
      return [...byId.values()];
    },
    async accountByLogin(login, signal) {
      const user = await client.getOptional(`/users/${encodeURIComponent(login)}`, (data) => obj(data, 'user'), { signal });
      // Organizations and apps' bot accounts have logins too, but nobody signs in as them.
      if (user === undefined || (optStr(user, 'type') ?? 'User') !== 'User') return undefined;
      return accountFrom(user);
    },
    accountOfToken(token, signal) {
      return withOwnToken(settings, bearer(token), undefined, async (c) => {
        const account = accountFrom(await c.get('/user', (data) => obj(data, 'user'), { signal }));
        const email = await primaryEmail(c, signal);
        return email === undefined ? account : { ...account, email };
      });
    },
  };
}

/** A page parser for GitHub lists: each item through `item`, the next page from the Link header. */
function listPage<T>(what: string, item: (v: unknown) => T): (data: unknown, reply: HttpReply) => Page<T> {
  return (data, reply) => {
    const items = arr(data, what).map(item);
    const next = nextLink(reply.headers);
    return next === undefined ? { items } : { items, next };
  };
}

/** A collaborator who can read the code, as an account; undefined otherwise. */
function readerFrom(o: Record<string, unknown>): HostAccount | undefined {
  const permissions = optObj(o, 'permissions');
  // Every role GitHub grants includes pull; an entry without permissions is a collaborator all the same.
  if (permissions !== undefined && !bool(permissions, 'pull', true)) return undefined;
  return accountFrom(o);
}

function accountFrom(o: Record<string, unknown>): HostAccount {
  const id = o.id;
  if (typeof id !== 'number' && typeof id !== 'string') throw new ShapeError('field "id" is missing or not a number');
  return { id: String(id), login: str(o, 'login') };
}

/** The token's verified primary address, lower-case; undefined when it has none or the token may not read its addresses. */
async function primaryEmail(client: JsonClient, signal: AbortSignal | undefined): Promise<string | undefined> {
  let addresses: Array<Record<string, unknown>>;
  try {
    addresses = await client.paginate(
      `/user/emails?per_page=${PER_PAGE}`,
      listPage('email list', (v) => obj(v, 'email')),
      { signal },
    );
  } catch (err) {
    if (err instanceof HostError && (err.kind === 'forbidden' || err.kind === 'not-found')) return undefined;
    throw err;
  }
  const primary = addresses.find((a) => bool(a, 'primary') && bool(a, 'verified'));
  return primary === undefined ? undefined : str(primary, 'email').toLowerCase();
}
