// Records -> PostgreSQL statement parameters for the store's tables (pg-store.ts and its
// siblings): what is particular to PostgreSQL and the pg driver. The columns of each table
// are records.ts's, and rows become records with its fromRow as they come: the driver
// hands back booleans as booleans, `json` columns parsed, and BIGINT as numbers (pg-db.ts),
// so nothing needs decoding.
//
// On the way in, a JSON value is given as its text: the driver would turn a JS array into
// a PostgreSQL array literal, which is no JSON.

import type { Columns, Row } from './records.ts';

/** Record fields -> positional parameters in the columns' order (undefined and null bind as NULL). */
export function pgValues(columns: Columns, record: Row): unknown[] {
  return columns.map(([field, , kind]) => {
    const value = record[field];
    if (value === undefined || value === null) return null;
    return kind === 'json' ? JSON.stringify(value) : value;
  });
}

/** `$from, $from+1, ...`, one per column. */
export const pgPlaceholders = (columns: Columns, from = 1): string => columns.map((_, i) => `$${from + i}`).join(', ');

/** `column = $from, ...`, one per column. */
export const pgAssignments = (columns: Columns, from = 1): string => columns.map(([, column], i) => `${column} = $${from + i}`).join(', ');
