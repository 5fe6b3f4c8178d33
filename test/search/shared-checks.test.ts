// Each section's and each document's checksum is checked once per process, not once per
// thread: the searcher gives every shard file its checks (index/section-checks.ts) that
// the workers, the scrub and the main thread share (searcher.ts, pool.ts 'verified').

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Searcher } from '../../daemon/search/searcher.ts';
import { AT_OPEN, PASSED, SECTION_SLOTS, takeWritten, UNCHECKED } from '../../daemon/index/section-checks.ts';
import { SectionKind } from '../../daemon/index/shard-format.ts';
import { checkShardHeader } from '../../daemon/index/section-file.ts';
import { tempDir } from '../helpers/corpus.ts';
import { haystackIndex as haystack } from '../helpers/haystack.ts';

const dir = tempDir('shared-checks');
after(() => dir.cleanup());

/** 200 files in shards of ~0.25 MB: a few shards. */
const haystackIndex = haystack(dir.path, 200, 40, 1 << 18);

/** The searcher's checks, by file. */
const checksOf = (searcher: Searcher) => (searcher as unknown as { bitmaps: Map<string, SharedArrayBuffer> }).bitmaps;

test('an index this process wrote counts as checked, its sections and its documents', async () => {
  const dataDir = await haystackIndex();
  const searcher = new Searcher({ dataDir, workers: 2 });
  try {
    const bitmaps = checksOf(searcher);
    assert.ok(bitmaps.size >= 2, `checks per shard file (${bitmaps.size})`);
    for (const [path, b] of bitmaps)
      assert.ok(
        new Uint8Array(b).every((x) => x === PASSED),
        `${path}: all passed`,
      );
  } finally {
    await searcher.close();
  }
});

test('sections and documents the threads checked are checked for every thread of the process', async () => {
  const dataDir = await haystackIndex();
  // As a process that did not write the index sees it.
  for (const f of readdirSync(join(dataDir, 'shards'), { recursive: true, encoding: 'utf8' })) takeWritten(join(dataDir, 'shards', f));
  const searcher = new Searcher({ dataDir, workers: 2 });
  try {
    const bitmaps = checksOf(searcher);
    assert.ok(bitmaps.size >= 2, `checks per shard file (${bitmaps.size})`);
    const checked = () => [...bitmaps.values()].reduce((n, b) => n + new Uint8Array(b, SECTION_SLOTS).reduce((m, x) => m + (x ? 1 : 0), 0), 0);
    /** Each file's sections (but the content) and their states. */
    const states = () =>
      [...bitmaps].flatMap(([path, b]) =>
        [...checkShardHeader(path).keys()].filter((k) => k !== SectionKind.Content).map((k) => ({ path, k, state: new Uint8Array(b)[k] })),
      );
    assert.equal(checked(), 0, 'nothing is checked before a search');
    assert.ok(states().every((s) => s.state === UNCHECKED));
    // Every file matches: the workers read (and check) all 200.
    const res = await searcher.search({
      query: 'needle_[0-9]+_3 ',
      matches: 100_000,
      contextLines: 0,
      whole: false,
      isRegexEnabled: true,
      isCaseSensitivityEnabled: true,
    });
    assert.equal(res.files.length, 200);
    assert.equal(checked(), 200, 'the workers marked every document they read in the shared bitmaps');
    for (const s of states()) if (AT_OPEN.has(s.k)) assert.equal(s.state, PASSED, `section ${s.k} of ${s.path} was checked when a worker opened it`);
    // The rest is the scrub's: every section of every file once it is done.
    await searcher.scrubbed();
    assert.deepEqual(
      states().filter((s) => s.state !== PASSED),
      [],
      'the scrub checked every other section',
    );
  } finally {
    await searcher.close();
  }
});
