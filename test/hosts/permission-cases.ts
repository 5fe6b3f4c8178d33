// Each host type's case of the shared permission suite (permissions.test.ts): its
// standard connection (the one hosts.test.ts lists: acme, jdoe and other/tool), how it
// names repositories and accounts, and what its permission API can answer at all.

import type { Connection } from '../../daemon/config/types.ts';
import type { FakeAccount, FakeKind, FakeRepo } from './fake-hosts.ts';
import { USER } from './fake-hosts.ts';
import { azureId } from './fake-permissions/azuredevops.ts';
import { cloudUuid } from './fake-permissions/bitbucketCloud.ts';

export const TOKEN_ENV = 'TRAWL_TEST_PERMISSION_TOKEN';

const REVISIONS = { branches: [], tags: [] };
const NO_EXCLUDES = { forks: false, archived: false, repos: [] };
const token = { env: TOKEN_ENV };
const slash = (r: FakeRepo): string => `${r.owner}/${r.name}`;
/** host/path: the repoName of hosts whose displayName is owner/name (the host part of the url, lower-case, no port). */
const revisions = REVISIONS;
const exclude = NO_EXCLUDES;
const hostOf = (url: string): string => new URL(url).hostname;
const hostSlash = (url: string, r: FakeRepo): string => `${new URL(url).hostname}/${slash(r)}`;

export interface PermissionCase {
  kind: FakeKind;
  /** Repositories the fake serves beyond DATASET. */
  extra?: FakeRepo[];
  connection(url: string): Connection;
  /** HostRepo.repoName of a repository of the data set, as the host's listing names it. */
  repoName(url: string, r: FakeRepo): string;
  /** HostRepo.displayName: what readersOf takes. */
  display(r: FakeRepo): string;
  /** HostAccount.id of an account: the host's own form of FakeAccount.id. */
  accountId(a: FakeAccount): string;
  /** HostAccount.login of an account where the host's login is not FakeAccount.login (Azure DevOps: the sign-in address). */
  login?(a: FakeAccount): string;
  /** The host lists a repository's readers (repository-driven). */
  readersOf: boolean;
  /** Its readers' answers carry their verified emails. */
  readerEmails: boolean;
  /** An account's own token answers what it can read, and names its account. */
  ownToken: boolean;
  /** The connection's token can ask as an account (administrator impersonation). */
  actAs: boolean;
  /**
   * Whether the host lets the account with this login read the repository, where that is
   * not the data set's plain rule (a public one: everyone; a private one: its readers).
   * Azure DevOps: visibility and readers are the project's.
   */
  reads?(r: FakeRepo, login: string, all: readonly FakeRepo[]): boolean;
}

/** The data set's rule: everyone reads a public repository, its readers a private one. */
export function readsByDefault(r: FakeRepo, login: string): boolean {
  return r.private !== true || (r.readers?.includes(login) ?? false);
}

/** Filled per host type as each gets its permission API. */
export const PERMISSION_CASES: PermissionCase[] = [
  {
    kind: 'github',
    connection: (url) => ({ type: 'github', url, token, revisions: REVISIONS, exclude: NO_EXCLUDES, orgs: ['acme'], users: ['jdoe'], repos: ['other/tool'] }),
    repoName: hostSlash,
    display: slash,
    accountId: (a) => String(a.id),
    readersOf: true,
    readerEmails: false,
    ownToken: true,
    actAs: false,
  },
  {
    kind: 'gitlab',
    // A private project in a subgroup: its path is one URL-encoded segment of the members' URL.
    extra: [{ owner: 'acme/platform', name: 'vault', group: 'platform', private: true, readers: ['carol', 'erin'] }],
    connection: (url) => ({
      type: 'gitlab',
      url,
      token,
      revisions: REVISIONS,
      exclude: NO_EXCLUDES,
      groups: ['acme'],
      users: ['jdoe'],
      projects: ['other/tool'],
    }),
    repoName: hostSlash,
    display: slash,
    accountId: (a) => String(a.id),
    readersOf: true,
    readerEmails: true,
    ownToken: true,
    actAs: true,
  },
  {
    kind: 'gitea',
    connection: (url) => ({ type: 'gitea', url, token, revisions, exclude, orgs: ['acme'], users: ['jdoe'], repos: ['other/tool'] }),
    repoName: (url, r) => `${hostOf(url)}/${slash(r)}`,
    display: slash,
    accountId: (a) => String(a.id),
    readersOf: true,
    // Gitea answers a private address with a placeholder unless asked by a site administrator.
    readerEmails: false,
    ownToken: true,
    actAs: true,
  },
  {
    kind: 'gerrit',
    // As in hosts.test.ts: a nested project, and a hidden one the globs select.
    extra: [
      { owner: 'acme/platform', name: 'deep', group: 'platform' },
      { owner: 'acme', name: 'secret', group: 'x', hidden: true },
    ],
    connection: (url) => ({ type: 'gerrit', url, token, user: USER, revisions, exclude, projects: ['acme/**', 'jdoe/*', 'other/tool'] }),
    repoName: (url, r) => `${hostOf(url)}/${slash(r)}`,
    display: slash,
    accountId: (a) => String(a.id),
    readersOf: false,
    readerEmails: false,
    // An account's own HTTP password does answer what it reads, but names no account: the
    // token Gerrit links is "login:HTTP password", which FakeAccount.token is not
    // (permissions-gerrit.test.ts asks both ways).
    ownToken: false,
    actAs: true,
  },
  {
    kind: 'bitbucketCloud',
    connection: (url) => ({
      type: 'bitbucket',
      deploymentType: 'cloud',
      url,
      token: { env: TOKEN_ENV },
      user: USER,
      revisions: { branches: [], tags: [] },
      exclude: { forks: false, archived: false, repos: [] },
      workspaces: ['acme'],
      projects: ['jdoe/home'],
      repos: ['other/tool'],
    }),
    repoName: (_url, r) => `127.0.0.1/${r.owner}/${r.name}`,
    display: (r) => `${r.owner}/${r.name}`,
    accountId: cloudUuid,
    readersOf: true,
    readerEmails: false,
    ownToken: true,
    actAs: false,
  },
  {
    kind: 'bitbucketServer',
    connection: (url) => ({
      type: 'bitbucket',
      deploymentType: 'server',
      url,
      token: { env: TOKEN_ENV },
      revisions: { branches: [], tags: [] },
      exclude: { forks: false, archived: false, repos: [] },
      workspaces: [],
      projects: ['ACME', 'JDOE'],
      repos: ['OTHER/tool'],
    }),
    repoName: (_url, r) => `127.0.0.1/${r.owner.toUpperCase()}/${r.name}`,
    display: (r) => `${r.owner.toUpperCase()}/${r.name}`,
    accountId: (a) => String(a.id),
    readersOf: true,
    readerEmails: false,
    ownToken: true,
    actAs: false,
  },
  {
    kind: 'azuredevops',
    connection: (url) => ({
      type: 'azuredevops',
      url,
      token: { env: TOKEN_ENV },
      revisions: { branches: [], tags: [] },
      exclude: { forks: false, archived: false, repos: [] },
      orgs: ['acme'],
      projects: ['jdoe/home'],
      repos: ['other/tools/tool'],
    }),
    repoName: (_url, r) => `127.0.0.1/${r.owner}/${r.group}/${r.name}`,
    display: (r) => `${r.owner}/${r.group}/${r.name}`,
    accountId: azureId,
    login: (a) => a.email,
    readersOf: true,
    readerEmails: true,
    ownToken: true,
    actAs: false,
    // A project is private when any of its repositories is; its readers read all of them.
    reads: (r, login, all) => {
      const project = all.filter((x) => x.owner === r.owner && x.group === r.group);
      return project.every((x) => x.private !== true) || project.some((x) => x.private === true && x.readers?.includes(login) === true);
    },
  },
];
