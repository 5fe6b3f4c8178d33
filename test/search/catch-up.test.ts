// Searcher.catchUp: the searcher moves to the index as it is now without a search (a sync
// calls it as it ends), and stays where it is when nothing changed.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';

test('catchUp takes a new index before any search does, and nothing when the index did not move', async () => {
  const dir = tempDir('catch-up');
  const data = join(dir.path, 'data');
  const tree = (name: string, text: string) => {
    mkdirSync(join(dir.path, name));
    writeFileSync(join(dir.path, name, 'a.c'), text);
    return join(dir.path, name);
  };
  await indexLocal(tree('one', 'int first_needle;\n'), { dataDir: data, workers: 1 });
  const searcher = new Searcher({ dataDir: data, workers: 0 });
  try {
    assert.equal(searcher.shardCount, 1);
    await indexLocal(tree('two', 'int second_needle;\n'), { dataDir: data, workers: 1 });
    assert.equal(searcher.shardCount, 1, 'no search and no catchUp: the snapshot it had');
    searcher.catchUp();
    assert.equal(searcher.shardCount, 2, 'caught up without a search');
    const inUse = searcher.inUse();
    searcher.catchUp();
    assert.deepEqual(searcher.inUse(), inUse, 'nothing moved: the same files');
    const req = { query: 'second_needle', matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true };
    assert.equal((await searcher.search(req)).files.length, 1);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});
