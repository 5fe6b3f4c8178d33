// What killed processes leave behind is removed by the next run, and what live processes
// are writing is not (docs/security-and-faults.md, row 2): in a repository's index
// directory and the data dir (shards of a generation that never committed, temporary files,
// lock records, a take-over guard), and in a git mirror (libgit2's lock files and temporary
// packs, which would refuse every later fetch, and half-made clones).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { named, readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { syncMirror } from '../../daemon/repos/mirror.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git, TestRepo } from '../helpers/git.ts';

const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

function backdate(path: string, ms: number): void {
  const t = new Date(Date.now() - ms);
  utimesSync(path, t, t);
}

test('an index run removes what killed runs left, and keeps what live processes are writing', async () => {
  const dir = tempDir('leftovers');
  const live = sleeper();
  try {
    const data = join(dir.path, 'data');
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit({ 'a.c': 'int alpha_one;\n' });
    const first = await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    const shards = shardsDir(data, first.repoId);
    const dead = deadPid();
    const left = [
      'g2-0.trawl', // a complete shard of a run killed before its commit
      'g2-1.trawl.tmp-1-0badc0de',
      `g2-m0.branches.tmp-${dead}`,
      `manifest.json.tmp-${dead}`,
      `broken.tmp-${dead}`,
      `lock.tmp-${dead}-0badc0de`,
      'lock.break',
    ];
    for (const f of left) writeFileSync(join(shards, f), 'partial');
    backdate(join(shards, 'lock.break'), 60_000);
    writeFileSync(join(shards, 'lock'), `${dead} 1\n`);
    // Files of a live process (a daemon writing a mark, a searcher bumping index-version)...
    const kept = [`broken.tmp-${live.pid}`];
    for (const f of kept) writeFileSync(join(shards, f), 'being written');
    writeFileSync(join(data, `index-version.tmp-${live.pid}`), 'being written');
    // ... unless the file is older than the process: its pid was recycled.
    writeFileSync(join(shards, `lock.tmp-${live.pid}-0a0b0c0d`), 'old');
    backdate(join(shards, `lock.tmp-${live.pid}-0a0b0c0d`), 3_600_000);
    writeFileSync(join(data, `index-version.tmp-${dead}`), 'old');

    repo.commit({ 'a.c': 'int alpha_two;\n' });
    const again = await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    assert.equal(again.files, 1);
    const m = readManifest(data, first.repoId)!;
    // g2-0.trawl of the killed run was never named by a manifest (never served): it was
    // removed first, and this run's generation 2 took its name.
    assert.equal(m.generation, 2);
    assert.deepEqual(readdirSync(shards).sort(), [...named(m), ...m.retired.map((r) => r.file), 'manifest.json', ...kept].sort());
    assert.deepEqual(
      readdirSync(data).filter((f) => f.includes('.tmp-')),
      [`index-version.tmp-${live.pid}`],
    );
  } finally {
    live.kill('SIGKILL');
    dir.cleanup();
  }
});

test('a run killed between its commit and the index-version bump: the next run (with nothing to do) bumps it, and open searchers see the commit', async () => {
  const dir = tempDir('missed-bump');
  const data = join(dir.path, 'data');
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const repo = TestRepo.init(join(dir.path, 'r'));
    repo.commit({ 'a.c': 'int marker_one;\n' });
    await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    const hits = async (q: string) =>
      (await searcher.search({ query: q, matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true })).files.length;
    assert.equal(await hits('marker_one'), 1);
    const version = join(data, 'index-version');
    const old = readFileSync(version);
    repo.commit({ 'a.c': 'int marker_two;\n' });
    await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    // As if killed right after the manifest's rename: index-version is the old one.
    writeFileSync(version, old);
    backdate(version, 60_000);
    assert.equal(await hits('marker_one'), 1, 'the open searcher has not noticed the commit');
    const again = await indexLocal(repo.path, { dataDir: data, symbols: false, workers: 1 });
    assert.equal(again.mode, 'unchanged');
    assert.equal(await hits('marker_two'), 1, 'it has now');
    assert.equal(await hits('marker_one'), 0);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});

test('a mirror sync removes what a killed fetch left: libgit2 lock files, temporary packs, its clone, its lock', async () => {
  const dir = tempDir('mirror-leftovers');
  try {
    const source = TestRepo.init(join(dir.path, 'src'));
    source.commit({ 'a.c': 'int one;\n' });
    const dest = join(dir.path, 'git', '1.git');
    await syncMirror(source.path, dest);
    const dead = deadPid();
    // What a fetch killed mid-write leaves: libgit2 creates these exclusively.
    for (const f of ['packed-refs.lock', 'refs/heads/main.lock', 'objects/pack/pack_git2_0badc0de']) {
      mkdirSync(join(dest, f, '..'), { recursive: true });
      writeFileSync(join(dest, f), '');
    }
    writeFileSync(`${dest}.lock`, `${dead} 1\n`);
    mkdirSync(`${dest}.tmp-${dead}-0badc0de`, { recursive: true });

    const head = source.commit({ 'a.c': 'int two;\n' });
    const r = await syncMirror(source.path, dest);
    assert.equal(r.cloned, false);
    assert.equal(git(dest, 'rev-parse', 'refs/heads/main').trim(), head, 'the fetch updated the branch');
    assert.equal(existsSync(join(dest, 'packed-refs.lock')), false);
    assert.equal(existsSync(join(dest, 'refs', 'heads', 'main.lock')), false);
    assert.equal(existsSync(join(dest, 'objects', 'pack', 'pack_git2_0badc0de')), false);
    assert.deepEqual(readdirSync(join(dir.path, 'git')), ['1.git'], 'no lock, temporary clone or lock record is left');
    assert.equal(readFileSync(join(dest, 'HEAD'), 'utf8'), 'ref: refs/heads/main\n');
  } finally {
    dir.cleanup();
  }
});
