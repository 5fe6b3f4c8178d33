// The history walk against git itself: for every commit, the file versions the walk says
// it holds are exactly the regular files of `git ls-tree -r` at that commit; parents match
// `git rev-list --parents`; a limit keeps the newest commits and still gets their trees right.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { walkHistory } from '../../daemon/history/history-walk.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';

function treeOf(path: string, commit: string): string[] {
  return git(path, 'ls-tree', '-r', '-z', '--full-tree', commit)
    .split('\0')
    .filter((e) => e !== '')
    .filter((e) => /^100(644|755) blob /.test(e))
    .map((e) => {
      const [meta, file] = e.split('\t');
      return `${file}\0${meta!.split(' ')[2]}`;
    })
    .sort();
}

function walkedTrees(walk: Awaited<ReturnType<typeof walkHistory>>): Map<string, string[]> {
  const trees = new Map<string, string[]>(walk.commits.map((c) => [c, []]));
  for (const v of walk.versions) for (const c of v.commits) trees.get(walk.commits[c]!)!.push(`${v.path}\0${v.oid}`);
  for (const t of trees.values()) t.sort();
  return trees;
}

test('the walk holds every commit the refs reach, each with its exact tree and parents', async () => {
  const dir = tempDir('trawl-history-walk-');
  try {
    const path = join(dir.path, 'repo');
    const { commits, dropped } = makeHistoryRepo(path, 7);
    const walk = await walkHistory(path, [git(path, 'rev-parse', 'main').trim(), git(path, 'rev-parse', 'v0.1^{commit}').trim()], { maxCommits: 10_000 });
    assert.equal(walk.leftOut, 0);
    assert.deepEqual([...walk.commits].sort(), [...commits].sort());
    assert.ok(!walk.commits.includes(dropped), 'a commit no ref reaches is not walked');
    const trees = walkedTrees(walk);
    for (const c of commits) assert.deepEqual(trees.get(c), treeOf(path, c), `tree of ${c}`);
    const parents = new Map(
      git(path, 'rev-list', '--parents', 'main')
        .trim()
        .split('\n')
        .map((l) => {
          const [c, ...ps] = l.split(' ');
          return [c!, ps] as const;
        }),
    );
    walk.commits.forEach((c, i) =>
      assert.deepEqual(
        walk.parents[i]!.map((p) => walk.commits[p]),
        parents.get(c),
        `parents of ${c}`,
      ),
    );
    // Parents come before their children.
    walk.parents.forEach((ps, i) => ps.forEach((p) => assert.ok(p < i)));
    // Versions sorted by path bytes, then blob id, each listed once.
    const keys = walk.versions.map((v) => `${v.path}\0${v.oid}`);
    assert.deepEqual(
      keys,
      [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    assert.equal(new Set(keys).size, keys.length);
  } finally {
    dir.cleanup();
  }
});

test('a limit keeps the newest commits, with trees read whole where their parents were left out', async () => {
  const dir = tempDir('trawl-history-walk-');
  try {
    const path = join(dir.path, 'repo');
    makeHistoryRepo(path, 11);
    const all = git(path, 'rev-list', '--count', 'main').trim();
    const walk = await walkHistory(path, [git(path, 'rev-parse', 'main').trim()], { maxCommits: 6 });
    assert.equal(walk.commits.length, 6);
    assert.equal(walk.leftOut, Number(all) - 6);
    const newest = git(path, 'rev-list', '--topo-order', '--max-count=6', 'main').trim().split('\n');
    assert.deepEqual([...walk.commits].sort(), [...newest].sort());
    const trees = walkedTrees(walk);
    for (const c of walk.commits) assert.deepEqual(trees.get(c), treeOf(path, c), `tree of ${c}`);
  } finally {
    dir.cleanup();
  }
});

test('a repository with no commit reachable has an empty history', async () => {
  const dir = tempDir('trawl-history-walk-');
  try {
    const walk = await walkHistory(dir.path, [], { maxCommits: 10 });
    assert.deepEqual(walk, { commits: [], parents: [], versions: [], leftOut: 0 });
  } finally {
    dir.cleanup();
  }
});
