// The browsing and history readers (browse.ts, history.ts) against a real repository
// built with the git CLI, which is also the oracle where it can be: ls-tree, log,
// blame --porcelain, diff. A bare clone must read exactly like the work tree.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../daemon/errors.ts';
import { folderContents, listFiles, readSource, tree } from '../../daemon/repos/browse.ts';
import { closeAllRepositories, withRepository } from '../../daemon/repos/git-repo-cache.ts';
import { blame } from '../../daemon/repos/blame.ts';
import { diff, EMPTY_TREE } from '../../daemon/repos/diff.ts';
import { authors, commitInfo, commits } from '../../daemon/repos/history.ts';
import { checkRepoPath } from '../../daemon/repos/repo-path.ts';
import { git, TestRepo } from '../helpers/git.ts';

const root = mkdtempSync(join(tmpdir(), 'trawl-git-read-'));
after(async () => {
  await closeAllRepositories();
  rmSync(root, { recursive: true, force: true });
});

// Fixed author and committer identities and dates make the history (and the commit
// order, which follows committer dates) the same on every run.
function commitAs(repo: TestRepo, who: string, date: string, message: string, files: Record<string, string | Buffer | null> = {}): string {
  return repo.commit(files, message, { author: who, date });
}

const lines = (n: number, edit: Record<number, string> = {}): string =>
  `${Array.from({ length: n }, (_, i) => edit[i + 1] ?? (i === 0 ? 'function main() {' : `  line ${i + 1};`)).join('\n')}\n`;
const BINARY = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 0, 0, 255]);
const ALICE = 'Alice <alice@example.com>';
const BOB = 'Bob <bob@example.com>';

const work = join(root, 'work');
const r = TestRepo.init(work);
const c1 = commitAs(r, ALICE, '2024-01-01T10:00:00Z', 'Initial commit\n\nSets up the project.\nSecond body line.', {
  'README.md': 'hello\n',
  'src/a.ts': lines(30),
  'src/lib/deep/x.txt': 'deep\n',
  'docs/guide.md': 'one\ntwo\nthree\nfour\nfive\nsix\n',
  'image.bin': BINARY,
  'empty.txt': '',
  'no-eol.txt': 'first\nlast',
});
symlinkSync('README.md', join(work, 'link'));
const c2 = commitAs(r, BOB, '2024-02-01T10:00:00Z', 'Change a.ts', { 'src/a.ts': lines(30, { 20: '  changed by bob;' }) });
r.tag('light');
git(work, 'mv', 'docs/guide.md', 'docs/manual.md');
const c3 = commitAs(r, 'Alice Smith <ALICE@Example.com>', '2024-03-01T10:00:00Z', 'Rename guide; drop x', {
  'docs/manual.md': 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n',
  'src/lib/deep/x.txt': null,
});
r.checkout('feature', true);
const c6 = commitAs(r, 'Carol <carol@example.com>', '2024-03-15T10:00:00Z', 'Feature work', {
  'src/a.ts': lines(30, { 20: '  changed by bob;', 25: '  feature;' }),
});
r.checkout('main');
const c4 = commitAs(r, 'Carol <carol@example.com>', '2024-04-01T10:00:00Z', 'Tweak a and manual', {
  'src/a.ts': lines(30, { 2: '  tweaked;', 20: '  changed by bob;' }),
  'docs/manual.md': 'one\ntwo\nTHREE\nfour\nfive\nsix\nseven\n',
  'no-eol.txt': 'first\nlast changed',
});
r.tag('v1.0', true);
// A submodule entry without a submodule: a gitlink in the index, an empty directory in
// the work tree (so that `git add -A` leaves it alone).
git(work, 'update-index', '--add', '--cacheinfo', `160000,${c1},sub`);
mkdirSync(join(work, 'sub'));
const c5 = commitAs(r, BOB, '2024-05-01T10:00:00Z', 'fix: binary update\n\nBody mentions NEEDLE.', { 'image.bin': Buffer.concat([BINARY, BINARY]) });
git(work, 'merge', '-q', '--no-ff', '--no-edit', 'feature');
const merge = r.head();
const bare = join(root, 'bare.git');
git(root, 'clone', '-q', '--bare', work, bare);

// Indexed: main and feature (tags are accepted whether indexed or not).
const indexed = {
  refs: [
    { name: 'main', kind: 'branch' as const, commit: merge },
    { name: 'feature', kind: 'branch' as const, commit: c6 },
  ],
  generation: 1,
};
const opts = { defaultRef: 'main', label: 'example/app', indexed };
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function rejects(p: Promise<unknown>, code: string, match?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ServiceError, `expected ServiceError, got ${String(err)}`);
    assert.equal(err.errorCode, code, err.message);
    if (match) assert.match(err.message, match);
    assert.ok(!err.message.includes(root), `message leaks a server path: ${err.message}`);
    return true;
  });
}

test('readSource: files, symlinks, refs of every kind, in a work tree and a bare clone', async () => {
  for (const dir of [work, bare]) {
    const f = await readSource(dir, { ...opts, path: 'src/a.ts' });
    assert.equal(f.source.toString(), lines(30, { 2: '  tweaked;', 20: '  changed by bob;', 25: '  feature;' }));
    assert.equal(f.blobSha, git(work, 'rev-parse', 'main:src/a.ts').trim());
    assert.equal(f.commit, merge);
    assert.equal((await readSource(dir, { ...opts, path: '/link' })).source.toString(), 'README.md');
    assert.deepEqual((await readSource(dir, { ...opts, path: 'image.bin', ref: 'v1.0' })).source, BINARY);
    const refs: Array<[string, string]> = [
      ['v1.0', c4],
      ['light', c2],
      ['refs/heads/feature', c6],
      ['feature', c6],
      ['HEAD', merge],
      ['main~1', c5],
      ['main^', c5],
      ['main^2', c6],
      [c3, c3],
      [c3.slice(0, 12), c3],
      [git(work, 'rev-parse', '--short=7', c2).trim(), c2],
      [c2.toUpperCase(), c2],
    ];
    for (const [ref, want] of refs) assert.equal((await readSource(dir, { ...opts, ref, path: 'README.md' })).commit, want, ref);
    await rejects(readSource(dir, { ...opts, ref: 'light', path: 'docs/manual.md' }), 'FILE_NOT_FOUND', /does not exist at "light" in example\/app/);
  }
});

test('bad refs are INVALID_GIT_REF', async () => {
  for (const ref of ['-x', 'a..b', 'main...feature', 'nope', ' ', '', 'ma in', 'a\0b', 'main:README.md', ':/Tweak', 'main^{tree}', 'main~99']) {
    await rejects(readSource(work, { ...opts, ref, path: 'README.md' }), 'INVALID_GIT_REF', /ref ".*"/);
  }
  await rejects(commitInfo(work, { ...opts, ref: 'nope' }), 'INVALID_GIT_REF', /does not resolve to a commit in example\/app/);
  await rejects(commitInfo(work, { defaultRef: 'gone', indexed }), 'INVALID_GIT_REF', /default branch "gone"/);
});

test('paths: normalized, and rejected with INVALID_QUERY_PARAMS', async () => {
  assert.equal(checkRepoPath('/src//a.ts/', { allowEmpty: false }), 'src/a.ts');
  assert.equal(checkRepoPath('a\\b', { allowEmpty: false }), 'a\\b');
  assert.equal(checkRepoPath('/', { allowEmpty: true }), '');
  for (const path of ['../x', 'src/../a.ts', './a', 'a/.', 'a\0b', '', '//']) {
    await rejects(readSource(work, { ...opts, path }), 'INVALID_QUERY_PARAMS', /path/);
  }
  await rejects(folderContents(work, { ...opts, path: 'src/..' }), 'INVALID_QUERY_PARAMS');
  await rejects(tree(work, { ...opts, paths: ['a/../b'] }), 'INVALID_QUERY_PARAMS');
});

test('files that are not there, directories, submodules: FILE_NOT_FOUND', async () => {
  await rejects(readSource(work, { ...opts, path: 'src' }), 'FILE_NOT_FOUND', /"src" is a directory/);
  await rejects(readSource(work, { ...opts, path: 'sub' }), 'FILE_NOT_FOUND', /submodule/);
  await rejects(readSource(work, { ...opts, path: 'nope.txt' }), 'FILE_NOT_FOUND', /does not exist at "main"/);
  await rejects(readSource(work, { ...opts, path: 'README.md/x' }), 'FILE_NOT_FOUND');
  await rejects(readSource(work, { ...opts, path: 'src/lib/deep/x.txt' }), 'FILE_NOT_FOUND'); // deleted in c3
  await rejects(folderContents(work, { ...opts, path: 'README.md' }), 'FILE_NOT_FOUND', /not a directory/);
  await rejects(folderContents(work, { ...opts, path: 'nope' }), 'FILE_NOT_FOUND');
  await rejects(tree(work, { ...opts, paths: ['src', 'nope/deeper'] }), 'FILE_NOT_FOUND', /"nope\/deeper"/);
  await rejects(blame(work, { ...opts, path: 'src' }), 'FILE_NOT_FOUND');
  await rejects(blame(work, { ...opts, path: 'sub' }), 'FILE_NOT_FOUND', /submodule/);
  await rejects(blame(work, { ...opts, path: 'missing' }), 'FILE_NOT_FOUND');
});

test('opening something that is not a repository is a plain Error without the path', async () => {
  await assert.rejects(
    withRepository(join(root, 'missing'), async () => 1),
    (err: unknown) => {
      assert.ok(err instanceof Error && !(err instanceof ServiceError));
      assert.ok(!err.message.includes(root));
      return true;
    },
  );
  await assert.rejects(listFiles(join(work, 'src'), opts), /not a git repository/);
});

test('listFiles matches git ls-tree (gitlinks left out), at several refs', async () => {
  for (const ref of ['main', 'light', c3]) {
    const want = git(work, 'ls-tree', '-r', '-z', ref)
      .split('\0')
      .filter((l) => l !== '' && !l.startsWith('160000'))
      .map((l) => l.slice(l.indexOf('\t') + 1))
      .sort(byBytes);
    for (const dir of [work, bare]) {
      const got = await listFiles(dir, { ...opts, ref });
      assert.deepEqual(
        got.map((f) => f.path),
        want,
        ref,
      );
      assert.ok(got.every((f) => f.type === 'blob' && f.path.endsWith(f.name) && !f.name.includes('/')));
    }
  }
});

test('folderContents and tree', async () => {
  const rootList = await folderContents(work, { ...opts, path: '' });
  assert.deepEqual(
    rootList.map((e) => `${e.type} ${e.path}`),
    ['tree docs', 'tree src', 'blob README.md', 'blob empty.txt', 'blob image.bin', 'blob link', 'blob no-eol.txt'],
  );
  assert.deepEqual(await folderContents(work, { ...opts, path: '/src/', ref: c1 }), [
    { type: 'tree', path: 'src/lib', name: 'lib' },
    { type: 'blob', path: 'src/a.ts', name: 'a.ts' },
  ]);
  const leaf = (type: 'tree' | 'blob', path: string) => ({ type, path, name: path.slice(path.lastIndexOf('/') + 1), children: [] });
  const { tree: t } = await tree(bare, { ...opts, ref: c1, paths: ['src/lib/deep/x.txt', 'docs'] });
  assert.deepEqual(t, {
    type: 'tree',
    path: '',
    name: 'root',
    children: [
      { ...leaf('tree', 'docs'), children: [leaf('blob', 'docs/guide.md')] },
      {
        ...leaf('tree', 'src'),
        children: [
          { ...leaf('tree', 'src/lib'), children: [{ ...leaf('tree', 'src/lib/deep'), children: [leaf('blob', 'src/lib/deep/x.txt')] }] },
          leaf('blob', 'src/a.ts'),
        ],
      },
      leaf('blob', 'README.md'),
      leaf('blob', 'empty.txt'),
      leaf('blob', 'image.bin'),
      leaf('blob', 'no-eol.txt'),
    ],
  });
  const shallow = await tree(work, { ...opts, ref: c1, paths: [] });
  assert.deepEqual(
    shallow.tree.children.map((c) => c.children.length),
    [0, 0, 0, 0, 0, 0],
  );
  const viaDir = await tree(work, { ...opts, ref: c1, paths: ['src/lib'] });
  assert.deepEqual(viaDir.tree.children[1]!.children[0]!.children, [leaf('tree', 'src/lib/deep')]);
});

test('commitInfo: message split, author, parents, refs (annotated tags peeled)', async () => {
  const first = await commitInfo(work, { ...opts, ref: c1 });
  assert.deepEqual(first, {
    hash: c1,
    date: '2024-01-01T10:00:00.000Z',
    message: 'Initial commit',
    refs: '',
    body: 'Sets up the project.\nSecond body line.',
    authorName: 'Alice',
    authorEmail: 'alice@example.com',
    author_name: 'Alice',
    author_email: 'alice@example.com',
    parents: [],
  });
  assert.equal((await commitInfo(bare, { ...opts, ref: 'v1.0' })).refs, 'tag: v1.0');
  assert.equal((await commitInfo(work, { ...opts, ref: 'light' })).refs, 'tag: light');
  assert.equal((await commitInfo(work, { ...opts, ref: c6 })).refs, 'feature');
  const head = await commitInfo(work, opts);
  assert.equal(head.hash, merge);
  assert.equal(head.refs, 'HEAD -> main');
  assert.deepEqual(head.parents, [c5, c6]);
  assert.equal(head.body, '');
});

test("refs is git log's %D decoration, commit by commit: HEAD, tags, remote-tracking branches, branches, the stash", async () => {
  // A clone has remote-tracking branches and a symbolic origin/HEAD; notes and a custom
  // namespace are refs git does not decorate; several tags and branches share commits.
  const clone = join(root, 'decorated');
  git(root, 'clone', '-q', work, clone);
  git(clone, 'branch', 'zeta', c4);
  git(clone, 'branch', 'alpha', c4);
  git(clone, 'tag', 'v0.9', c4);
  git(clone, 'tag', '-a', '-m', 'annotated', 'v0.1', c1);
  git(clone, 'update-ref', 'refs/notes/commits', c2);
  git(clone, 'update-ref', 'refs/custom/thing', c3);
  git(clone, 'update-ref', 'refs/stash', c5);
  const oracle = (dir: string): Map<string, string> =>
    new Map(
      git(dir, 'log', '--all', '--format=%H %D')
        .split('\n')
        .filter(Boolean)
        .map((l) => [l.slice(0, 40), l.slice(41)]),
    );
  const check = async (dir: string, what: string): Promise<void> => {
    const want = oracle(dir);
    assert.ok(want.size >= 7, `${what}: the oracle lists every commit`);
    for (const [hash, refs] of want) assert.equal((await commitInfo(dir, { ...opts, ref: hash })).refs, refs, `${what}: ${hash}`);
  };
  await check(work, 'work tree');
  await check(bare, 'bare clone');
  await check(clone, 'clone with remote-tracking branches');
  assert.equal((await commitInfo(clone, { ...opts, ref: c4 })).refs, 'tag: v1.0, tag: v0.9, zeta, alpha');
  git(clone, 'checkout', '-q', '--detach', c4);
  await closeAllRepositories(); // the cached handle must not keep the old HEAD
  await check(clone, 'detached HEAD');
  assert.equal((await commitInfo(clone, { ...opts, ref: c4 })).refs, 'HEAD, tag: v1.0, tag: v0.9, zeta, alpha');
  git(clone, 'checkout', '-q', '--detach', c3);
  await closeAllRepositories();
  await check(clone, 'detached HEAD where no ref shown points');
  assert.equal((await commitInfo(clone, { ...opts, ref: c3 })).refs, 'HEAD');
});

const log = (...args: string[]): string[] =>
  git(work, 'log', '--date-order', '--format=%H', ...args)
    .split('\n')
    .filter(Boolean);

test('commits: order, filters and paging agree with git log', async () => {
  for (const dir of [work, bare]) {
    const all = await commits(dir, { ...opts, page: 1, perPage: 100 });
    assert.deepEqual(
      all.items.map((c) => c.hash),
      log('main'),
    );
    assert.equal(all.total, 7);
    assert.equal(all.items.find((c) => c.hash === c4)!.refs, 'tag: v1.0');
  }
  const page = (n: number) => commits(work, { ...opts, page: n, perPage: 3 });
  const all = log('main');
  assert.deepEqual(
    (await page(1)).items.map((c) => c.hash),
    all.slice(0, 3),
  );
  assert.deepEqual(
    (await page(2)).items.map((c) => c.hash),
    all.slice(3, 6),
  );
  assert.deepEqual(
    (await page(3)).items.map((c) => c.hash),
    all.slice(6),
  );
  assert.deepEqual(await page(9), { items: [], total: 7 });
  for (const n of [1, 2, 3]) assert.equal((await page(n)).total, 7);

  const hashes = async (f: Record<string, string>) => (await commits(work, { ...opts, page: 1, perPage: 50, ...f })).items.map((c) => c.hash);
  assert.deepEqual(await hashes({ author: 'ALICE' }), [c3, c1]);
  assert.deepEqual(await hashes({ author: 'bob@' }), [c5, c2]);
  assert.deepEqual(await hashes({ query: 'needle' }), [c5]);
  assert.deepEqual(await hashes({ query: 'second body' }), [c1]);
  // A date alone is the start of its day, for until too (as in Sourcebot): c4, at 10:00 on April 1, is after it.
  assert.deepEqual(await hashes({ since: '2024-03-01', until: '2024-04-01' }), [c6, c3]);
  assert.deepEqual(await hashes({ since: '2024-03-01', until: '2024-04-01T10:00:00Z' }), [c4, c6, c3]);
  assert.deepEqual(await hashes({ since: '2024-03-01T10:00:01Z' }), log('main', '--since=2024-03-01T10:00:01Z'));
  assert.deepEqual(await hashes({ until: '2024-02-01T11:00:00+01:00' }), [c2, c1]);
  assert.deepEqual(await hashes({ ref: 'feature', author: 'carol' }), [c6]);
  assert.deepEqual(await hashes({ query: 'no such words' }), []);
  // Relative bounds count back from the request's clock.
  const at = Date.parse('2024-04-02T10:00:00Z');
  const relative = async (f: Record<string, string>) => (await commits(work, { ...opts, page: 1, perPage: 50, now: at, ...f })).items.map((c) => c.hash);
  assert.deepEqual(await relative({ until: 'yesterday' }), [c4, c6, c3, c2, c1], 'yesterday at this time: c4 exactly, inclusive');
  assert.deepEqual(await relative({ since: '1 day ago' }), [merge, c5, c4]);
  assert.deepEqual(await relative({ since: 'last month', until: '2 days ago' }), [c6], 'March 2 10:00 to March 31 10:00');
  assert.deepEqual(await relative({ since: '5 weeks ago', until: '2 days ago' }), [c6, c3], 'February 27 10:00 on');
  assert.deepEqual(await relative({ since: '3 Months Ago' }), [merge, c5, c4, c6, c3, c2]);
  for (const bad of [
    { since: 'tomorrow' },
    { since: '2 fortnights ago' },
    { until: '3 days' },
    { until: 'last decade' },
    { until: '2024-02-30' },
    { since: '2024-13-01' },
    { until: '2024-01-01T25:00Z' },
  ]) {
    await rejects(commits(work, { ...opts, page: 1, perPage: 10, ...bad }), 'INVALID_QUERY_PARAMS', /ISO 8601/);
  }
  await rejects(commits(work, { ...opts, page: 0, perPage: 10 }), 'INVALID_QUERY_PARAMS', /page/);
  await rejects(commits(work, { ...opts, page: 1, perPage: 1.5 }), 'INVALID_QUERY_PARAMS', /perPage/);
});

test('commits with a path: those that changed it against their first parent', async () => {
  // The oracle computes the documented rule with the git CLI: the entry at the path in
  // a commit differs from the one in its first parent (or exists, for a root commit).
  const entry = (rev: string, path: string): string => {
    try {
      return execFileSync('git', ['rev-parse', '-q', '--verify', `${rev}:${path}`], {
        cwd: work,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return '';
    }
  };
  for (const path of ['src/a.ts', 'src', 'docs/manual.md', 'docs', 'src/lib/deep/x.txt', 'image.bin', 'sub', 'nope']) {
    const want = log('main').filter((c) => {
      const parents = git(work, 'rev-list', '--parents', '-n1', c).trim().split(' ').slice(1);
      return parents.length === 0 ? entry(c, path) !== '' : entry(c, path) !== entry(parents[0]!, path);
    });
    const got = await commits(bare, { ...opts, path: `/${path}`, page: 1, perPage: 50 });
    assert.deepEqual(
      got.items.map((c) => c.hash),
      want,
      path,
    );
    assert.equal(got.total, want.length);
  }
  // Simple git log agrees where the first parent is the only one to compare with.
  assert.deepEqual(
    (await commits(work, { ...opts, path: 'docs', page: 1, perPage: 50 })).items.map((c) => c.hash),
    log('main', '--', 'docs'),
  );
});

test('authors: grouped by email case-insensitively, named as most recently', async () => {
  const all = await authors(work, { ...opts, page: 1, perPage: 10 });
  assert.deepEqual(all, {
    items: [
      { name: 'Alice Smith', email: 'ALICE@Example.com', commitCount: 2 },
      { name: 'Bob', email: 'bob@example.com', commitCount: 2 },
      { name: 'Carol', email: 'carol@example.com', commitCount: 2 },
      { name: 'Test', email: 'test@example.com', commitCount: 1 }, // the merge, by the helper's identity
    ],
    total: 4,
  });
  assert.deepEqual(await authors(bare, { ...opts, page: 2, perPage: 3 }), { items: [all.items[3]], total: 4 });
  assert.deepEqual(await authors(work, { ...opts, page: 3, perPage: 3 }), { items: [], total: 4 });
  const docs = await authors(work, { ...opts, path: 'docs', page: 1, perPage: 10 });
  assert.deepEqual(
    docs.items.map((a) => [a.name, a.commitCount]),
    [
      ['Alice Smith', 2],
      ['Carol', 1],
    ],
  );
});

/** Per line: [commit, path in that commit]; and each commit's "previous" line, from git blame --porcelain. */
function porcelainBlame(rev: string, path: string): { lines: Array<[string, string]>; previous: Map<string, string> } {
  const out = git(work, 'blame', '--porcelain', rev, '--', path).split('\n');
  const lines: Array<[string, string]> = [];
  const previous = new Map<string, string>();
  const fileOf = new Map<string, string>();
  let current = '';
  for (const l of out) {
    const head = /^([0-9a-f]{40}) \d+ \d+/.exec(l);
    if (head) current = head[1]!;
    else if (l.startsWith('previous ')) previous.set(current, l.slice('previous '.length));
    else if (l.startsWith('filename ')) fileOf.set(current, l.slice('filename '.length));
    else if (l.startsWith('\t')) lines.push([current, fileOf.get(current)!]);
  }
  return { lines, previous };
}

test('blame agrees with git blame --porcelain, renames followed', async () => {
  for (const [rev, path] of [
    ['main', 'src/a.ts'],
    ['main', 'docs/manual.md'],
    ['v1.0', 'no-eol.txt'],
    [c2, 'src/a.ts'],
    ['main', 'link'],
  ] as const) {
    const want = porcelainBlame(rev, path);
    const got = await blame(bare, { ...opts, ref: rev, path });
    const perLine: Array<[string, string]> = [];
    let next = 1;
    for (const range of got.ranges) {
      assert.equal(range.startLine, next, `${path}: ranges are contiguous`);
      for (let i = 0; i < range.lineCount; i++) perLine.push([range.hash, range.path]);
      next += range.lineCount;
    }
    assert.deepEqual(perLine, want.lines, `${rev}:${path}`);
    assert.deepEqual(Object.keys(got.commits).sort(), [...new Set(want.lines.map(([h]) => h))].sort());
    for (const c of Object.values(got.commits)) {
      const info = await commitInfo(work, { ...opts, ref: c.hash });
      assert.deepEqual([c.date, c.message, c.authorName, c.authorEmail], [info.date, info.message, info.authorName, info.authorEmail]);
      // git names the parent even across a rename; the documented rule only when the parent has the path.
      const g = want.previous.get(c.hash);
      if (c.previous !== undefined) assert.equal(`${c.previous.hash} ${c.previous.path}`, g);
      else assert.ok(g === undefined || !g.endsWith(` ${perLine.find(([h]) => h === c.hash)![1]}`), `${c.hash}: ${g}`);
    }
  }
  const manual = await blame(work, { ...opts, path: 'docs/manual.md' });
  assert.deepEqual(
    manual.ranges.map((r) => [r.hash, r.path, r.startLine, r.lineCount]),
    [
      [c1, 'docs/guide.md', 1, 2],
      [c4, 'docs/manual.md', 3, 1],
      [c1, 'docs/guide.md', 4, 3],
      [c3, 'docs/manual.md', 7, 1],
    ],
  );
  assert.deepEqual(manual.commits[c4]!.previous, { hash: c3, path: 'docs/manual.md' });
  assert.equal(manual.commits[c3]!.previous, undefined); // renamed in c3: its parent has no docs/manual.md
  assert.equal(manual.commits[c1]!.previous, undefined); // root commit
  for (const path of ['image.bin', 'empty.txt']) assert.deepEqual(await blame(work, { ...opts, path }), { ranges: [], commits: {} });
});

/** git diff's unified output in the readers' shape. */
function gitDiff(...args: string[]): Array<{ oldPath: string | null; newPath: string | null; hunks: Array<Record<string, unknown>> }> {
  const files: ReturnType<typeof gitDiff> = [];
  let body: string[] | undefined; // the current hunk's lines; undefined between a file header and its first hunk
  const flush = (): void => {
    const hunks = files[files.length - 1]?.hunks;
    if (body !== undefined && hunks !== undefined) hunks[hunks.length - 1]!.body = body.join('\n');
  };
  for (const l of git(work, 'diff', '--no-color', '--no-ext-diff', '-M', ...args).split('\n')) {
    const start = /^diff --git a\/(.*) b\/(.*)$/.exec(l);
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/.exec(l);
    if (start) {
      flush();
      files.push({ oldPath: start[1]!, newPath: start[2]!, hunks: [] });
      body = undefined;
    } else if (l.startsWith('new file mode')) files[files.length - 1]!.oldPath = null;
    else if (l.startsWith('deleted file mode')) files[files.length - 1]!.newPath = null;
    else if (hunk) {
      flush();
      body = [];
      const h: Record<string, unknown> = { oldRange: { start: +hunk[1]!, lines: +(hunk[2] ?? 1) }, newRange: { start: +hunk[3]!, lines: +(hunk[4] ?? 1) } };
      if (hunk[5]!.trim() !== '') h.heading = hunk[5]!.trim();
      files[files.length - 1]!.hunks.push(h);
    } else if (body !== undefined && /^[-+ \\]/.test(l)) body.push(l);
  }
  flush();
  return files;
}

test('diff agrees with git diff: hunks, headings, renames, adds, deletes, binaries', async () => {
  for (const [base, head] of [
    [c1, 'main'],
    [c1, c3],
    [c3, 'v1.0'],
    ['light', 'feature'],
    ['main', c1],
    ['v1.0', 'main'],
  ]) {
    const got = await diff(bare, { base, head, defaultRef: 'main', indexed });
    assert.deepEqual(got, { files: gitDiff(base, head) }, `${base}..${head}`);
  }
  const full = await diff(work, { base: c1, head: 'main', defaultRef: 'main', indexed });
  assert.ok(full.files.some((f) => f.oldPath === 'docs/guide.md' && f.newPath === 'docs/manual.md'));
  assert.ok(full.files.some((f) => f.oldPath === 'src/lib/deep/x.txt' && f.newPath === null));
  assert.deepEqual(full.files.find((f) => f.oldPath === 'image.bin')!.hunks, []);
  assert.ok(full.files.find((f) => f.newPath === 'src/a.ts')!.hunks.some((h) => h.heading === 'function main() {'));
  for (const path of ['src', 'docs/manual.md', 'no-eol.txt', 'nope']) {
    assert.deepEqual(await diff(work, { base: c1, head: 'v1.0', path, defaultRef: 'main', indexed }), { files: gitDiff(c1, 'v1.0', '--', path) }, path);
  }
  assert.deepEqual(await diff(work, { base: 'main', head: 'main', defaultRef: 'main', indexed }), { files: [] });
  // A root commit against git's empty tree: every file added, as git diff shows it.
  const root = await diff(bare, { base: EMPTY_TREE, head: c1, defaultRef: 'main', indexed });
  assert.deepEqual(root, { files: gitDiff(EMPTY_TREE, c1) });
  assert.ok(root.files.length > 3 && root.files.every((f) => f.oldPath === null));
  assert.ok(root.files.find((f) => f.newPath === 'src/a.ts')!.hunks[0]!.body.startsWith('+function main() {'));
  assert.ok((await diff(work, { base: c1, head: EMPTY_TREE, defaultRef: 'main', indexed })).files.every((f) => f.newPath === null));
  await rejects(diff(work, { base: 'a..b', head: 'main', defaultRef: 'main', indexed }), 'INVALID_GIT_REF');
  await rejects(diff(work, { base: 'main', head: '-p', defaultRef: 'main', indexed }), 'INVALID_GIT_REF');
  await rejects(diff(work, { base: 'main', head: c1, path: '../etc', defaultRef: 'main', indexed }), 'INVALID_QUERY_PARAMS');
});

test('diff stops after 1000 files and says so', async () => {
  const many = TestRepo.init(join(root, 'many'));
  const base = many.commit({ 'keep.txt': 'x\n' }, 'base');
  many.commit(Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f/${String(i).padStart(4, '0')}.txt`, `${i}\n`])), 'many');
  const got = await diff(many.path, { base, head: 'main', defaultRef: 'main', indexed });
  assert.equal(got.truncated, true);
  assert.equal(got.files.length, 1000);
  assert.deepEqual(got.files[999], {
    oldPath: null,
    newPath: 'f/0999.txt',
    hunks: [{ oldRange: { start: 0, lines: 0 }, newRange: { start: 1, lines: 1 }, body: '+999' }],
  });
});

test('repository handles are reused; past 16 the least recently used is let go', async () => {
  const handle = () => withRepository(work, async (repo) => repo);
  const first = await handle();
  assert.equal(await handle(), first);
  for (let i = 0; i < 16; i++) {
    const other = join(root, `empty${i}.git`);
    git(root, 'init', '-q', '--bare', other);
    await withRepository(other, async () => undefined);
  }
  assert.notEqual(await handle(), first);
});
