// The PostgreSQL store's connection to its database (pg-store.ts): a pool, the schema
// brought up to date before the first statement, and how each call of the store runs.
//
// Ready: the pool connects lazily. The first call of the store connects and migrates
// (pg-migrations.ts); every call waits for that, so that an unreachable server or a bad URL
// is the error of the first call (named by its address, never its password) rather than of
// the constructor. A failed attempt is forgotten: the next call tries again (a server that
// was still starting).
//
// A call runs one of three ways (the `Mode` its implementation states):
//   'read'         one statement that changes nothing;
//   'write'        statements each atomic on its own (one INSERT ... ON CONFLICT, one
//                  conditional UPDATE ... RETURNING): PostgreSQL settles races between
//                  processes inside the statement, under row locks;
//   'transaction'  several statements that must hold together (read, decide, write): a
//                  transaction on one pooled connection, READ COMMITTED, whose reads lock
//                  what they decide on (SELECT ... FOR UPDATE) or take an advisory lock.
// Outside atomically, 'read' and 'write' statements go to any pooled connection, and a
// call that PostgreSQL ends as a deadlock or serialization failure (rolled back whole) is
// run again, a few times.
//
// atomically(fn) opens a transaction on one pooled connection; the calls made inside fn
// (AsyncLocalStorage tells them apart) run on that connection. Each runs inside a SAVEPOINT
// of its own, so that a call that fails changes nothing and leaves the transaction usable,
// as a failed statement does in SQLite; a nested atomically is a savepoint around its fn.
// A connection runs one statement at a time and savepoints nest strictly, so the calls of
// one transaction (or of one nested level) take turns (`Scope.turn`), in the order made.
// Calls from outside never join it: they use other connections, and see nothing of it
// before it commits. A call that fn left running after it ended runs outside.

import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import type { Row } from './records.ts';
import { migratePg } from './pg-migrations.ts';

/** Statements on a connection (or on the pool): rows are plain objects; NULL is null. */
export interface Sql {
  /** Every row the statement returns. */
  rows(text: string, params?: readonly unknown[]): Promise<Row[]>;
  /** The first row the statement returns; undefined when none. */
  row(text: string, params?: readonly unknown[]): Promise<Row | undefined>;
  /** How many rows the statement inserted, changed or deleted. */
  changes(text: string, params?: readonly unknown[]): Promise<number>;
}

export type Mode = 'read' | 'write' | 'transaction';

export interface PgOptions {
  /** Connections at most (default 10). */
  poolSize?: number;
}

/** PostgreSQL's error code: unique_violation. */
export const UNIQUE_VIOLATION = '23505';

export const pgErrorCode = (err: unknown): string | undefined => (err as { code?: unknown }).code as string | undefined;

/** deadlock_detected and serialization_failure: the statement or transaction was rolled back whole and may run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const ATTEMPTS = 4;

/** int8 (BIGINT, count(*)) as a JS number: ids and counts stay far below 2^53. */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`PostgreSQL returned the integer ${text}, beyond what a JS number holds exactly`);
  return n;
}

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The server and database of `url`, for messages: never the user's password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default)';
    return `PostgreSQL database "${db}" at ${u.hostname || 'localhost'}:${u.port || 5432}`;
  } catch {
    return 'PostgreSQL database (from a connection string that is not a URL)';
  }
}

function sqlOn(target: pg.Pool | pg.ClientBase): Sql {
  const run = (text: string, params?: readonly unknown[]) => target.query<Row>(text, params as unknown[] | undefined);
  return {
    rows: async (text, params) => (await run(text, params)).rows,
    row: async (text, params) => (await run(text, params)).rows[0],
    changes: async (text, params) => (await run(text, params)).rowCount ?? 0,
  };
}

/**
 * One open transaction, or one nested level (a savepoint) of it: the connection, and the
 * turns its calls take. `done` once it ended: calls still carrying it run outside.
 */
class Scope {
  done = false;
  #tail: Promise<void> = Promise.resolve();

  constructor(
    readonly client: pg.PoolClient,
    readonly savepoints: { next: number },
  ) {}

  /** Waits for the calls before this one; resolves with the function that ends this turn. */
  turn(): Promise<() => void> {
    let end!: () => void;
    const mine = new Promise<void>((resolve) => (end = resolve));
    const before = this.#tail;
    this.#tail = before.then(() => mine);
    return before.then(() => end);
  }

  /** Waits for the calls in flight, then lets no more in. */
  async end(): Promise<void> {
    const end = await this.turn();
    this.done = true;
    end();
  }

  savepoint(): string {
    return `trawl_${++this.savepoints.next}`;
  }
}

export class PgDb {
  readonly #pool: pg.Pool | undefined;
  readonly #where: string;
  readonly #broken: Error | undefined;
  #ready: Promise<void> | undefined;
  #closed = false;
  readonly #scope = new AsyncLocalStorage<Scope>();

  constructor(url: string, options: PgOptions = {}) {
    this.#where = describeUrl(url);
    try {
      this.#pool = new pg.Pool({
        connectionString: url,
        max: options.poolSize ?? 10,
        connectionTimeoutMillis: 10_000,
        types: TYPES,
        // The rules above assume READ COMMITTED, whatever the server's default (awaited
        // before the connection serves its first call).
        onConnect: async (client) => {
          await client.query("SET default_transaction_isolation TO 'read committed'");
        },
      });
      // An idle connection that the server drops (a restart) is removed from the pool and
      // replaced at the next call; without a listener the error would end the process.
      this.#pool.on('error', () => {});
    } catch (err) {
      this.#broken = new Error(`cannot use the ${this.#where}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Connects and migrates once; a failed attempt is retried by the next call. */
  ready(): Promise<void> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    if (this.#ready === undefined) {
      const attempt = this.#connect();
      this.#ready = attempt;
      attempt.catch(() => {
        if (this.#ready === attempt) this.#ready = undefined;
      });
    }
    return this.#ready;
  }

  async #connect(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool!.connect();
    } catch (err) {
      throw new Error(`cannot connect to the ${this.#where}: ${(err as Error).message}`, { cause: err });
    }
    let failed: Error | undefined;
    try {
      await migratePg(client, this.#where);
    } catch (err) {
      failed = err as Error;
      throw err;
    } finally {
      client.release(failed);
    }
  }

  /** Runs one call of the store (see the top of this file). */
  async run<T>(mode: Mode, op: (sql: Sql) => Promise<T>): Promise<T> {
    await this.ready();
    const scope = this.#scope.getStore();
    if (scope !== undefined && !scope.done) return this.#inScope(scope, mode, op);
    return this.#outside(mode, op);
  }

  async #outside<T>(mode: Mode, op: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return mode === 'transaction' ? await this.#transaction(op) : await op(sqlOn(this.#pool!));
      } catch (err) {
        if (attempt >= ATTEMPTS || !RETRYABLE.has(pgErrorCode(err) ?? '')) throw err;
      }
    }
  }

  #transaction<T>(op: (sql: Sql) => Promise<T>): Promise<T> {
    return this.#begin((client) => op(sqlOn(client)));
  }

  /**
   * Runs `body` in a transaction on a pooled connection: COMMIT when it returns, ROLLBACK
   * when it throws or the commit fails. `settle` runs before either (atomically waits there
   * for the calls still in flight). A connection whose ROLLBACK failed leaves the pool.
   */
  async #begin<T>(body: (client: pg.PoolClient) => Promise<T>, settle?: () => Promise<void>): Promise<T> {
    const client = await this.#pool!.connect();
    let broken: Error | undefined;
    try {
      try {
        await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      } catch (err) {
        broken = err as Error;
        throw err;
      }
      let result: T;
      try {
        result = await body(client);
      } catch (err) {
        await settle?.();
        broken = await rollback(client);
        throw err;
      }
      await settle?.();
      try {
        await commit(client);
      } catch (err) {
        broken = await rollback(client);
        throw err;
      }
      return result;
    } finally {
      client.release(broken);
    }
  }

  async #inScope<T>(scope: Scope, mode: Mode, op: (sql: Sql) => Promise<T>): Promise<T> {
    const end = await scope.turn();
    try {
      if (scope.done) return await this.#outside(mode, op);
      const sql = sqlOn(scope.client);
      if (mode === 'read') return await op(sql);
      const savepoint = scope.savepoint();
      await scope.client.query(`SAVEPOINT ${savepoint}`);
      let result: T;
      try {
        result = await op(sql);
      } catch (err) {
        await rollbackTo(scope.client, savepoint);
        throw err;
      }
      await scope.client.query(`RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } finally {
      end();
    }
  }

  /** Store.atomically (see the top of this file). */
  async atomically<T>(fn: () => Promise<T>): Promise<T> {
    await this.ready();
    const outer = this.#scope.getStore();
    if (outer !== undefined && !outer.done) return this.#nested(outer, fn);

    let scope: Scope | undefined;
    return this.#begin(
      (client) => {
        scope = new Scope(client, { next: 0 });
        return this.#scope.run(scope, fn);
      },
      async () => scope?.end(),
    );
  }

  async #nested<T>(outer: Scope, fn: () => Promise<T>): Promise<T> {
    const end = await outer.turn();
    try {
      if (outer.done) return await this.atomically(fn);
      const savepoint = outer.savepoint();
      await outer.client.query(`SAVEPOINT ${savepoint}`);
      const inner = new Scope(outer.client, outer.savepoints);
      let result: T;
      try {
        result = await this.#scope.run(inner, fn);
      } catch (err) {
        await inner.end();
        await rollbackTo(outer.client, savepoint);
        throw err;
      }
      await inner.end();
      await outer.client.query(`RELEASE SAVEPOINT ${savepoint}`);
      return result;
    } finally {
      end();
    }
  }

  /** Ends the pool once the connection attempt under way (if any) has settled. */
  async close(): Promise<void> {
    if (this.#closed || this.#pool === undefined) return;
    this.#closed = true;
    await this.#ready?.catch(() => {});
    await this.#pool.end();
  }
}

/**
 * COMMIT, which PostgreSQL answers with ROLLBACK when the transaction had failed: a
 * statement's error that someone caught. That is an error here too: nothing was stored.
 */
async function commit(client: pg.PoolClient): Promise<void> {
  const done = await client.query('COMMIT');
  if (done.command === 'ROLLBACK') throw new Error('the transaction was rolled back: one of its statements had failed');
}

/** ROLLBACK; returns the error that makes the connection unfit for reuse, if it failed. */
async function rollback(client: pg.PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (err) {
    return err as Error;
  }
}

/** Undoes what followed the savepoint; the caller's own error is the one that counts. */
async function rollbackTo(client: pg.PoolClient, savepoint: string): Promise<void> {
  try {
    await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`);
    await client.query(`RELEASE SAVEPOINT ${savepoint}`);
  } catch {
    // The connection failed; so will the COMMIT, which says so.
  }
}
