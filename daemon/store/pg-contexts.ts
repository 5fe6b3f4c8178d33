// Search contexts and users' default contexts in the PostgreSQL store: the tables and rules
// of sqlite-contexts.ts (same columns: pg-migrations.ts). put is one statement (an insert
// that replaces on conflict: two nodes creating one name get one row, and `xmax = 0` tells
// the inserted row from the replaced one); delete removes the context and its defaults in
// one transaction.

import type { SearchContextDefinition } from '../config/types.ts';
import type { PgDb } from './pg-db.ts';
import { pgValues } from './pg-columns.ts';
import { SEARCH_CONTEXT_COLUMNS, fromRow, type Row } from './records.ts';
import type { SearchContextRecord, SearchContextStore } from './store.ts';

export class PgContexts implements SearchContextStore {
  constructor(private readonly db: PgDb) {}

  list(): Promise<SearchContextRecord[]> {
    // name is COLLATE "C": byte order, as SQLite's.
    return this.db.run('read', async (sql) => (await sql.rows('SELECT * FROM search_contexts ORDER BY name')).map(contextFromRow));
  }

  get(name: string): Promise<SearchContextRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM search_contexts WHERE name = $1', [name]);
      return row && contextFromRow(row);
    });
  }

  put(name: string, definition: SearchContextDefinition, now: string): Promise<{ context: SearchContextRecord; created: boolean }> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row(
        `INSERT INTO search_contexts (name, definition, created_at, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
         RETURNING *, (xmax = 0) AS inserted`,
        pgValues(SEARCH_CONTEXT_COLUMNS, { name, definition, createdAt: now, updatedAt: now }),
      );
      return { context: contextFromRow(row!), created: row!.inserted === true };
    });
  }

  delete(name: string): Promise<{ clearedDefaults: number } | undefined> {
    return this.db.run('transaction', async (sql) => {
      if ((await sql.changes('DELETE FROM search_contexts WHERE name = $1', [name])) === 0) return undefined;
      return { clearedDefaults: await sql.changes('DELETE FROM default_search_contexts WHERE context = $1', [name]) };
    });
  }

  defaultOf(userId: string): Promise<string | undefined> {
    return this.db.run(
      'read',
      async (sql) => ((await sql.row('SELECT context FROM default_search_contexts WHERE user_id = $1', [userId]))?.context as string) ?? undefined,
    );
  }

  setDefault(userId: string, name: string | undefined, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      if (name === undefined) await sql.changes('DELETE FROM default_search_contexts WHERE user_id = $1', [userId]);
      else
        await sql.changes(
          `INSERT INTO default_search_contexts (user_id, context, set_at) VALUES ($1, $2, $3)
           ON CONFLICT (user_id) DO UPDATE SET context = excluded.context, set_at = excluded.set_at`,
          [userId, name, now],
        );
    });
  }

  listDefaults(): Promise<Array<{ userId: string; name: string }>> {
    return this.db.run('read', async (sql) =>
      (await sql.rows('SELECT user_id, context FROM default_search_contexts ORDER BY user_id')).map((r) => ({
        userId: r.user_id as string,
        name: r.context as string,
      })),
    );
  }
}

function contextFromRow(row: Row): SearchContextRecord {
  return fromRow(SEARCH_CONTEXT_COLUMNS, row, {}) as unknown as SearchContextRecord;
}
