// A document with hundreds of thousands of matches is answered in this thread as in a
// worker's: its ranges once overflowed the main thread's smaller stack (spread as
// arguments), failing the shard in `trawl search` where the daemon's workers answered.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchRequest } from '../../daemon/search/types.ts';
import { tempDir } from '../helpers/corpus.ts';

const dir = tempDir('many-ranges');
const searchers: Searcher[] = [];
const COUNT = 150_000;

before(async () => {
  const root = join(dir.path, 'repo');
  mkdirSync(root);
  writeFileSync(join(root, 'many.txt'), 'z\n'.repeat(COUNT));
  writeFileSync(join(root, 'few.txt'), 'here: z\n');
  const data = join(dir.path, 'data');
  await indexLocal(root, { dataDir: data, workers: 0 });
  searchers.push(new Searcher({ dataDir: data, workers: 0 }), new Searcher({ dataDir: data, workers: 1 }));
});

after(async () => {
  for (const s of searchers) await s.close();
  dir.cleanup();
});

const req = (query: string, isRegexEnabled: boolean) =>
  ({ query, matches: 1_000_000, contextLines: 0, whole: false, isRegexEnabled, isCaseSensitivityEnabled: true }) as Required<SearchRequest>;

for (const [query, regex] of [
  ['z', false],
  ['z+', true],
  ['z$', true],
] as const) {
  test(`${COUNT} matches of ${regex ? 'regex' : 'literal'} ${query} in one file: the same answer in this thread and in a worker`, async () => {
    const answers = [];
    for (const s of searchers) {
      const r = await s.search(req(query, regex));
      assert.equal(r.stats.crashes, 0);
      assert.equal(r.isSearchExhaustive, true);
      assert.equal(r.stats.totalMatchCount, COUNT + 1);
      answers.push(JSON.stringify(r.files));
    }
    assert.equal(answers[0], answers[1]);
  });
}
