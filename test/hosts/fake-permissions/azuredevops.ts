// Azure DevOps's permission API in its real shapes: a project's teams and their members
// ($top/$skip, capped at the page size), the access control lists of the Git security
// namespace, an organization's repositories as an account sees them, the identities API, and
// connectionData. The identities API, at vssps.dev.azure.com on Azure DevOps Services, is
// served here under the connection's url, where Azure DevOps Server serves it. Accounts are
// Entra ID users: uniqueName is their address (FakeAccount.email). A project's readers are
// the readers of its private repositories; its teams hold them: the default team all of
// them and a group, a second team the first again. Every project's token allows its
// Contributors group Read and more, and its Readers group Read while denying it Contribute
// (a deny that is not of Read); FakeRepo.azureAcl adds denies of Read, or a repository that
// does not inherit (only its readers allowed Read); a repository without azureAcl has no
// list of its own. An account's own token sees what that leaves it. The connection's basic
// :TOKEN is an administrator; an account's own token is `Bearer FakeAccount.token`.

import type { IncomingHttpHeaders } from 'node:http';
import { basic, perPage } from '../fake-http.ts';
import type { Env, FakeAccount, FakeRepo, FakeRequest, PermissionApi, Reply } from '../fake-http.ts';

/** The account's identity id, a GUID. */
export function azureId(a: FakeAccount): string {
  return `00000000-0000-0000-0000-${String(a.id).padStart(12, '0')}`;
}

/** The Git Repositories security namespace. */
const GIT_NAMESPACE = '2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87';
// Git permission bits.
const READ = 2;
const CONTRIBUTE = 4;
const CREATE_BRANCH = 16;
const PULL_REQUEST_CONTRIBUTE = 16384;

interface Team {
  id: string;
  name: string;
  members: Array<FakeAccount | string>;
}

export function azureDevOpsPermissions(env: Env): PermissionApi {
  const { url } = env;
  const projectRepos = (org: string, project: string): FakeRepo[] => env.repos.filter((r) => r.owner === org && r.group === project);
  const readersOf = (org: string, project: string): FakeAccount[] => {
    const logins = new Set(projectRepos(org, project).flatMap((r) => (r.private === true ? (r.readers ?? []) : [])));
    return env.accounts.filter((a) => logins.has(a.login));
  };
  const isPrivate = (org: string, project: string): boolean => projectRepos(org, project).some((r) => r.private === true);
  const projectDenies = (org: string, project: string): string[] => projectRepos(org, project).flatMap((r) => r.azureAcl?.projectDenyRead ?? []);
  /** Whether `who` reads `r`: a project reader not denied, or a reader of a repository that does not inherit. */
  const reads = (r: FakeRepo, who: FakeAccount): boolean => {
    if (r.azureAcl?.denyRead?.includes(who.login) || projectDenies(r.owner, r.group).includes(who.login)) return false;
    if (r.azureAcl?.noInheritance === true) return r.readers?.includes(who.login) === true;
    return !isPrivate(r.owner, r.group) || readersOf(r.owner, r.group).includes(who);
  };
  const teamsOf = (org: string, project: string): Team[] => {
    const readers = readersOf(org, project);
    return [
      { id: `${org}-${project}-team-id`, name: `${project} Team`, members: [...readers, `[${project}]\\Release Managers`] },
      { id: `${org}-${project}-reviewers-id`, name: `${project} Reviewers`, members: readers.slice(0, 1) },
    ];
  };
  const identityRef = (m: FakeAccount | string): Record<string, unknown> =>
    typeof m === 'string'
      ? { id: `group-${m}`, displayName: m, uniqueName: `vstfs:///Classification/TeamProject/${m}`, isContainer: true, descriptor: `vssgp.${m}` }
      : { id: azureId(m), displayName: m.login, uniqueName: m.email, descriptor: `aad.${m.login}`, imageUrl: `${url}/_apis/GraphProfile/${m.login}` };
  const identity = (a: FakeAccount): Record<string, unknown> => ({
    id: azureId(a),
    descriptor: `Microsoft.IdentityModel.Claims.ClaimsIdentity;tenant\\${a.email}`,
    subjectDescriptor: `aad.${a.login}`,
    providerDisplayName: a.login,
    isActive: true,
    isContainer: false,
    members: [],
    memberOf: [],
    properties: {
      SchemaClassName: { $type: 'System.String', $value: 'User' },
      Account: { $type: 'System.String', $value: a.email },
      Mail: { $type: 'System.String', $value: a.email },
    },
  });
  const ok = (body: unknown): Reply => ({ status: 200, body });
  const notFound = (message: string, typeKey: string): Reply => ({ status: 404, body: { $id: '1', message, typeKey, errorCode: 0 } });
  const badRequest = (message: string): Reply => ({ status: 400, body: { $id: '1', message: `fake: ${message}`, typeKey: 'InvalidArgumentValueException' } });
  const skipPage = (items: readonly unknown[], query: URLSearchParams): Reply => {
    const top = perPage(query, '$top', env, 100);
    const skip = Number(query.get('$skip') ?? '0');
    const value = items.slice(skip, skip + top);
    return ok({ count: value.length, value });
  };
  const version = (query: URLSearchParams, expected: string): Reply | undefined =>
    query.get('api-version') === expected ? undefined : badRequest(`expected api-version=${expected}`);

  /** The projects' teams, for the administrator or a project member (`who`). */
  const teams = (s: string[], query: URLSearchParams, who: FakeAccount | undefined): Reply | undefined => {
    const [org, , , project, , team, members] = s;
    if (!(s[1] === '_apis' && s[2] === 'projects' && s[4] === 'teams' && (s.length === 5 || (s.length === 7 && members === 'members')))) return undefined;
    const missing = version(query, '7.1');
    if (missing) return missing;
    if (projectRepos(org!, project!).length === 0 || (who !== undefined && isPrivate(org!, project!) && !readersOf(org!, project!).includes(who))) {
      return notFound(`TF200016: The following project does not exist: ${project}.`, 'ProjectDoesNotExistWithNameException');
    }
    const all = teamsOf(org!, project!);
    if (s.length === 5)
      return skipPage(
        all.map((t) => ({ id: t.id, name: t.name, url: `${url}/${org}/_apis/projects/${project}/teams/${t.id}` })),
        query,
      );
    const t = all.find((x) => x.id === team || x.name === team);
    if (t === undefined) return notFound(`The team with id ${team} does not exist.`, 'TeamNotFoundException');
    return skipPage(
      t.members.map((m, i) => ({ isTeamAdmin: i === 0, identity: identityRef(m) })),
      query,
    );
  };

  /** An organization's repositories as `who` (undefined: the administrator) may read them. */
  const repositories = (s: string[], query: URLSearchParams, who: FakeAccount | undefined): Reply | undefined => {
    const [org, second, third, fourth] = s;
    if (!(s.length === 4 && second === '_apis' && third === 'git' && fourth === 'repositories')) return undefined;
    const missing = version(query, '7.1');
    if (missing) return missing;
    const inOrg = env.repos.filter((r) => r.owner === org);
    if (inOrg.length === 0) return notFound(`The organization ${org} could not be found.`, 'UnauthorizedRequestException');
    const readable = inOrg.filter((r) => who === undefined || reads(r, who));
    const json = (r: FakeRepo): unknown => ({
      id: `${r.name}-id`,
      name: r.name,
      url: `${url}/${org}/${r.group}/_apis/git/repositories/${r.name}`,
      project: { id: `${org}-${r.group}-id`, name: r.group, visibility: isPrivate(org!, r.group) ? 'private' : 'public' },
      webUrl: `${url}/${org}/${r.group}/_git/${r.name}`,
      isDisabled: r.archived === true,
    });
    return ok({ count: readable.length, value: readable.map(json) });
  };

  /** The access control list of a Git security token, for the administrator. */
  const accessControlLists = (s: string[], query: URLSearchParams, who: FakeAccount | undefined): Reply | undefined => {
    const [org, second, third, namespace] = s;
    if (!(s.length === 4 && second === '_apis' && third === 'accesscontrollists') || who !== undefined) return undefined;
    const missing = version(query, '7.1');
    if (missing) return missing;
    if (namespace !== GIT_NAMESPACE) return notFound(`fake: only the Git security namespace is served, not ${namespace}`, 'InvalidSecurityNamespaceException');
    const token = query.get('token') ?? '';
    const m = /^repoV2\/([^/]+)(?:\/([^/]+))?$/.exec(token);
    if (m === null) return badRequest(`expected token=repoV2/{projectId}[/{repoId}], got "${token}"`);
    const inProject = env.repos.filter((r) => r.owner === org && `${org}-${r.group}-id` === m[1]);
    const project = inProject[0]?.group;
    const repo = m[2] === undefined ? undefined : inProject.find((r) => `${r.name}-id` === m[2]);
    if (project === undefined || (m[2] !== undefined && repo === undefined)) return ok({ count: 0, value: [] });
    // An entry is keyed by its descriptor: a project group's SID ends in the group's relative id.
    const group = (rid: number, allow: number, deny: number): [string, unknown] => {
      const descriptor = `Microsoft.TeamFoundation.Identity;S-1-9-1551374245-1204400969-2402986413-${rid}`;
      return [descriptor, { descriptor, allow, deny }];
    };
    const user = (login: string, allow: number, deny: number): [string, unknown] => {
      const email = env.accounts.find((a) => a.login === login)?.email ?? login;
      const descriptor = `Microsoft.IdentityModel.Claims.ClaimsIdentity;tenant\\${email}`;
      return [descriptor, { descriptor, allow, deny }];
    };
    let aces: Array<[string, unknown]>;
    let inherit = true;
    if (repo === undefined) {
      aces = [
        group(1, READ | CONTRIBUTE | CREATE_BRANCH | PULL_REQUEST_CONTRIBUTE, 0), // Contributors
        group(2, READ, CONTRIBUTE), // Readers
        ...projectDenies(org!, project).map((l) => user(l, 0, READ | CONTRIBUTE)),
      ];
    } else {
      const acl = repo.azureAcl;
      if (acl === undefined) return ok({ count: 0, value: [] });
      inherit = acl.noInheritance !== true;
      aces = [
        ...(acl.noInheritance ? (repo.readers ?? []).map((l) => user(l, READ, 0)) : []),
        ...(acl.denyRead ?? []).map((l) => user(l, 0, READ | CONTRIBUTE)),
      ];
    }
    return ok({ count: 1, value: [{ inheritPermissions: inherit, token, acesDictionary: Object.fromEntries(aces) }] });
  };

  /** Identity search and the signed-in account: any valid credential. */
  const identities = (s: string[], query: URLSearchParams, who: FakeAccount | undefined): Reply | undefined => {
    const [org, second, third] = s;
    if (s.length !== 3 || second !== '_apis' || !env.repos.some((r) => r.owner === org)) return undefined;
    if (third === 'connectionData') {
      const missing = version(query, '7.1-preview');
      if (missing) return missing;
      const user =
        who === undefined
          ? { id: 'service-id', isContainer: false, properties: { Account: { $type: 'System.String', $value: 'trawl-bot@example.com' } } }
          : identity(who);
      return ok({ authenticatedUser: user, authorizedUser: user, instanceId: 'instance-id', deploymentType: 'hosted' });
    }
    if (third === 'identities') {
      const missing = version(query, '7.1');
      if (missing) return missing;
      if (query.get('searchFilter') !== 'General' || !query.has('filterValue')) return badRequest('expected searchFilter=General and filterValue');
      const text = query.get('filterValue')!.toLowerCase();
      const found = env.accounts.filter((a) => a.email.toLowerCase().startsWith(text) || a.login.startsWith(text));
      return ok({ count: found.length, value: found.map(identity) });
    }
    return undefined;
  };

  const accountOf = (h: IncomingHttpHeaders): FakeAccount | undefined => env.accounts.find((a) => h.authorization === `Bearer ${a.token}`);

  return {
    route(req: FakeRequest) {
      if (req.method !== 'GET') return undefined;
      const who = accountOf(req.headers);
      // Neither the connection's PAT nor an account's token: the listing fake refuses it.
      if (who === undefined && !basic(req.headers, undefined)) return undefined;
      const s = req.segments;
      return teams(s, req.query, who) ?? repositories(s, req.query, who) ?? accessControlLists(s, req.query, who) ?? identities(s, req.query, who);
    },
  };
}
