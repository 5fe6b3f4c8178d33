// The indexer: a real git repository made in the test (the tree at HEAD, not the work
// tree; the name from origin; shards cut by size), re-indexing that replaces shards
// atomically, and leftovers of a crashed run cleaned up without touching the index.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } });
}

const search = (s: Searcher, query: string) =>
  s.search({ query, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });

test('a git repository is indexed at HEAD, named from origin, cut into shards by size', async () => {
  const dir = tempDir('idx-git');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 1 });
  try {
    const repo = join(dir.path, 'widgets');
    mkdirSync(join(repo, 'src'), { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'user.email', 't@example.com');
    git(repo, 'config', 'user.name', 'T');
    for (let i = 0; i < 40; i++) writeFileSync(join(repo, 'src', `f${String(i).padStart(2, '0')}.c`), `int widget_${i}(void) { return ${i}; }\n`.repeat(50));
    writeFileSync(join(repo, 'README.md'), 'committed text\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'first');
    git(repo, 'remote', 'add', 'origin', 'git@github.com:acme/widgets.git');
    // Uncommitted changes are not in HEAD's tree: they must not be indexed.
    writeFileSync(join(repo, 'README.md'), 'uncommitted text\n');
    writeFileSync(join(repo, 'untracked.c'), 'int untracked;\n');

    const summary = await indexLocal(repo, { dataDir: join(dir.path, 'data'), shardTargetBytes: 16 * 1024, workers: 2 });
    assert.equal(summary.repoName, 'github.com/acme/widgets');
    assert.equal(summary.kind, 'git');
    assert.equal(summary.files, 41);
    assert.ok(summary.shards >= 4, `expected several shards, got ${summary.shards}`);

    searcher.refresh();
    assert.equal((await search(searcher, 'uncommitted')).files.length, 0);
    assert.equal((await search(searcher, 'untracked')).files.length, 0);
    const res = await search(searcher, 'committed text');
    assert.deepEqual(
      res.files.map((f) => f.fileName.text),
      ['README.md'],
    );
    const f = res.files[0]!;
    assert.deepEqual(f.branches, ['main']);
    assert.equal(f.externalWebUrl, 'https://github.com/acme/widgets/blob/main/README.md');
    assert.deepEqual(res.repositoryInfo, [
      {
        id: summary.repoId,
        codeHostType: 'github',
        name: 'github.com/acme/widgets',
        displayName: 'acme/widgets',
        webUrl: 'http://127.0.0.1:3000/github.com/acme/widgets',
      },
    ]);
    // Every file, across all shards, in path order.
    const all = await search(searcher, 'widget_');
    assert.equal(all.files.length, 40);
    assert.deepEqual(
      all.files.map((x) => x.fileName.text),
      [...all.files.map((x) => x.fileName.text)].sort(),
    );
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test('re-indexing replaces the shards atomically and removes leftovers of crashed runs', async () => {
  const dir = tempDir('idx-re');
  const data = join(dir.path, 'data');
  const src = join(dir.path, 'proj');
  mkdirSync(src);
  writeFileSync(join(src, 'a.txt'), 'version one\n');
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const first = await indexLocal(src, { dataDir: data });
    const shardDir = shardsDir(data, first.repoId);
    const firstFiles = readdirSync(shardDir).sort();
    // What a crash mid-write leaves behind: a temporary shard file.
    writeFileSync(join(shardDir, 'g9-0.trawl.tmp-1-deadbeef'), 'partial');
    searcher.refresh();
    assert.equal((await search(searcher, 'version one')).files.length, 1);

    writeFileSync(join(src, 'a.txt'), 'version two\n');
    const second = await indexLocal(src, { dataDir: data });
    assert.equal(second.repoId, first.repoId, 'the id of a repository is stable');
    assert.equal(readManifest(data, first.repoId)!.generation, 2);
    // The first generation is retired, not deleted: a search that started before the
    // swap may still open it (manifest.ts); the crashed run's leftover is gone.
    const secondFiles = readdirSync(shardDir).sort();
    assert.deepEqual(secondFiles, ['g1-0.trawl', 'g2-0.trawl', 'manifest.json']);
    assert.deepEqual(
      readManifest(data, first.repoId)!.retired.map((r) => r.file),
      ['g1-0.trawl'],
    );
    assert.deepEqual(firstFiles, ['g1-0.trawl', 'manifest.json']);

    searcher.refresh();
    assert.equal((await search(searcher, 'version one')).files.length, 0);
    assert.equal((await search(searcher, 'version two')).files.length, 1);

    // Another repository gets the next id; ids are never reused.
    const other = join(dir.path, 'other');
    mkdirSync(other);
    assert.equal((await indexLocal(other, { dataDir: data })).repoId, first.repoId + 1);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});
