// An index run that fails (an exception: here ENOSPC, injected into node:fs) removes every
// file it wrote before rethrowing, so nothing half-written is left behind and the previous
// index keeps serving; a failure after the commit point keeps the committed index.
// (The disk-full end-to-end test fills a real filesystem; this one aims at each write.)

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { readdirSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const FILES = 60;

function version(v: number, only?: (i: number) => boolean): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) if (!only || only(i)) files[`src/f${i}.c`] = `int file_${i} = version_${v}_value;\n`;
  return files;
}

function enospc(what: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${what}`), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

/**
 * Makes node:fs fail like a full disk while `run` runs: `fail(path)` says which files'
 * writes fail (the path the descriptor was opened with). Build threads have their own
 * node:fs: the runs here are small enough to build on the calling thread.
 */
async function withFullDisk<T>(fail: (path: string) => boolean, run: () => Promise<T>): Promise<{ error?: NodeJS.ErrnoException; result?: T }> {
  const original = { openSync: fs.openSync, writeSync: fs.writeSync, writeFileSync: fs.writeFileSync };
  const paths = new Map<number, string>();
  const failing = (target: unknown) => (typeof target === 'number' ? fail(paths.get(target) ?? '') : typeof target === 'string' && fail(target));
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    const fd = (original.openSync as (...a: unknown[]) => number)(path, ...rest);
    paths.set(fd, String(path));
    return fd;
  }) as typeof fs.openSync;
  fs.writeSync = ((fd: number, ...rest: unknown[]) => {
    if (failing(fd)) throw enospc(paths.get(fd)!);
    return (original.writeSync as (...a: unknown[]) => number)(fd, ...rest);
  }) as typeof fs.writeSync;
  fs.writeFileSync = ((target: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    if (failing(target)) throw enospc(String(paths.get(target as number) ?? target));
    return (original.writeFileSync as (...a: unknown[]) => void)(target, ...rest);
  }) as typeof fs.writeFileSync;
  syncBuiltinESMExports();
  try {
    return { result: await run() };
  } catch (err) {
    return { error: err as NodeJS.ErrnoException };
  } finally {
    Object.assign(fs, original);
    syncBuiltinESMExports();
  }
}

const results = async (s: Searcher, query: string): Promise<string[]> => {
  const r = await s.search({ query, matches: 10_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
  assert.equal(r.stats.crashes, 0);
  return r.files.map((f) => `${f.fileName.text}: ${f.chunks.map((c) => c.content).join('|')}`).sort();
};

interface Case {
  name: string;
  /** What changes in the repository before the failing run (all files: a full build; a few: a delta). */
  change: (i: number) => boolean;
  fail: (path: string) => boolean;
  /** The failure comes after the commit point: the new index stands. */
  committed?: boolean;
}

const CASES: Case[] = [
  { name: 'writing a shard of a full build (after two complete shards)', change: () => true, fail: (p) => /g2-2\.trawl\.tmp-/.test(p) },
  { name: 'writing a membership file of an incremental run (after its delta shard)', change: (i) => i < 3, fail: (p) => /g2-m\d+\.branches\.tmp-/.test(p) },
  { name: 'writing the manifest (the commit)', change: () => true, fail: (p) => p.includes('manifest.json.tmp-') },
  { name: 'writing index-version, after the manifest is committed', change: () => true, fail: (p) => p.includes('index-version.tmp-'), committed: true },
];

for (const c of CASES) {
  test(`a run that fails ${c.name} leaves ${c.committed ? 'its committed index' : 'nothing of its own behind'}`, async () => {
    const dir = tempDir('failed-run');
    const data = join(dir.path, 'data');
    const repo = TestRepo.init(join(dir.path, 'r'));
    // Small shards: a full build writes several, an incremental one a delta shard and membership files.
    const opts = { dataDir: data, symbols: false, workers: 1, shardTargetBytes: 600 };
    try {
      repo.commit(version(1));
      const first = await indexLocal(repo.path, opts);
      const shards = shardsDir(data, first.repoId);
      const before = readdirSync(shards).sort();
      assert.ok(first.totalShards >= 3, `${first.totalShards} shards`);

      repo.commit(version(2, c.change));
      const { error } = await withFullDisk(c.fail, () => indexLocal(repo.path, opts));
      assert.equal(error?.code, 'ENOSPC', `the failure is rethrown: ${error?.message}`);

      const searcher = new Searcher({ dataDir: data, workers: 1 });
      try {
        if (c.committed) {
          const m = readManifest(data, first.repoId)!;
          assert.equal(m.generation, 2);
          for (const f of [...m.shards.map((s) => s.file), ...m.retired.map((r) => r.file)]) assert.ok(readdirSync(shards).includes(f), `${f} is kept`);
          assert.equal((await results(searcher, 'version_2_value')).length, FILES);
        } else {
          assert.deepEqual(readdirSync(shards).sort(), before, 'the directory is as it was before the run');
          assert.equal(readManifest(data, first.repoId)!.generation, 1);
          assert.equal((await results(searcher, 'version_1_value')).length, FILES);
        }
        assert.deepEqual(
          readdirSync(data).filter((f) => f.includes('.tmp-')),
          [],
          'no temporary file in the data dir',
        );

        // The next run (the disk has room again) completes.
        const again = await indexLocal(repo.path, opts);
        assert.equal(again.files, FILES);
        searcher.refresh();
        assert.equal((await results(searcher, 'version_2_value')).length, c.change(FILES - 1) ? FILES : 3);
      } finally {
        await searcher.close();
      }
    } finally {
      dir.cleanup();
    }
  });
}
