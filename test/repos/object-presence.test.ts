// A repository's own objects, told without git (object-presence.ts): loose, packed, and
// what it cannot be sure of.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { holdsObjects } from '../../daemon/repos/object-presence.ts';
import { git } from '../helpers/git.ts';

const root = mkdtempSync(join(tmpdir(), 'trawl-presence-'));
after(() => rmSync(root, { recursive: true, force: true }));

function repo(name: string, files: number): { dir: string; objects: string; oids: string[] } {
  const dir = join(root, name);
  git(root, 'init', '-q', '-b', 'main', dir);
  const oids: string[] = [];
  for (let i = 0; i < files; i++) {
    writeFileSync(join(dir, `f${i}.txt`), `${name} file ${i}\n`);
    oids.push(git(dir, 'hash-object', '-w', `f${i}.txt`).trim());
  }
  return { dir, objects: join(dir, '.git', 'objects'), oids };
}

test("holdsObjects: loose objects and objects in a pack are held; another repository's are not", () => {
  const a = repo('a', 300);
  const b = repo('b', 3);
  assert.equal(holdsObjects(a.objects, a.oids), true);
  assert.equal(holdsObjects(a.objects, [...a.oids.slice(0, 2), b.oids[0]!]), false);
  // Packed: every loose object moves into a pack (git add + commit + gc).
  git(a.dir, 'add', '.');
  git(a.dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'all');
  git(a.dir, 'repack', '-a', '-d', '-q');
  git(a.dir, 'prune-packed');
  assert.equal(holdsObjects(a.objects, a.oids), true);
  assert.equal(holdsObjects(a.objects, [b.oids[1]!]), false);
  assert.equal(holdsObjects(a.objects, ['0'.repeat(40), a.oids[0]!]), false);
  assert.equal(holdsObjects(a.objects, ['f'.repeat(40)]), false);
  assert.equal(holdsObjects(a.objects, ['not an oid']), false);
});

test('holdsObjects: a repository borrowing from alternates of its own is never sure', () => {
  const c = repo('c', 2);
  mkdirSync(join(c.objects, 'info'), { recursive: true });
  writeFileSync(join(c.objects, 'info', 'alternates'), `${join(root, 'a', '.git', 'objects')}\n`);
  assert.equal(holdsObjects(c.objects, c.oids), false);
});
