// The audit log in the PostgreSQL store: the table of sqlite-audit.ts (same columns:
// pg-migrations.ts). Ids come from an identity column's sequence, which never goes back: an
// id is not reused after a prune. A trigger refuses UPDATE: events are appended, read and
// pruned by age, never changed.

import type { PgDb } from './pg-db.ts';
import { auditEventColumns, auditEventFromRow, auditFilters, type Row } from './records.ts';
import type { AuditEventRecord, AuditQuery, AuditStore, NewAuditEvent } from './store.ts';

/**
 * Every combination of filters in one WHERE ($1..$6: actor, action, prefix, target, since,
 * until). A prefix is compared with left(), not LIKE, so that "_" in an action name is no
 * wildcard.
 */
const WHERE = `WHERE ($1::text IS NULL OR actor_user_id = $1 OR actor_credential_id = $1)
  AND ($2::text IS NULL OR action = $2)
  AND ($3::text IS NULL OR left(action, length($3)) = $3)
  AND ($4::text IS NULL OR target_id = $4)
  AND ($5::text IS NULL OR at >= $5)
  AND ($6::text IS NULL OR at <= $6)`;

export class PgAudit implements AuditStore {
  constructor(private readonly db: PgDb) {}

  append(event: NewAuditEvent): Promise<AuditEventRecord> {
    const c = auditEventColumns(event);
    return this.db.run('write', async (sql) =>
      auditEventFromRow(
        (await sql.row(
          `INSERT INTO audit_events (at, action, outcome, actor_user_id, actor_kind, actor_credential_id, target_type, target_id, source_address, details)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
          [c.at, c.action, c.outcome, c.actorUserId, c.actorKind, c.actorCredentialId, c.targetType, c.targetId, c.sourceAddress, c.details],
        ))!,
      ),
    );
  }

  list(query: AuditQuery): Promise<{ events: AuditEventRecord[]; total: number }> {
    const f = auditFilters(query);
    // The page and its total from one statement, so from one snapshot; the count's row is
    // there when the page is empty.
    return this.db.run('read', async (sql) => {
      const rows = await sql.rows(
        `SELECT t.total, p.* FROM (SELECT count(*) AS total FROM audit_events ${WHERE}) t
         LEFT JOIN LATERAL (SELECT * FROM audit_events ${WHERE} ORDER BY at DESC, id DESC LIMIT $7 OFFSET $8) p ON true
         ORDER BY p.at DESC, p.id DESC`,
        [f.actor, f.action, f.prefix, f.target, f.since, f.until, query.limit, query.offset],
      );
      return { events: rows.filter((row) => row.id !== null).map((row: Row) => auditEventFromRow(row)), total: rows[0]!.total as number };
    });
  }

  prune(before: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes('DELETE FROM audit_events WHERE at < $1', [before]));
  }
}
