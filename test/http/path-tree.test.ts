// The tree of a directory repository, made from its file paths, follows the rules of a git
// tree read through nodegit (repos/browse.ts tree()): the same answer for the same files
// and paths, names whose order git and plain byte order disagree on included. A path that
// is neither a file nor a directory is FILE_NOT_FOUND, the first of them named.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import { nodeAt, pathTree } from '../../daemon/http/path-tree.ts';
import { listFiles, tree } from '../../daemon/repos/browse.ts';
import { closeAllRepositories } from '../../daemon/repos/git-repo-cache.ts';
import type { RevisionScope } from '../../daemon/repos/revision.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const dir = tempDir('path-tree');
after(async () => {
  await closeAllRepositories();
  dir.cleanup();
});

// "a" is a directory and "a-b", "a.c", "a0" sort around it differently as "a/" (git's
// order) and as "a" (by name); names outside ASCII sort by their UTF-8 bytes.
const FILES = ['a/x.c', 'a/y/z.c', 'a-b/1.c', 'a.c', 'a0', 'b/é.c', 'b/e.c', 'b/ž/deep/f.c', 'B.md', 'README', 'z/😀.txt', 'z/a b.txt'];
const repo = TestRepo.init(`${dir.path}/repo`);
repo.commit(Object.fromEntries(FILES.map((f) => [f, `${f}\n`])));
/** The repository read at its one indexed branch. */
const scope: RevisionScope = { defaultRef: 'main', indexed: { refs: [{ name: 'main', kind: 'branch', commit: repo.head() }], generation: 1 } };

const EXPANDS: string[][] = [[], [''], ['a'], ['a/y'], ['a/y/z.c'], ['b/ž/deep', 'z'], ['a', 'a-b', 'b', 'b/ž', 'b/ž/deep', 'z', 'a/y'], ['README']];

for (const expand of EXPANDS) {
  test(`pathTree matches the git tree, expanding ${JSON.stringify(expand)}`, async () => {
    const paths = (await listFiles(repo.path, scope)).map((f) => f.path);
    const want = await tree(repo.path, { ...scope, paths: expand });
    assert.equal(JSON.stringify(await pathTree(paths, expand)), JSON.stringify(want.tree));
  });
}

test('pathTree: a path that is neither a file nor a directory is FILE_NOT_FOUND, the first such named', async () => {
  const paths = (await listFiles(repo.path, scope)).map((f) => f.path);
  for (const [expand, missing] of [
    [['a', 'nope', 'gone'], 'nope'],
    [['a/y/z'], 'a/y/z'],
    [['b/é'], 'b/é'],
    [['a-'], 'a-'],
  ] as Array<[string[], string]>) {
    await assert.rejects(
      pathTree(paths, expand),
      (err: unknown) => err instanceof ServiceError && err.errorCode === 'FILE_NOT_FOUND' && err.message.includes(`"${missing}"`),
    );
  }
});

test('nodeAt finds a directory of the tree, or nothing', async () => {
  const root = await pathTree(FILES, ['b/ž']);
  assert.deepEqual(
    nodeAt(root, 'b/ž')!.children.map((c) => c.path),
    ['b/ž/deep'],
  );
  assert.equal(nodeAt(root, ''), root);
  assert.equal(nodeAt(root, 'b/nope'), undefined);
});
