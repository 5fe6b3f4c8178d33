import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, symlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isGitRepository } from '../../daemon/repos/git-dir.ts';
import { openGitSource, repoNameFromRemote } from '../../daemon/repos/git.ts';
import { keptTrees } from '../../daemon/repos/tree-entries.ts';
import { compareBytes } from '../../daemon/repos/byte-order.ts';
import { readObjects } from '../../daemon/repos/cat-file.ts';

const temps: string[] = [];
after(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'trawl-git-'));
  temps.push(d);
  return d;
}

function git(cwd: string, ...args: string[]): string {
  // A clean environment: the developer's global config (hooks, signing,
  // templates) must not leak into the fixture.
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, GIT_CONFIG_NOSYSTEM: '1' },
  });
}

const remotes: Array<[string, string | undefined, string | undefined]> = [
  ['git@github.com:org/repo.git', 'github.com/org/repo', 'github'],
  ['https://github.com/org/repo', 'github.com/org/repo', 'github'],
  ['https://github.com/org/repo.git/', 'github.com/org/repo', 'github'],
  ['ssh://git@github.com/org/repo.git', 'github.com/org/repo', 'github'],
  ['https://user:tok@gitlab.com/g/sub/r.git', 'gitlab.com/g/sub/r', 'gitlab'],
  ['git@gitlab.example.com:group/proj.git', 'gitlab.example.com/group/proj', 'gitlab'],
  ['ssh://git@host.example:2222/a/b', 'host.example/a/b', 'genericGitHost'],
  ['git://Host.Example.org/pub/scm/tool.git', 'host.example.org/pub/scm/tool', 'genericGitHost'],
  ['https://bitbucket.org/team/repo.git', 'bitbucket.org/team/repo', 'bitbucketCloud'],
  ['https://bitbucket.corp.com/scm/proj/repo.git', 'bitbucket.corp.com/proj/repo', 'bitbucketServer'],
  ['ssh://git@bitbucket.corp.com:7999/proj/repo.git', 'bitbucket.corp.com/proj/repo', 'bitbucketServer'],
  ['https://org@dev.azure.com/org/project/_git/repo', 'dev.azure.com/org/project/repo', 'azuredevops'],
  ['git@ssh.dev.azure.com:v3/org/project/repo', 'dev.azure.com/org/project/repo', 'azuredevops'],
  ['https://org.visualstudio.com/project/_git/repo', 'org.visualstudio.com/project/repo', 'azuredevops'],
  ['https://gitea.com/owner/repo.git', 'gitea.com/owner/repo', 'gitea'],
  ['https://codeberg.org/owner/repo', 'codeberg.org/owner/repo', 'gitea'],
  ['https://go.googlesource.com/go', 'go.googlesource.com/go', 'gerrit'],
  ['https://gerrit.example.org/a/platform/build', 'gerrit.example.org/platform/build', 'gerrit'],
  ['file:///srv/git/repo.git', undefined, undefined],
  ['/srv/git/repo.git', undefined, undefined],
  ['../sibling', undefined, undefined],
  ['C:/work/repo', undefined, undefined],
  ['https://github.com/', undefined, undefined],
];

test('repoNameFromRemote table', () => {
  for (const [url, name, type] of remotes) {
    const got = repoNameFromRemote(url);
    assert.deepEqual(got, name === undefined ? undefined : { name, codeHostType: type }, url);
  }
});

test('openGitSource reads HEAD of a real repository', async () => {
  const dir = await tempDir();
  const repo = join(dir, 'widgets');
  await mkdir(join(repo, 'src/deep'), { recursive: true });
  await writeFile(join(repo, 'README.md'), '# widgets\n');
  await writeFile(join(repo, 'src/main.c'), 'int main(void) { return 0; }\n');
  await writeFile(join(repo, 'src/deep/util.h'), '#pragma once\n');
  await writeFile(join(repo, 'empty.txt'), '');
  await writeFile(join(repo, 'Zebra'), 'z');
  await writeFile(join(repo, 'src.txt'), 'sorts before src/ since "." < "/"\n');
  await symlink('src/main.c', join(repo, 'link.c'));
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Test');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'config', 'commit.gpgsign', 'false');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  git(repo, 'remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
  await writeFile(join(repo, 'untracked.txt'), 'not committed');
  const sha = git(repo, 'rev-parse', 'HEAD').trim();

  assert.equal(isGitRepository(repo), true);
  const src = await openGitSource(repo);
  try {
    assert.equal(src.name, 'github.com/acme/widgets');
    assert.equal(src.codeHostType, 'github');
    assert.equal(src.remoteUrl, 'git@github.com:acme/widgets.git');
    assert.equal(src.branch, 'main');
    assert.equal(src.commit, sha);
    const versions = await src.versions();
    const sizes = await src.blobSizes(versions.map((f) => f.oid));
    const sized = versions.map((f, i) => [f.path, sizes[i]]);
    assert.deepEqual(sized, [
      ['README.md', 10],
      ['Zebra', 1],
      ['empty.txt', 0],
      ['src.txt', 34],
      ['src/deep/util.h', 13],
      ['src/main.c', 29],
    ]);
    for (const f of await src.versions()) assert.match(f.oid, /^[0-9a-f]{40}$/);
    const main = (await src.versions()).find((f) => f.path === 'src/main.c')!;
    assert.equal(main.oid, git(repo, 'rev-parse', 'HEAD:src/main.c').trim());
    const empty = (await src.versions()).find((f) => f.path === 'empty.txt')!;
    // What a build thread reads (job-blobs.ts): the blobs, from the directory the source names.
    const read = await readObjects(src.gitDir, [main.oid, empty.oid], await src.blobSizes([main.oid, empty.oid]));
    assert.deepEqual(
      read.views.map((v) => Buffer.from(v).toString()),
      ['int main(void) { return 0; }\n', ''],
    );
    await assert.rejects(
      src.blobSizes([main.oid, '0123456789012345678901234567890123456789']),
      /cannot read blob 0123456789012345678901234567890123456789 \(missing\)/,
    );
  } finally {
    src.close();
  }
  await assert.rejects(src.blobSizes(['0123456789012345678901234567890123456789']), /closed/);
  await assert.rejects(src.versions(), /closed/);
});

test('openGitSource: detached HEAD, no origin, bare repository', async () => {
  const dir = await tempDir();
  const repo = join(dir, 'plain');
  await mkdir(repo);
  await writeFile(join(repo, 'a.txt'), 'a\n');
  git(repo, 'init', '-q', '-b', 'trunk');
  git(repo, 'config', 'user.name', 'Test');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'one');
  git(repo, 'checkout', '-q', '--detach');

  const src = await openGitSource(repo);
  assert.equal(src.name, 'plain');
  assert.equal(src.codeHostType, 'genericGitHost');
  assert.equal(src.remoteUrl, undefined);
  assert.equal(src.branch, 'HEAD');
  src.close();

  const bare = join(dir, 'mirror.git');
  git(dir, 'clone', '-q', '--bare', repo, bare);
  assert.equal(isGitRepository(bare), true);
  const b = await openGitSource(bare);
  assert.equal(b.name, 'mirror'); // origin is a local path, so the directory names it
  assert.deepEqual(
    (await b.versions()).map((f) => f.path),
    ['a.txt'],
  );
  b.close();
});

test('openGitSource rejects non-repositories and unborn HEAD', async () => {
  const dir = await tempDir();
  assert.equal(isGitRepository(dir), false);
  await assert.rejects(openGitSource(dir), { message: `not a git repository: ${dir}` });

  const empty = join(dir, 'empty');
  await mkdir(empty);
  git(empty, 'init', '-q', '-b', 'main');
  await assert.rejects(openGitSource(empty), { message: `repository ${empty} has no commits (HEAD is unborn)` });
});

test('compareBytes orders strings as their UTF-8 bytes', () => {
  const table: Array<[string, string]> = [
    ['a', 'b'],
    ['a', 'ab'],
    ['', 'a'],
    ['a.c', 'a/x'],
    ['a/x', 'a0'],
    ['z', 'é'],
    ['é', '\uE000'],
    ['\uE000', '\u{1F600}'],
    ['\uFFFD', '\u{10000}'],
    ['a\u{1F600}', 'a\u{1F601}'],
  ];
  for (const [lo, hi] of table) {
    assert.ok(compareBytes(lo, hi) < 0, `${JSON.stringify(lo)} < ${JSON.stringify(hi)}`);
    assert.ok(compareBytes(hi, lo) > 0);
    assert.equal(compareBytes(lo, lo), 0);
  }
  // Against the bytes themselves, on strings mixing ASCII, two-byte, three-byte and four-byte characters.
  const alphabet = ['a', 'b', '/', '.', 'é', 'ß', '\u4E2D', '\uE000', '\uFFFD', '\u{1F600}', '\u{10000}'];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  const word = () => Array.from({ length: next() % 5 }, () => alphabet[next() % alphabet.length]).join('');
  for (let i = 0; i < 2000; i++) {
    const a = word();
    const b = word();
    assert.equal(Math.sign(compareBytes(a, b)), Buffer.compare(Buffer.from(a), Buffer.from(b)), `${JSON.stringify(a)} against ${JSON.stringify(b)}`);
  }
});

test('a listing after a commit reads only the trees the commit made, and lists what git lists', async () => {
  const repo = join(await tempDir(), 'kept');
  for (const d of ['a/b', 'a/c', 'd']) await mkdir(join(repo, d), { recursive: true });
  // "a.c" and "a-" sort around the folder "a" ("a/"), "é" and "\u{1F600}" after ASCII in byte order.
  const files: Record<string, string> = {
    'a/b/one.c': '1\n',
    'a/b/two.c': '2\n',
    'a/c/three.c': '3\n',
    'd/four.c': '4\n',
    'top.txt': 't\n',
    'a/same.c': '1\n',
    'a.c': 'dot\n',
    'a-': 'dash\n',
    'é.c': 'e\n',
    '\u{1F600}.c': 'smile\n',
    '\uE000.c': 'private use\n',
  };
  for (const [path, text] of Object.entries(files)) await writeFile(join(repo, path), text);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'Test');
  git(repo, 'config', 'user.email', 'test@example.com');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  // The oracle: git's own recursive listing of the commit (blobs only, as a listing keeps).
  const byGit = () =>
    git(repo, 'ls-tree', '-r', '-z', 'HEAD')
      .split('\0')
      .filter((l) => l.length > 0)
      .map((l) => l.split(/\s+/, 3).concat(l.slice(l.indexOf('\t') + 1)))
      .filter(([mode, type]) => type === 'blob' && mode !== '120000')
      .map(([, , oid, path]) => ({ path: path!, oid: oid! }))
      .sort((x, y) => Buffer.compare(Buffer.from(x.path), Buffer.from(y.path)));
  const listed = async () => {
    const src = await openGitSource(repo);
    try {
      return (await src.versions()).map((v) => ({ path: v.path, oid: v.oid, refs: v.refs }));
    } finally {
      src.close();
    }
  };
  assert.deepEqual(
    await listed(),
    byGit().map((v) => ({ ...v, refs: [0] })),
  );
  const before = keptTrees().trees;
  assert.deepEqual(
    await listed(),
    byGit().map((v) => ({ ...v, refs: [0] })),
    'listed again from the kept trees',
  );
  assert.equal(keptTrees().trees, before, 'an unchanged commit reads no tree');

  await writeFile(join(repo, 'a/b/two.c'), '2 changed\n');
  git(repo, 'commit', '-q', '-am', 'one file');
  assert.deepEqual(
    await listed(),
    byGit().map((v) => ({ ...v, refs: [0] })),
  );
  // The root, a and a/b are new trees; a/c and d are as they were.
  assert.equal(keptTrees().trees, before + 3);
});
