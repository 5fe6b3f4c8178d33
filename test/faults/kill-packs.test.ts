// kill -9 at any moment of a sync that builds compound shards and of the merge after it:
// small repositories change, `trawl sync` builds them into a new pack and commits each one
// there (its range in the old pack tombstoned by that commit), then merges the packs. After
// each kill every repository is served exactly once, with its latest indexed version or
// the one before, also while the run goes; the next run completes; the packs no manifest
// names are collected after the grace; and the final index answers as a clean sync does.
//
// By default 6 moments (3 spread over the sync, 2 over the merge, one right after the first
// commit of the batch); TRAWL_FAULTS_FULL=1 runs 30.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { readAllManifests, RETIRE_GRACE_MS } from '../../daemon/index/manifest.ts';
import { collectPacks } from '../../daemon/index/pack-build.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openStore } from '../../daemon/store/open.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { runTrawlKilled as trawl } from '../helpers/trawl-cli.ts';

const FULL = process.env.TRAWL_FAULTS_FULL === '1';
const SPREAD = FULL ? 12 : 3;
const MERGE_SPREAD = FULL ? 12 : 2;
const REPOS = 8;
const FILES = 120;
const QUERY = 'value';

/** Repository `k` at version `v`: every file says both. */
function sources(k: number, v: number): Record<string, string> {
  const r = prng(k);
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) {
    const body = Array.from({ length: 20 }, (_, l) => `  int x_${l} = ${r.int(1_000_000)};`).join('\n');
    files[`src/f${i}.c`] = `int f_${i} = r${k}_v${v}_value_${i};\n${body}\n`;
  }
  return files;
}

/** Per repository, the versions its answered files come from, and how many files; a failed shard fails it. */
async function served(s: Searcher): Promise<Map<string, { versions: Set<number>; files: number }>> {
  const r = await s.search({ query: QUERY, matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
  assert.equal(r.stats.crashes, 0, 'no shard failed');
  const out = new Map<string, { versions: Set<number>; files: number }>();
  for (const f of r.files) {
    const text = f.chunks.map((c) => c.content).join('');
    const v = Number(/_v(\d+)_value/.exec(text)![1]);
    const seen = out.get(f.repository) ?? { versions: new Set<number>(), files: 0 };
    seen.versions.add(v);
    seen.files++;
    out.set(f.repository, seen);
  }
  return out;
}

/** Every repository served exactly once, whole, at one version of `allowed[repo]`. */
function exactlyOnce(label: string, got: Map<string, { versions: Set<number>; files: number }>, allowed: (repo: string) => number[]): void {
  assert.equal(got.size, REPOS, `${label}: ${got.size} of ${REPOS} repositories served`);
  for (const [repo, { versions, files }] of got) {
    assert.equal(files, FILES, `${label}: ${repo} served ${files} files, not ${FILES} (twice, or in part)`);
    assert.equal(versions.size, 1, `${label}: ${repo} served at versions ${[...versions].join(', ')}`);
    const [v] = versions;
    assert.ok(allowed(repo).includes(v!), `${label}: ${repo} at version ${v}`);
  }
}

test(`kill -9 at ${SPREAD + MERGE_SPREAD + 1} moments of a sync that builds and merges compound shards; every repository is served exactly once`, {
  timeout: FULL ? 3_600_000 : 900_000,
}, async (t) => {
  const root = tempDir('kill-packs');
  try {
    const repos = Array.from({ length: REPOS }, (_, k) => TestRepo.init(join(root.path, 'repos', `r${k}`)));
    repos.forEach((repo, k) => repo.commit(sources(k, 1)));
    const configPath = join(root.path, 'trawl.json');
    const configJson = JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(root.path, 'repos', '*') } } });
    writeFileSync(configPath, configJson);
    const config = parseConfig(configJson, configPath);

    // The template: every repository at version 1, in one pack.
    const template = join(root.path, 'template');
    const store = openStore(template);
    try {
      await syncOnce({ config, dataDir: template, store });
    } finally {
      await store.close();
    }
    const packsOf = (data: string) => [...new Set(readAllManifests(data).flatMap((m) => m.shards.map((s) => s.file)))];
    assert.equal(packsOf(template).length, 1);

    // Version 2 of half of them: the next sync builds those into a new pack (tombstoning
    // their ranges in the first), then merges the two.
    const changed = new Set([1, 2, 5, 6].map((k) => `r${k}`));
    for (const k of [1, 2, 5, 6]) repos[k]!.commit(sources(k, 2));
    const latest = (repo: string) => (changed.has(repo) ? 2 : 1);
    const args = (data: string) => ['sync', '--config', configPath, '--data-dir', data];
    const fresh = (name: string) => {
      const data = join(root.path, name);
      cpSync(template, data, { recursive: true });
      return data;
    };
    const measured = fresh('measure');
    const clean = await trawl(args(measured));
    assert.equal(clean.code, 0, clean.stderr);
    const final = new Searcher({ dataDir: measured, workers: 1 });
    try {
      exactlyOnce('a clean sync', await served(final), (repo) => [latest(repo)]);
    } finally {
      await final.close();
    }
    assert.equal(packsOf(measured).length, 1, 'the clean sync merged its packs into one');
    t.diagnostic(`trawl sync with its merge: ${clean.ms.toFixed(0)} ms`);

    // The merge's share of the run: from the "sync done" line to the exit is not seen from
    // outside, so moments are spread over the whole run, and more of them near its end.
    const moments: Array<{ label: string; at: number | ((data: string) => () => boolean) }> = [];
    for (let j = 0; j < SPREAD; j++)
      moments.push({ label: `sync killed at ${Math.round(((j + 0.5) / SPREAD) * 100)} %`, at: Math.round(((j + 0.5) / SPREAD) * clean.ms) });
    for (let j = 0; j < MERGE_SPREAD; j++) {
      const share = 0.75 + (0.25 * (j + 0.5)) / MERGE_SPREAD;
      moments.push({ label: `sync killed at ${Math.round(share * 100)} % (the merge)`, at: Math.round(share * clean.ms) });
    }
    // Right after the first repository of the batch moved (its manifest committed, the batch not ended).
    moments.push({ label: 'sync killed after the first commit of its batch', at: (data) => () => readAllManifests(data).some((m) => m.generation > 1) });

    const outcomes: string[] = [];
    for (const [n, m] of moments.entries()) {
      const data = fresh(`kill-${n}`);
      const searcher = new Searcher({ dataDir: data, workers: 1 });
      try {
        let running = true;
        const watch = (async () => {
          while (running) {
            exactlyOnce(`${m.label} (during the run)`, await served(searcher), (repo) => [1, latest(repo)]);
            await new Promise((r) => setTimeout(r, 20));
          }
        })();
        const killed = await trawl(args(data), typeof m.at === 'number' ? m.at : m.at(data));
        running = false;
        await watch;
        exactlyOnce(`${m.label} (after the kill)`, await served(searcher), (repo) => [1, latest(repo)]);
        const packs = packsOf(data).length;
        outcomes.push(`${m.label}: ${killed.signal === 'SIGKILL' ? 'killed' : 'finished first'}, ${packs} pack${packs === 1 ? '' : 's'} named`);

        const again = await trawl(args(data));
        assert.equal(again.code, 0, `${m.label}: the next run failed: ${again.stderr}`);
        assert.doesNotMatch(again.stderr, /locked/);
        exactlyOnce(`${m.label} (recovered)`, await served(searcher), (repo) => [latest(repo)]);
        assert.equal(packsOf(data).length, 1, `${m.label}: the next run merged what the killed one left`);

        // What the killed run wrote and nobody names goes after the grace.
        collectPacks(data);
        collectPacks(data, new Set(), Date.now() + RETIRE_GRACE_MS + 1);
        const left = readdirSync(join(data, 'packs')).filter((f) => f.endsWith('.trawl'));
        assert.deepEqual(left, packsOf(data), `${m.label}: packs no manifest names are left`);
        exactlyOnce(`${m.label} (collected)`, await served(searcher), (repo) => [latest(repo)]);
      } finally {
        await searcher.close();
      }
    }
    for (const o of outcomes) t.diagnostic(o);
    assert.ok(
      outcomes.some((o) => o.includes('killed')),
      'some kills landed before the run ended',
    );
  } finally {
    root.cleanup();
  }
});
