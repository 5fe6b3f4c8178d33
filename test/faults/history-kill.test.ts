// kill -9 during `trawl index --history`: a history index of a repository's newest 30
// commits is extended to its whole history (a build of some seconds: 300 commits of files of
// hundreds of lines, helpers/history-repo.ts), and the run is killed at moments spread
// over it: as soon as it holds the history's lock, once it has written a file of the new
// index, and late (80% of a clean run's time: it may have finished). The first two are
// told by what the run leaves on disk, not by time: on a loaded machine a run took less
// than half of the clean run's time and finished before a kill timed at 50%.
//
// After each kill, searches at a commit answer exactly as before the run (or, past its
// commit, exactly as after it), never a failed shard; the next run completes and answers
// what a clean build answers, and leaves nothing of the killed runs on disk.

import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { historyBeside } from '../../daemon/history/history-search.ts';
import { historyDataDir, shardsDir } from '../../daemon/index/data-dir.ts';
import { named, readManifest } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { makeHistoryRepo } from '../helpers/history-repo.ts';
import { runTrawl, runTrawlKilled } from '../helpers/trawl-cli.ts';

async function answer(data: string, queries: string[]): Promise<string[]> {
  const live = new Searcher({ dataDir: data, workers: 0 });
  const service = historyBeside(live, { dataDir: data });
  try {
    const out: string[] = [];
    for (const query of queries) {
      const r = await service.search({ query, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
      assert.equal(r.stats.crashes, 0, query);
      out.push(
        `${query}: ${r.isSearchExhaustive} ${r.files
          .map((f) => `${f.fileName.text}@${f.branches.join(',')}:${f.chunks.map((c) => c.content).join('|')}`)
          .sort()
          .join(' ')}`,
      );
    }
    return out;
  } finally {
    await service.close();
    await live.close();
  }
}

test('kill -9 while a history index is built: the previous history keeps serving and the next run recovers', { timeout: 600_000 }, async () => {
  const root = tempDir('history-kill');
  try {
    const repo = join(root.path, 'repo');
    makeHistoryRepo(repo, 99, 300, 12);
    const data = join(root.path, 'data');
    const index = (extra: string[]) => ['index', repo, '--data-dir', data, '--no-symbols', '--history', ...extra];
    const first = await runTrawl(index(['--max-commits', '30']), root.path);
    assert.equal(first.code, 0, first.stderr);
    const commits = git(repo, 'rev-list', '--topo-order', 'main').trim().split('\n');
    const recent = commits[10]!;
    const old = commits[commits.length - 20]!;
    const queries = [`rev:${recent} spin_lock`, `rev:${old} kernel`, `rev:${old.slice(0, 8)} file:\\.c$ mutex`];
    const before = await answer(data, queries);
    assert.ok(before[1]!.includes(': false '), 'the old commit is outside the first history: not exhaustive');

    // The whole history, measured on a copy, then killed at moments spread over it.
    const clean = join(root.path, 'clean');
    cpSync(data, clean, { recursive: true });
    const full = await runTrawl(['index', repo, '--data-dir', clean, '--no-symbols', '--history'], root.path);
    assert.equal(full.code, 0, full.stderr);
    const afterward = await answer(clean, queries);
    assert.notDeepEqual(afterward, before);
    const dir = shardsDir(historyDataDir(data), Number(readdirSync(join(historyDataDir(data), 'shards'))[0]));
    // The files there when a run starts (a killed run's leftovers included: not the run's own).
    let held = new Set<string>();
    const moments: Array<{ name: string; kill: number | (() => boolean); mustKill: boolean }> = [
      { name: 'holding the lock', kill: () => existsSync(join(dir, 'lock')), mustKill: true },
      { name: 'a new file written', kill: () => readdirSync(dir).some((f) => f !== 'lock' && !held.has(f)), mustKill: true },
      { name: 'at 80%', kill: Math.round(full.ms * 0.8), mustKill: false },
    ];
    for (const at of moments) {
      held = new Set(readdirSync(dir));
      const killed = await runTrawlKilled(index([]), at.kill);
      if (at.mustKill) assert.equal(killed.signal, 'SIGKILL', `killed while it ran (${at.name})`);
      const now = await answer(data, queries);
      assert.ok(
        JSON.stringify(now) === JSON.stringify(before) || JSON.stringify(now) === JSON.stringify(afterward),
        `killed ${at.name} (${killed.signal ?? killed.code}): an answer that is neither the old nor the new one`,
      );
    }
    const last = await runTrawl(index([]), root.path);
    assert.equal(last.code, 0, last.stderr);
    assert.deepEqual(await answer(data, queries), afterward);
    // Nothing of the killed runs is left.
    const history = historyDataDir(data);
    for (const m of readdirSync(join(history, 'shards'))) {
      const repoId = Number(m);
      const manifest = readManifest(history, repoId)!;
      const known = new Set([...named(manifest), ...manifest.retired.map((r) => r.file), 'manifest.json', 'lock']);
      assert.deepEqual(
        readdirSync(shardsDir(history, repoId)).filter((f) => !known.has(f)),
        [],
      );
    }
  } finally {
    root.cleanup();
  }
});
