// A private PostgreSQL server for a test file: daemon/runtime/private-postgres.ts (Debian's
// `postgresql`, initialized in a temporary directory and started on a free loopback port,
// trust authentication, without durability). stop() ends it and removes the directory.
// Each test gets a database of its own from newDatabase().
//
// With $TRAWL_TEST_POSTGRES_URL set (a role allowed to CREATE DATABASE), that server is
// used instead and nothing is started: newDatabase() creates trawl_test_<random> databases
// there, and stop() drops them.
//
// When no server can be had the tests that need it skip with a visible reason, unless
// $TRAWL_REQUIRE_POSTGRES=1 (set by .ci/run), where that is a failure: CI must run them.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startPrivatePostgres } from '../../daemon/runtime/private-postgres.ts';

export interface TestPostgres {
  /** Where the server is, without a database: postgres://user@host:port */
  server: string;
  /** A new, empty database on the server: its URL. */
  newDatabase(): Promise<string>;
  /** Drops a database newDatabase() made (its connections are ended first). */
  dropDatabase(url: string): Promise<void>;
  /** How long initdb and the start took, in milliseconds (0 for $TRAWL_TEST_POSTGRES_URL). */
  startupMs: number;
  stop(): Promise<void>;
}

export async function startTestPostgres(): Promise<TestPostgres | { skip: string }> {
  const given = process.env.TRAWL_TEST_POSTGRES_URL;
  if (given) return onServer(given, 0, async () => {});
  let reason: string;
  try {
    const own = await startPrivatePostgres();
    return onServer(own.url, own.startupMs, own.stop);
  } catch (err) {
    reason = (err as Error).message;
  }
  const skip = `no PostgreSQL server could be started (${reason}); install Debian's postgresql (scripts/setup.sh does) or set TRAWL_TEST_POSTGRES_URL`;
  if (process.env.TRAWL_REQUIRE_POSTGRES === '1') throw new Error(`TRAWL_REQUIRE_POSTGRES=1: ${skip}`);
  process.stderr.write(`SKIPPED (PostgreSQL): ${skip}\n`);
  return { skip };
}

/** The server at `url`, handing out databases; `shutdown` ends it once they are dropped. */
function onServer(url: string, startupMs: number, shutdown: () => Promise<void>): TestPostgres {
  const server = new URL(url);
  server.pathname = '/';
  const made = new Set<string>();
  const admin = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const admin = new URL(server);
    admin.pathname = `/${new URL(url).pathname.slice(1) || 'postgres'}`;
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  };
  const drop = (name: string) => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return {
    server: server.toString().replace(/\/$/, ''),
    startupMs,
    async newDatabase() {
      const name = `trawl_test_${process.pid}_${randomBytes(6).toString('hex')}`;
      await admin((c) => c.query(`CREATE DATABASE ${name}`));
      made.add(name);
      const db = new URL(server);
      db.pathname = `/${name}`;
      return db.toString();
    },
    async dropDatabase(dbUrl) {
      const name = new URL(dbUrl).pathname.slice(1);
      if (!made.delete(name)) throw new Error(`${name} was not made by newDatabase()`);
      await drop(name);
    },
    async stop() {
      for (const name of made) await drop(name).catch(() => {});
      made.clear();
      await shutdown();
    },
  };
}
