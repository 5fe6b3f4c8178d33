// Differential test: for random literal and regex queries, in both case modes and with
// random limits and context, the indexed search must return exactly what the brute-force
// oracle returns (every document checked by the reference matcher, no index). Zero
// differences is the only pass.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { indexPath } from '../daemon/index/indexer.ts';
import { Searcher } from '../daemon/search/searcher.ts';
import type { SearchRequest, SearchResponse } from '../daemon/search/types.ts';
import { WORDS, generateCorpus, prng, tempDir } from './helpers/corpus.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261122);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 400);

const dir = tempDir('diff');
let searcher: Searcher;

before(async () => {
  generateCorpus(`${dir.path}/corpus`, SEED, 250);
  // Small shards, so that the search spans many shards and the early stop is exercised.
  await indexPath(`${dir.path}/corpus`, { dataDir: `${dir.path}/data`, shardTargetBytes: 48 * 1024, workers: 2 });
  searcher = new Searcher({ dataDir: `${dir.path}/data`, workers: 2 });
  assert.ok(searcher.shardCount > 3, `expected several shards, got ${searcher.shardCount}`);
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

function randomCase(r: ReturnType<typeof prng>, s: string): string {
  return [...s].map((c) => (r.chance(0.3) ? (r.chance(0.5) ? c.toUpperCase() : c.toLowerCase()) : c)).join('');
}

function randomLiteral(r: ReturnType<typeof prng>): string {
  const w = r.pick(WORDS);
  switch (r.int(6)) {
    case 0: return w;
    case 1: return randomCase(r, w);
    case 2: return [...w].slice(0, 1 + r.int([...w].length)).join(''); // a prefix, often short
    case 3: return `${w} ${r.pick(WORDS)}`;
    case 4: return `zz${w}qq`; // usually absent
    default: return [...w].slice(r.int([...w].length)).join('') || w;
  }
}

const REGEX_SHAPES: Array<(r: ReturnType<typeof prng>) => string> = [
  (r) => esc(r.pick(WORDS)),
  (r) => `${esc(r.pick(WORDS))}\\s*${esc(r.pick(WORDS))}`,
  (r) => `(${esc(r.pick(WORDS))}|${esc(r.pick(WORDS))})`,
  (r) => `^\\s*${esc(r.pick(WORDS))}`,
  (r) => `${esc(r.pick(WORDS))}$`,
  (r) => `[a-z]+_${esc(r.pick(['lock', 'bar', 'operations', 'irqsave']))}`,
  (r) => `\\b${esc(r.pick(WORDS))}\\b`,
  () => '[0-9]{2,}',
  () => '[A-Z]{3}',
  (r) => `${esc(r.pick(WORDS))}.*${esc(r.pick(WORDS))}`,
  (r) => `(?i)${esc(r.pick(WORDS))}`,
  (r) => `${esc(r.pick(WORDS))}[^a-z]`,
  (r) => `k.y|s.m`,
  () => 'x*',
  () => '^$',
  (r) => `${esc(r.pick(WORDS))}\\n`,
  (r) => `caf[eé]|[ÉE]LAN`,
  (r) => `${esc(r.pick(WORDS))}(\\s+${esc(r.pick(WORDS))})+`,
];

function esc(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** The parts of a response that must agree; stats count work, which differs by design. */
function comparable(res: SearchResponse): unknown {
  return {
    files: res.files,
    repositoryInfo: res.repositoryInfo,
    isSearchExhaustive: res.isSearchExhaustive,
    actualMatchCount: res.stats.actualMatchCount,
    fileCount: res.stats.fileCount,
  };
}

test(`indexed search equals the brute-force oracle on ${QUERIES} random queries (seed ${SEED})`, async () => {
  const r = prng(SEED);
  const differences: string[] = [];
  let nonEmpty = 0;
  for (let i = 0; i < QUERIES; i++) {
    const regex = r.chance(0.45);
    const req: Required<SearchRequest> = {
      query: regex ? r.pick(REGEX_SHAPES)(r) : randomLiteral(r),
      matches: r.pick([1, 3, 10, 50, 1000, 100000]),
      contextLines: r.pick([0, 0, 1, 3]),
      whole: r.chance(0.05),
      isRegexEnabled: regex,
      isCaseSensitivityEnabled: r.chance(0.5),
    };
    if (req.query === '') continue;
    const indexed = await searcher.search(req);
    const brute = await searcher.search(req, { brute: true });
    if (indexed.files.length > 0) nonEmpty++;
    try {
      assert.deepStrictEqual(comparable(indexed), comparable(brute));
    } catch {
      differences.push(JSON.stringify(req));
    }
  }
  assert.deepStrictEqual(differences, [], `${differences.length} queries differ from the oracle`);
  // The test is only meaningful if many queries find something.
  assert.ok(nonEmpty > QUERIES / 3, `only ${nonEmpty} of ${QUERIES} queries matched anything`);
});
