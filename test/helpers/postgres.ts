// A private PostgreSQL server for a test file: Debian's `postgresql` (which setup.sh
// installs; the binaries are in /usr/lib/postgresql/<version>/bin, not on PATH) initialized
// in a temporary directory and started on a free loopback port, trust authentication,
// without durability (fsync off: the data dies with the directory). stop() ends it and
// removes the directory. Each test gets a database of its own from newDatabase().
//
// With $TRAWL_TEST_POSTGRES_URL set (a role allowed to CREATE DATABASE), that server is
// used instead and nothing is started: newDatabase() creates trawl_test_<random> databases
// there, and stop() drops them.
//
// initdb and postgres refuse to run as root; as root (tests here and in CI), both run as
// the `postgres` account that Debian's package creates, owning the directory.
//
// When no server can be had the tests that need it skip with a visible reason, unless
// $TRAWL_REQUIRE_POSTGRES=1 (set by .ci/run), where that is a failure: CI must run them.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, chownSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { freePort } from './free-port.ts';

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
  let reason = '';
  const bin = findBinaries();
  if (bin === undefined) {
    reason = 'no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH';
  } else {
    // A free port can be taken by someone else between finding and binding it: try again.
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const started = Date.now();
        const own = await launch(bin, await freePort());
        return onServer(own.url, Date.now() - started, own.stop);
      } catch (err) {
        reason = (err as Error).message;
        if ((err as { final?: boolean }).final) break;
      }
    }
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

interface Binaries {
  initdb: string;
  postgres: string;
}

/** Debian's newest installed version first, then PATH. */
function findBinaries(): Binaries | undefined {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const dirs = [...versions.map((v) => join(root, v, 'bin')), ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  for (const dir of dirs) {
    const initdb = join(dir, 'initdb');
    const postgres = join(dir, 'postgres');
    if (existsSync(initdb) && existsSync(postgres)) return { initdb, postgres };
  }
  return undefined;
}

/** The uid and gid of the `postgres` account, from /etc/passwd. */
function postgresAccount(): { uid: number; gid: number } | undefined {
  for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres') return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/** An error after which trying another port is pointless. */
const final = (message: string): Error => Object.assign(new Error(message), { final: true });

async function launch(bin: Binaries, port: number): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-pg-'));
  const data = join(dir, 'data');
  // As root, both programs run as `postgres` (setpriv execs them: the child is postgres itself).
  let asUser: string[] = [];
  if (process.getuid?.() === 0) {
    const account = postgresAccount();
    if (account === undefined) {
      rmSync(dir, { recursive: true, force: true });
      throw final('running as root and there is no postgres account to run the server as');
    }
    chownSync(dir, account.uid, account.gid);
    asUser = ['setpriv', `--reuid=${account.uid}`, `--regid=${account.gid}`, '--clear-groups', '--'];
  }
  const run = (argv: string[]) => {
    const [command, ...args] = [...asUser, ...argv];
    return spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  };
  try {
    await finished(run([bin.initdb, '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']), 'initdb');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw final((err as Error).message);
  }
  const child = run([
    bin.postgres, '-D', data, '-p', String(port), '-k', dir,
    '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
  ]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const stop = async () => {
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill('SIGINT'); // fast shutdown: ends the connections instead of waiting for them
    });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await answering(child, url);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, stop };
}

/** Resolves when `child` exits with status 0; rejects with its output otherwise. */
function finished(child: ChildProcess, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('error', (err) => reject(new Error(`${what}: ${err.message}`)));
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${what} exited with ${code}: ${out.trim().split('\n').slice(-3).join(' / ')}`))));
  });
}

/** Resolves once the server takes a connection; rejects when it exits first or takes more than 15 s. */
function answering(child: ChildProcess, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => settle(new Error(`postgres did not start within 15 s: ${out.trim().split('\n').at(-1) ?? ''}`)), 15_000);
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('error', (err) => settle(err));
    child.once('exit', (code) => settle(new Error(`postgres exited with ${code}: ${out.trim().split('\n').at(-1) ?? ''}`)));
    const poll = async () => {
      while (!settled) {
        const client = new pg.Client({ connectionString: url });
        client.on('error', () => {});
        try {
          await client.connect();
          await client.end();
          return settle();
        } catch {
          await client.end().catch(() => {});
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    void poll();
  });
}
