// Each host type's case of the shared permission suite (permissions.test.ts): its
// standard connection (the one hosts.test.ts lists: acme, jdoe and other/tool), how it
// names repositories and accounts, and what its permission API can answer at all.

import type { Connection } from '../../daemon/config/types.ts';
import type { FakeAccount, FakeKind, FakeRepo } from './fake-hosts.ts';

export const TOKEN_ENV = 'TRAWL_TEST_PERMISSION_TOKEN';

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
}

/** Filled per host type as each gets its permission API. */
export const PERMISSION_CASES: PermissionCase[] = [];
