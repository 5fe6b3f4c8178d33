// A stream's shards hand their hits over before they are done (shard-search.ts,
// PartialHits; search-worker.ts sends the first hit at once, then every 400 files or
// 25 ms): the parts and the rest make exactly the shard's answer, and a stream over a
// shard large enough to be sent in several parts gives exactly the blocking search's files.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchShard, type PartialHits, type ShardHit } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher, parseFile, type SearchChunk } from '../../daemon/search/searcher.ts';
import type { FileResult } from '../../daemon/search/types.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('stream-partial');
const dataDir = join(dir.path, 'data');
/** Files holding `needle` (some twice, some with a definition of it), and others without. */
const MATCHING = 1200;

before(async () => {
  const tree = join(dir.path, 'tree');
  mkdirSync(join(tree, 'src'), { recursive: true });
  for (let i = 0; i < MATCHING; i++) {
    const body = i % 7 === 0 ? `int needle_${i}(void) { return needle; }\n/* needle again */\n` : `x = ${i}; // needle\n`;
    writeFileSync(join(tree, 'src', `f${String(i).padStart(4, '0')}.c`), `#include <a.h>\n${body}`);
  }
  for (let i = 0; i < 300; i++) writeFileSync(join(tree, 'src', `other${i}.c`), `int other_${i};\n`);
  await indexLocal(tree, { dataDir, workers: 1 });
});

after(() => dir.cleanup());

test('the parts a shard hands over and the rest of its result are exactly its whole answer', () => {
  const m = readAllManifests(dataDir)[0]!;
  assert.equal(m.shards.length, 1);
  const shard = Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
  for (const query of ['needle', 'needle again', 'needle_7']) {
    const plan = planQuery({ query, isRegexEnabled: false, isCaseSensitivityEnabled: false });
    const run = (partial?: PartialHits) =>
      searchShard(shard, {
        plan,
        matchers: planTerms(plan).map((t) => new Matcher(t, 'indexed')),
        limit: 100000,
        locate: { contextLines: 0 },
        ...(partial ? { partial } : {}),
      });
    const whole = run();
    const parts: ShardHit[][] = [];
    let calls = 0;
    const split = run({
      due: (count) => (calls++, count === 1 || count === 50),
      send: (hits) => parts.push([...hits]),
    });
    const handed = parts.flat();
    assert.ok(calls > 0 || whole.hits.length === 0);
    if (whole.hits.length > 1) assert.ok(parts.length >= 1, `${query}: nothing was handed over`);
    for (const p of parts) for (let k = 1; k < p.length; k++) assert.ok(p[k - 1]!.doc < p[k]!.doc, `${query}: a part in document order`);
    const key = (h: ShardHit) =>
      JSON.stringify({
        doc: h.doc,
        ranges: h.ranges,
        nameRanges: h.nameRanges,
        branches: h.branches,
        score: h.score,
        definition: h.definition,
        lines: h.lines ? [...h.lines] : null,
      });
    assert.deepEqual([...handed, ...split.hits].map(key).sort(), whole.hits.map(key).sort(), `${query}: the same hits, scored alike`);
    assert.equal(new Set([...handed, ...split.hits].map((h) => h.doc)).size, handed.length + split.hits.length, `${query}: no hit twice`);
    assert.equal(split.found, whole.found);
    assert.equal(split.more, whole.more);
    assert.deepEqual(split.counters.filesConsidered, whole.counters.filesConsidered);
  }
});

test('a stream over a shard sent in several parts gives exactly the blocking search’s files', async () => {
  for (const workers of [1, 0]) {
    const searcher = new Searcher({ dataDir, workers });
    try {
      for (const query of ['needle', 'needle again']) {
        const req = { query, matches: 100000, contextLines: 1, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false };
        const blocking = await searcher.search(req);
        // A batch's files are read while onChunk runs: their buffers go back to the workers after.
        const chunks: SearchChunk[] = [];
        const files: FileResult[] = [];
        const streamed = await searcher.search(req, {
          onChunk: (c) => {
            chunks.push(c);
            files.push(...c.files.map(parseFile));
          },
        });
        const byName = (fs: FileResult[]) => fs.map((f) => JSON.stringify(f)).sort();
        assert.deepEqual(byName(files), byName(blocking.files), `workers ${workers}, ${query}`);
        assert.equal(streamed.stats.actualMatchCount, blocking.stats.actualMatchCount);
        assert.equal(streamed.isSearchExhaustive, true);
        // More than one part: the first hit alone, then every 400 files (or 25 ms).
        if (query === 'needle') assert.ok(files.length === MATCHING && chunks.length >= Math.ceil(MATCHING / 100), `${chunks.length} chunks`);
      }
    } finally {
      await searcher.close();
    }
  }
});
