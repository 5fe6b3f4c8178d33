// The rate limiter's request counters in the SQLite store (migration 5).
//
// Table
//
//   request_counts  user_id TEXT, day TEXT (YYYY-MM-DD, UTC), count INTEGER >= 1,
//                   PRIMARY KEY (user_id, day), WITHOUT ROWID: one row per user per day
//                   with at least one counted request. Rows of past days are pruned by the
//                   limiter (ratelimit/daily-limiter.ts) once a day.
//
// Exactness: the count is raised by one upsert statement whose conflict branch only fires
// while count < limit. A statement is its own transaction and holds the database's write
// lock from start to end, so two processes cannot both read 99 and both write 100: the
// second waits (busy_timeout) and then sees 100. No read-then-write in JavaScript, hence no
// IMMEDIATE transaction is needed either.

import type BetterSqlite3 from 'better-sqlite3';
import type { RequestCountStoreSync } from './store.ts';
import { writeReturning } from './sqlite-columns.ts';

export class SqliteRequestCounts implements RequestCountStoreSync {
  readonly #increment: BetterSqlite3.Statement;
  readonly #read: BetterSqlite3.Statement;
  readonly #prune: BetterSqlite3.Statement;

  constructor(db: BetterSqlite3.Database) {
    this.#increment = db.prepare(
      `INSERT INTO request_counts (user_id, day, count) VALUES (?, ?, 1)
       ON CONFLICT (user_id, day) DO UPDATE SET count = count + 1 WHERE count < ?
       RETURNING count`,
    );
    this.#read = db.prepare('SELECT count FROM request_counts WHERE user_id = ? AND day = ?').pluck();
    this.#prune = db.prepare('DELETE FROM request_counts WHERE day < ?');
  }

  countRequest(userId: string, day: string, limit: number): { count: number; counted: boolean } {
    // The insert branch would count the first request whatever the limit: a limit of 0
    // (a user cut off) never reaches it.
    if (limit >= 1) {
      const row = writeReturning(this.#increment, userId, day, limit) as { count: number } | undefined;
      // No row back: the conflict branch's WHERE was false, the limit was reached.
      if (row !== undefined) return { count: row.count, counted: true };
    }
    return { count: this.requestCount(userId, day), counted: false };
  }

  requestCount(userId: string, day: string): number {
    return (this.#read.get(userId, day) as number | undefined) ?? 0;
  }

  pruneRequestCounts(beforeDay: string): number {
    return this.#prune.run(beforeDay).changes;
  }
}
