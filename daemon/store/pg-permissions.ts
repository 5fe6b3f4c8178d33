// Code-host permissions in the PostgreSQL store: the tables of sqlite-permissions.ts
// (permission-rows.ts describes them; pg-migrations.ts creates them). A replacement is one
// transaction, its rows inserted with one statement over an array.

import type { PgDb, Sql } from './pg-db.ts';
import { UNIQUE_VIOLATION, pgErrorCode } from './pg-db.ts';
import { REPOSITORY_SOURCE, accountFromRow, accountSource, accountValues, syncStateFromRow } from './permission-rows.ts';
import { type ExternalAccountRecord, type PermissionStore, type PermissionSyncState, StoreConflictError } from './store.ts';

export class PgPermissions implements PermissionStore {
  constructor(private readonly db: PgDb) {}

  linkAccount(account: Omit<ExternalAccountRecord, 'linkedAt'>, now: string): Promise<ExternalAccountRecord> {
    const conflict = () => new StoreConflictError(`the account "${account.login}" on connection "${account.connection}" is linked to another member`);
    return this.db
      .run('transaction', async (sql) => {
        const owner = await sql.row('SELECT user_id FROM external_accounts WHERE connection = $1 AND account_id = $2 FOR UPDATE', [
          account.connection,
          account.accountId,
        ]);
        if (owner !== undefined && owner.user_id !== account.userId) throw conflict();
        const before = await sql.row('SELECT account_id FROM external_accounts WHERE user_id = $1 AND connection = $2 FOR UPDATE', [
          account.userId,
          account.connection,
        ]);
        if (before !== undefined && before.account_id !== account.accountId) await forget(sql, account.userId, account.connection);
        const row = await sql.row(
          `INSERT INTO external_accounts (user_id, connection, account_id, login, email, sealed_token, linked_by, linked_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (user_id, connection) DO UPDATE SET account_id = excluded.account_id, login = excluded.login,
             email = excluded.email, sealed_token = excluded.sealed_token, linked_by = excluded.linked_by, linked_at = excluded.linked_at
           RETURNING *`,
          accountValues(account, now),
        );
        return accountFromRow(row!);
      })
      .catch((err: unknown) => {
        // Another member linked the same account between the check and the insert.
        throw pgErrorCode(err) === UNIQUE_VIOLATION ? conflict() : err;
      });
  }

  unlinkAccount(userId: string, connection: string): Promise<boolean> {
    return this.db.run('transaction', async (sql) => {
      const gone = (await sql.changes('DELETE FROM external_accounts WHERE user_id = $1 AND connection = $2', [userId, connection])) > 0;
      if (gone) {
        await forget(sql, userId, connection);
        // The repository-driven rows of the connection's repositories named the member through this account.
        await sql.changes(
          `DELETE FROM repo_permissions WHERE user_id = $1 AND source = $2
             AND repo_id IN (SELECT repo_id FROM repos WHERE connection_id = (SELECT id FROM connections WHERE name = $3))`,
          [userId, REPOSITORY_SOURCE, connection],
        );
      }
      return gone;
    });
  }

  listAccounts(filter: { userId?: string; connection?: string } = {}): Promise<ExternalAccountRecord[]> {
    return this.db.run('read', async (sql) =>
      (
        await sql.rows(
          `SELECT * FROM external_accounts WHERE ($1::text IS NULL OR user_id = $1) AND ($2::text IS NULL OR connection = $2)
           ORDER BY user_id, connection`,
          [filter.userId ?? null, filter.connection ?? null],
        )
      ).map(accountFromRow),
    );
  }

  replaceAccountRepos(userId: string, connection: string, repoIds: readonly number[], now: string): Promise<void> {
    const source = accountSource(connection);
    return this.db.run('transaction', async (sql) => {
      await sql.changes('DELETE FROM repo_permissions WHERE user_id = $1 AND source = $2', [userId, source]);
      await sql.changes('INSERT INTO repo_permissions (user_id, repo_id, source) SELECT $1, r, $3 FROM unnest($2::bigint[]) AS r ON CONFLICT DO NOTHING', [
        userId,
        [...repoIds],
        source,
      ]);
      await sql.changes(
        `INSERT INTO account_permission_syncs (user_id, connection, synced_at, error, error_at) VALUES ($1, $2, $3, NULL, NULL)
         ON CONFLICT (user_id, connection) DO UPDATE SET synced_at = excluded.synced_at, error = NULL, error_at = NULL`,
        [userId, connection, now],
      );
    });
  }

  replaceRepoReaders(repoId: number, userIds: readonly string[], now: string): Promise<void> {
    return this.db.run('transaction', async (sql) => {
      await sql.changes('DELETE FROM repo_permissions WHERE repo_id = $1 AND source = $2', [repoId, REPOSITORY_SOURCE]);
      await sql.changes('INSERT INTO repo_permissions (user_id, repo_id, source) SELECT u, $2, $3 FROM unnest($1::text[]) AS u ON CONFLICT DO NOTHING', [
        [...userIds],
        repoId,
        REPOSITORY_SOURCE,
      ]);
      await sql.changes(
        `INSERT INTO repo_permission_syncs (repo_id, synced_at, error, error_at) VALUES ($1, $2, NULL, NULL)
         ON CONFLICT (repo_id) DO UPDATE SET synced_at = excluded.synced_at, error = NULL, error_at = NULL`,
        [repoId, now],
      );
    });
  }

  recordAccountSyncError(userId: string, connection: string, error: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes(
        `INSERT INTO account_permission_syncs (user_id, connection, error, error_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (user_id, connection) DO UPDATE SET error = excluded.error, error_at = excluded.error_at`,
        [userId, connection, error, now],
      );
    });
  }

  recordRepoSyncError(repoId: number, error: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes(
        `INSERT INTO repo_permission_syncs (repo_id, error, error_at) VALUES ($1, $2, $3)
         ON CONFLICT (repo_id) DO UPDATE SET error = excluded.error, error_at = excluded.error_at`,
        [repoId, error, now],
      );
    });
  }

  permittedRepos(userId: string): Promise<number[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT DISTINCT repo_id FROM repo_permissions WHERE user_id = $1 ORDER BY repo_id', [userId])).map((r) => Number(r.repo_id)),
    );
  }

  accountSyncStates(userId?: string): Promise<Array<PermissionSyncState & { userId: string; connection: string }>> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT * FROM account_permission_syncs WHERE ($1::text IS NULL OR user_id = $1) ORDER BY user_id, connection', [userId ?? null])).map(
        (row) => ({ userId: row.user_id as string, connection: row.connection as string, ...syncStateFromRow(row) }),
      ),
    );
  }

  repoSyncStates(): Promise<Array<PermissionSyncState & { repoId: number }>> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT * FROM repo_permission_syncs ORDER BY repo_id')).map((row) => ({ repoId: Number(row.repo_id), ...syncStateFromRow(row) })),
    );
  }
}

/** Drops what an account on `connection` was found to read, and its sync state. */
async function forget(sql: Sql, userId: string, connection: string): Promise<void> {
  await sql.changes('DELETE FROM repo_permissions WHERE user_id = $1 AND source = $2', [userId, accountSource(connection)]);
  await sql.changes('DELETE FROM account_permission_syncs WHERE user_id = $1 AND connection = $2', [userId, connection]);
}
