// Differential test: for random queries built from the grammar (terms in both modes,
// filters, negation, OR, parentheses, case: settings), in both case modes and with random
// limits and context, the indexed search must return exactly what the brute-force oracle
// returns (every document of every shard checked by the reference matcher; no posting is
// read). Zero differences is the only pass.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { generateCorpus, prng, tempDir } from '../helpers/corpus.ts';
import { outcome, randomRequest } from '../helpers/random-queries.ts';

const SEED = Number(process.env.TRAWL_DIFF_SEED ?? 20261122);
const QUERIES = Number(process.env.TRAWL_DIFF_QUERIES ?? 400);

const dir = tempDir('diff');
let searcher: Searcher;
/** The same index searched in this thread (workers: 0, as `trawl search` on one shard does). */
let inThread: Searcher;

before(async () => {
  generateCorpus(`${dir.path}/alpha`, SEED, 200);
  generateCorpus(`${dir.path}/beta`, SEED + 1, 80);
  // Small shards, so that the search spans many shards and the early stop is exercised.
  await indexLocal(`${dir.path}/alpha`, { dataDir: `${dir.path}/data`, shardTargetBytes: 48 * 1024, workers: 2 });
  await indexLocal(`${dir.path}/beta`, { dataDir: `${dir.path}/data`, shardTargetBytes: 48 * 1024, workers: 2 });
  searcher = new Searcher({ dataDir: `${dir.path}/data`, workers: 2 });
  inThread = new Searcher({ dataDir: `${dir.path}/data`, workers: 0 });
  assert.ok(searcher.shardCount > 3, `expected several shards, got ${searcher.shardCount}`);
});

after(async () => {
  await searcher?.close();
  await inThread?.close();
  dir.cleanup();
});

test(`indexed search equals the brute-force oracle on ${QUERIES} random queries (seed ${SEED})`, async () => {
  const r = prng(SEED);
  const differences: string[] = [];
  let nonEmpty = 0;
  let rejected = 0;
  for (let i = 0; i < QUERIES; i++) {
    const req = randomRequest(r);
    if (req.query === '') continue;
    const indexed = await outcome(searcher.search(req));
    const brute = await outcome(searcher.search(req, { brute: true }));
    if (indexed.files.length > 0) nonEmpty++;
    if ('error' in indexed) rejected++;
    try {
      assert.deepStrictEqual(indexed, brute);
    } catch {
      differences.push(JSON.stringify(req));
    }
  }
  assert.deepStrictEqual(differences, [], `${differences.length} queries differ from the oracle`);
  // The test is only meaningful if many queries find something.
  assert.ok(nonEmpty > QUERIES / 4, `only ${nonEmpty} of ${QUERIES} queries matched anything`);
  // Parse errors are compared too, but most generated queries must be valid.
  assert.ok(rejected < QUERIES / 10, `${rejected} of ${QUERIES} queries were rejected`);
});

test('searching in this thread (workers: 0) answers exactly as the worker threads do', async () => {
  const r = prng(SEED + 7);
  const differences: string[] = [];
  for (let i = 0; i < QUERIES / 4; i++) {
    const req = randomRequest(r);
    if (req.query === '') continue;
    const threaded = await outcome(searcher.search(req));
    const here = await outcome(inThread.search(req));
    try {
      assert.deepStrictEqual(here, threaded);
    } catch {
      differences.push(JSON.stringify(req));
    }
  }
  assert.deepStrictEqual(differences, [], `${differences.length} queries differ between the two`);
  assert.equal(inThread.threads, 0, 'no worker thread was started');
  assert.equal(searcher.threads, 2);
});
