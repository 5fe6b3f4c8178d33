// The history walk against git itself: for every commit, the file versions the walk says
// it holds are exactly the regular files of `git ls-tree -r` at that commit; parents match
// `git rev-list --parents`; a limit keeps the newest commits and still gets their trees right.
// A walk extended with new commits (a branch, a merge, a revert, tags, a deletion) is the
// whole walk of the new tips, as sets; and the cache of walks extends, or walks whole.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { extendWalk, walkHistory } from '../../daemon/history/history-walk.ts';
import { WalkCache } from '../../daemon/history/walk-cache.ts';
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

/** A walk as sets: its commits, each commit's parents, and each version's commits, by id. */
function canonical(walk: Awaited<ReturnType<typeof walkHistory>>): unknown {
  return {
    commits: [...walk.commits].sort(),
    parents: walk.commits.map((c, i) => `${c}<${walk.parents[i]!.map((p) => walk.commits[p]).join(',')}`).sort(),
    versions: walk.versions
      .map(
        (v) =>
          `${v.path}\0${v.oid}:${v.commits
            .map((c) => walk.commits[c])
            .sort()
            .join(',')}`,
      )
      .sort(),
    leftOut: walk.leftOut,
  };
}

/** A walk's own order: parents before children, versions sorted by path bytes then blob id, each once. */
function assertOrdered(walk: Awaited<ReturnType<typeof walkHistory>>, label: string): void {
  walk.parents.forEach((ps, i) => ps.forEach((p) => assert.ok(p < i, `${label}: a parent after its child`)));
  const keys = walk.versions.map((v) => `${v.path}\0${v.oid}`);
  assert.deepEqual(
    keys,
    [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    `${label}: versions out of order`,
  );
  assert.equal(new Set(keys).size, keys.length, `${label}: a version twice`);
  for (const v of walk.versions)
    assert.deepEqual(
      v.commits,
      [...v.commits].sort((a, b) => a - b),
      `${label}: commits not ascending`,
    );
}

test('a walk extended with the commits new tips add is the whole walk of those tips; a lost commit means walking whole', async () => {
  const dir = tempDir('trawl-history-walk-');
  try {
    const path = join(dir.path, 'repo');
    const { repo } = makeHistoryRepo(path, 13);
    const at = (rev: string) => git(path, 'rev-parse', `${rev}^{commit}`).trim();
    let tips = [at('main'), at('v0.1')];
    let walk = await walkHistory(path, tips, { maxCommits: 10_000 });
    const frozen = JSON.stringify(canonical(walk));
    const first = walk;
    const steps: Array<[string, () => string[]]> = [
      ['a commit on main', () => (repo.commit({ 'src/a.c': 'one more line\n' }, 'more'), [at('main'), at('v0.1')])],
      [
        'a branch from an older commit, two commits on it',
        () => {
          git(path, 'checkout', '-q', '-b', 'side', 'main~3');
          repo.commit({ 'side.txt': 'side one\n', 'src/b.c': 'side rewrite\n' }, 'side one');
          repo.commit({ 'side.txt': 'side two\n', 'src/a.c': null }, 'side two');
          git(path, 'checkout', '-q', 'main');
          return [at('main'), at('v0.1'), at('side')];
        },
      ],
      [
        'the branch merged, a revert to an old blob, a tag on an old commit',
        () => {
          git(path, 'merge', '-q', '--no-ff', '-X', 'theirs', '-m', 'merge side', 'side');
          const old = git(path, 'show', `${at('v0.1')}:README.md`);
          repo.commit({ 'README.md': old }, 'README as it was at v0.1');
          git(path, 'tag', 'old-one', 'main~5');
          return [at('main'), at('v0.1'), at('side'), at('old-one')];
        },
      ],
      ['the branch deleted (its commits still reached through the merge)', () => [at('main'), at('v0.1'), at('old-one')]],
    ];
    for (const [label, step] of steps) {
      const next = step();
      const extended = await extendWalk(path, walk, tips, next, { maxCommits: 10_000 });
      assert.ok(extended !== undefined, label);
      const whole = await walkHistory(path, next, { maxCommits: 10_000 });
      assert.deepEqual(canonical(extended), canonical(whole), label);
      assertOrdered(extended, label);
      walk = extended;
      tips = next;
    }
    assert.equal(JSON.stringify(canonical(first)), frozen, 'the walk extended from is left as it was');
    // main moved back past commits nothing else reaches; a limit the new commits would pass.
    assert.equal(await extendWalk(path, walk, tips, [at('main~2'), at('v0.1'), at('old-one')], { maxCommits: 10_000 }), undefined);
    repo.commit({ 'src/b.c': 'again\n' }, 'again');
    assert.equal(await extendWalk(path, walk, tips, [at('main'), at('v0.1'), at('old-one')], { maxCommits: walk.commits.length }), undefined);
  } finally {
    dir.cleanup();
  }
});

test('the walk cache extends the walk it holds, walks whole what it cannot extend, and holds no more entries than its bound', async () => {
  const dir = tempDir('trawl-history-walk-');
  try {
    const path = join(dir.path, 'repo');
    const { repo } = makeHistoryRepo(path, 17, 10);
    const main = () => git(path, 'rev-parse', 'main').trim();
    const cache = new WalkCache();
    const limits = { maxCommits: 10_000 };
    assert.equal((await cache.walk(path, [main()], limits)).extended, false);
    assert.equal((await cache.walk(path, [main()], limits)).extended, true, 'the same tips: the walk held');
    repo.commit({ 'new.txt': 'new\n' }, 'new');
    const { walk, extended } = await cache.walk(path, [main()], limits);
    assert.equal(extended, true);
    assert.deepEqual(canonical(walk), canonical(await walkHistory(path, [main()], limits)));
    git(path, 'reset', '-q', '--hard', 'HEAD~1');
    assert.equal((await cache.walk(path, [main()], limits)).extended, false, 'a commit lost: walked whole');
    assert.equal((await cache.walk(path, [main()], { maxCommits: 5 })).extended, false, 'another limit: walked whole');
    const tiny = new WalkCache(10);
    await tiny.walk(path, [main()], limits);
    assert.equal((await tiny.walk(path, [main()], limits)).extended, false, 'a walk past the bound is not held');
  } finally {
    dir.cleanup();
  }
});
