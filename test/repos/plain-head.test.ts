// A local repository's origin and HEAD branch read from its files (plain-head.ts) against
// libgit2's reading of the same repository (hosts/git.ts readRepository): where the plain
// reader answers, it answers what libgit2 does; where it cannot be sure, it answers
// nothing. Real repositories made by git in the test, one per case.

import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { readRepository } from '../../daemon/repos/hosts/git.ts';
import { originUrl, readPlainHead } from '../../daemon/repos/plain-head.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git, TestRepo } from '../helpers/git.ts';

const dir = tempDir('plain-head');
after(() => dir.cleanup());
// The user's own git configuration (URL rewrites would send every case to libgit2) is not this test's.
process.env.HOME = dir.path;
process.env.XDG_CONFIG_HOME = join(dir.path, '.config');

let n = 0;
function repo(setup: (path: string) => void): string {
  const path = join(dir.path, `r${n++}`);
  const r = TestRepo.init(path);
  r.commit({ 'a.c': 'int a;\n' }, 'first');
  setup(path);
  return path;
}

const cases: Array<{ name: string; make: () => string; plain: boolean }> = [
  { name: 'no remote, on main', make: () => repo(() => {}), plain: true },
  { name: 'an origin', make: () => repo((p) => git(p, 'remote', 'add', 'origin', 'https://github.com/acme/app.git')), plain: true },
  {
    name: 'an origin among other remotes',
    make: () =>
      repo((p) => {
        git(p, 'remote', 'add', 'upstream', 'https://example.com/u.git');
        git(p, 'remote', 'add', 'origin', 'git@github.com:acme/app.git');
      }),
    plain: true,
  },
  {
    name: 'a quoted url with a comment after it',
    make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "origin"]\n\turl = "https://example.com/a b.git" ; where\n')),
    plain: true,
  },
  {
    name: 'a url with a trailing comment and spaces',
    make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "origin"]\n  url =   https://example.com/x.git   # note\n')),
    plain: true,
  },
  {
    name: 'upper-case section and key',
    make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[REMOTE "origin"]\n\tURL = https://example.com/y.git\n')),
    plain: true,
  },
  {
    name: 'a subsection of another case is another remote',
    make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "Origin"]\n\turl = https://example.com/z.git\n')),
    plain: true,
  },
  { name: 'an empty origin url', make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "origin"]\n\turl =\n')), plain: true },
  { name: 'a branch with a slash', make: () => repo((p) => git(p, 'checkout', '-q', '-b', 'feature/x')), plain: true },
  { name: 'a packed branch', make: () => repo((p) => git(p, 'pack-refs', '--all')), plain: true },
  { name: 'detached HEAD', make: () => repo((p) => git(p, 'checkout', '-q', '--detach')), plain: true },
  { name: 'an unborn branch', make: () => repo((p) => git(p, 'symbolic-ref', 'HEAD', 'refs/heads/nothing-yet')), plain: true },
  {
    name: 'bare',
    make: () => {
      const src = repo(() => {});
      const bare = `${src}-bare.git`;
      git(dir.path, 'clone', '-q', '--bare', src, bare);
      return bare;
    },
    plain: true,
  },
  {
    name: 'an include: left to libgit2',
    make: () =>
      repo((p) => {
        writeFileSync(join(p, 'extra.cfg'), '[remote "origin"]\n\turl = https://example.com/inc.git\n');
        appendFileSync(join(p, '.git', 'config'), `[include]\n\tpath = ${join(p, 'extra.cfg')}\n`);
      }),
    plain: false,
  },
  {
    name: 'an insteadOf rule: left to libgit2',
    make: () =>
      repo((p) =>
        appendFileSync(
          join(p, '.git', 'config'),
          '[url "https://mirror.example.com/"]\n\tinsteadOf = https://example.com/\n[remote "origin"]\n\turl = https://example.com/m.git\n',
        ),
      ),
    plain: false,
  },
  {
    name: 'a continued line: left to libgit2',
    make: () => repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "origin"]\n\turl = https://example.com/\\\ncontinued.git\n')),
    plain: false,
  },
  {
    name: 'a url given twice: left to libgit2',
    make: () =>
      repo((p) => appendFileSync(join(p, '.git', 'config'), '[remote "origin"]\n\turl = https://example.com/one.git\n\turl = https://example.com/two.git\n')),
    plain: false,
  },
  {
    name: 'a worktree (gitfile): left to libgit2',
    make: () => {
      const main = repo(() => {});
      const wt = `${main}-wt`;
      git(main, 'worktree', 'add', '-q', '-b', 'wt', wt);
      return wt;
    },
    plain: false,
  },
  {
    name: 'a submodule-style gitfile: left to libgit2',
    make: () => {
      const main = repo(() => {});
      const other = join(dir.path, `gf${n++}`);
      mkdirSync(other);
      writeFileSync(join(other, '.git'), `gitdir: ${join(main, '.git')}\n`);
      return other;
    },
    plain: false,
  },
];

for (const c of cases) {
  test(`plain head: ${c.name}`, async () => {
    const path = c.make();
    const plain = readPlainHead(path);
    assert.equal(plain !== undefined, c.plain, JSON.stringify(plain));
    // (Compared as the caller reads them: a key that holds nothing is no origin.)
    const same = (x: object) => JSON.parse(JSON.stringify(x)) as unknown;
    if (plain) assert.deepEqual(same(plain), same(await readRepository(path)));
  });
}

test('originUrl: a table of configuration texts', () => {
  const table: Array<[string, string | undefined | null]> = [
    ['', undefined],
    ['[core]\n\tbare = false\n', undefined],
    ['[remote "origin"]\n\turl = a\n', 'a'],
    ['[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\turl = "q\\"uote"\n', 'q"uote'],
    ['[remote "origin"] # c\n\turl = tab\\there\n', 'tab\there'],
    ['[remote "origin"]\n\turl = "unterminated\n', null],
    ['[remote "origin"]\n\turl = bad\\qescape\n', null],
    ['[remote "origin"]\n\turl\n', null],
    ['[remote.origin]\n\turl = legacy\n', null],
    ['[includeIf "gitdir:/x/"]\n\tpath = y\n', null],
    ['garbage line\n', null],
    ['[remote "origin"]\r\n\turl = crlf\r\n', 'crlf'],
  ];
  for (const [text, want] of table) assert.equal(originUrl(text), want, JSON.stringify(text));
});
