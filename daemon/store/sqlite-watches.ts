// Watches in the SQLite store (migration 15).
//
//   watches        id (never reused), user_id -> users ON DELETE CASCADE, name, query and its
//                  two flags, url (absent: no POST), salt (of the signing secret), created_at,
//                  last_changed_at, and the delivery counters delivered and dead_letters.
//   watch_matches  (watch_id, repo_id) -> matches: JSON [{path, line, text}], the watch's
//                  matches in that repository as last recorded; no row: none.
//   watch_events   id (ascending: the order of SSE replay), watch_id, payload (the JSON
//                  delivered), created_at, state ('none' without a url; else 'pending' until
//                  'delivered' or 'dead'), attempts, next_attempt_at, last_error.
//   watched_repos  repo_id -> the index generation and refs (JSON) the watches last saw.
//
// A watch's delete takes its matches and events with it (the foreign keys cascade).

import type BetterSqlite3 from 'better-sqlite3';
import type { IndexedRef, WatchedRepoState, WatchEventRecord, WatchMatch, WatchRecord, WatchStoreSync } from './store.ts';
import { eventFromRow, watchFromRow, type Row } from './watch-rows.ts';

export class SqliteWatches implements WatchStoreSync {
  readonly #s: Record<string, BetterSqlite3.Statement>;
  readonly #createTx: BetterSqlite3.Transaction<
    (watch: Parameters<WatchStoreSync['create']>[0], baseline: Parameters<WatchStoreSync['create']>[1], now: string) => WatchRecord
  >;
  readonly #settleTx: BetterSqlite3.Transaction<(id: number, outcome: Parameters<WatchStoreSync['settleEvent']>[1], now: string) => void>;
  readonly #repoStatesTx: BetterSqlite3.Transaction<(states: readonly WatchedRepoState[]) => void>;

  constructor(db: BetterSqlite3.Database) {
    this.#s = {
      insert: db.prepare(
        `INSERT INTO watches (user_id, name, query, is_regex, case_sensitive, url, salt, created_at)
         VALUES (@userId, @name, @query, @isRegex, @caseSensitive, @url, @salt, @now) RETURNING *`,
      ),
      get: db.prepare('SELECT * FROM watches WHERE id = ?'),
      listAll: db.prepare('SELECT * FROM watches ORDER BY id'),
      listOf: db.prepare('SELECT * FROM watches WHERE user_id = ? ORDER BY id'),
      revision: db.prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS top FROM watches'),
      delete: db.prepare('DELETE FROM watches WHERE id = ?'),
      matchesOf: db.prepare('SELECT matches FROM watch_matches WHERE watch_id = ? AND repo_id = ?').pluck(),
      putMatches: db.prepare(
        `INSERT INTO watch_matches (watch_id, repo_id, matches) VALUES (?, ?, ?)
         ON CONFLICT (watch_id, repo_id) DO UPDATE SET matches = excluded.matches`,
      ),
      dropMatches: db.prepare('DELETE FROM watch_matches WHERE watch_id = ? AND repo_id = ?'),
      watchesIn: db.prepare('SELECT watch_id FROM watch_matches WHERE repo_id = ? ORDER BY watch_id').pluck(),
      repoStates: db.prepare('SELECT * FROM watched_repos ORDER BY repo_id'),
      setRepoState: db.prepare(
        `INSERT INTO watched_repos (repo_id, generation, refs) VALUES (?, ?, ?)
         ON CONFLICT (repo_id) DO UPDATE SET generation = excluded.generation, refs = excluded.refs`,
      ),
      deleteRepoState: db.prepare('DELETE FROM watched_repos WHERE repo_id = ?'),
      addEvent: db.prepare(
        `INSERT INTO watch_events (watch_id, payload, created_at, state, next_attempt_at)
         SELECT id, @payload, @now, CASE WHEN url IS NULL THEN 'none' ELSE 'pending' END, CASE WHEN url IS NULL THEN NULL ELSE @now END
         FROM watches WHERE id = @watchId RETURNING id`,
      ),
      changed: db.prepare('UPDATE watches SET last_changed_at = ? WHERE id = ?'),
      eventsAfter: db.prepare('SELECT * FROM watch_events WHERE watch_id = ? AND id > ? ORDER BY id LIMIT ?'),
      lastEventId: db.prepare('SELECT coalesce(max(id), 0) FROM watch_events').pluck(),
      eventsIn: db.prepare('SELECT * FROM watch_events WHERE watch_id IN (SELECT value FROM json_each(?)) AND id > ? AND id <= ? ORDER BY id'),
      recent: db.prepare('SELECT * FROM watch_events WHERE watch_id = ? ORDER BY id DESC LIMIT ?'),
      due: db.prepare("SELECT * FROM watch_events WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"),
      settle: db.prepare(
        'UPDATE watch_events SET state = @state, attempts = @attempts, next_attempt_at = @nextAttemptAt, last_error = @lastError WHERE id = @id RETURNING watch_id',
      ),
      countDelivered: db.prepare('UPDATE watches SET delivered = delivered + 1 WHERE id = ?'),
      countDead: db.prepare('UPDATE watches SET dead_letters = dead_letters + 1 WHERE id = ?'),
      prune: db.prepare("DELETE FROM watch_events WHERE created_at < ? AND state <> 'pending'"),
    };
    this.#repoStatesTx = db.transaction((states) => {
      for (const st of states) this.#s.setRepoState!.run(st.repoId, st.generation, JSON.stringify(st.refs));
    });
    this.#createTx = db.transaction((watch, baseline, now) => {
      const row = this.#s.insert!.get({
        userId: watch.userId,
        name: watch.name,
        query: watch.query,
        isRegex: watch.isRegexEnabled ? 1 : 0,
        caseSensitive: watch.isCaseSensitivityEnabled ? 1 : 0,
        url: watch.url ?? null,
        salt: watch.salt,
        now,
      }) as Row;
      const made = watchFromRow(row);
      for (const b of baseline) if (b.matches.length > 0) this.#s.putMatches!.run(made.id, b.repoId, JSON.stringify(b.matches));
      return made;
    });
    this.#settleTx = db.transaction((id, outcome, _now) => {
      const watchId = this.#s.settle!.pluck().get({
        id,
        state: outcome.state,
        attempts: outcome.attempts,
        nextAttemptAt: outcome.state === 'pending' ? (outcome.nextAttemptAt ?? null) : null,
        lastError: outcome.lastError ?? null,
      }) as number | undefined;
      if (watchId === undefined) return;
      if (outcome.state === 'delivered') this.#s.countDelivered!.run(watchId);
      else if (outcome.state === 'dead') this.#s.countDead!.run(watchId);
    });
  }

  create(watch: Parameters<WatchStoreSync['create']>[0], baseline: Parameters<WatchStoreSync['create']>[1], now: string): WatchRecord {
    return this.#createTx.immediate(watch, baseline, now);
  }

  get(id: number): WatchRecord | undefined {
    const row = this.#s.get!.get(id) as Row | undefined;
    return row && watchFromRow(row);
  }

  list(userId?: string): WatchRecord[] {
    const rows = (userId === undefined ? this.#s.listAll!.all() : this.#s.listOf!.all(userId)) as Row[];
    return rows.map(watchFromRow);
  }

  revision(): string {
    const row = this.#s.revision!.get() as { n: number; top: number };
    return `${row.n}:${row.top}`;
  }

  delete(id: number): boolean {
    return this.#s.delete!.run(id).changes > 0;
  }

  matchesOf(watchId: number, repoId: number): WatchMatch[] {
    const text = this.#s.matchesOf!.get(watchId, repoId) as string | undefined;
    return text === undefined ? [] : (JSON.parse(text) as WatchMatch[]);
  }

  setMatches(watchId: number, repoId: number, matches: WatchMatch[]): void {
    if (matches.length === 0) this.#s.dropMatches!.run(watchId, repoId);
    else this.#s.putMatches!.run(watchId, repoId, JSON.stringify(matches));
  }

  watchesIn(repoId: number): number[] {
    return this.#s.watchesIn!.all(repoId) as number[];
  }

  repoStates(): WatchedRepoState[] {
    return (this.#s.repoStates!.all() as Row[]).map((r) => ({
      repoId: Number(r.repo_id),
      generation: Number(r.generation),
      refs: JSON.parse(r.refs as string) as IndexedRef[],
    }));
  }

  setRepoStates(states: readonly WatchedRepoState[]): void {
    this.#repoStatesTx(states);
  }

  deleteRepoState(repoId: number): void {
    this.#s.deleteRepoState!.run(repoId);
  }

  addEvent(watchId: number, payload: string, now: string): number {
    const row = this.#s.addEvent!.get({ watchId, payload, now }) as Row | undefined;
    if (row === undefined) throw new Error(`no watch ${watchId}`);
    this.#s.changed!.run(now, watchId);
    return Number(row.id);
  }

  eventsAfter(watchId: number, afterId: number, limit: number): WatchEventRecord[] {
    return (this.#s.eventsAfter!.all(watchId, afterId, limit) as Row[]).map(eventFromRow);
  }

  lastEventId(): number {
    return Number(this.#s.lastEventId!.get());
  }

  eventsIn(watchIds: readonly number[], afterId: number, throughId: number): WatchEventRecord[] {
    if (watchIds.length === 0) return [];
    return (this.#s.eventsIn!.all(JSON.stringify(watchIds), afterId, throughId) as Row[]).map(eventFromRow);
  }

  recentEvents(watchId: number, limit: number): WatchEventRecord[] {
    return (this.#s.recent!.all(watchId, limit) as Row[]).map(eventFromRow);
  }

  dueEvents(now: string, limit: number): WatchEventRecord[] {
    return (this.#s.due!.all(now, limit) as Row[]).map(eventFromRow);
  }

  settleEvent(id: number, outcome: Parameters<WatchStoreSync['settleEvent']>[1], now: string): void {
    this.#settleTx.immediate(id, outcome, now);
  }

  pruneEvents(before: string): number {
    return this.#s.prune!.run(before).changes;
  }
}
