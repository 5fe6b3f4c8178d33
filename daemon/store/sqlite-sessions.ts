// The web UI's browser sessions in the SQLite store (migration 8; migration 11 added
// sessions of single sign-on).
//
//   browser_sessions  id TEXT PRIMARY KEY ("ses_" + 24 hex, named in the signed session
//                     token: auth/browser-session.ts), user_id -> users(id), api_key_id ->
//                     api_keys(id) (the key it was signed in with) or identity_id ->
//                     sign_in_identities(id) (the single sign-on account it was signed in
//                     through: sqlite-sign-in.ts), exactly one of the two, user_agent (cut
//                     to 256 characters), created_at, expires_at (created_at + 12 hours),
//                     last_used_at, ended_at (signed out, revoked, or ended with its key
//                     or by "sign out everywhere": sqlite-identity.ts).
//
// No token is stored: the id alone is worth nothing without the server secret's
// signature over it. A session is live while ended_at is NULL, expires_at is later than
// now and, when it was signed in with a key, that key is not revoked.

import type BetterSqlite3 from 'better-sqlite3';
import { fromRow, writeReturning } from './sqlite-columns.ts';
import { SESSION_COLUMNS, newId, storedUserAgent, type Row } from './records.ts';
import type { BrowserSessionRecord, NewBrowserSession, SessionStoreSync } from './store.ts';

export class SqliteSessions implements SessionStoreSync {
  readonly #insert: BetterSqlite3.Statement;
  readonly #byId: BetterSqlite3.Statement;
  readonly #touch: BetterSqlite3.Statement;
  readonly #end: BetterSqlite3.Statement;
  readonly #live: BetterSqlite3.Statement;
  readonly #prune: BetterSqlite3.Statement;

  constructor(db: BetterSqlite3.Database) {
    this.#insert = db.prepare(
      `INSERT INTO browser_sessions (id, user_id, api_key_id, identity_id, user_agent, created_at, expires_at)
       VALUES (@id, @userId, @apiKeyId, @identityId, @userAgent, @now, @expiresAt) RETURNING *`,
    );
    this.#byId = db.prepare('SELECT * FROM browser_sessions WHERE id = ?');
    this.#touch = db.prepare('UPDATE browser_sessions SET last_used_at = @now WHERE id = @id');
    this.#end = db.prepare('UPDATE browser_sessions SET ended_at = coalesce(ended_at, @now) WHERE id = @id RETURNING *');
    this.#live = db.prepare(
      `SELECT s.* FROM browser_sessions s LEFT JOIN api_keys k ON k.id = s.api_key_id
       WHERE s.user_id = @userId AND s.ended_at IS NULL AND s.expires_at > @now AND (s.api_key_id IS NULL OR k.revoked_at IS NULL)
       ORDER BY s.created_at DESC, s.id`,
    );
    this.#prune = db.prepare('DELETE FROM browser_sessions WHERE expires_at < @before OR ended_at < @before');
  }

  createSession(session: NewBrowserSession, now: string): BrowserSessionRecord {
    const userAgent = storedUserAgent(session.userAgent);
    return sessionFromRow(
      writeReturning(this.#insert, {
        id: newId('ses'),
        userId: session.userId,
        apiKeyId: session.apiKeyId ?? null,
        identityId: session.identityId ?? null,
        userAgent,
        expiresAt: session.expiresAt,
        now,
      }) as Row,
    );
  }

  getSession(id: string): BrowserSessionRecord | undefined {
    const row = this.#byId.get(id) as Row | undefined;
    return row && sessionFromRow(row);
  }

  touchSession(id: string, now: string): void {
    this.#touch.run({ id, now });
  }

  endSession(id: string, now: string): BrowserSessionRecord | undefined {
    const row = writeReturning(this.#end, { id, now }) as Row | undefined;
    return row && sessionFromRow(row);
  }

  listLiveSessions(userId: string, now: string): BrowserSessionRecord[] {
    return (this.#live.all({ userId, now }) as Row[]).map(sessionFromRow);
  }

  pruneSessions(before: string): number {
    return this.#prune.run({ before }).changes;
  }
}

const sessionFromRow = (row: Row) => fromRow(SESSION_COLUMNS, row, {}) as unknown as BrowserSessionRecord;
