// Lock files left by processes that were killed (docs/security-and-faults.md, row 2): a
// lock whose owner is dead, whose pid was recycled, or that was left empty is taken over; a
// live owner's lock is respected; processes racing to take over one stale lock still get it
// one at a time.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock, EMPTY_GRACE_MS, readLockOwner } from '../../daemon/runtime/lock-file.ts';
import { processStartTicks } from '../../daemon/runtime/left-behind.ts';
import { tempDir } from '../helpers/corpus.ts';

const CHILD = fileURLToPath(new URL('../helpers/lock-child.ts', import.meta.url));

/** A process that does nothing until killed: a live pid. */
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await exited(child);
  return child.pid!;
}

/** Sets a file's times `ms` into the past. */
function age(path: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
}

interface Case {
  name: string;
  /** Writes the lock (and what else); returns what to clean up. */
  setup(lock: string): Promise<(() => void) | void> | (() => void) | void;
  expect: 'taken' | 'refused' | 'an error';
}

const CASES: Case[] = [
  { name: 'no lock file', setup() {}, expect: 'taken' },
  {
    name: 'an empty lock file older than the grace (a writer killed between create and write)',
    setup(lock) {
      writeFileSync(lock, '');
      age(lock, EMPTY_GRACE_MS + 5000);
    },
    expect: 'taken',
  },
  { name: 'an empty lock file just made (its writer may be writing it)', setup: (lock) => writeFileSync(lock, ''), expect: 'refused' },
  {
    name: 'an unreadable lock file older than the grace',
    setup(lock) {
      writeFileSync(lock, 'not a pid\n');
      age(lock, EMPTY_GRACE_MS + 5000);
    },
    expect: 'taken',
  },
  { name: 'a dead pid', setup: async (lock) => writeFileSync(lock, `${await deadPid()} 12345\n`), expect: 'taken' },
  { name: 'a dead pid, in the old format (pid only)', setup: async (lock) => writeFileSync(lock, `${await deadPid()}\n`), expect: 'taken' },
  {
    name: 'a recycled pid: live, but started at another time than the owner',
    setup(lock) {
      const other = sleeper();
      writeFileSync(lock, `${other.pid} ${processStartTicks(other.pid!)! - 1}\n`);
      return () => other.kill('SIGKILL');
    },
    expect: 'taken',
  },
  {
    name: 'a recycled pid in the old format: the live process started after the lock was written',
    setup(lock) {
      const other = sleeper();
      writeFileSync(lock, `${other.pid}\n`);
      age(lock, 3_600_000);
      return () => other.kill('SIGKILL');
    },
    expect: 'taken',
  },
  {
    name: 'a live owner',
    setup(lock) {
      const other = sleeper();
      writeFileSync(lock, `${other.pid} ${processStartTicks(other.pid!)}\n`);
      return () => other.kill('SIGKILL');
    },
    expect: 'refused',
  },
  {
    name: 'a live owner, in the old format',
    setup(lock) {
      const other = sleeper();
      writeFileSync(lock, `${other.pid}\n`);
      return () => other.kill('SIGKILL');
    },
    expect: 'refused',
  },
  {
    name: 'a dead pid while another process is taking it over (its guard is fresh)',
    async setup(lock) {
      writeFileSync(lock, `${await deadPid()} 1\n`);
      writeFileSync(`${lock}.break`, '');
    },
    expect: 'refused',
  },
  {
    name: 'a dead pid and the guard of a breaker that was killed',
    async setup(lock) {
      writeFileSync(lock, `${await deadPid()} 1\n`);
      writeFileSync(`${lock}.break`, '');
      age(`${lock}.break`, EMPTY_GRACE_MS + 5000);
    },
    expect: 'taken',
  },
  // A FIFO, a link to a device, a huge file: unreadable, so taken over after the grace
  // (unbounded-reads.test.ts, through the real command). A directory cannot be unlinked.
  {
    name: 'a directory older than the grace',
    setup(lock) {
      mkdirSync(lock);
      age(lock, EMPTY_GRACE_MS + 5000);
    },
    expect: 'an error',
  },
];

for (const c of CASES) {
  test(`lock: ${c.name} is ${c.expect}`, async () => {
    const dir = tempDir('lock');
    const lock = join(dir.path, 'lock');
    const cleanup = await c.setup(lock);
    try {
      // Well under the grace: "taken" means at once, not after waiting the grace out.
      const attempt = acquireLock(lock, 'the test lock', 500);
      if (c.expect === 'refused') {
        await assert.rejects(attempt, /the test lock is locked by another trawl process \((pid \d+|no owner recorded yet), /);
        return;
      }
      if (c.expect === 'an error') {
        await assert.rejects(attempt, new Error(`${lock} is a directory, not a lock file; remove it`));
        assert.deepEqual(readdirSync(dir.path), ['lock'], 'no guard is left');
        return;
      }
      const release = await attempt;
      assert.deepEqual(readLockOwner(lock), { pid: process.pid, start: processStartTicks(process.pid) });
      assert.equal(readFileSync(lock, 'latin1'), `${process.pid} ${processStartTicks(process.pid)}\n`);
      release();
      assert.equal(existsSync(lock), false);
      assert.deepEqual(readdirSync(dir.path), [], 'no temporary record or guard is left');
    } finally {
      cleanup?.();
      dir.cleanup();
    }
  });
}

test('lock: an empty lock file is taken over once the grace has passed', async (t) => {
  const dir = tempDir('lock-grace');
  const lock = join(dir.path, 'lock');
  try {
    writeFileSync(lock, '');
    const started = performance.now();
    const release = await acquireLock(lock, 'the test lock', EMPTY_GRACE_MS + 20_000);
    const waited = performance.now() - started;
    t.diagnostic(`waited ${waited.toFixed(0)} ms for an empty lock file (grace ${EMPTY_GRACE_MS} ms)`);
    assert.ok(waited >= EMPTY_GRACE_MS - 1500, `taken after ${waited} ms, before the grace`);
    release();
  } finally {
    dir.cleanup();
  }
});

test('lock: an owner killed with SIGKILL leaves a lock the next process takes over; while it lives, it is respected', async () => {
  const dir = tempDir('lock-kill');
  const lock = join(dir.path, 'lock');
  const log = join(dir.path, 'log');
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, lock, log, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (b: Buffer) => b.toString().includes('held') && resolve());
      child.once('exit', (code) => reject(new Error(`lock child exited with ${code}`)));
    });
    assert.equal(readLockOwner(lock)?.pid, child.pid);
    await assert.rejects(acquireLock(lock, 'the test lock', 300), new RegExp(`\\(pid ${child.pid}, `));
    child.kill('SIGKILL');
    await exited(child);
    const release = await acquireLock(lock, 'the test lock', 500);
    assert.equal(readLockOwner(lock)?.pid, process.pid);
    release();
  } finally {
    child.kill('SIGKILL');
    dir.cleanup();
  }
});

test('lock: processes racing to take over one stale lock hold it one at a time', async () => {
  const dir = tempDir('lock-race');
  const lock = join(dir.path, 'lock');
  const log = join(dir.path, 'log');
  try {
    writeFileSync(lock, `${await deadPid()} 1\n`);
    const children = Array.from({ length: 4 }, () => spawn(process.execPath, ['--import', 'tsx', CHILD, lock, log, '150'], { stdio: 'ignore' }));
    await Promise.all(children.map(exited));
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    assert.equal(lines.length, 8, lines.join('\n'));
    // "in A", "out A", "in B", "out B", ...: never two holders at once.
    for (let i = 0; i < lines.length; i += 2) {
      const pid = /^in (\d+)$/.exec(lines[i]!)?.[1];
      assert.ok(pid, `line ${i}: ${lines[i]}`);
      assert.equal(lines[i + 1], `out ${pid}`, lines.join('\n'));
    }
    assert.equal(new Set(lines.map((l) => l.split(' ')[1])).size, 4);
    assert.equal(existsSync(lock), false);
  } finally {
    dir.cleanup();
  }
});
