// Watches in the PostgreSQL store: the tables and rules of sqlite-watches.ts (same columns:
// pg-migrations.ts 6). A watch's creation with its baseline, and a delivery's settling with
// its watch's counter, are each one transaction.

import type { PgDb } from './pg-db.ts';
import type { IndexedRef, WatchedRepoState, WatchEventRecord, WatchMatch, WatchRecord, WatchStore, WatchStoreSync } from './store.ts';
import { eventFromRow, watchFromRow } from './watch-rows.ts';

export class PgWatches implements WatchStore {
  constructor(private readonly db: PgDb) {}

  create(watch: Parameters<WatchStoreSync['create']>[0], baseline: Parameters<WatchStoreSync['create']>[1], now: string): Promise<WatchRecord> {
    return this.db.run('transaction', async (sql) => {
      const row = await sql.row(
        `INSERT INTO watches (user_id, name, query, is_regex, case_sensitive, url, salt, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
        [watch.userId, watch.name, watch.query, watch.isRegexEnabled, watch.isCaseSensitivityEnabled, watch.url ?? null, watch.salt, now],
      );
      const made = watchFromRow(row!);
      for (const b of baseline) {
        if (b.matches.length > 0)
          await sql.changes('INSERT INTO watch_matches (watch_id, repo_id, matches) VALUES ($1, $2, $3)', [made.id, b.repoId, JSON.stringify(b.matches)]);
      }
      return made;
    });
  }

  get(id: number): Promise<WatchRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM watches WHERE id = $1', [id]);
      return row && watchFromRow(row);
    });
  }

  list(userId?: string): Promise<WatchRecord[]> {
    return this.db.run('read', async (sql) =>
      (userId === undefined
        ? await sql.rows('SELECT * FROM watches ORDER BY id')
        : await sql.rows('SELECT * FROM watches WHERE user_id = $1 ORDER BY id', [userId])
      ).map(watchFromRow),
    );
  }

  revision(): Promise<string> {
    return this.db.run('read', async (sql) => {
      const row = (await sql.row('SELECT count(*) AS n, coalesce(max(id), 0) AS top FROM watches'))!;
      return `${Number(row.n)}:${Number(row.top)}`;
    });
  }

  delete(id: number): Promise<boolean> {
    return this.db.run('write', async (sql) => (await sql.changes('DELETE FROM watches WHERE id = $1', [id])) > 0);
  }

  matchesOf(watchId: number, repoId: number): Promise<WatchMatch[]> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT matches FROM watch_matches WHERE watch_id = $1 AND repo_id = $2', [watchId, repoId]);
      return row === undefined ? [] : (JSON.parse(row.matches as string) as WatchMatch[]);
    });
  }

  setMatches(watchId: number, repoId: number, matches: WatchMatch[]): Promise<void> {
    return this.db.run('write', async (sql) => {
      if (matches.length === 0) await sql.changes('DELETE FROM watch_matches WHERE watch_id = $1 AND repo_id = $2', [watchId, repoId]);
      else
        await sql.changes(
          `INSERT INTO watch_matches (watch_id, repo_id, matches) VALUES ($1, $2, $3)
           ON CONFLICT (watch_id, repo_id) DO UPDATE SET matches = excluded.matches`,
          [watchId, repoId, JSON.stringify(matches)],
        );
    });
  }

  watchesIn(repoId: number): Promise<number[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT watch_id FROM watch_matches WHERE repo_id = $1 ORDER BY watch_id', [repoId])).map((r) => Number(r.watch_id)),
    );
  }

  repoStates(): Promise<WatchedRepoState[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT * FROM watched_repos ORDER BY repo_id')).map((r) => ({
        repoId: Number(r.repo_id),
        generation: Number(r.generation),
        refs: JSON.parse(r.refs as string) as IndexedRef[],
      })),
    );
  }

  setRepoStates(states: readonly WatchedRepoState[]): Promise<void> {
    return this.db.run('transaction', async (sql) => {
      for (const state of states)
        await sql.changes(
          `INSERT INTO watched_repos (repo_id, generation, refs) VALUES ($1, $2, $3)
           ON CONFLICT (repo_id) DO UPDATE SET generation = excluded.generation, refs = excluded.refs`,
          [state.repoId, state.generation, JSON.stringify(state.refs)],
        );
    });
  }

  deleteRepoState(repoId: number): Promise<void> {
    return this.db.run('write', async (sql) => void (await sql.changes('DELETE FROM watched_repos WHERE repo_id = $1', [repoId])));
  }

  addEvent(watchId: number, payload: string, now: string): Promise<number> {
    return this.db.run('transaction', async (sql) => {
      const row = await sql.row(
        `INSERT INTO watch_events (watch_id, payload, created_at, state, next_attempt_at)
         SELECT id, $2, $3, CASE WHEN url IS NULL THEN 'none' ELSE 'pending' END, CASE WHEN url IS NULL THEN NULL ELSE $3 END
         FROM watches WHERE id = $1 RETURNING id`,
        [watchId, payload, now],
      );
      if (row === undefined) throw new Error(`no watch ${watchId}`);
      await sql.changes('UPDATE watches SET last_changed_at = $1 WHERE id = $2', [now, watchId]);
      return Number(row.id);
    });
  }

  eventsAfter(watchId: number, afterId: number, limit: number): Promise<WatchEventRecord[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT * FROM watch_events WHERE watch_id = $1 AND id > $2 ORDER BY id LIMIT $3', [watchId, afterId, limit])).map(eventFromRow),
    );
  }

  lastEventId(): Promise<number> {
    return this.db.run('read', async (sql) => Number((await sql.row('SELECT coalesce(max(id), 0) AS top FROM watch_events'))!.top));
  }

  eventsIn(watchIds: readonly number[], afterId: number, throughId: number): Promise<WatchEventRecord[]> {
    if (watchIds.length === 0) return Promise.resolve([]);
    return this.db.run('read', async (sql) =>
      (
        await sql.rows('SELECT * FROM watch_events WHERE watch_id = ANY($1::bigint[]) AND id > $2 AND id <= $3 ORDER BY id', [watchIds, afterId, throughId])
      ).map(eventFromRow),
    );
  }

  recentEvents(watchId: number, limit: number): Promise<WatchEventRecord[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT * FROM watch_events WHERE watch_id = $1 ORDER BY id DESC LIMIT $2', [watchId, limit])).map(eventFromRow),
    );
  }

  dueEvents(now: string, limit: number): Promise<WatchEventRecord[]> {
    return this.db.run('read', async (sql) =>
      (await sql.rows("SELECT * FROM watch_events WHERE state = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2", [now, limit])).map(
        eventFromRow,
      ),
    );
  }

  settleEvent(id: number, outcome: Parameters<WatchStoreSync['settleEvent']>[1], _now: string): Promise<void> {
    return this.db.run('transaction', async (sql) => {
      const row = await sql.row('UPDATE watch_events SET state = $2, attempts = $3, next_attempt_at = $4, last_error = $5 WHERE id = $1 RETURNING watch_id', [
        id,
        outcome.state,
        outcome.attempts,
        outcome.state === 'pending' ? (outcome.nextAttemptAt ?? null) : null,
        outcome.lastError ?? null,
      ]);
      if (row === undefined) return;
      if (outcome.state === 'delivered') await sql.changes('UPDATE watches SET delivered = delivered + 1 WHERE id = $1', [row.watch_id]);
      else if (outcome.state === 'dead') await sql.changes('UPDATE watches SET dead_letters = dead_letters + 1 WHERE id = $1', [row.watch_id]);
    });
  }

  pruneEvents(before: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes("DELETE FROM watch_events WHERE created_at < $1 AND state <> 'pending'", [before]));
  }
}
