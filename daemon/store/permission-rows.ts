// Rows of the permission tables (migration 11 in SQLite, 2 in PostgreSQL) and the records
// they hold, for both backends: sqlite-permissions.ts and pg-permissions.ts.
//
//   external_accounts          (user_id, connection) -> account_id, login, email,
//                              sealed_token, linked_by, linked_at; (connection, account_id)
//                              unique: a host account belongs to one member.
//   repo_permissions           (user_id, repo_id, source): the member may read the
//                              repository, says `source`: 'repository' (the repository's
//                              readers, repository-driven) or 'account:<connection>' (what
//                              the member's account on that connection can read).
//   account_permission_syncs   (user_id, connection) -> synced_at, error, error_at
//   repo_permission_syncs      repo_id -> synced_at, error, error_at

import type { ExternalAccountRecord, PermissionSyncState } from './store.ts';

type Row = Record<string, unknown>;

/** The source of a member's account-driven rows on one connection. */
export const accountSource = (connection: string): string => `account:${connection}`;
/** The source of a repository's readers. */
export const REPOSITORY_SOURCE = 'repository';

export function accountFromRow(row: Row): ExternalAccountRecord {
  const out: ExternalAccountRecord = {
    userId: row.user_id as string,
    connection: row.connection as string,
    accountId: row.account_id as string,
    login: row.login as string,
    linkedBy: row.linked_by as ExternalAccountRecord['linkedBy'],
    linkedAt: row.linked_at as string,
  };
  if (row.email !== null && row.email !== undefined) out.email = row.email as string;
  if (row.sealed_token !== null && row.sealed_token !== undefined) out.sealedToken = row.sealed_token as string;
  return out;
}

/** The columns of a link, in the order of the INSERT statements of both backends. */
export function accountValues(a: Omit<ExternalAccountRecord, 'linkedAt'>, now: string): unknown[] {
  return [a.userId, a.connection, a.accountId, a.login, a.email ?? null, a.sealedToken ?? null, a.linkedBy, now];
}

export function syncStateFromRow(row: Row): PermissionSyncState {
  const out: PermissionSyncState = {};
  if (row.synced_at !== null && row.synced_at !== undefined) out.syncedAt = row.synced_at as string;
  if (row.error !== null && row.error !== undefined) out.error = row.error as string;
  if (row.error_at !== null && row.error_at !== undefined) out.errorAt = row.error_at as string;
  return out;
}
