// A private PostgreSQL server: Debian's `postgresql` (which setup.sh installs; the binaries
// are in /usr/lib/postgresql/<version>/bin, not on PATH) initialized in a temporary
// directory and started on a free loopback port, trust authentication, without durability
// (fsync off: the data dies with the directory). stop() ends it and removes the directory.
// The tests start one per file (test/helpers/postgres.ts adds their databases and skip
// rules) and the benchmark's cluster phase one per cluster it measures (bench/README.md).
//
// initdb and postgres refuse to run as root; as root (tests here and in CI, the benchmark),
// both run as the `postgres` account that Debian's package creates, owning the directory.

import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

export interface PrivatePostgres {
  /** The server's `postgres` database as its superuser: postgres://postgres@127.0.0.1:PORT/postgres */
  url: string;
  /** The postmaster (its backends are its children: the benchmark sums their CPU time, and stops it on Ctrl-C). */
  child: ChildProcess;
  /** How long initdb and the start took, in milliseconds. */
  startupMs: number;
  stop(): Promise<void>;
}

/**
 * Starts a server. A free port can be taken by someone else between finding and binding
 * it, so a failed start is tried again on a new one (three tries in all), unless trying
 * again is pointless (no binaries, initdb failed, root without a postgres account).
 * Rejects with the last reason.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = findBinaries();
  if (bin === undefined) throw new Error('no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH');
  let last: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const started = Date.now();
      const own = await launch(bin, await freePort());
      return { ...own, startupMs: Date.now() - started };
    } catch (err) {
      last = err as Error;
      if ((err as { final?: boolean }).final) break;
    }
  }
  throw last!;
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

async function launch(bin: Binaries, port: number): Promise<Omit<PrivatePostgres, 'startupMs'>> {
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
    bin.postgres,
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
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
  return { url, child, stop };
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
