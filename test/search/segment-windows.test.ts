// Segment masks (index/content-segments.ts, search/segment-windows.ts): a large document
// that holds every trigram of a literal, and each followed by the literal's next byte, but
// never all of them near one another, is ruled out without being read; one that holds the
// literal is found wherever the literal lies (across a segment boundary, at the end, in
// several segments), and every answer is the brute-force scan's.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { SEGMENT_SHIFT, SEGMENTED_MIN_BYTES } from '../../daemon/index/content-segments.ts';
import { tempDir } from '../helpers/corpus.ts';

const SEGMENT = 1 << SEGMENT_SHIFT;
const LINE = 'the quick brown fog jumps over the lazy hen\n';

/** `size` bytes of filler with each of `pieces` written at its offset. */
function large(size: number, pieces: Array<[number, string]>): string {
  const bytes = Buffer.from(LINE.repeat(Math.ceil(size / LINE.length)).slice(0, size));
  for (const [at, text] of pieces) bytes.write(text, at);
  return bytes.toString('latin1');
}

async function build(root: string): Promise<{ shard: Shard; scattered: number }> {
  const tree = join(root, 'tree');
  mkdirSync(tree, { recursive: true });
  const size = 2 * SEGMENTED_MIN_BYTES;
  // Every trigram of `release_filter`, each followed as in it, in three places far apart.
  const scattered = 12;
  for (let i = 0; i < scattered; i++)
    writeFileSync(
      join(tree, `scattered-${i}.c`),
      large(size + i * 777, [
        [100 + i, 'release'],
        [size / 2, 'ase_fil'],
        [size - 200, 'filter'],
      ]),
    );
  // The same pieces in one segment: a window to read, which does not hold the literal.
  writeFileSync(
    join(tree, 'near.c'),
    large(size, [
      [SEGMENT * 3 + 10, 'release'],
      [SEGMENT * 3 + 100, 'ase_fil'],
      [SEGMENT * 3 + 300, 'filter'],
    ]),
  );
  // The literal across a segment boundary, at a boundary, twice in one segment, at the end.
  writeFileSync(
    join(tree, 'boundary.c'),
    large(size, [
      [SEGMENT - 5, 'release_filter'],
      [SEGMENT * 3, 'release_filter'],
      [SEGMENT * 5 + 7, 'release_filter release_filter'],
    ]),
  );
  writeFileSync(join(tree, 'end.c'), large(size, [[size - 'release_filter'.length, 'release_filter']]));
  writeFileSync(
    join(tree, 'upper.c'),
    large(size, [
      [SEGMENT * 2 - 3, 'RELEASE_FILTER'],
      [SEGMENT * 7, 'Release_Filter'],
    ]),
  );
  // A Kelvin sign folds to one byte: no masks for this one, found all the same.
  writeFileSync(join(tree, 'kelvin.c'), `\u212A\n${large(size, [[SEGMENT * 4 + 1, 'release_filter']])}`);
  writeFileSync(join(tree, 'small.c'), 'int release_filter;\n');
  writeFileSync(join(tree, 'small-scattered.c'), 'release ase_fil filter\n');
  const dataDir = join(root, 'data');
  await indexLocal(tree, { dataDir, workers: 1 });
  const m = readAllManifests(dataDir)[0]!;
  assert.equal(m.shards.length, 1);
  return { shard: Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file)), scattered };
}

function run(shard: Shard, query: string, caseSensitive: boolean, regex: boolean, useIndex: boolean) {
  const plan = planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: caseSensitive });
  return searchShard(shard, { plan, matchers: planTerms(plan).map((t) => new Matcher(t, 'indexed')), limit: 10_000, useIndex });
}

test('segment masks rule out large documents whose trigrams lie apart, and every answer is the oracle’s', async () => {
  const dir = tempDir('segment-windows');
  try {
    const { shard, scattered } = await build(dir.path);
    assert.ok(shard.contentSegments !== undefined, 'the shard has masks');
    const cases: Array<[string, boolean, boolean]> = [
      ['release_filter', true, false],
      ['release_filter', false, false],
      ['lease_filt', true, false],
      ['release_filter -fog', true, false],
      ['release_filter or quick', true, false],
      ['release_fil+ter', true, true],
      ['e_f', true, false],
    ];
    for (const [query, cs, regex] of cases) {
      const what = `${query} (case ${cs ? 'sensitive' : 'insensitive'}${regex ? ', regex' : ''})`;
      const indexed = run(shard, query, cs, regex, true);
      const brute = run(shard, query, cs, regex, false);
      const hits = (r: typeof indexed) => r.hits.map((h) => ({ name: shard.name(h.doc), ranges: h.ranges })).sort((a, b) => (a.name < b.name ? -1 : 1));
      assert.deepEqual(hits(indexed), hits(brute), what);
    }
    const found = run(shard, 'release_filter', false, false, true);
    assert.deepEqual(found.hits.map((h) => shard.name(h.doc)).sort(), ['boundary.c', 'end.c', 'kelvin.c', 'small.c', 'upper.c']);
    // The scattered ones are candidates of the trigrams and of their follow masks alone:
    // the masks rule them out before any is read, and near.c is read in its window only.
    const names = new Set(found.hits.map((h) => shard.name(h.doc)));
    assert.ok(found.counters.filesConsidered <= names.size + 2, `${found.counters.filesConsidered} documents examined`);
    const all = run(shard, 'release_filter', false, false, false);
    assert.ok(all.counters.filesConsidered >= scattered + names.size, 'the brute force examines them all');
  } finally {
    dir.cleanup();
  }
});
