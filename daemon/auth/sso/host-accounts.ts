// Who signed in through a code host's OAuth app: the host's REST API, asked with the
// access token the sign-in gave, through the client every code host is read with
// (repos/hosts/http.ts: time limits, redirects, rate limits, retries, HostError).
//
// GitHub (API root: api.github.com, or <url>/api/v3 for Enterprise; scopes read:user and
// user:email):
//   GET /user         id (number), login, name (null when unset), email (the public one)
//   GET /user/emails  [{email, primary, verified, visibility}]: the primary address is the
//                     member's email when it is verified
// GitLab (API root: <url>/api/v4; scope read_user):
//   GET /user         id (number), username, name, email (the primary address), confirmed_at
//                     (set once the primary address was confirmed; null or absent: not)
// Auth: `Authorization: Bearer <token>` on both.

import { apiBase } from '../../repos/hosts/github.ts';
import { arr, JsonClient, obj, optStr, ShapeError, str, trimSlash, type TransportOptions } from '../../repos/hosts/http.ts';
import type { HostAccount } from '../../repos/hosts/types.ts';

/** What a host says of the account a token belongs to. */
export interface HostUser {
  account: HostAccount;
  /** The name to show; the login when the account has none. */
  name: string;
  /** The account's primary email, lower case, whether verified or not; absent when the host gives none. */
  email?: string;
  emailVerified: boolean;
}

/** The account `token` belongs to on the GitHub or GitLab at `webUrl`. Throws HostError when the host cannot say. */
export function hostUser(
  type: 'github' | 'gitlab',
  webUrl: string,
  token: string,
  context: { provider: string; transport?: TransportOptions },
): Promise<HostUser> {
  const github = type === 'github';
  const client = new JsonClient({
    context: { name: context.provider, token, transport: context.transport ?? {} },
    baseUrl: github ? apiBase(webUrl) : `${trimSlash(webUrl)}/api/v4`,
    auth: { authorization: `Bearer ${token}` },
    ...(github ? { headers: { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' } } : {}),
  });
  return github ? githubUser(client) : gitlabUser(client);
}

async function githubUser(client: JsonClient): Promise<HostUser> {
  // Shapes are checked inside the parse callbacks, where a wrong one is the client's HostError.
  const user = await client.get('/user', (data) => person(obj(data, 'user'), 'login'));
  const primary = await client.get('/user/emails', (data) => {
    const found = arr(data, 'email list')
      .map((e) => obj(e, 'email'))
      .find((e) => e.primary === true);
    return found === undefined ? undefined : { email: str(found, 'email').toLowerCase(), verified: found.verified === true };
  });
  return described(user, primary?.email, primary?.verified === true);
}

async function gitlabUser(client: JsonClient): Promise<HostUser> {
  const user = await client.get('/user', (data) => {
    const o = obj(data, 'user');
    return { ...person(o, 'username'), email: optStr(o, 'email')?.toLowerCase(), confirmed: typeof o.confirmed_at === 'string' && o.confirmed_at !== '' };
  });
  return described(user, user.email, user.email !== undefined && user.confirmed);
}

/** The id, login and name of a host's user object (`loginField`: its name for the login). */
function person(o: Record<string, unknown>, loginField: string): { id: string; login: string; name: string | undefined } {
  return { id: idOf(o), login: str(o, loginField), name: optStr(o, 'name') };
}

function described(user: { id: string; login: string; name: string | undefined }, email: string | undefined, verified: boolean): HostUser {
  return {
    account: { id: user.id, login: user.login, ...(email !== undefined && verified ? { email } : {}) },
    name: user.name ?? user.login,
    ...(email === undefined ? {} : { email }),
    emailVerified: verified,
  };
}

/** The account's numeric id, as a string (HostAccount.id). */
function idOf(user: Record<string, unknown>): string {
  const id = user.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw new ShapeError('field "id" is missing or not a whole number');
  return String(id);
}
