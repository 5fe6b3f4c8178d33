// Code-host permissions in the SQLite store (store.ts PermissionStoreSync; the tables are
// described in permission-rows.ts). Each replacement is one transaction: a reader sees a
// member's or a repository's old rows or its new ones, never a mix.

import type BetterSqlite3 from 'better-sqlite3';
import { type ExternalAccountRecord, type PermissionStoreSync, type PermissionSyncState, StoreConflictError } from './store.ts';
import { REPOSITORY_SOURCE, accountFromRow, accountSource, accountValues, syncStateFromRow } from './permission-rows.ts';

type Row = Record<string, unknown>;

export class SqlitePermissions implements PermissionStoreSync {
  readonly #db: BetterSqlite3.Database;
  readonly #s: Record<string, BetterSqlite3.Statement>;

  constructor(db: BetterSqlite3.Database) {
    this.#db = db;
    this.#s = {
      accountOf: db.prepare('SELECT * FROM external_accounts WHERE user_id = ? AND connection = ?'),
      ownerOf: db.prepare('SELECT user_id FROM external_accounts WHERE connection = ? AND account_id = ?').pluck(),
      upsertAccount: db.prepare(
        `INSERT INTO external_accounts (user_id, connection, account_id, login, email, sealed_token, linked_by, linked_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (user_id, connection) DO UPDATE SET account_id = excluded.account_id, login = excluded.login,
           email = excluded.email, sealed_token = excluded.sealed_token, linked_by = excluded.linked_by, linked_at = excluded.linked_at
         RETURNING *`,
      ),
      deleteAccount: db.prepare('DELETE FROM external_accounts WHERE user_id = ? AND connection = ?'),
      listAccounts: db.prepare(
        `SELECT * FROM external_accounts WHERE (@userId IS NULL OR user_id = @userId) AND (@connection IS NULL OR connection = @connection)
         ORDER BY user_id, connection`,
      ),
      dropUserSource: db.prepare('DELETE FROM repo_permissions WHERE user_id = ? AND source = ?'),
      dropRepoSource: db.prepare('DELETE FROM repo_permissions WHERE repo_id = ? AND source = ?'),
      insertPermission: db.prepare('INSERT OR IGNORE INTO repo_permissions (user_id, repo_id, source) VALUES (?, ?, ?)'),
      accountSynced: db.prepare(
        `INSERT INTO account_permission_syncs (user_id, connection, synced_at, error, error_at) VALUES (?, ?, ?, NULL, NULL)
         ON CONFLICT (user_id, connection) DO UPDATE SET synced_at = excluded.synced_at, error = NULL, error_at = NULL`,
      ),
      accountFailed: db.prepare(
        `INSERT INTO account_permission_syncs (user_id, connection, error, error_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (user_id, connection) DO UPDATE SET error = excluded.error, error_at = excluded.error_at`,
      ),
      dropAccountSync: db.prepare('DELETE FROM account_permission_syncs WHERE user_id = ? AND connection = ?'),
      dropReaderRows: db.prepare(
        `DELETE FROM repo_permissions WHERE user_id = ? AND source = 'repository'
           AND repo_id IN (SELECT repo_id FROM repos WHERE connection_id = (SELECT id FROM connections WHERE name = ?))`,
      ),
      repoSynced: db.prepare(
        `INSERT INTO repo_permission_syncs (repo_id, synced_at, error, error_at) VALUES (?, ?, NULL, NULL)
         ON CONFLICT (repo_id) DO UPDATE SET synced_at = excluded.synced_at, error = NULL, error_at = NULL`,
      ),
      repoFailed: db.prepare(
        `INSERT INTO repo_permission_syncs (repo_id, error, error_at) VALUES (?, ?, ?)
         ON CONFLICT (repo_id) DO UPDATE SET error = excluded.error, error_at = excluded.error_at`,
      ),
      permitted: db.prepare('SELECT DISTINCT repo_id FROM repo_permissions WHERE user_id = ? ORDER BY repo_id').pluck(),
      accountStates: db.prepare('SELECT * FROM account_permission_syncs WHERE (@userId IS NULL OR user_id = @userId) ORDER BY user_id, connection'),
      repoStates: db.prepare('SELECT * FROM repo_permission_syncs ORDER BY repo_id'),
    };
  }

  linkAccount(account: Omit<ExternalAccountRecord, 'linkedAt'>, now: string): ExternalAccountRecord {
    return this.#db.transaction(() => {
      const owner = this.#s.ownerOf!.get(account.connection, account.accountId) as string | undefined;
      if (owner !== undefined && owner !== account.userId) {
        throw new StoreConflictError(`the account "${account.login}" on connection "${account.connection}" is linked to another member`);
      }
      const before = this.#s.accountOf!.get(account.userId, account.connection) as Row | undefined;
      if (before !== undefined && before.account_id !== account.accountId) this.#forget(account.userId, account.connection);
      return accountFromRow(this.#s.upsertAccount!.get(...accountValues(account, now)) as Row);
    })();
  }

  unlinkAccount(userId: string, connection: string): boolean {
    return this.#db.transaction(() => {
      const gone = this.#s.deleteAccount!.run(userId, connection).changes > 0;
      if (gone) {
        this.#forget(userId, connection);
        // The repository-driven rows of the connection's repositories named the member through this account.
        this.#s.dropReaderRows!.run(userId, connection);
      }
      return gone;
    })();
  }

  /** Drops what an account on `connection` was found to read, and its sync state. */
  #forget(userId: string, connection: string): void {
    this.#s.dropUserSource!.run(userId, accountSource(connection));
    this.#s.dropAccountSync!.run(userId, connection);
  }

  listAccounts(filter: { userId?: string; connection?: string } = {}): ExternalAccountRecord[] {
    return (this.#s.listAccounts!.all({ userId: filter.userId ?? null, connection: filter.connection ?? null }) as Row[]).map(accountFromRow);
  }

  replaceAccountRepos(userId: string, connection: string, repoIds: readonly number[], now: string): void {
    const source = accountSource(connection);
    this.#db.transaction(() => {
      this.#s.dropUserSource!.run(userId, source);
      for (const repoId of repoIds) this.#s.insertPermission!.run(userId, repoId, source);
      this.#s.accountSynced!.run(userId, connection, now);
    })();
  }

  replaceRepoReaders(repoId: number, userIds: readonly string[], now: string): void {
    this.#db.transaction(() => {
      this.#s.dropRepoSource!.run(repoId, REPOSITORY_SOURCE);
      for (const userId of userIds) this.#s.insertPermission!.run(userId, repoId, REPOSITORY_SOURCE);
      this.#s.repoSynced!.run(repoId, now);
    })();
  }

  recordAccountSyncError(userId: string, connection: string, error: string, now: string): void {
    this.#s.accountFailed!.run(userId, connection, error, now);
  }

  recordRepoSyncError(repoId: number, error: string, now: string): void {
    this.#s.repoFailed!.run(repoId, error, now);
  }

  permittedRepos(userId: string): number[] {
    return this.#s.permitted!.all(userId) as number[];
  }

  accountSyncStates(userId?: string): Array<PermissionSyncState & { userId: string; connection: string }> {
    return (this.#s.accountStates!.all({ userId: userId ?? null }) as Row[]).map((row) => ({
      userId: row.user_id as string,
      connection: row.connection as string,
      ...syncStateFromRow(row),
    }));
  }

  repoSyncStates(): Array<PermissionSyncState & { repoId: number }> {
    return (this.#s.repoStates!.all() as Row[]).map((row) => ({ repoId: row.repo_id as number, ...syncStateFromRow(row) }));
  }
}
