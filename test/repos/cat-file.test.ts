import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { objectSizes, readObjects } from '../../daemon/repos/cat-file.ts';
import { git } from '../helpers/git.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-catfile-'));
after(() => rmSync(dir, { recursive: true, force: true }));
git(dir, 'init', '-q', '-b', 'main');

/** Writes a blob into the repository; returns its id. */
function blob(bytes: Buffer): string {
  const f = join(dir, 'blob.tmp');
  writeFileSync(f, bytes);
  return git(dir, 'hash-object', '-w', f).trim();
}
const contents = [
  Buffer.from('int main(void) { return 0; }\n'),
  Buffer.alloc(0),
  Buffer.from('no newline at the end'),
  Buffer.from('line\n'.repeat(50_000)), // larger than a pipe's 64 KB
  Buffer.from([0, 1, 2, 0x0a, 0xff, 0x0a]),
  Buffer.from('oid blob 12\nlooks like a header\n'),
];
const missing = '0123456789abcdef0123456789abcdef01234567';

test('objectSizes: sizes from the headers, in order, -1 for a missing object', async () => {
  const oids = contents.map(blob);
  assert.deepEqual(await objectSizes(dir, [...oids, missing, oids[0]!]), [...contents.map((c) => c.length), -1, contents[0]!.length]);
  assert.deepEqual(await objectSizes(dir, []), []);
});

test('readObjects: every byte, in order, into one buffer that is reused when large enough', async () => {
  const oids = contents.map(blob);
  const sizes = contents.map((c) => c.length);
  const first = await readObjects(dir, oids, sizes);
  assert.deepEqual(
    first.views.map((v) => Buffer.from(v)),
    contents,
  );
  for (const v of first.views) assert.equal(v.buffer, first.buffer.buffer);
  // The same object twice, and a smaller read into the first one's buffer.
  const again = await readObjects(dir, [oids[2]!, oids[2]!], [sizes[2]!, sizes[2]!], first.buffer);
  assert.equal(again.buffer, first.buffer);
  assert.deepEqual(
    again.views.map((v) => Buffer.from(v).toString()),
    ['no newline at the end', 'no newline at the end'],
  );
});

test('readObjects: a missing object or a wrong size is an error naming the object', async () => {
  const oids = contents.map(blob);
  await assert.rejects(readObjects(dir, [oids[0]!, missing], [contents[0]!.length, 5]), new RegExp(`object ${missing} is missing`));
  await assert.rejects(readObjects(dir, [oids[0]!], [contents[0]!.length + 1]), new RegExp(`object ${oids[0]}: expected`));
  await assert.rejects(readObjects(dir, [oids[0]!, oids[2]!], [contents[0]!.length - 1, contents[2]!.length]), new RegExp(`object ${oids[0]}`));
});

test('a directory that is not a repository is an error', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'trawl-catfile-none-'));
  try {
    await assert.rejects(objectSizes(empty, [missing]), /git cat-file --batch-check failed/);
    await assert.rejects(readObjects(empty, [missing], [1]), /missing|git answered|exit/);
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
});

/** `n` repositories under one directory, each holding its own blobs and one blob they all share. */
function repos(n: number): { dirs: string[]; own: string[][]; shared: string; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'trawl-catfile-many-'));
  const dirs: string[] = [];
  const own: string[][] = [];
  let shared = '';
  for (let i = 0; i < n; i++) {
    const d = join(root, `r${i}`);
    git(root, 'init', '-q', '-b', 'main', d);
    const write = (name: string, text: string) => {
      writeFileSync(join(d, name), text);
      return git(d, 'hash-object', '-w', name).trim();
    };
    own.push([write('a.txt', `repository ${i}\n`), write('b.txt', 'x'.repeat(i * 100))]);
    shared = write('shared.txt', 'the same bytes everywhere\n');
    dirs.push(d);
  }
  return { dirs, own, shared, root };
}

test('objectSizes asked for many repositories at once: each answer is its own, -1 only for what it lacks', async () => {
  const { dirs, own, shared, root } = repos(40);
  try {
    // Another repository's blob is missing from this one, though the process answering both holds it.
    const answers = await Promise.all(
      dirs.map((d, i) => objectSizes(d, [...own[i]!, shared, ...(i % 5 === 0 ? [own[(i + 1) % dirs.length]![0]!] : []), ...(i % 7 === 0 ? [missing] : [])])),
    );
    answers.forEach((sizes, i) => {
      const want = [`repository ${i}\n`.length, i * 100, 'the same bytes everywhere\n'.length];
      if (i % 5 === 0) want.push(-1);
      if (i % 7 === 0) want.push(-1);
      assert.deepEqual(sizes, want, `repository ${i}`);
    });
    // One repository that cannot be read fails alone.
    const gone = join(root, 'gone');
    const mixed = await Promise.allSettled([objectSizes(dirs[0]!, own[0]!), objectSizes(gone, [shared]), objectSizes(dirs[1]!, own[1]!)]);
    assert.equal(mixed[0]!.status, 'fulfilled');
    assert.equal(mixed[1]!.status, 'rejected');
    assert.equal(mixed[2]!.status, 'fulfilled');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('readObjects with alternates: blobs of several repositories read by one process', async () => {
  const { dirs, own, root } = repos(5);
  try {
    const oids = own.flat();
    const sizes = await Promise.all(dirs.map((d, i) => objectSizes(d, own[i]!)));
    const read = await readObjects(
      dirs[0]!,
      oids,
      sizes.flat(),
      undefined,
      dirs.slice(1).map((d) => join(d, '.git', 'objects')),
    );
    assert.deepEqual(
      read.views.map((v) => Buffer.from(v).toString()),
      dirs.flatMap((_, i) => [`repository ${i}\n`, 'x'.repeat(i * 100)]),
    );
    // Without them, another repository's blob is missing.
    await assert.rejects(readObjects(dirs[0]!, [own[1]![0]!], [sizes[1]![0]!]), /is missing/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
