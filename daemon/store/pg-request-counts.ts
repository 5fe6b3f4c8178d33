// The rate limiter's request counters in the PostgreSQL store: the table of
// sqlite-request-counts.ts (request_counts: user_id, day, count >= 1, PRIMARY KEY (user_id,
// day)), shared by every node of a cluster.
//
// Exactness: one upsert statement counts a request, and its conflict branch only fires
// while count < limit. PostgreSQL locks the conflicting row and evaluates that condition on
// its latest committed version (a concurrent first insert is waited for, then treated as
// the conflict), so of any number of concurrent calls from any number of nodes, exactly
// `limit` are counted a day: two cannot both read 99 and both write 100.

import type { PgDb, Sql } from './pg-db.ts';
import type { RequestCountStore } from './store.ts';

export class PgRequestCounts implements RequestCountStore {
  constructor(private readonly db: PgDb) {}

  countRequest(userId: string, day: string, limit: number): Promise<{ count: number; counted: boolean }> {
    return this.db.run('write', async (sql) => {
      // The insert branch would count the first request whatever the limit: a limit of 0
      // (a user cut off) never reaches it.
      if (limit >= 1) {
        const row = await sql.row(
          `INSERT INTO request_counts (user_id, day, count) VALUES ($1, $2, 1)
           ON CONFLICT (user_id, day) DO UPDATE SET count = request_counts.count + 1 WHERE request_counts.count < $3
           RETURNING count`,
          [userId, day, limit],
        );
        // No row back: the conflict branch's WHERE was false, the limit was reached.
        if (row !== undefined) return { count: row.count as number, counted: true };
      }
      return { count: await readCount(sql, userId, day), counted: false };
    });
  }

  requestCount(userId: string, day: string): Promise<number> {
    return this.db.run('read', (sql) => readCount(sql, userId, day));
  }

  pruneRequestCounts(beforeDay: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes('DELETE FROM request_counts WHERE day < $1', [beforeDay]));
  }
}

async function readCount(sql: Sql, userId: string, day: string): Promise<number> {
  return ((await sql.row('SELECT count FROM request_counts WHERE user_id = $1 AND day = $2', [userId, day]))?.count as number | undefined) ?? 0;
}
