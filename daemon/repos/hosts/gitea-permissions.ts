// Who may read what on Gitea and Forgejo (HostPermissions). Root, auth, Sudo and pages:
// gitea-api.ts.
//
// Repository-driven, readersOf("owner/name"):
//   GET /orgs/{owner}                      200 when the owner is an organization, 404 for a user
//   GET /repos/{owner}/{repo}/collaborators?limit=50&page=N
//        the users given the repository itself; read, write and admin all read the code
//   GET /repos/{owner}/{repo}/teams        an organization's repository: the teams that have
//        it (one list, not paged): id, permission (none, read, write, admin, owner) and
//        units_map {"repo.code": "read", ...}; Gitea before 1.17 sends `units`, the unit
//        names the permission applies to, instead of units_map
//   GET /teams/{id}/members?limit=50&page=N  the members of each team that reads the code
//   GET /users/{owner}                     a user's repository: its owner, who reads it
// Account-driven, readableBy:
//   GET /user/repos?limit=50&page=N        what the account owns, collaborates on, reaches
//        through a team, and its organizations' public repositories, each with
//        permissions.pull: whether the account reads the code (a team for issues only lists
//        the repository without it). Sent with the account's own token, else with the
//        connection's token and `Sudo: <login>`, which Gitea allows a site administrator.
//   GET /users/{login}                     accountByLogin; 404: no such user
//   GET /user                              accountOfToken, sent with that token
// A user: id, login, email. Readers and accountByLogin carry no email: Gitea answers a
// private address with a placeholder (login@<noreply domain>) unless the caller is a site
// administrator, and does not say which of the two it gave. GET /user always shows the
// token's own primary address, the one Gitea sends its mail to (confirmed at registration
// where the site sets REGISTER_EMAIL_CONFIRM).
// Not in any list: site administrators, who read every repository without being granted it.
// The connection's token must see the organizations (a site administrator's, or a member's):
// an organization hidden from it answers 404 like a user, and its teams would be missed.

import type { AccountCredential, HostAccount, HostPermissions } from './types.ts';
import type { HostContext, JsonClient } from './http.ts';
import { ShapeError, arr, bool, compact, obj, optObj, optStr, str } from './http.ts';
import { firstPage, giteaAuth, giteaClient, giteaPages, giteaSettings } from './gitea-api.ts';
import { withOwnToken } from './own-token.ts';

/** Team access modes under which a unit can be read. */
const READS = new Set(['read', 'write', 'admin', 'owner']);

export interface GiteaPermissionConfig {
  /** The connection's context: its token is the one that asks for readers and acts as accounts. */
  context: HostContext;
  /** The Gitea's web URL, the connection's url. */
  url: string;
  /** HostRepo.repoName prefix (hostPrefix of the url). */
  prefix: string;
}

export function createGiteaPermissions(cfg: GiteaPermissionConfig): HostPermissions {
  const { context, url, prefix } = cfg;
  const connection = giteaClient(context, url, context.token === undefined ? undefined : { token: context.token });
  const readableName = (v: unknown): string | undefined => {
    const o = obj(v, 'repository');
    const permissions = optObj(o, 'permissions');
    if (permissions === undefined) throw new ShapeError('field "permissions" is missing: it says whether the account reads the code');
    return bool(permissions, 'pull') ? `${prefix}/${str(o, 'full_name')}` : undefined;
  };

  return {
    async readersOf(displayName, signal) {
      const [owner, name, ...rest] = displayName.split('/');
      if (!owner || !name || rest.length > 0) throw connection.error('not-found', `"${displayName}" is not a Gitea repository name (owner/name)`);
      const repoPath = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
      const opts = { signal, notFound: `repository "${displayName}"` };
      const org = await connection.getOptional(`/orgs/${encodeURIComponent(owner)}`, (d) => obj(d, 'organization'), { signal });
      const readers = await connection.paginate(firstPage(`${repoPath}/collaborators`), giteaPages(accountFrom), opts);
      if (org === undefined) {
        readers.push(await connection.get(`/users/${encodeURIComponent(owner)}`, accountFrom, { signal, notFound: `owner "${owner}" of "${displayName}"` }));
        return uniqueById(readers);
      }
      const readingTeams = (d: unknown): string[] =>
        arr(d, 'team list')
          .map((t) => obj(t, 'team'))
          .filter(teamReadsCode)
          .map((t) => idOf(t, 'id'));
      for (const team of await connection.get(`${repoPath}/teams`, readingTeams, opts)) {
        const members = firstPage(`/teams/${encodeURIComponent(team)}/members`);
        readers.push(...(await connection.paginate(members, giteaPages(accountFrom), { signal })));
      }
      return uniqueById(readers);
    },

    async readableBy(who: AccountCredential, signal) {
      const list = (client: JsonClient): Promise<Array<string | undefined>> => client.paginate(firstPage('/user/repos'), giteaPages(readableName), { signal });
      let names: Array<string | undefined>;
      if (who.token !== undefined) names = await withOwnToken(giteaSettings(context, url), giteaAuth({ token: who.token }), who.account.login, list);
      else if (context.token !== undefined) names = await list(giteaClient(context, url, { token: context.token, sudo: who.account.login }));
      else return undefined;
      return [...new Set(names.filter((n): n is string => n !== undefined))];
    },

    async accountByLogin(login, signal) {
      if (login === '') return undefined;
      return connection.getOptional(`/users/${encodeURIComponent(login)}`, accountFrom, { signal });
    },

    async accountOfToken(token, signal) {
      const own = (d: unknown): HostAccount => {
        const o = obj(d, 'user');
        return compact<HostAccount>({ ...accountFrom(o), email: optStr(o, 'email')?.toLowerCase() });
      };
      return withOwnToken(giteaSettings(context, url), giteaAuth({ token }), undefined, (client) => client.get('/user', own, { signal }));
    },
  };
}

/** A user of an answer, without its email (see the header). */
function accountFrom(v: unknown): HostAccount {
  const o = obj(v, 'user');
  return { id: idOf(o, 'id'), login: str(o, 'login') };
}

/** Whether a team's members read the code of the team's repositories (a Team answer). */
export function teamReadsCode(team: Record<string, unknown>): boolean {
  const permission = optStr(team, 'permission') ?? 'none';
  if (permission === 'admin' || permission === 'owner') return true;
  const units = optObj(team, 'units_map');
  if (units !== undefined) return READS.has(String(units['repo.code'] ?? 'none'));
  const listed = team.units === undefined || team.units === null ? [] : arr(team.units, 'field "units"');
  return READS.has(permission) && listed.includes('repo.code');
}

function idOf(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw new ShapeError(`field "${key}" is missing or not an integer`);
}

function uniqueById(accounts: HostAccount[]): HostAccount[] {
  return [...new Map(accounts.map((a) => [a.id, a])).values()];
}
