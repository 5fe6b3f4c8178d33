import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, symlink, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { walkSorted, type WalkedFile } from '../../daemon/repos/walk.ts';

/** Every file walkSorted gives, in its order. */
async function walkDirectory(root: string, onError?: (path: string, err: Error) => void): Promise<WalkedFile[]> {
  const files: WalkedFile[] = [];
  for await (const f of walkSorted(root, onError)) files.push(f);
  return files;
}

/** The order walkSorted must give: UTF-8 bytes of the whole path (not UTF-16 units). */
function sortByPathBytes<T extends { path: string }>(items: T[]): T[] {
  const keyed = items.map((item) => ({ item, key: Buffer.from(item.path, 'utf8') }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  return keyed.map((k) => k.item);
}

const temps: string[] = [];
after(async () => {
  for (const t of temps) {
    await chmod(join(t, 'locked'), 0o755).catch(() => {});
    await rm(t, { recursive: true, force: true });
  }
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'trawl-walk-'));
  temps.push(d);
  return d;
}

test('walkDirectory lists regular files sorted by path bytes', async () => {
  const root = await tempDir();
  await mkdir(join(root, 'src/deep/er'), { recursive: true });
  await mkdir(join(root, '.git/objects'), { recursive: true });
  await mkdir(join(root, 'sub/.git'), { recursive: true });
  await mkdir(join(root, '.github'), { recursive: true });
  await mkdir(join(root, 'emptydir'));
  await writeFile(join(root, 'README.md'), 'hello\n');
  await writeFile(join(root, 'src/main.c'), 'int main(void) { return 0; }\n');
  await writeFile(join(root, 'src/deep/er/x.h'), '#pragma once\n');
  await writeFile(join(root, '.git/HEAD'), 'ref: refs/heads/main\n');
  await writeFile(join(root, '.git/objects/ab'), 'x');
  await writeFile(join(root, 'sub/.git/config'), 'x');
  await writeFile(join(root, 'sub/file.txt'), 'abc');
  await writeFile(join(root, '.github/ci.yml'), 'on: push\n');
  await writeFile(join(root, '.hidden'), 'secret');
  await writeFile(join(root, 'empty'), '');
  await writeFile(join(root, 'héllo-ü.txt'), 'unicode');
  await writeFile(join(root, '\u{1F600}.txt'), 'astral'); // sorts after U+FFFD in bytes, before it in UTF-16
  await writeFile(join(root, '\uFFFD.txt'), 'bmp');
  await writeFile(join(root, 'Zed'), 'z');
  await symlink(join(root, 'src/main.c'), join(root, 'link-to-file.c'));
  await symlink(join(root, 'src'), join(root, 'link-to-dir'));
  await symlink('/nonexistent/target', join(root, 'dangling'));

  const files = await walkDirectory(root);
  assert.deepEqual(
    files.map((f) => f.path),
    [
      '.github/ci.yml',
      '.hidden',
      'README.md',
      'Zed',
      'empty',
      'h\u00e9llo-\u00fc.txt',
      'src/deep/er/x.h',
      'src/main.c',
      'sub/file.txt',
      '\uFFFD.txt',
      '\u{1F600}.txt',
    ],
  );
  const bySize = Object.fromEntries(files.map((f) => [f.path, f.size]));
  assert.equal(bySize.empty, 0);
  assert.equal(bySize['README.md'], 6);
  assert.equal(bySize['h\u00e9llo-\u00fc.txt'], 7);
  assert.equal(files.find((f) => f.path === 'src/main.c')?.absPath, join(root, 'src/main.c'));
});

// Root reads any directory whatever its mode, and CI runs as root: there the walk runs with
// the effective user id of `nobody` (seteuid is undone afterwards: the real and saved ids stay
// 0), so that the mode bites as it does for an ordinary user.
test('walkDirectory reports unreadable subdirectories and goes on', async () => {
  const root = await tempDir();
  await mkdir(join(root, 'locked'));
  await writeFile(join(root, 'locked/inside'), 'x');
  await writeFile(join(root, 'ok'), 'x');
  await chmod(root, 0o755);
  await chmod(join(root, 'locked'), 0o000);
  const errors: string[] = [];
  const asRoot = process.getuid?.() === 0;
  if (asRoot) process.seteuid!('nobody');
  let files;
  try {
    files = await walkDirectory(root, (p) => errors.push(p));
  } finally {
    if (asRoot) process.seteuid!(0);
  }
  assert.deepEqual(
    files.map((f) => f.path),
    ['ok'],
  );
  assert.deepEqual(errors, [join(root, 'locked')]);
});

test('walkDirectory rejects a missing root or a file as root', async () => {
  const root = await tempDir();
  await writeFile(join(root, 'file'), 'x');
  await assert.rejects(walkDirectory(join(root, 'missing')), {
    message: `cannot read directory ${join(root, 'missing')}: no such file or directory`,
  });
  await assert.rejects(walkDirectory(join(root, 'file')), {
    message: `cannot read directory ${join(root, 'file')}: not a directory`,
  });
});

test('walkDirectory gives absolute absPath for a relative root', async () => {
  const root = await tempDir();
  await writeFile(join(root, 'a.txt'), 'a');
  const files = await walkDirectory(relative(process.cwd(), root));
  assert.deepEqual(files, [{ path: 'a.txt', absPath: join(root, 'a.txt'), size: 1 }]);
});

test('sortByPathBytes orders by UTF-8 bytes, not UTF-16 units', () => {
  const sorted = sortByPathBytes([{ path: '\u{1F600}' }, { path: '\uFFFD' }, { path: 'a/b' }, { path: 'a.b' }, { path: 'a' }]);
  assert.deepEqual(
    sorted.map((s) => s.path),
    ['a', 'a.b', 'a/b', '\uFFFD', '\u{1F600}'],
  );
});

test('walkSorted gives a directory’s files where its name and "/" sort among its siblings', async () => {
  const root = await tempDir();
  await mkdir(join(root, 'a/b'), { recursive: true });
  for (const f of ['a-', 'a.b', 'a/b/c', 'a/z', 'a0', 'a/b.c', 'a/b-']) await writeFile(join(root, f), f);
  const paths: string[] = [];
  for await (const f of walkSorted(root)) paths.push(f.path);
  assert.deepEqual(paths, ['a-', 'a.b', 'a/b-', 'a/b.c', 'a/b/c', 'a/z', 'a0']);
  assert.deepEqual(
    paths,
    sortByPathBytes(paths.map((path) => ({ path }))).map((p) => p.path),
  );
});
