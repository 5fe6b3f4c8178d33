// The rows of the watch tables as records, for both stores (the columns are the same:
// migrations.ts 15, pg-migrations.ts 6; SQLite's booleans are 0 and 1, PostgreSQL's true
// and false, its BIGINTs strings).

import type { WatchEventRecord, WatchRecord } from './store.ts';

export type Row = Record<string, unknown>;

/** A watches row as a record. */
export function watchFromRow(r: Row): WatchRecord {
  const w: WatchRecord = {
    id: Number(r.id),
    userId: r.user_id as string,
    name: r.name as string,
    query: r.query as string,
    isRegexEnabled: r.is_regex === 1 || r.is_regex === true,
    isCaseSensitivityEnabled: r.case_sensitive === 1 || r.case_sensitive === true,
    salt: r.salt as string,
    createdAt: r.created_at as string,
    delivered: Number(r.delivered),
    deadLetters: Number(r.dead_letters),
  };
  if (r.url !== null && r.url !== undefined) w.url = r.url as string;
  if (r.last_changed_at !== null && r.last_changed_at !== undefined) w.lastChangedAt = r.last_changed_at as string;
  return w;
}

/** A watch_events row as a record. */
export function eventFromRow(r: Row): WatchEventRecord {
  const e: WatchEventRecord = {
    id: Number(r.id),
    watchId: Number(r.watch_id),
    payload: r.payload as string,
    createdAt: r.created_at as string,
    state: r.state as WatchEventRecord['state'],
    attempts: Number(r.attempts),
  };
  if (r.next_attempt_at !== null && r.next_attempt_at !== undefined) e.nextAttemptAt = r.next_attempt_at as string;
  if (r.last_error !== null && r.last_error !== undefined) e.lastError = r.last_error as string;
  return e;
}
