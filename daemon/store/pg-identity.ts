// Users, API keys and scoped access tokens in the PostgreSQL store, the installed license
// and the shared secrets: the tables and rules of sqlite-identity.ts (same columns:
// pg-migrations.ts), with PostgreSQL's way of holding them across processes:
//   - a user patch reads the row FOR UPDATE before writing what records.ts's
//     patchedUserColumns makes of it;
//   - revokeApiKey and endUserCredentials are one transaction: the key's row first (which
//     a refresh token's rotation locks FOR SHARE, pg-oauth.ts), then what it opened;
//   - a taken email (unique on lower(email), ASCII case folded) is a StoreConflictError;
//   - sharedSecret inserts unless the name exists, then reads what landed: of concurrent
//     callers, the first insert wins and every one reads it.

import type { PgDb, Sql } from './pg-db.ts';
import { UNIQUE_VIOLATION, pgErrorCode } from './pg-db.ts';
import { API_KEY_COLUMNS, SCOPED_TOKEN_COLUMNS, USER_COLUMNS, fromRow, newId, patchedUserColumns, type Row } from './records.ts';
import {
  StoreConflictError,
  type ApiKeyRecord,
  type EndedCredentials,
  type IdentityStore,
  type IdentityStoreSync,
  type LicenseStore,
  type Role,
  type ScopedTokenRecord,
  type SecretStore,
  type UserRecord,
} from './store.ts';

/** Ends the live credentials whose `column` is `owner` (sqlite-identity.ts says which are live). */
async function endAll(sql: Sql, column: 'api_key_id' | 'user_id', owner: string, now: string): Promise<EndedCredentials> {
  return {
    scopedTokens: await sql.changes(`UPDATE scoped_tokens SET revoked_at = $2 WHERE ${column} = $1 AND revoked_at IS NULL AND expires_at > $2`, [owner, now]),
    // A grant with no usable token left can mint nothing: it is not live, and left alone.
    oauthGrants: await sql.changes(
      `UPDATE oauth_grants SET revoked_at = $2 WHERE ${column} = $1 AND revoked_at IS NULL
         AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > $2)`,
      [owner, now],
    ),
    sessions: await sql.changes(`UPDATE browser_sessions SET ended_at = $2 WHERE ${column} = $1 AND ended_at IS NULL AND expires_at > $2`, [owner, now]),
  };
}

export class PgIdentity implements IdentityStore, LicenseStore, SecretStore {
  constructor(private readonly db: PgDb) {}

  createUser(user: { email: string; name: string; role: Role }, now: string): Promise<UserRecord> {
    return this.db.run('write', async (sql) => {
      try {
        const row = await sql.row('INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING *', [
          newId('usr'),
          user.email,
          user.name,
          user.role,
          now,
        ]);
        return userFromRow(row!);
      } catch (err) {
        if (pgErrorCode(err) === UNIQUE_VIOLATION) throw new StoreConflictError(`a user with the email ${user.email} exists`);
        throw err;
      }
    });
  }

  getUser(id: string): Promise<UserRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM users WHERE id = $1', [id]);
      return row && userFromRow(row);
    });
  }

  getUserByEmail(email: string): Promise<UserRecord | undefined> {
    // lower() of a "C" value folds ASCII only, like the unique index on lower(email).
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM users WHERE lower(email) = lower($1::text COLLATE "C")', [email]);
      return row && userFromRow(row);
    });
  }

  listUsers(): Promise<UserRecord[]> {
    // By email as SQLite's NOCASE column orders it: ASCII case folded, then bytes.
    return this.db.run('read', async (sql) => (await sql.rows('SELECT * FROM users ORDER BY lower(email)')).map(userFromRow));
  }

  updateUser(id: string, patch: Parameters<IdentityStoreSync['updateUser']>[1], now: string): Promise<UserRecord> {
    return this.db.run('transaction', async (sql) => {
      const row = await sql.row('SELECT * FROM users WHERE id = $1 FOR UPDATE', [id]);
      if (row === undefined) throw new Error(`updateUser: no user with id ${id}`);
      const c = patchedUserColumns(row, patch as Row, now);
      const written = await sql.row(
        `UPDATE users SET name = $2, role = $3, suspended_at = $4, last_activity_at = $5, daily_limit = $6, updated_at = $7 WHERE id = $1 RETURNING *`,
        [c.id, c.name, c.role, c.suspended_at, c.last_activity_at, c.daily_limit, c.updated_at],
      );
      return userFromRow(written!);
    });
  }

  createApiKey(key: { userId: string; name: string; hash: string; hint: string }, now: string): Promise<ApiKeyRecord> {
    return this.db.run('write', async (sql) =>
      keyFromRow(
        (await sql.row('INSERT INTO api_keys (id, user_id, name, hash, hint, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *', [
          newId('key'),
          key.userId,
          key.name,
          key.hash,
          key.hint,
          now,
        ]))!,
      ),
    );
  }

  findApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM api_keys WHERE hash = $1', [hash]);
      return row && keyFromRow(row);
    });
  }

  getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM api_keys WHERE id = $1', [id]);
      return row && keyFromRow(row);
    });
  }

  listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    return this.db.run('read', async (sql) => (await sql.rows('SELECT * FROM api_keys WHERE user_id = $1 ORDER BY created_at, id', [userId])).map(keyFromRow));
  }

  revokeApiKey(id: string, now: string): Promise<{ key: ApiKeyRecord; ended: EndedCredentials } | undefined> {
    return this.db.run('transaction', async (sql) => {
      const row = await sql.row('UPDATE api_keys SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING *', [id, now]);
      return row && { key: keyFromRow(row), ended: await endAll(sql, 'api_key_id', id, now) };
    });
  }

  endUserCredentials(userId: string, now: string): Promise<EndedCredentials> {
    return this.db.run('transaction', (sql) => endAll(sql, 'user_id', userId, now));
  }

  touchApiKey(id: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, now]);
    });
  }

  createScopedToken(token: { userId: string; apiKeyId: string; hash: string; repoIds: number[]; expiresAt: string }, now: string): Promise<ScopedTokenRecord> {
    return this.db.run('write', async (sql) =>
      tokenFromRow(
        (await sql.row(
          'INSERT INTO scoped_tokens (id, user_id, api_key_id, hash, repo_ids, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *',
          [newId('sat'), token.userId, token.apiKeyId, token.hash, JSON.stringify(token.repoIds), now, token.expiresAt],
        ))!,
      ),
    );
  }

  findScopedToken(hash: string): Promise<ScopedTokenRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM scoped_tokens WHERE hash = $1', [hash]);
      return row && tokenFromRow(row);
    });
  }

  getScopedToken(id: string): Promise<ScopedTokenRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM scoped_tokens WHERE id = $1', [id]);
      return row && tokenFromRow(row);
    });
  }

  revokeScopedToken(id: string, now: string): Promise<ScopedTokenRecord | undefined> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row('UPDATE scoped_tokens SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING *', [id, now]);
      return row && tokenFromRow(row);
    });
  }

  listLiveScopedTokens(userId: string, now: string): Promise<ScopedTokenRecord[]> {
    return this.db.run('read', async (sql) =>
      (
        await sql.rows(
          `SELECT t.* FROM scoped_tokens t JOIN api_keys k ON k.id = t.api_key_id
           WHERE t.user_id = $1 AND t.revoked_at IS NULL AND t.expires_at > $2 AND k.revoked_at IS NULL
           ORDER BY t.created_at DESC, t.id`,
          [userId, now],
        )
      ).map(tokenFromRow),
    );
  }

  getLicense(): Promise<string | undefined> {
    return this.db.run('read', async (sql) => ((await sql.row('SELECT text FROM license WHERE id = 1'))?.text as string | undefined) ?? undefined);
  }

  putLicense(text: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes(
        'INSERT INTO license (id, text, installed_at) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET text = excluded.text, installed_at = excluded.installed_at',
        [text, new Date().toISOString()],
      );
    });
  }

  sharedSecret(name: string, candidate: string): Promise<string> {
    return this.db.run('write', async (sql) => {
      // Two statements: a concurrent insert that won is committed by the time the INSERT
      // gives up on it (ON CONFLICT waits for it), and the SELECT's fresh snapshot sees it.
      const inserted = await sql.row('INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING value', [
        name,
        candidate,
        new Date().toISOString(),
      ]);
      if (inserted !== undefined) return inserted.value as string;
      return (await sql.row('SELECT value FROM secrets WHERE name = $1', [name]))!.value as string;
    });
  }
}

const userFromRow = (row: Row) => fromRow(USER_COLUMNS, row, {}) as unknown as UserRecord;
const keyFromRow = (row: Row) => fromRow(API_KEY_COLUMNS, row, {}) as unknown as ApiKeyRecord;
const tokenFromRow = (row: Row) => fromRow(SCOPED_TOKEN_COLUMNS, row, {}) as unknown as ScopedTokenRecord;
