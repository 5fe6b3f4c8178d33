// Records <-> SQLite rows for the store's tables (sqlite-store.ts, sqlite-identity.ts,
// sqlite-oauth.ts), and their opaque ids: each
// table lists its columns once, as [field, column, kind] triples, and these functions map
// rows to records (NULL becomes an absent key, never null), records to statement
// parameters, and patches onto records.

import { randomBytes } from 'node:crypto';

export type Row = Record<string, unknown>;

/** An opaque, unguessable id that is never reused: prefix ("usr", "key", "oac", ...) + "_" + 12 random bytes in hex. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

// How each field maps to its column. 'text'/'int' are required (NOT NULL); 'opt*' are
// optional fields stored as NULL when undefined.
export type Kind = 'text' | 'int' | 'bool' | 'json' | 'optText' | 'optInt';

/** The fields of R that no column maps (compile-time check that a table lists every field). */
export type Unmapped<R, Columns extends ReadonlyArray<readonly [unknown, ...unknown[]]>, Id> = Exclude<
  keyof R,
  Columns[number][0] | Id
>;

export type Columns = ReadonlyArray<readonly [string, string, Kind]>;

export const isOptional = (kind: Kind): boolean => kind === 'optText' || kind === 'optInt';

/** Row -> record fields: NULL becomes an absent key, 0/1 a boolean, JSON text a value. */
export function fromRow(columns: Columns, row: Row, out: Row): Row {
  for (const [field, column, kind] of columns) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    out[field] = kind === 'bool' ? value === 1 : kind === 'json' ? JSON.parse(value as string) : value;
  }
  return out;
}

/** Record fields -> named parameters for the column list (undefined binds as NULL). */
export function toParams(columns: Columns, record: Row): Row {
  const params: Row = {};
  for (const [field, column, kind] of columns) {
    const value = record[field];
    params[column] =
      value === undefined || value === null
        ? null
        : kind === 'bool'
          ? value
            ? 1
            : 0
          : kind === 'json'
            ? JSON.stringify(value)
            : value;
  }
  return params;
}

/**
 * Merges `patch` into `base`. A key that is absent keeps the old value; an optional field
 * given as undefined (or null) is cleared, which is how callers drop a stale lastError or
 * nextAttemptAt. A required field given as undefined is left alone: it cannot be cleared,
 * and `Partial<...>` patches built by spreading often carry such keys. Keys that are not
 * fields (repoId, typos) are ignored.
 */
export function merge(columns: Columns, base: Row, patch: object): Row {
  const out: Row = { ...base };
  const given = patch as Row;
  for (const [field, , kind] of columns) {
    if (!Object.hasOwn(given, field)) continue;
    const value = given[field];
    if (value === undefined || value === null) {
      if (isOptional(kind)) delete out[field];
      continue;
    }
    out[field] = value;
  }
  return out;
}

export const columnList = (columns: Columns): string => columns.map(([, column]) => column).join(', ');
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
