// The web UI's browser sessions in the PostgreSQL store: the table and rules of
// sqlite-sessions.ts (same columns: pg-migrations.ts). Every call is one statement.

import type { PgDb } from './pg-db.ts';
import { SESSION_COLUMNS, fromRow, newId, storedUserAgent, type Row } from './records.ts';
import type { BrowserSessionRecord, NewBrowserSession, SessionStore } from './store.ts';

export class PgSessions implements SessionStore {
  constructor(private readonly db: PgDb) {}

  createSession(session: NewBrowserSession, now: string): Promise<BrowserSessionRecord> {
    return this.db.run('write', async (sql) =>
      sessionFromRow(
        (await sql.row(
          `INSERT INTO browser_sessions (id, user_id, api_key_id, identity_id, user_agent, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
          [newId('ses'), session.userId, session.apiKeyId ?? null, session.identityId ?? null, storedUserAgent(session.userAgent), now, session.expiresAt],
        ))!,
      ),
    );
  }

  getSession(id: string): Promise<BrowserSessionRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM browser_sessions WHERE id = $1', [id]);
      return row && sessionFromRow(row);
    });
  }

  touchSession(id: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes('UPDATE browser_sessions SET last_used_at = $2 WHERE id = $1', [id, now]);
    });
  }

  endSession(id: string, now: string): Promise<BrowserSessionRecord | undefined> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row('UPDATE browser_sessions SET ended_at = coalesce(ended_at, $2) WHERE id = $1 RETURNING *', [id, now]);
      return row && sessionFromRow(row);
    });
  }

  listLiveSessions(userId: string, now: string): Promise<BrowserSessionRecord[]> {
    return this.db.run('read', async (sql) =>
      (
        await sql.rows(
          `SELECT s.* FROM browser_sessions s LEFT JOIN api_keys k ON k.id = s.api_key_id
           WHERE s.user_id = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND (s.api_key_id IS NULL OR k.revoked_at IS NULL)
           ORDER BY s.created_at DESC, s.id`,
          [userId, now],
        )
      ).map(sessionFromRow),
    );
  }

  pruneSessions(before: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes('DELETE FROM browser_sessions WHERE expires_at < $1 OR ended_at < $1', [before]));
  }
}

const sessionFromRow = (row: Row) => fromRow(SESSION_COLUMNS, row, {}) as unknown as BrowserSessionRecord;
