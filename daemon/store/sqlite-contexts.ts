// Search contexts made through the API, and users' default contexts, in the SQLite store
// (migration 12).
//
//   search_contexts          name TEXT PRIMARY KEY (config/contexts.ts CONTEXT_NAME),
//                            definition (JSON: config/types.ts SearchContextDefinition, its
//                            lists complete), created_at, updated_at (the last replacement).
//   default_search_contexts  user_id TEXT PRIMARY KEY -> users(id) ON DELETE CASCADE,
//                            context (a name: of a stored context or of the configuration
//                            file's, which are not stored, hence no foreign key), set_at.
//
// Deleting a context deletes the defaults that name it in the same transaction, so that a
// member's searches do not fail on a context that is gone. A context of the configuration
// file that leaves the file leaves its defaults behind; the daemon ignores a default that
// names no context (http/contexts.ts).

import type BetterSqlite3 from 'better-sqlite3';
import { fromRow, toParams, writeReturning } from './sqlite-columns.ts';
import { SEARCH_CONTEXT_COLUMNS, type Row } from './records.ts';
import type { SearchContextDefinition } from '../config/types.ts';
import type { SearchContextRecord, SearchContextStoreSync } from './store.ts';

export class SqliteContexts implements SearchContextStoreSync {
  readonly #list: BetterSqlite3.Statement;
  readonly #byName: BetterSqlite3.Statement;
  readonly #insert: BetterSqlite3.Statement;
  readonly #replace: BetterSqlite3.Statement;
  readonly #delete: BetterSqlite3.Statement;
  readonly #clearDefaults: BetterSqlite3.Statement;
  readonly #defaultOf: BetterSqlite3.Statement;
  readonly #setDefault: BetterSqlite3.Statement;
  readonly #clearDefault: BetterSqlite3.Statement;
  readonly #listDefaults: BetterSqlite3.Statement;
  readonly #putTx: BetterSqlite3.Transaction<
    (name: string, definition: SearchContextDefinition, now: string) => { context: SearchContextRecord; created: boolean }
  >;
  readonly #deleteTx: BetterSqlite3.Transaction<(name: string) => { clearedDefaults: number } | undefined>;

  constructor(db: BetterSqlite3.Database) {
    this.#list = db.prepare('SELECT * FROM search_contexts ORDER BY name');
    this.#byName = db.prepare('SELECT * FROM search_contexts WHERE name = ?');
    this.#insert = db.prepare(
      'INSERT INTO search_contexts (name, definition, created_at, updated_at) VALUES (@name, @definition, @created_at, @updated_at) RETURNING *',
    );
    this.#replace = db.prepare('UPDATE search_contexts SET definition = @definition, updated_at = @updated_at WHERE name = @name RETURNING *');
    this.#delete = db.prepare('DELETE FROM search_contexts WHERE name = ?');
    this.#clearDefaults = db.prepare('DELETE FROM default_search_contexts WHERE context = ?');
    this.#defaultOf = db.prepare('SELECT context FROM default_search_contexts WHERE user_id = ?').pluck();
    this.#setDefault = db.prepare(
      `INSERT INTO default_search_contexts (user_id, context, set_at) VALUES (@userId, @name, @now)
       ON CONFLICT (user_id) DO UPDATE SET context = excluded.context, set_at = excluded.set_at`,
    );
    this.#clearDefault = db.prepare('DELETE FROM default_search_contexts WHERE user_id = ?');
    this.#listDefaults = db.prepare('SELECT user_id AS userId, context AS name FROM default_search_contexts ORDER BY user_id');
    this.#putTx = db.transaction((name, definition, now) => {
      const params = toParams(SEARCH_CONTEXT_COLUMNS, { name, definition, createdAt: now, updatedAt: now });
      const known = this.#byName.get(name) !== undefined;
      const row = writeReturning(known ? this.#replace : this.#insert, params) as Row;
      return { context: contextFromRow(row), created: !known };
    });
    this.#deleteTx = db.transaction((name) => {
      if (this.#delete.run(name).changes === 0) return undefined;
      return { clearedDefaults: this.#clearDefaults.run(name).changes };
    });
  }

  list(): SearchContextRecord[] {
    return (this.#list.all() as Row[]).map(contextFromRow);
  }

  get(name: string): SearchContextRecord | undefined {
    const row = this.#byName.get(name) as Row | undefined;
    return row && contextFromRow(row);
  }

  put(name: string, definition: SearchContextDefinition, now: string): { context: SearchContextRecord; created: boolean } {
    // IMMEDIATE: the read decides between insert and replace (sqlite-store.ts, "Concurrency").
    return this.#putTx.immediate(name, definition, now);
  }

  delete(name: string): { clearedDefaults: number } | undefined {
    return this.#deleteTx.immediate(name);
  }

  defaultOf(userId: string): string | undefined {
    return (this.#defaultOf.get(userId) as string | undefined) ?? undefined;
  }

  setDefault(userId: string, name: string | undefined, now: string): void {
    if (name === undefined) this.#clearDefault.run(userId);
    else this.#setDefault.run({ userId, name, now });
  }

  listDefaults(): Array<{ userId: string; name: string }> {
    return this.#listDefaults.all() as Array<{ userId: string; name: string }>;
  }
}

function contextFromRow(row: Row): SearchContextRecord {
  return fromRow(SEARCH_CONTEXT_COLUMNS, row, {}) as unknown as SearchContextRecord;
}
