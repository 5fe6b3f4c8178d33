// A repository's refs stamp (repos/ref-stamp.ts) changes with every change of its refs and
// with the revision selection, and only then: the same refs read again give the same stamp.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { refStamp, sameRefStamp } from '../../daemon/repos/ref-stamp.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git, TestRepo } from '../helpers/git.ts';

test('the refs stamp moves with every ref change and the selection, and only then', () => {
  const dir = tempDir('ref-stamp');
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit({ 'a.c': 'int a;\n' });
    const salt = JSON.stringify({ branches: ['dev'] });
    const first = refStamp(repo.path, salt)!;
    assert.match(first, /^[0-9a-f]{32}\nrefs\/heads\nrefs\/heads\/main\nrefs\/tags$/, 'the hash, then the paths stated');
    assert.equal(sameRefStamp(repo.path, salt, first), true, 'checked again without a walk: the same');
    assert.equal(sameRefStamp(repo.path, JSON.stringify({ branches: ['*'] }), first), false, 'checked for another selection: not the same');
    assert.equal(refStamp(repo.path, salt), first, 'read again: the same');
    assert.notEqual(refStamp(repo.path, JSON.stringify({ branches: ['*'] })), first, 'another selection');
    const seen = new Set([first]);
    const changes: Array<[string, () => void]> = [
      ['a commit', () => repo.commit({ 'a.c': 'int b;\n' })],
      ['a new branch', () => git(repo.path, 'branch', 'dev')],
      ['a tag', () => repo.tag('v1')],
      ['refs packed', () => git(repo.path, 'pack-refs', '--all')],
      ['a commit on a packed branch', () => repo.commit({ 'a.c': 'int c;\n' })],
      ['HEAD moved to another branch', () => repo.checkout('dev')],
      ['a branch deleted', () => (repo.checkout('main'), git(repo.path, 'branch', '-D', 'dev'))],
    ];
    let last = first;
    for (const [what, change] of changes) {
      change();
      assert.equal(sameRefStamp(repo.path, salt, last), false, `${what}: the recorded stamp no longer holds`);
      const now = refStamp(repo.path, salt)!;
      assert.equal(sameRefStamp(repo.path, salt, now), true, `${what}: the new one does`);
      last = now;
      assert.ok(!seen.has(now), `${what}: a new stamp`);
      seen.add(now);
      assert.equal(refStamp(repo.path, salt), now, `${what}: stable once done`);
    }
    // A bare repository stamps the same way; a linked work tree (a .git file) is not stamped.
    git(dir.path, 'clone', '-q', '--bare', repo.path, 'bare.git');
    assert.match(refStamp(join(dir.path, 'bare.git'), salt)!, /^[0-9a-f]{32}\n/);
    mkdirSync(join(dir.path, 'linked'));
    writeFileSync(join(dir.path, 'linked', '.git'), 'gitdir: elsewhere\n');
    assert.equal(refStamp(join(dir.path, 'linked'), salt), undefined);
  } finally {
    dir.cleanup();
  }
});

test('a stamp of many refs lists no paths: it is only checked by a walk', () => {
  const dir = tempDir('ref-stamp-many');
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit({ 'a.c': 'int a;\n' });
    for (let i = 0; i < 70; i++) git(repo.path, 'branch', `b${i}`);
    const stamp = refStamp(repo.path, '')!;
    assert.match(stamp, /^[0-9a-f]{32}$/);
    assert.equal(sameRefStamp(repo.path, '', stamp), false);
    assert.equal(refStamp(repo.path, ''), stamp);
  } finally {
    dir.cleanup();
  }
});
