// Who may read what on Gerrit (HostPermissions). REST root and answers: gerrit.ts.
//
// Account-driven, readableBy:
//   GET /a/projects/?d&t&n=100&S=skip  the projects the account may see (gerrit-projects.ts),
//        which Gerrit lists when the account can read at least one of a project's refs;
//        HIDDEN ones and Gerrit's configuration projects are left out, as the listing leaves
//        them out. Asked as the account itself (basic auth with its login and HTTP password),
//        else as the connection's user with `X-Gerrit-RunAs: <account id>`, which needs the
//        Run As global capability (403 "not permitted to use X-Gerrit-RunAs" otherwise).
//   GET /a/accounts/{login}             accountByLogin: an AccountInfo; 404: none. Gerrit also
//        resolves an id, an email or a full name there, so an answer whose username is not
//        the login asked for is no match.
//   GET /a/accounts/self                accountOfToken, as the token's account
// AccountInfo: _account_id, username, email (the preferred address, which Gerrit takes only
// from the account's registered addresses: confirmed through a link it mailed, or vouched
// for by the sign-in provider).
// An account's token on Gerrit is "login:HTTP password": a password alone names no account.
// readableBy, which knows the account, also takes the password alone.
// No readers list (readersOf is undefined): Gerrit grants read access per ref to groups,
// inherits it from parent projects up to All-Projects, and lets exclusive and BLOCK rules
// take it away again, so who reads a project is known only by asking as each account.

import type { AccountCredential, HostAccount, HostPermissions } from './types.ts';
import type { ClientConfig, HostContext } from './http.ts';
import { JsonClient, ShapeError, basicAuth, compact, obj, optStr, str } from './http.ts';
import { listProjects } from './gerrit-projects.ts';
import { withOwnToken } from './own-token.ts';

export interface GerritPermissionConfig {
  /** The connection's context; with a token, that is `user`'s HTTP password. */
  context: HostContext;
  /** The Gerrit's web URL, without a trailing slash. */
  url: string;
  /** HostRepo.repoName prefix (hostPrefix of the url). */
  prefix: string;
  /** The connection's client (authenticated under /a, or anonymous). */
  connection: JsonClient;
  /** The connection's user, whose HTTP password the context's token is. */
  user?: string;
}

export function createGerritPermissions(cfg: GerritPermissionConfig): HostPermissions {
  const { context, url, prefix, connection, user } = cfg;
  /** Where an account signs in with its own login and HTTP password (withOwnToken). */
  const signIn: ClientConfig = { context, baseUrl: `${url}/a` };
  /** The connection's user acting as the account with this id. */
  const runAs = (connectionUser: string, password: string, accountId: string): JsonClient =>
    new JsonClient({ context, baseUrl: `${url}/a`, auth: { authorization: basicAuth(connectionUser, password), 'x-gerrit-runas': accountId } });
  const visible = async (client: JsonClient, signal: AbortSignal | undefined): Promise<string[]> => {
    const projects = await listProjects(client, signal);
    return [...new Set(projects.filter((p) => p.state !== 'HIDDEN').map((p) => `${prefix}/${p.name}`))];
  };

  return {
    async readersOf() {
      return undefined;
    },

    async readableBy(who: AccountCredential, signal) {
      const login = who.account.login;
      if (who.token !== undefined) {
        const password = who.token.startsWith(`${login}:`) ? who.token.slice(login.length + 1) : who.token;
        return withOwnToken(signIn, { authorization: basicAuth(login, password) }, login, (client) => visible(client, signal));
      }
      if (context.token === undefined || user === undefined) return undefined;
      return visible(runAs(user, context.token, who.account.id), signal);
    },

    async accountByLogin(login, signal) {
      if (login === '') return undefined;
      const found = await connection.getOptional(`/accounts/${encodeURIComponent(login)}`, accountFrom, { signal, xssiPrefix: true });
      return found !== undefined && found.login.toLowerCase() === login.toLowerCase() ? found : undefined;
    },

    async accountOfToken(token, signal) {
      const colon = token.indexOf(':');
      if (colon <= 0 || colon === token.length - 1) {
        throw connection.error('unauthorized', 'a Gerrit account token is "login:HTTP password", and the one given is not');
      }
      const auth = { authorization: basicAuth(token.slice(0, colon), token.slice(colon + 1)) };
      return withOwnToken(signIn, auth, undefined, (client) => client.get('/accounts/self', accountFrom, { signal, xssiPrefix: true }));
    },
  };
}

function accountFrom(v: unknown): HostAccount {
  const o = obj(v, 'account');
  const id = o._account_id;
  if (typeof id !== 'number' || !Number.isInteger(id)) throw new ShapeError('field "_account_id" is missing or not an integer');
  return compact<HostAccount>({ id: String(id), login: str(o, 'username'), email: optStr(o, 'email')?.toLowerCase() });
}
