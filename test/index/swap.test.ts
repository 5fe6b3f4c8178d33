// Index swaps under load and crashes: searches running through re-indexes all succeed and
// each sees one version of the repository, never a mix; a process killed mid-index leaves
// the previous index serving, and the next run recovers.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const FILES = 300;

function generation(g: number, only?: (i: number) => boolean): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) if (!only || only(i)) files[`src/m${i}.c`] = `int module_${i} = gen_${g}_value;\n`;
  return files;
}

test('searches running through re-indexes all succeed and never see a mixed state', async (t) => {
  const dir = tempDir('swap');
  const data = join(dir.path, 'data');
  const searcher = new Searcher({ dataDir: data, workers: 2 });
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit(generation(1));
    await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1, shardTargetBytes: 4096 });
    let done = false;
    const seen = new Set<string>();
    let searches = 0;
    const errors: string[] = [];
    const loop = (async () => {
      while (!done) {
        try {
          const r = await searcher.search({
            query: 'gen_ value',
            matches: 100_000,
            contextLines: 0,
            whole: false,
            isRegexEnabled: false,
            isCaseSensitivityEnabled: true,
          });
          searches++;
          if (r.stats.crashes !== 0) errors.push(`crashes: ${r.stats.crashes}`);
          const gens = new Set(r.files.map((f) => /gen_(\d+)_/.exec(f.chunks[0]!.content)![1]));
          if (r.files.length !== FILES || gens.size !== 1) errors.push(`mixed: ${r.files.length} files, generations ${[...gens].join(',')}`);
          for (const g of gens) seen.add(g!);
        } catch (err) {
          errors.push((err as Error).message);
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    // Full rebuilds and deltas (every other file changed). After each, until a search has
    // seen it (not a fixed time a loaded machine can outrun): the next build starts with
    // searches running through it, and every generation is seen whatever the machine's load.
    const seenBy = async (g: number) => {
      const deadline = Date.now() + 30_000;
      while (!seen.has(String(g)) && errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (errors.length > 0 || !seen.has(String(g))) done = true; // the searches stop with the test
      assert.deepEqual(errors, [], `after generation ${g}`);
      assert.ok(seen.has(String(g)), `no search saw generation ${g} within 30 s of its commit (saw ${[...seen].join(',')})`);
    };
    for (let g = 2; g <= 7; g++) {
      repo.commit(generation(g));
      await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1, shardTargetBytes: 4096, incremental: g % 2 === 0 });
      await seenBy(g);
    }
    done = true;
    await loop;
    assert.deepEqual(errors, []);
    assert.ok(searches >= 10, `only ${searches} searches ran`);
    t.diagnostic(`${searches} searches saw generations ${[...seen].sort().join(',')}`);
    assert.ok(seen.size >= 3, `searches saw generations ${[...seen].join(',')}`);
    assert.ok(seen.has('7'));
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test('a process killed mid-index leaves the previous index serving; the next run recovers', async () => {
  const dir = tempDir('crash');
  const data = join(dir.path, 'data');
  const repo = TestRepo.init(join(dir.path, 'r'));
  repo.commit(generation(1));
  const first = await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
  const shards = shardsDir(data, first.repoId);
  repo.commit(generation(2));
  // Many small shards, so that the run is far from its commit when the first one appears.
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../helpers/index-child.ts', import.meta.url)), repo.path, data, '64'], {
    stdio: 'ignore',
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const deadline = Date.now() + 30_000;
  while (!readdirSync(shards).some((f) => f.startsWith('g2-')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  child.kill('SIGKILL');
  await exited;
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    assert.equal(readManifest(data, first.repoId)!.generation, 1, 'the killed run never committed');
    assert.ok(existsSync(join(shards, 'lock')), 'the killed run left its lock behind');
    const before = await searcher.search({
      query: 'gen_1_value',
      matches: 1000,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
    });
    assert.equal(before.files.length, FILES);
    assert.equal(before.stats.crashes, 0);

    // The next run breaks the dead process's lock, removes its leftovers and commits.
    const again = await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    assert.equal(again.files, FILES);
    const m = readManifest(data, first.repoId)!;
    const named = [...m.shards.map((x) => x.file), ...m.retired.map((x) => x.file), 'manifest.json'].sort();
    assert.deepEqual(readdirSync(shards).sort(), named, 'nothing of the killed run is left');
    const after = await searcher.search({
      query: 'gen_2_value',
      matches: 1000,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: true,
    });
    assert.equal(after.files.length, FILES);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});
