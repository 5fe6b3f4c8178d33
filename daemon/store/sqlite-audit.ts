// The audit log in the SQLite store (migration 8).
//
// Table
//
//   audit_events  id INTEGER PRIMARY KEY AUTOINCREMENT (never reused, also after a prune:
//                 an id the API showed once never names another event), at (ISO 8601),
//                 action, outcome 'success'|'failure', actor_user_id, actor_kind,
//                 actor_credential_id, target_type and target_id (both or neither),
//                 source_address, details (a JSON object, or NULL).
//                 Indexed by at, and by each filter (actor user, actor credential, target,
//                 action) with at. A trigger refuses every UPDATE: events are appended,
//                 read and pruned by age (DELETE), never changed.
//
// No foreign keys: an event outlives what it names (a pruned OAuth grant, a client removed
// as never used), and the log is read as it was written.

import type BetterSqlite3 from 'better-sqlite3';
import type { AuditEventRecord, AuditQuery, AuditStoreSync, NewAuditEvent } from './store.ts';
import { sqliteValue, writeReturning } from './sqlite-columns.ts';
import { auditEventColumns, auditEventFromRow, auditFilters, type Row } from './records.ts';

export class SqliteAudit implements AuditStoreSync {
  readonly #insert: BetterSqlite3.Statement;
  readonly #page: BetterSqlite3.Statement;
  readonly #count: BetterSqlite3.Statement;
  readonly #prune: BetterSqlite3.Statement;
  readonly #listTx: BetterSqlite3.Transaction<(params: Row) => { events: AuditEventRecord[]; total: number }>;

  constructor(db: BetterSqlite3.Database) {
    this.#insert = db.prepare(
      `INSERT INTO audit_events (at, action, outcome, actor_user_id, actor_kind, actor_credential_id, target_type, target_id, source_address, details)
       VALUES (@at, @action, @outcome, @actorUserId, @actorKind, @actorCredentialId, @targetType, @targetId, @sourceAddress, @details) RETURNING *`,
    );
    // One statement for every combination of filters; a prefix is compared with substr, not
    // LIKE, so that "_" in an action name is not a wildcard.
    const where = `WHERE (@actor IS NULL OR actor_user_id = @actor OR actor_credential_id = @actor)
         AND (@action IS NULL OR action = @action)
         AND (@prefix IS NULL OR substr(action, 1, length(@prefix)) = @prefix)
         AND (@target IS NULL OR target_id = @target)
         AND (@since IS NULL OR at >= @since)
         AND (@until IS NULL OR at <= @until)`;
    this.#page = db.prepare(`SELECT * FROM audit_events ${where} ORDER BY at DESC, id DESC LIMIT @limit OFFSET @offset`);
    this.#count = db.prepare(`SELECT count(*) FROM audit_events ${where}`).pluck();
    this.#prune = db.prepare('DELETE FROM audit_events WHERE at < ?');
    // The page and its total from one snapshot (a deferred, read-only transaction).
    this.#listTx = db.transaction((params: Row) => {
      const { offset: _o, limit: _l, ...filters } = params;
      return { events: (this.#page.all(params) as Row[]).map(eventFromRow), total: this.#count.get(filters) as number };
    });
  }

  append(event: NewAuditEvent): AuditEventRecord {
    return eventFromRow(writeReturning(this.#insert, auditEventColumns(event)) as Row);
  }

  list(query: AuditQuery): { events: AuditEventRecord[]; total: number } {
    return this.#listTx({ ...auditFilters(query), offset: query.offset, limit: query.limit });
  }

  prune(before: string): number {
    return this.#prune.run(before).changes;
  }
}

const eventFromRow = (row: Row): AuditEventRecord => auditEventFromRow(row, sqliteValue);
