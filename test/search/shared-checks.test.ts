// Each document's checksum is checked once per process, not once per thread: the searcher
// gives every shard file a bitmap of the documents checked (Shard.open) that the workers
// and the main thread share (searcher.ts, pool.ts 'verified').

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Searcher } from '../../daemon/search/searcher.ts';
import { tempDir } from '../helpers/corpus.ts';
import { haystackIndex as haystack } from '../helpers/haystack.ts';

const dir = tempDir('shared-checks');
after(() => dir.cleanup());

/** 200 files in shards of ~0.25 MB: a few shards. */
const haystackIndex = haystack(dir.path, 200, 40, 1 << 18);

test('documents the workers checked are checked for every thread of the process', async () => {
  const dataDir = await haystackIndex();
  const searcher = new Searcher({ dataDir, workers: 2 });
  try {
    const bitmaps = (searcher as unknown as { bitmaps: Map<string, SharedArrayBuffer> }).bitmaps;
    assert.ok(bitmaps.size >= 2, `a bitmap per shard file (${bitmaps.size})`);
    const checked = () => [...bitmaps.values()].reduce((n, b) => n + new Uint8Array(b).reduce((m, x) => m + (x ? 1 : 0), 0), 0);
    assert.equal(checked(), 0, 'nothing is checked before a search');
    // Every file matches: the workers read (and check) all 200.
    const res = await searcher.search({ query: 'needle_[0-9]+_3 ', matches: 100_000, contextLines: 0, whole: false, isRegexEnabled: true, isCaseSensitivityEnabled: true });
    assert.equal(res.files.length, 200);
    assert.equal(checked(), 200, 'the workers marked every document they read in the shared bitmaps');
  } finally {
    await searcher.close();
  }
});
