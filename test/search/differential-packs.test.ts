// Differential test over compound shards: small repositories synced into packs, some of them
// changed and synced again (their old ranges tombstoned), then the packs merged while
// searches run. At every step the indexed search must answer as the brute-force oracle on
// the same index, and as an index of the same repositories with a shard of their own each
// (no packs: a different build, the same content). Zero differences is the only pass.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { readAllManifests, RETIRE_GRACE_MS } from '../../daemon/index/manifest.ts';
import { collectPacks } from '../../daemon/index/pack-build.ts';
import { mergePacks } from '../../daemon/index/pack-merge.ts';
import { IndexView } from '../../daemon/index/index-health.ts';
import { DEFAULT_MAX_TRIGRAMS } from '../../daemon/index/indexer.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest } from '../../daemon/search/types.ts';
import { openStore } from '../../daemon/store/open.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { generateCorpus, prng, tempDir } from '../helpers/corpus.ts';
import { git } from '../helpers/git.ts';
import { outcome, randomRequest } from '../helpers/random-queries.ts';
import type { Store } from '../../daemon/store/store.ts';
import { readdirSync } from 'node:fs';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261127);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 40);
const NAMES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'];

const dir = tempDir('diff-packs');
const reposDir = join(dir.path, 'repos');
const packed = { data: join(dir.path, 'packed'), store: undefined as Store | undefined, searcher: undefined as Searcher | undefined };
const single = { data: join(dir.path, 'single'), store: undefined as Store | undefined, searcher: undefined as Searcher | undefined };
const config = () =>
  parseConfig(
    JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: `${reposDir}/*`, revisions: { branches: ['dev'] } } } }),
    join(dir.path, 'trawl.json'),
  );

function commitAll(path: string, message: string): void {
  git(path, 'add', '-A');
  git(path, 'commit', '-q', '--allow-empty', '-m', message);
}

async function syncBoth(): Promise<void> {
  await syncOnce({ config: config(), dataDir: packed.data, store: packed.store! });
  await syncOnce({ config: config(), dataDir: single.data, store: single.store!, packs: false });
}

before(async () => {
  NAMES.forEach((name, i) => {
    const path = join(reposDir, name);
    generateCorpus(path, SEED + i, 40 + 10 * i);
    git(reposDir, 'init', '-q', '-b', 'main', name);
    commitAll(path, 'first');
    // A second branch on some: branch: filters and documents on one branch only.
    if (i % 2 === 0) {
      git(path, 'checkout', '-q', '-b', 'dev');
      generateCorpus(join(path, 'dev-only'), SEED + 100 + i, 8);
      commitAll(path, 'dev');
      git(path, 'checkout', '-q', 'main');
    }
  });
  packed.store = openStore(packed.data);
  single.store = openStore(single.data);
  await syncBoth();
  packed.searcher = new Searcher({ dataDir: packed.data, workers: 2 });
  single.searcher = new Searcher({ dataDir: single.data, workers: 2 });
});

after(async () => {
  await packed.searcher?.close();
  await single.searcher?.close();
  await packed.store?.close();
  await single.store?.close();
  dir.cleanup();
});

/** The answer with its files as a set (a compound shard ranks with its own statistics: order may differ). */
function asSet(o: Awaited<ReturnType<typeof outcome>>): unknown {
  const files = (o.files as Array<Record<string, unknown>>).map((f) => JSON.stringify({ ...f, score: undefined }));
  const repos = ((o.repositoryInfo ?? []) as Array<{ id: number }>).map((r) => JSON.stringify(r));
  return { ...o, files: files.sort(), repositoryInfo: repos.sort() };
}

/** Matches compared with shards of their own: more would be the slowest part of the test. */
const ALL = 2000;

/** Queries compared with shards of their own, and those whose matches were too many to (not exhaustive at ALL). */
let compared = 0;
let cut = 0;

/**
 * Runs `count` random queries; returns the differences found. `inFlight`: the index may
 * change between two searches of a query (a merge commits meanwhile), and a limit cut
 * where a compound shard's statistics rank: the oracle is compared on every match then.
 */
async function compare(seed: number, count: number, inFlight = false): Promise<string[]> {
  const r = prng(seed);
  const differences: string[] = [];
  for (let i = 0; i < count; i++) {
    const asked = randomRequest(r);
    if (asked.query === '') continue;
    // (At most ALL matches: a query that matches nearly every byte, `[A-Z]{3}` case-insensitive, costs seconds per 100,000.)
    const req: Required<SearchRequest> = inFlight
      ? { ...asked, matches: ALL, contextLines: 0, whole: false }
      : { ...asked, matches: Math.min(asked.matches, ALL) };
    const indexed = await outcome(packed.searcher!.search(req));
    const brute = await outcome(packed.searcher!.search(req, { brute: true }));
    try {
      if (!inFlight) assert.deepStrictEqual(indexed, brute);
      else if (indexed.isSearchExhaustive !== false && brute.isSearchExhaustive !== false) assert.deepStrictEqual(asSet(indexed), asSet(brute));
    } catch {
      differences.push(`oracle: ${JSON.stringify(req)}`);
    }
    // Against shards of their own: every match, so that ranking cannot cut differently (a
    // query with more matches than ALL is cut where each index's order says: skipped).
    const all: Required<SearchRequest> = { ...req, matches: ALL, contextLines: 0, whole: false };
    compared++;
    const mine = await outcome(packed.searcher!.search(all));
    const theirs = await outcome(single.searcher!.search(all));
    if (mine.isSearchExhaustive === false || theirs.isSearchExhaustive === false) {
      cut++;
      continue;
    }
    try {
      assert.deepStrictEqual(asSet(mine), asSet(theirs));
    } catch {
      differences.push(`own shards: ${JSON.stringify(all)}`);
    }
  }
  return differences;
}

const packFiles = () => [...new Set(readAllManifests(packed.data).flatMap((m) => m.shards.filter((s) => s.member !== undefined).map((s) => s.file)))].sort();

test('compound shards answer as the oracle and as shards of their own, through re-syncs and a merge in flight', async () => {
  assert.deepEqual(packFiles().length, 1, 'every repository in one pack');
  assert.deepStrictEqual(await compare(SEED, QUERIES), [], 'after the first sync');

  // Two repositories change: each moves to a new pack, its range in the first tombstoned.
  for (const name of ['beta', 'epsilon']) {
    generateCorpus(join(reposDir, name, 'changed'), SEED + 200, 12);
    commitAll(join(reposDir, name), 'change');
  }
  await syncBoth();
  assert.ok(packFiles().length >= 2, `the changed repositories moved: ${packFiles().join(' ')}`);
  assert.deepStrictEqual(await compare(SEED + 1, QUERIES), [], 'with tombstones');

  // A merge while searches run: each search sees the repositories before or after it. (Its
  // target makes the two packs small ones of one size tier, pack-merge.ts: merged together.)
  const live = new Map<string, number>();
  for (const m of readAllManifests(packed.data))
    for (const s of m.shards) if (s.member !== undefined) live.set(s.file, (live.get(s.file) ?? 0) + s.liveContentBytes);
  const target = 64 * Math.max(...live.values());
  // With the manifests as a view holds them, as a daemon's merges take them.
  const held = new IndexView(packed.data).current().manifests;
  const merging = mergePacks({ dataDir: packed.data, target, maxFileSize: 2 << 20, maxTrigrams: DEFAULT_MAX_TRIGRAMS, symbols: false }, held);
  const during = await compare(SEED + 2, QUERIES / 3, true);
  const report = await merging;
  assert.deepStrictEqual(during, [], 'while merging');
  assert.equal(report.skipped, 0);
  assert.equal(report.moved, NAMES.length);
  assert.equal(packFiles().length, 1, `merged into one: ${packFiles().join(' ')}`);
  assert.deepStrictEqual(await compare(SEED + 3, QUERIES), [], 'after the merge');

  // The old packs go once no manifest has named them for the grace period; the answers stay.
  const packsDir = join(packed.data, 'packs');
  const before = readdirSync(packsDir).filter((n) => n.endsWith('.trawl'));
  collectPacks(packed.data);
  collectPacks(packed.data, new Set(), Date.now() + RETIRE_GRACE_MS + 1);
  const left = readdirSync(packsDir).filter((n) => n.endsWith('.trawl'));
  assert.ok(before.length > left.length, `${before.join(' ')} -> ${left.join(' ')}`);
  assert.deepEqual(left, packFiles());
  assert.deepStrictEqual(await compare(SEED + 4, QUERIES / 3), [], 'after the collection');
  assert.ok(cut < compared / 4, `${cut} of ${compared} queries had too many matches to compare with shards of their own`);
});
