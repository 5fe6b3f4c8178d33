// The bounded reader every file of the data dir (and the configuration file) is read with:
// what it gives, what it refuses and how it says so, and that it refuses without waiting
// (a FIFO) or reading on (a device, a file that grows).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { openRegularFile, readBoundedFile, readBoundedText, RefusedFile } from '../../daemon/bounded-read.ts';
import { tempDir } from '../helpers/corpus.ts';

/** How long a refusal may take: no case reads more than a few bytes. */
const PROMPT_MS = 1000;

interface Case {
  name: string;
  /** Makes the file at `path` (in a directory of the test's own). */
  make(path: string): void;
  bound: number;
  /** The text read, or the refusal's reason. */
  want: { text: string } | { refused: RegExp };
}

const CASES: Case[] = [
  { name: 'a regular file within its bound', make: (p) => writeFileSync(p, 'hello\n'), bound: 100, want: { text: 'hello\n' } },
  { name: 'a regular file exactly at its bound', make: (p) => writeFileSync(p, 'x'.repeat(100)), bound: 100, want: { text: 'x'.repeat(100) } },
  { name: 'an empty file', make: (p) => writeFileSync(p, ''), bound: 100, want: { text: '' } },
  {
    name: 'a symbolic link to a regular file (a mounted configuration)',
    make: (p) => (writeFileSync(`${p}.target`, 'linked\n'), symlinkSync(`${p}.target`, p)),
    bound: 100,
    want: { text: 'linked\n' },
  },
  {
    name: 'a file one byte over its bound',
    make: (p) => writeFileSync(p, 'x'.repeat(101)),
    bound: 100,
    want: { refused: /^is 101 bytes, over the 100 bytes a file of its kind may hold$/ },
  },
  {
    name: 'a sparse file of 2 GiB',
    make: (p) => truncate(p, 2 ** 31),
    bound: 64 * 1024 * 1024,
    want: { refused: /^is 2,147,483,648 bytes, over the 67,108,864 bytes a file of its kind may hold$/ },
  },
  {
    name: 'a symbolic link to /dev/zero',
    make: (p) => symlinkSync('/dev/zero', p),
    bound: 1024,
    want: { refused: /^is not a regular file \(a symbolic link to a character device\)$/ },
  },
  { name: 'a directory', make: (p) => mkdirSync(p), bound: 1024, want: { refused: /^is not a regular file \(a directory\)$/ } },
  { name: 'a FIFO with no writer', make: (p) => mkfifo(p), bound: 1024, want: { refused: /^is not a regular file \(a FIFO\)$/ } },
  {
    name: 'a symbolic link to a FIFO',
    make: (p) => (mkfifo(`${p}.fifo`), symlinkSync(`${p}.fifo`, p)),
    bound: 1024,
    want: { refused: /^is not a regular file \(a symbolic link to a FIFO\)$/ },
  },
];

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  assert.equal(r.status, 0, `mkfifo: ${r.stderr}`);
}

/** A sparse file: no block of it is written. */
function truncate(path: string, size: number): void {
  const r = spawnSync('truncate', ['-s', String(size), path]);
  assert.equal(r.status, 0, `truncate: ${r.stderr}`);
}

for (const c of CASES) {
  test(`bounded read: ${c.name}`, async () => {
    const dir = tempDir('bounded');
    const path = join(dir.path, 'file');
    c.make(path);
    // A FIFO's writer, should the reader open it after all (it must not): it unblocks that
    // open after a while and hands over one byte, so the test fails instead of hanging.
    const writer = c.name.includes('FIFO') ? spawn('sh', ['-c', `sleep 3; printf x > "${path}"`], { stdio: 'ignore' }) : undefined;
    try {
      const started = performance.now();
      let got: string | RefusedFile;
      try {
        got = readBoundedText(path, c.bound);
      } catch (err) {
        if (!(err instanceof RefusedFile)) throw err;
        got = err;
      }
      const ms = performance.now() - started;
      if ('text' in c.want) {
        assert.equal(got, c.want.text);
      } else {
        assert.ok(got instanceof RefusedFile, `refused, not read (got ${JSON.stringify(typeof got === 'string' ? got.slice(0, 40) : got)})`);
        assert.match(got.reason, c.want.refused);
        assert.equal(got.path, path);
        assert.equal(got.message, `${path} ${got.reason}`, 'the message names the file');
      }
      assert.ok(ms < PROMPT_MS, `answered in ${ms.toFixed(0)} ms`);
    } finally {
      writer?.kill();
      dir.cleanup();
    }
  });
}

test('bounded read: a file that grows past its bound while it is read is refused', () => {
  // /proc files say size 0 and then give their text: a file that grew after the open.
  const whole = readBoundedText('/proc/self/status', 1 << 20);
  assert.match(whole, /^VmRSS:/m);
  assert.ok(whole.length > 200);
  assert.throws(
    () => readBoundedFile('/proc/self/status', 100),
    (err: unknown) => err instanceof RefusedFile && /^grew past the 100 bytes a file of its kind may hold while it was read$/.test(err.reason),
  );
});

test('bounded read: a socket is not a regular file', async () => {
  const dir = tempDir('bounded');
  const path = join(dir.path, 'sock');
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, r));
  try {
    assert.throws(
      () => readBoundedFile(path, 1024),
      (err: unknown) => err instanceof RefusedFile && err.reason === 'is not a regular file (a socket)',
    );
  } finally {
    await new Promise((r) => server.close(r));
    dir.cleanup();
  }
});

test('bounded read: a missing file is the open error itself (callers tell absent from damaged)', () => {
  const dir = tempDir('bounded');
  try {
    assert.throws(
      () => readBoundedFile(join(dir.path, 'absent'), 1024),
      (err: unknown) => !(err instanceof RefusedFile) && (err as NodeJS.ErrnoException).code === 'ENOENT',
    );
  } finally {
    dir.cleanup();
  }
});

test("bounded read: openRegularFile gives a regular file's descriptor and size (what a shard is mapped from)", () => {
  const dir = tempDir('bounded');
  try {
    const file = join(dir.path, 'f');
    writeFileSync(file, 'twelve bytes');
    const { fd, size } = openRegularFile(file);
    closeSync(fd);
    assert.equal(size, 12);
    assert.throws(
      () => openRegularFile(dir.path),
      (err: unknown) => err instanceof RefusedFile && err.reason === 'is not a regular file (a directory)',
    );
  } finally {
    dir.cleanup();
  }
});
