// kill -9 at any moment of `trawl index` / `trawl sync` (docs/security-and-faults.md, row
// 2): the run is killed at moments spread over its whole duration (measured first); after
// each kill the index answers exactly what it answered before (or, past the commit, exactly
// the new answer), never a mix and never a failed shard, also while the run is going;
// running it again completes without waiting on the dead run's lock; the final index
// answers exactly what a clean build answers; and nothing of the killed run is left on
// disk.
//
// By default 9 moments (2 spread over each kind of run, and one right after its commit);
// TRAWL_FAULTS_FULL=1 runs 54 (17 spread over each kind, and the three after the commit).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { named, readManifest } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openStore } from '../../daemon/store/open.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { runTrawlKilled as trawl } from '../helpers/trawl-cli.ts';

const FULL = process.env.TRAWL_FAULTS_FULL === '1';
const PER_KIND = FULL ? 17 : 2;
const FILES = 600;
const QUERY = 'value';

function sources(v: number, changed: (i: number) => boolean): Record<string, string> {
  const r = prng(7);
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) {
    const body = Array.from({ length: 20 }, (_, l) => `  int x_${l} = ${r.int(1_000_000)};`).join('\n');
    files[`src/d${i % 10}/f${i}.c`] = `int f_${i} = v${changed(i) ? v : 1}_value_${i};\n${body}\n`;
  }
  return files;
}

type Kind = 'index' | 'index --full' | 'sync';

async function answer(s: Searcher): Promise<{ files: string[]; crashes: number }> {
  const r = await s.search({ query: QUERY, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
  return {
    files: r.files.map((f) => `${f.repository}/${f.fileName.text}@${f.branches.join(',')}: ${f.chunks.map((c) => c.content).join('|')}`).sort(),
    crashes: r.stats.crashes,
  };
}

async function answerOf(data: string): Promise<string[]> {
  const s = new Searcher({ dataDir: data, workers: 1 });
  try {
    const a = await answer(s);
    assert.equal(a.crashes, 0);
    return a.files;
  } finally {
    await s.close();
  }
}

/** Files in the repository's directory and the data dir that no manifest accounts for. */
function strays(data: string, repoId: number): string[] {
  const dir = shardsDir(data, repoId);
  const m = readManifest(data, repoId)!;
  const known = new Set([...named(m), ...m.retired.map((r) => r.file), 'manifest.json']);
  return [...readdirSync(dir).filter((f) => !known.has(f)), ...readdirSync(data).filter((f) => f.includes('.tmp-'))];
}

test(`kill -9 at ${3 * (PER_KIND + 1)} moments of trawl index and trawl sync; the index keeps serving and the next run recovers`, {
  timeout: FULL ? 3_600_000 : 900_000,
}, async (t) => {
  const root = tempDir('kill');
  try {
    const repo = TestRepo.init(join(root.path, 'repos', 'big'));
    repo.commit(sources(1, () => true));
    const config = join(root.path, 'trawl.json');
    writeFileSync(config, JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(root.path, 'repos', '*') } } }));

    // Templates at version 1: one made by `trawl index`, one by a sync of a connection.
    const templates: Record<'index' | 'sync', string> = { index: join(root.path, 't-index'), sync: join(root.path, 't-sync') };
    const first = await indexLocal(repo.path, { dataDir: templates.index, symbols: false, workers: 1 });
    const store = openStore(templates.sync);
    try {
      await syncOnce({
        config: parseConfig(
          JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(root.path, 'repos', '*') } } }),
          config,
        ),
        dataDir: templates.sync,
        store,
      });
    } finally {
      await store.close();
    }
    const before = await answerOf(templates.index);
    assert.deepEqual(await answerOf(templates.sync), before);
    assert.equal(before.length, FILES);

    // Version 2: a tenth of the files change (an incremental run; --full rebuilds all).
    repo.commit(sources(2, (i) => i % 10 === 3));
    const clean = join(root.path, 'clean');
    await indexLocal(repo.path, { dataDir: clean, symbols: false, workers: 1, incremental: false });
    const after = await answerOf(clean);
    assert.notDeepEqual(after, before);

    const argsFor = (kind: Kind, data: string): string[] =>
      kind === 'sync'
        ? ['sync', '--config', config, '--data-dir', data]
        : ['index', repo.path, '--no-symbols', '--data-dir', data, ...(kind === 'index --full' ? ['--full'] : [])];
    const fresh = (kind: Kind, name: string): string => {
      const data = join(root.path, name);
      cpSync(templates[kind === 'sync' ? 'sync' : 'index'], data, { recursive: true });
      return data;
    };

    // Each kind's duration, from spawn to exit, and a clean run's result.
    const kinds: Kind[] = ['index', 'index --full', 'sync'];
    const duration = new Map<Kind, number>();
    for (const kind of kinds) {
      const data = fresh(kind, `measure-${kind.replace(/\W+/g, '-')}`);
      const run = await trawl(argsFor(kind, data));
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(await answerOf(data), after);
      duration.set(kind, run.ms);
      t.diagnostic(`trawl ${kind}: ${run.ms.toFixed(0)} ms from spawn to exit`);
    }

    const outcomes: string[] = [];
    const recoveries: number[] = [];
    // The moments spread over each run; then one more per kind, right after its commit
    // (the new manifest is in place; the lock and the store are not updated yet).
    for (let j = 0; j <= PER_KIND; j++) {
      for (const kind of kinds) {
        const data = fresh(kind, `kill-${kind.replace(/\W+/g, '-')}-${j}`);
        const at = j < PER_KIND ? Math.round(((j + 0.5) / PER_KIND) * duration.get(kind)!) : () => readManifest(data, first.repoId)?.generation !== 1;
        const label = `${kind} killed ${typeof at === 'number' ? `at ${at} ms` : 'once its manifest is committed'}`;
        // A searcher keeps answering while the run goes and dies: the old answer or the new one, whole.
        const searcher = new Searcher({ dataDir: data, workers: 1 });
        try {
          let running = true;
          let searches = 0;
          const watch = (async () => {
            while (running) {
              const a = await answer(searcher);
              assert.equal(a.crashes, 0, `${label}: a shard failed during the run`);
              assert.ok(sameAs(a.files, before) || sameAs(a.files, after), `${label}: an answer that is neither the old index nor the new one`);
              searches++;
              await new Promise((r) => setTimeout(r, 20));
            }
          })();
          const killed = await trawl(argsFor(kind, data), at);
          running = false;
          await watch;
          const dead = killed.signal === 'SIGKILL';

          const now = await answerOf(data);
          const committed = sameAs(now, after);
          assert.ok(committed || sameAs(now, before), `${label}: after the kill the index answers neither the old nor the new answer`);
          outcomes.push(`${label}: ${dead ? (committed ? 'after the commit' : 'before the commit') : 'finished first'} (${searches} searches meanwhile)`);

          const again = await trawl(argsFor(kind, data));
          assert.equal(again.code, 0, `${label}: the next run failed: ${again.stderr}`);
          assert.doesNotMatch(again.stderr, /locked/);
          recoveries.push(again.ms);
          assert.deepEqual(await answerOf(data), after, `${label}: the recovered index differs from a clean build`);
          const a = await answer(searcher);
          assert.deepEqual(a.files, after, `${label}: a searcher open all along sees the recovered index`);
          assert.deepEqual(strays(data, first.repoId), [], `${label}: files of the killed run are left`);
        } finally {
          await searcher.close();
        }
      }
    }
    for (const o of outcomes) t.diagnostic(o);
    recoveries.sort((a, b) => a - b);
    t.diagnostic(
      `the next run after a kill: median ${recoveries[recoveries.length >> 1]!.toFixed(0)} ms, slowest ${recoveries.at(-1)!.toFixed(0)} ms (spawn to exit)`,
    );
    assert.ok(
      outcomes.some((o) => o.includes('before the commit')),
      'some kills landed before the commit',
    );
    assert.ok(
      outcomes.some((o) => o.includes('after the commit')),
      'some kills landed after the commit',
    );
  } finally {
    root.cleanup();
  }
});

function sameAs(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
