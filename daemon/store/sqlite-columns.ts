// Records <-> SQLite rows for the store's tables (sqlite-store.ts, sqlite-identity.ts,
// sqlite-oauth.ts, ...): what is particular to SQLite and better-sqlite3. The columns of
// each table, ids and patch merging are the same for every backend: records.ts.
//
// SQLite has no boolean or JSON type: booleans are stored as 0/1 and JSON as its text, so
// both are decoded on read and encoded on write here.

import { fromRow as recordFromRow, type Columns, type Decode, type Row } from './records.ts';

/** A stored SQLite value as the record's value: 0/1 as a boolean, JSON text parsed. */
export const sqliteValue: Decode = (kind, value) => (kind === 'bool' ? value === 1 : kind === 'json' ? JSON.parse(value as string) : value);

/** Row -> record fields: NULL becomes an absent key, 0/1 a boolean, JSON text a value. */
export function fromRow(columns: Columns, row: Row, out: Row): Row {
  return recordFromRow(columns, row, out, sqliteValue);
}

/** Record fields -> named parameters for the column list (undefined binds as NULL). */
export function toParams(columns: Columns, record: Row): Row {
  const params: Row = {};
  for (const [field, column, kind] of columns) {
    const value = record[field];
    params[column] = value === undefined || value === null ? null : kind === 'bool' ? (value ? 1 : 0) : kind === 'json' ? JSON.stringify(value) : value;
  }
  return params;
}

export const paramList = (columns: Columns): string => columns.map(([, column]) => `@${column}`).join(', ');
export const assignments = (columns: Columns): string => columns.map(([, column]) => `${column} = @${column}`).join(', ');

/**
 * The first row a write with RETURNING gives back (undefined when it changed no row). Every
 * such write goes through here, never through `get()`: SQLite commits a statement outside
 * a transaction when the statement ends, and `get()` stops at the first row and resets it,
 * which drops the commit's error. On a full disk that commit fails with SQLITE_FULL and is
 * rolled back, and `get()` still handed back the row: a key printed, a token answered 201,
 * with nothing stored. `all()` runs the statement to its end and throws what the commit says.
 */
export function writeReturning(statement: { all(...params: unknown[]): unknown[] }, ...params: unknown[]): Row | undefined {
  return statement.all(...params)[0] as Row | undefined;
}
