// Users, API keys and scoped access tokens in the SQLite store (migrations 2 and 4), and
// the installed license (migration 3: table `license`, one row, id 1, the file's text and
// when it was installed), and shared secrets (migration 10: table `secrets`, name PRIMARY
// KEY, value, created_at; written once).
//
//   users     id TEXT PRIMARY KEY ("usr_" + 24 hex), email UNIQUE COLLATE NOCASE, name,
//             role 'owner'|'member', suspended_at, created_at, updated_at,
//             last_activity_at, daily_limit (NULL: the configured default).
//   api_keys  id TEXT PRIMARY KEY ("key_" + 24 hex), user_id -> users(id) ON DELETE
//             CASCADE, name, hash UNIQUE (HMAC-SHA256 of the key under the server secret,
//             hex: auth/credentials.ts), hint (the key's first 12 characters),
//             created_at, last_used_at, revoked_at.
//   scoped_tokens  id TEXT PRIMARY KEY ("sat_" + 24 hex), user_id -> users(id) ON DELETE
//             CASCADE, hash UNIQUE (like api_keys.hash), repo_ids (JSON array of
//             integers), created_at, expires_at (created_at + 1 hour), revoked_at,
//             api_key_id -> api_keys(id) (migration 8: the key that created it; NULL for
//             tokens of before, which that migration revoked).
//
// The key itself is never stored, so a copy of the database gives no usable key. Same
// column conventions as sqlite-store.ts: NULL comes back as an absent key.
//
// Revoking a key ends what it opened (revokeApiKey), and "sign out everywhere" ends what a
// user opened (endUserCredentials): the live rows of scoped_tokens, oauth_grants
// (sqlite-oauth.ts) and browser_sessions (sqlite-sessions.ts), in one IMMEDIATE
// transaction with the key's own row, so that no listing ever shows a revoked key's
// credential as live. (Each use also checks the key itself: auth/origin.ts.)

import type BetterSqlite3 from 'better-sqlite3';
import { fromRow, writeReturning } from './sqlite-columns.ts';
import { API_KEY_COLUMNS, SCOPED_TOKEN_COLUMNS, USER_COLUMNS, newId, patchedUserColumns, type Row } from './records.ts';
import {
  StoreConflictError,
  type ApiKeyRecord,
  type EndedCredentials,
  type IdentityStoreSync,
  type Role,
  type ScopedTokenRecord,
  type UserRecord,
} from './store.ts';

/** The statements that end one owner's live credentials: by the key that opened them, or by user. */
interface Enders {
  scopedTokens: BetterSqlite3.Statement;
  oauthGrants: BetterSqlite3.Statement;
  sessions: BetterSqlite3.Statement;
}

/** Prepares the Enders whose rows have `column` = @owner. */
function enders(db: BetterSqlite3.Database, column: 'api_key_id' | 'user_id'): Enders {
  return {
    scopedTokens: db.prepare(`UPDATE scoped_tokens SET revoked_at = @now WHERE ${column} = @owner AND revoked_at IS NULL AND expires_at > @now`),
    // A grant with no usable token left can mint nothing: it is not live, and left alone.
    oauthGrants: db.prepare(
      `UPDATE oauth_grants SET revoked_at = @now WHERE ${column} = @owner AND revoked_at IS NULL
         AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > @now)`,
    ),
    sessions: db.prepare(`UPDATE browser_sessions SET ended_at = @now WHERE ${column} = @owner AND ended_at IS NULL AND expires_at > @now`),
  };
}

function endAll(e: Enders, owner: string, now: string): EndedCredentials {
  return {
    scopedTokens: e.scopedTokens.run({ owner, now }).changes,
    oauthGrants: e.oauthGrants.run({ owner, now }).changes,
    sessions: e.sessions.run({ owner, now }).changes,
  };
}

export class SqliteIdentity implements IdentityStoreSync {
  readonly #userById: BetterSqlite3.Statement;
  readonly #userByEmail: BetterSqlite3.Statement;
  readonly #listUsers: BetterSqlite3.Statement;
  readonly #insertUser: BetterSqlite3.Statement;
  readonly #writeUser: BetterSqlite3.Statement;
  readonly #insertKey: BetterSqlite3.Statement;
  readonly #keyByHash: BetterSqlite3.Statement;
  readonly #keyById: BetterSqlite3.Statement;
  readonly #keysOfUser: BetterSqlite3.Statement;
  readonly #revokeKey: BetterSqlite3.Statement;
  readonly #touchKey: BetterSqlite3.Statement;
  readonly #insertToken: BetterSqlite3.Statement;
  readonly #tokenByHash: BetterSqlite3.Statement;
  readonly #tokenById: BetterSqlite3.Statement;
  readonly #revokeToken: BetterSqlite3.Statement;
  readonly #liveTokens: BetterSqlite3.Statement;
  readonly #revokeKeyTx: BetterSqlite3.Transaction<(id: string, now: string) => { key: ApiKeyRecord; ended: EndedCredentials } | undefined>;
  readonly #endUserTx: BetterSqlite3.Transaction<(userId: string, now: string) => EndedCredentials>;
  readonly #getLicense: BetterSqlite3.Statement;
  readonly #putLicense: BetterSqlite3.Statement;
  readonly #addSecret: BetterSqlite3.Statement;
  readonly #getSecret: BetterSqlite3.Statement;
  readonly #updateUserTx: BetterSqlite3.Transaction<(id: string, patch: Row, now: string) => UserRecord>;

  constructor(db: BetterSqlite3.Database) {
    this.#userById = db.prepare('SELECT * FROM users WHERE id = ?');
    this.#userByEmail = db.prepare('SELECT * FROM users WHERE email = ?');
    this.#listUsers = db.prepare('SELECT * FROM users ORDER BY email');
    this.#insertUser = db.prepare(
      `INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES (@id, @email, @name, @role, @now, @now) RETURNING *`,
    );
    this.#writeUser = db.prepare(
      `UPDATE users SET name = @name, role = @role, suspended_at = @suspended_at, last_activity_at = @last_activity_at,
       daily_limit = @daily_limit, updated_at = @updated_at WHERE id = @id RETURNING *`,
    );
    this.#insertKey = db.prepare(
      `INSERT INTO api_keys (id, user_id, name, hash, hint, created_at) VALUES (@id, @userId, @name, @hash, @hint, @now) RETURNING *`,
    );
    this.#keyByHash = db.prepare('SELECT * FROM api_keys WHERE hash = ?');
    this.#keyById = db.prepare('SELECT * FROM api_keys WHERE id = ?');
    this.#keysOfUser = db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at, id');
    this.#revokeKey = db.prepare('UPDATE api_keys SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id RETURNING *');
    this.#touchKey = db.prepare('UPDATE api_keys SET last_used_at = @now WHERE id = @id');
    this.#insertToken = db.prepare(
      `INSERT INTO scoped_tokens (id, user_id, api_key_id, hash, repo_ids, created_at, expires_at) VALUES (@id, @userId, @apiKeyId, @hash, @repoIds, @now, @expiresAt) RETURNING *`,
    );
    this.#tokenByHash = db.prepare('SELECT * FROM scoped_tokens WHERE hash = ?');
    this.#tokenById = db.prepare('SELECT * FROM scoped_tokens WHERE id = ?');
    this.#revokeToken = db.prepare('UPDATE scoped_tokens SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id RETURNING *');
    this.#liveTokens = db.prepare(
      `SELECT t.* FROM scoped_tokens t JOIN api_keys k ON k.id = t.api_key_id
       WHERE t.user_id = @userId AND t.revoked_at IS NULL AND t.expires_at > @now AND k.revoked_at IS NULL
       ORDER BY t.created_at DESC, t.id`,
    );
    const byKey = enders(db, 'api_key_id');
    const byUser = enders(db, 'user_id');
    this.#revokeKeyTx = db.transaction((id: string, now: string) => {
      const row = writeReturning(this.#revokeKey, { id, now }) as Row | undefined;
      return row && { key: keyFromRow(row), ended: endAll(byKey, id, now) };
    });
    this.#endUserTx = db.transaction((userId: string, now: string) => endAll(byUser, userId, now));
    this.#getLicense = db.prepare('SELECT text FROM license WHERE id = 1').pluck();
    this.#putLicense = db.prepare(
      'INSERT INTO license (id, text, installed_at) VALUES (1, @text, @now) ON CONFLICT (id) DO UPDATE SET text = excluded.text, installed_at = excluded.installed_at',
    );
    this.#addSecret = db.prepare('INSERT INTO secrets (name, value, created_at) VALUES (@name, @value, @now) ON CONFLICT (name) DO NOTHING');
    this.#getSecret = db.prepare('SELECT value FROM secrets WHERE name = ?').pluck();
    this.#updateUserTx = db.transaction((id: string, patch: Row, now: string): UserRecord => {
      const row = this.#userById.get(id) as Row | undefined;
      if (row === undefined) throw new Error(`updateUser: no user with id ${id}`);
      return userFromRow(writeReturning(this.#writeUser, patchedUserColumns(row, patch, now)) as Row);
    });
  }

  createUser(user: { email: string; name: string; role: Role }, now: string): UserRecord {
    try {
      return userFromRow(writeReturning(this.#insertUser, { id: newId('usr'), email: user.email, name: user.name, role: user.role, now }) as Row);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new StoreConflictError(`a user with the email ${user.email} exists`);
      throw err;
    }
  }

  getUser(id: string): UserRecord | undefined {
    const row = this.#userById.get(id) as Row | undefined;
    return row && userFromRow(row);
  }

  getUserByEmail(email: string): UserRecord | undefined {
    const row = this.#userByEmail.get(email) as Row | undefined;
    return row && userFromRow(row);
  }

  listUsers(): UserRecord[] {
    return (this.#listUsers.all() as Row[]).map(userFromRow);
  }

  updateUser(id: string, patch: Parameters<IdentityStoreSync['updateUser']>[1], now: string): UserRecord {
    return this.#updateUserTx.immediate(id, patch as Row, now);
  }

  createApiKey(key: { userId: string; name: string; hash: string; hint: string }, now: string): ApiKeyRecord {
    return keyFromRow(writeReturning(this.#insertKey, { id: newId('key'), ...key, now }) as Row);
  }

  findApiKey(hash: string): ApiKeyRecord | undefined {
    const row = this.#keyByHash.get(hash) as Row | undefined;
    return row && keyFromRow(row);
  }

  getApiKey(id: string): ApiKeyRecord | undefined {
    const row = this.#keyById.get(id) as Row | undefined;
    return row && keyFromRow(row);
  }

  listApiKeys(userId: string): ApiKeyRecord[] {
    return (this.#keysOfUser.all(userId) as Row[]).map(keyFromRow);
  }

  revokeApiKey(id: string, now: string): { key: ApiKeyRecord; ended: EndedCredentials } | undefined {
    return this.#revokeKeyTx.immediate(id, now);
  }

  endUserCredentials(userId: string, now: string): EndedCredentials {
    return this.#endUserTx.immediate(userId, now);
  }

  touchApiKey(id: string, now: string): void {
    this.#touchKey.run({ id, now });
  }

  createScopedToken(token: { userId: string; apiKeyId: string; hash: string; repoIds: number[]; expiresAt: string }, now: string): ScopedTokenRecord {
    return tokenFromRow(
      writeReturning(this.#insertToken, {
        id: newId('sat'),
        userId: token.userId,
        apiKeyId: token.apiKeyId,
        hash: token.hash,
        repoIds: JSON.stringify(token.repoIds),
        expiresAt: token.expiresAt,
        now,
      }) as Row,
    );
  }

  findScopedToken(hash: string): ScopedTokenRecord | undefined {
    const row = this.#tokenByHash.get(hash) as Row | undefined;
    return row && tokenFromRow(row);
  }

  getScopedToken(id: string): ScopedTokenRecord | undefined {
    const row = this.#tokenById.get(id) as Row | undefined;
    return row && tokenFromRow(row);
  }

  revokeScopedToken(id: string, now: string): ScopedTokenRecord | undefined {
    const row = writeReturning(this.#revokeToken, { id, now }) as Row | undefined;
    return row && tokenFromRow(row);
  }

  listLiveScopedTokens(userId: string, now: string): ScopedTokenRecord[] {
    return (this.#liveTokens.all({ userId, now }) as Row[]).map(tokenFromRow);
  }

  getLicense(): string | undefined {
    return (this.#getLicense.get() as string | undefined) ?? undefined;
  }

  sharedSecret(name: string, candidate: string): string {
    this.#addSecret.run({ name, value: candidate, now: new Date().toISOString() });
    return this.#getSecret.get(name) as string;
  }

  putLicense(text: string): void {
    this.#putLicense.run({ text, now: new Date().toISOString() });
  }
}

const userFromRow = (row: Row) => fromRow(USER_COLUMNS, row, {}) as unknown as UserRecord;
const keyFromRow = (row: Row) => fromRow(API_KEY_COLUMNS, row, {}) as unknown as ApiKeyRecord;
const tokenFromRow = (row: Row) => fromRow(SCOPED_TOKEN_COLUMNS, row, {}) as unknown as ScopedTokenRecord;
