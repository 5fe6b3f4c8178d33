// Who may read what on Azure DevOps (HostPermissions), with the listing's settings and
// credentials (azuredevops.ts), or with an account's own Microsoft Entra token (`Bearer`)
// in their place.
//
//   GET /{org}/{project}/_apis/git/repositories/{repo}   id, project.id: the GUIDs that name
//       the repository and its project in the Git security namespace
//   GET /{org}/_apis/accesscontrollists/2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87?token={token}
//       &includeExtendedInfo=false    the access control list the Git security namespace keeps
//       for one token: repoV2/{projectId}/{repoId} (the repository), repoV2/{projectId} (every
//       repository of the project). value[] {token, inheritPermissions, acesDictionary
//       {descriptor: {descriptor, allow, deny}}}: an entry per user or group, allow and deny
//       as permission bits, GenericRead (Read) being 2; value is empty where nothing is set
//   GET /{org}/_apis/projects/{project}/teams?$top=100&$skip=N              value[].id
//   GET /{org}/_apis/projects/{project}/teams/{team}/members?$top=100&$skip=N
//       value[].identity {id, uniqueName, isContainer}: a team's members, accounts or groups
//   GET /{org}/_apis/git/repositories                     (own token) every repository of the
//       organization the account can read: value[] {name, project.name}
//   GET <identities>/{org}/_apis/identities?searchFilter=General&filterValue={login}
//       value[] {id, isContainer, properties.Account.$value}: accounts matching a name or address
//   GET /{org}/_apis/connectionData?api-version=7.1-preview     (own token) authenticatedUser
//       {id, properties.Account.$value}: the token's account
// Every call carries api-version=7.1 unless said. <identities> is https://vssps.dev.azure.com
// for Azure DevOps Services (url https://dev.azure.com), where the identity service lives;
// Azure DevOps Server serves it under the collection's own url. $top/$skip pages: the host
// may send fewer than asked for, so paging goes on until a page is empty.
//
// An account is named by its identity id (a GUID) and its uniqueName: the address it signs
// in with for Entra ID and Microsoft accounts (reported as its email address too; the
// directory or Microsoft verified it), DOMAIN\name on Azure DevOps Server (no address).
//
// What Azure DevOps cannot answer:
// - a repository's own readers: read permission is set on security groups, mostly those of
//   the project (Readers, Contributors, which a project's teams join), and evaluating those
//   needs its security namespaces. readersOf lists the members of the project's teams:
//   project-level. Members of project groups outside any team (Readers, administrators of
//   the project or organization) are not in it and rely on their own token; groups among a
//   team's members are not expanded (left out). A list must never name an account that
//   cannot read the repository, and a Deny outranks the teams' Allow: so readersOf first
//   reads the repository's and its project's access control lists, and when an entry of
//   either denies Read to anyone, or the repository does not inherit its project's
//   permissions (then the teams' project-level Allow does not reach it), it answers
//   undefined for that repository. Its readers then come only from members' own tokens and
//   configuration grants.
// - acting as an account: there is no impersonation, so readableBy needs the account's own
//   token, and asks each organization of the connection.

import type { AzureDevOpsConnection } from '../../config/types.ts';
import type { HostAccount, HostPermissions } from './types.ts';
import type { ClientConfig, HttpReply, Page } from './http.ts';
import { JsonClient, ShapeError, arr, bool, hostPrefix, obj, optObj, str, withQuery } from './http.ts';
import { withOwnToken } from './own-token.ts';

const API_VERSION = '7.1';
// connectionData has only preview versions.
const CONNECTION_DATA_VERSION = '7.1-preview';
const PAGE_SIZE = 100;
/** The Git Repositories security namespace. */
const GIT_NAMESPACE = '2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87';
/** Its GenericRead permission bit: reading the code. */
const GENERIC_READ = 2;

export function azureDevOpsPermissions(conn: AzureDevOpsConnection, cfg: ClientConfig): HostPermissions {
  const client = new JsonClient(cfg);
  const identities = new JsonClient({ ...cfg, baseUrl: identityServiceUrl(cfg.baseUrl) });
  const prefix = hostPrefix(conn.url);
  const orgs = [...new Set([...conn.orgs, ...conn.projects.map(owner), ...conn.repos.map(owner)])];
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  /** Every item of a $top/$skip list, until an empty page. */
  const skipping = <T>(path: string, map: (v: unknown) => T, signal: AbortSignal | undefined, notFound: string): Promise<T[]> => {
    const page = (data: unknown, reply: HttpReply): Page<T> => {
      const items = arr(obj(data, 'list').value, 'value').map(map);
      if (items.length === 0) return { items };
      const skip = Number(new URL(reply.url).searchParams.get('$skip') ?? '0');
      return { items, next: withQuery(reply.url, { $skip: skip + items.length }) };
    };
    return client.paginate(withQuery(path, { 'api-version': API_VERSION, $top: PAGE_SIZE, $skip: 0 }), page, { signal, notFound });
  };

  /** Whether the repository's own permissions may take Read away from its project's teams (see the header). */
  const readRestricted = async (org: string, project: string, repo: string, signal: AbortSignal | undefined): Promise<boolean> => {
    const path = withQuery(`/${encodeURIComponent(org)}/${encodeURIComponent(project)}/_apis/git/repositories/${encodeURIComponent(repo)}`, {
      'api-version': API_VERSION,
    });
    const ids = await client.get(path, (d) => securityIds(obj(d, 'repository')), { signal, notFound: `repository "${org}/${project}/${repo}"` });
    const acls = (token: string): Promise<AccessControlList[]> => {
      const query = { token, includeExtendedInfo: 'false', 'api-version': API_VERSION };
      const aclPath = withQuery(`/${encodeURIComponent(org)}/_apis/accesscontrollists/${GIT_NAMESPACE}`, query);
      return client.get(aclPath, (d) => arr(obj(d, 'access control lists').value, 'value').map(aclOf), { signal, notFound: `organization "${org}"` });
    };
    const ofRepo = await acls(`repoV2/${ids.project}/${ids.repo}`);
    if (ofRepo.some((l) => l.deniesRead || !l.inherits)) return true;
    return (await acls(`repoV2/${ids.project}`)).some((l) => l.deniesRead);
  };

  return {
    async readersOf(displayName, signal) {
      const [org, project, repo] = parts(client, displayName);
      if (await readRestricted(org, project, repo, signal)) return undefined;
      const base = `/${encodeURIComponent(org)}/_apis/projects/${encodeURIComponent(project)}/teams`;
      const teams = await skipping(base, (v) => str(obj(v, 'team'), 'id'), signal, `project "${org}/${project}"`);
      const readers = new Map<string, HostAccount>();
      for (const team of teams) {
        const members = await skipping(`${base}/${encodeURIComponent(team)}/members`, memberOf, signal, `team ${team} of "${org}/${project}"`);
        for (const m of members) if (m !== undefined) readers.set(m.id, m);
      }
      return [...readers.values()];
    },

    async readableBy(who, signal) {
      if (who.token === undefined) return undefined;
      return withOwnToken(cfg, bearer(who.token), who.account.login, async (own) => {
        const names = new Set<string>();
        for (const org of orgs) {
          const nameOf = (v: unknown): string => {
            const r = obj(v, 'repository');
            return `${prefix}/${org}/${str(obj(r.project, 'project'), 'name')}/${str(r, 'name')}`;
          };
          const path = withQuery(`/${encodeURIComponent(org)}/_apis/git/repositories`, { 'api-version': API_VERSION });
          const list = await own.get(path, (d) => arr(obj(d, 'repository list').value, 'value').map(nameOf), { signal, notFound: `organization "${org}"` });
          for (const name of list) names.add(name);
        }
        return [...names];
      });
    },

    async accountByLogin(login, signal) {
      for (const org of orgs) {
        const path = withQuery(`/${encodeURIComponent(org)}/_apis/identities`, {
          searchFilter: 'General',
          filterValue: login,
          queryMembership: 'None',
          'api-version': API_VERSION,
        });
        const found = await identities.get(path, (d) => arr(obj(d, 'identity list').value, 'value').map(identityOf), {
          signal,
          notFound: `organization "${org}"`,
        });
        const account = found.find((a) => a !== undefined && a.login.toLowerCase() === login.toLowerCase());
        if (account !== undefined) return account;
      }
      return undefined;
    },

    async accountOfToken(token, signal) {
      const org = orgs[0];
      if (org === undefined) throw client.error('not-found', 'the connection names no organization to ask who a token belongs to');
      const path = withQuery(`/${encodeURIComponent(org)}/_apis/connectionData`, { 'api-version': CONNECTION_DATA_VERSION });
      const account = await withOwnToken(cfg, bearer(token), undefined, (own) =>
        own.get(path, (d) => identityOf(obj(d, 'connection data').authenticatedUser), { signal }),
      );
      if (account === undefined) throw client.error('bad-response', `${client.baseUrl}${path} did not name a user account`);
      return account;
    },
  };
}

/** Where the identities API of an API root lives: vssps.dev.azure.com for Azure DevOps Services. */
export function identityServiceUrl(baseUrl: string): string {
  const u = new URL(baseUrl);
  return u.hostname.toLowerCase() === 'dev.azure.com' ? `${u.protocol}//vssps.dev.azure.com${u.pathname.replace(/\/+$/, '')}` : baseUrl;
}

function owner(spec: string): string {
  return spec.split('/')[0]!;
}

/** "org/project/repo" → its three parts; anything else is a caller's mistake. */
function parts(client: JsonClient, displayName: string): [string, string, string] {
  const m = /^([^/]+)\/([^/]+)\/([^/]+)$/.exec(displayName);
  if (m === null) throw client.error('not-found', `"${displayName}" is not an Azure DevOps repository name (org/project/repo)`);
  return [m[1]!, m[2]!, m[3]!];
}

/** The ids of a repository (a GitRepository answer) and of its project. */
function securityIds(repository: Record<string, unknown>): { repo: string; project: string } {
  return { repo: str(repository, 'id'), project: str(obj(repository.project, 'project'), 'id') };
}

/** What readersOf needs of an access control list. */
interface AccessControlList {
  /** Whether an entry denies Read (to a user or a group: which one does not matter). */
  deniesRead: boolean;
  /** Whether the token also takes its parent's permissions. */
  inherits: boolean;
}

function aclOf(v: unknown): AccessControlList {
  const acl = obj(v, 'access control list');
  const entries = Object.values(obj(acl.acesDictionary, 'field "acesDictionary"')).map((e) => obj(e, 'access control entry'));
  const deniesRead = entries.some((e) => {
    const deny = e.deny;
    if (typeof deny !== 'number' || !Number.isInteger(deny)) throw new ShapeError('field "deny" of an access control entry is not an integer');
    return (deny & GENERIC_READ) !== 0;
  });
  return { deniesRead, inherits: bool(acl, 'inheritPermissions', true) };
}

/** An account from a uniqueName; its email when the name is an address. */
function account(id: string, uniqueName: string): HostAccount {
  return uniqueName.includes('@') ? { id, login: uniqueName, email: uniqueName.toLowerCase() } : { id, login: uniqueName };
}

/** A team member (an IdentityRef) as an account; undefined for a group. */
function memberOf(v: unknown): HostAccount | undefined {
  const identity = obj(obj(v, 'team member').identity, 'identity');
  if (bool(identity, 'isContainer')) return undefined;
  return account(str(identity, 'id'), str(identity, 'uniqueName'));
}

/** An Identity (identities API, connectionData) as an account; undefined for a group. */
function identityOf(v: unknown): HostAccount | undefined {
  const identity = obj(v, 'identity');
  if (bool(identity, 'isContainer')) return undefined;
  const name = optObj(optObj(identity, 'properties'), 'Account');
  return account(str(identity, 'id'), str(obj(name, 'properties.Account'), '$value'));
}
