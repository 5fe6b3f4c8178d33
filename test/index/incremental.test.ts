// Incremental re-indexing: a repository whose refs did not move is left alone; one that
// moved gets a delta shard and membership files, and searches after any sequence of
// commits give exactly what a full rebuild gives (the full rebuild is the oracle).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { MAX_DELTA_SHARDS } from '../../daemon/index/delta.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const opts = { workers: 1, symbols: false, revisions: { branches: ['*'] } };

const search = (s: Searcher, query: string) =>
  s.search({ query, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });

async function results(s: Searcher, query: string): Promise<string[]> {
  const r = await search(s, query);
  assert.equal(r.stats.crashes, 0);
  return r.files.map((f) => `${f.fileName.text}@${f.branches.join(',')}: ${f.chunks.map((c) => c.content).join('|')}`).sort();
}

test('unchanged refs are not re-indexed; a one-file change builds one file', async () => {
  const dir = tempDir('incr');
  const data = join(dir.path, 'data');
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`src/f${i}.c`] = `int file_${i}_body;\n`;
    repo.commit(files);
    repo.checkout('dev', true).commit({ 'dev.c': 'int dev_only;\n' });
    repo.checkout('main');

    const first = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.equal(first.mode, 'full');
    assert.equal(first.files, 51);

    const again = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.equal(again.mode, 'unchanged');
    assert.equal(readManifest(data, first.repoId)!.generation, 1, 'an unchanged repository gets no new generation');

    repo.checkout('dev').commit({ 'src/f7.c': 'int file_7_changed_on_dev;\n' });
    repo.checkout('main'); // a work tree's checked-out branch is its default branch
    const delta = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.equal(delta.mode, 'delta');
    assert.equal(delta.builtFiles, 1);
    assert.equal(delta.files, 52);
    const m = readManifest(data, first.repoId)!;
    assert.equal(m.generation, 2);
    assert.deepEqual(
      m.shards.map((s) => [s.delta, s.membership !== undefined]),
      [
        [false, true],
        [true, false],
      ],
    );

    assert.deepEqual(await results(searcher, 'file_7_'), ['src/f7.c@main: int file_7_body;']);
    assert.deepEqual(await results(searcher, 'file_7_ branch:*'), ['src/f7.c@dev: int file_7_changed_on_dev;', 'src/f7.c@main: int file_7_body;']);
    assert.deepEqual(await results(searcher, 'file_8_ branch:*'), ['src/f8.c@main,dev: int file_8_body;']);

    // The same change on main too: the delta version gains main, the old one is dead.
    repo.checkout('main').commit({ 'src/f7.c': 'int file_7_changed_on_dev;\n' });
    const merged = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.equal(merged.mode, 'delta');
    assert.equal(merged.builtFiles, 0, 'the new main version was already indexed (from dev)');
    assert.deepEqual(await results(searcher, 'file_7_ branch:*'), ['src/f7.c@main,dev: int file_7_changed_on_dev;']);
    assert.equal(merged.files, 51);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test('a shard of skipped files alone keeps their record through delta runs: they are not read again', async () => {
  const dir = tempDir('incr');
  const data = join(dir.path, 'data');
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    const binaries: Record<string, Uint8Array> = {};
    for (let i = 0; i < 6; i++) binaries[`assets/b${i}.bin`] = Uint8Array.from({ length: 256 }, (_, k) => (k * 7 + i) & 0xff);
    repo.commit(binaries, 'binaries only');
    const first = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.deepEqual([first.mode, first.files, first.skipped], ['full', 0, 6]);
    // The first delta's shard holds the text file; the first shard, no live document but its skipped list.
    repo.commit({ 'a.txt': 'text one\n' });
    const one = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.deepEqual([one.mode, one.builtFiles], ['delta', 1]);
    assert.equal(readManifest(data, first.repoId)!.shards.length, 2, 'the shard of skipped files is kept');
    repo.commit({ 'a.txt': 'text two\n' });
    const two = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.deepEqual([two.mode, two.builtFiles, two.skipped], ['delta', 1, 0], 'the binaries are not read again');
    // Once no ref holds them, the shard goes.
    repo.commit(Object.fromEntries(Object.keys(binaries).map((p) => [p, null])), 'binaries gone');
    const gone = await indexLocal(repo.path, { dataDir: data, ...opts });
    assert.equal(gone.mode, 'delta');
    assert.ok(
      readManifest(data, first.repoId)!.shards.every((s) => s.docs > 0),
      'no shard without documents is left',
    );
  } finally {
    dir.cleanup();
  }
});

test('delta runs agree with full rebuilds after random commits, and delta shards stay bounded', async () => {
  const dir = tempDir('incr-diff');
  const incData = join(dir.path, 'inc');
  const fullData = join(dir.path, 'full');
  const inc = new Searcher({ dataDir: incData, workers: 1 });
  const full = new Searcher({ dataDir: fullData, workers: 1 });
  const r = prng(20261122);
  const words = ['alpha', 'beta', 'gamma', 'delta', 'omega', 'sigma'];
  const text = () => `${Array.from({ length: 1 + r.int(4) }, () => `${r.pick(words)}_${r.int(5)}`).join(' ')}\n`;
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    const initial: Record<string, string> = {};
    for (let i = 0; i < 30; i++) initial[`d${i % 4}/f${i}.txt`] = text();
    repo.commit(initial);
    const branches = ['main', 'b1', 'b2', 'release/x'];
    for (const b of branches.slice(1)) repo.checkout(b, true).checkout('main');
    const modes: string[] = [];
    for (let round = 0; round < 11; round++) {
      // A few commits on random branches: modify, add, delete, rename, binary.
      for (let c = 0; c < 1 + r.int(3); c++) {
        repo.checkout(r.pick(branches));
        const change: Record<string, string | Uint8Array | null> = {};
        for (let k = 0; k < 1 + r.int(3); k++) {
          const i = r.int(40);
          const path = `d${i % 4}/f${i}.txt`;
          const op = r.int(10);
          if (op < 6) change[path] = text();
          else if (op < 8) change[path] = null;
          else if (op < 9) change[`moved/${path}`] = text();
          else change[path] = new Uint8Array([0, 1, 2, r.int(255)]);
        }
        repo.commit(change);
      }
      if (round === 5) repo.checkout('main').checkout(`late-${round}`, true); // a new branch appears
      repo.checkout('main');
      const a = await indexLocal(repo.path, { dataDir: incData, ...opts });
      modes.push(a.mode);
      await indexLocal(repo.path, { dataDir: fullData, ...opts, incremental: false });
      for (const q of [...words.map((w) => `${w} branch:*`), 'alpha', 'branch:b1 sigma', '-branch:main omega', 'file:moved branch:*', 'branch:late-* beta']) {
        assert.deepEqual(await results(inc, q), await results(full, q), `round ${round}: ${q}`);
      }
      const m = readManifest(incData, a.repoId)!;
      assert.ok(m.shards.filter((s) => s.delta).length <= MAX_DELTA_SHARDS, `round ${round}: ${m.shards.length} shards`);
    }
    assert.ok(modes.includes('delta'), `some runs were incremental: ${modes.join(' ')}`);
    assert.ok(modes.slice(1).includes('full'), `a full build came back when the bounds were reached: ${modes.join(' ')}`);
  } finally {
    await inc.close();
    await full.close();
    dir.cleanup();
  }
});

test('a directory is rebuilt in full; retired files stay until their grace passes', async () => {
  const dir = tempDir('incr-dir');
  const data = join(dir.path, 'data');
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit({ 'a.txt': 'one\n' });
    const first = await indexLocal(repo.path, { dataDir: data, ...opts });
    repo.commit({ 'a.txt': 'two\n' });
    await indexLocal(repo.path, { dataDir: data, ...opts, incremental: false });
    const m = readManifest(data, first.repoId)!;
    assert.deepEqual(
      m.retired.map((x) => x.file),
      ['g1-0.trawl'],
    );
    assert.deepEqual(readdirSync(shardsDir(data, first.repoId)).sort(), ['g1-0.trawl', 'g2-0.trawl', 'manifest.json']);
  } finally {
    dir.cleanup();
  }
});
