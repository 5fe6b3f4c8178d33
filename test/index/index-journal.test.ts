// The change journal (index-journal.ts) and the reads it spares: a view reads again only
// the repositories a journaled bump names, and reads everything whenever it cannot tell
// what changed. Its state after any sequence of changes is the state a full read finds.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { ManifestReads, markBroken, readIndexState, type IndexState } from '../../daemon/index/index-health.ts';
import { INDEX_JOURNAL_FILE, JournalCursor, journalChange } from '../../daemon/index/index-journal.ts';
import { BROKEN_MARK, bumpIndexVersion, collectGarbage, retireRepository } from '../../daemon/index/manifest.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { seededRandom } from '../../bench/suite/stats.ts';

const root = tempDir('journal');
const mkfifo = (path: string) => assert.equal(spawnSync('mkfifo', [path]).status, 0);
after(() => root.cleanup());

test('the journal: what was appended since the mark; nothing told when the file is missing, replaced, shorter or garbled', () => {
  const dir = join(root.path, 'cursor');
  mkdirSync(dir);
  const path = join(dir, INDEX_JOURNAL_FILE);
  const cursor = new JournalCursor(dir);
  cursor.mark();
  assert.equal(cursor.read(), undefined, 'no journal yet');

  journalChange(dir, 7, '1-a');
  cursor.mark();
  assert.deepEqual(cursor.read(), { repoIds: new Set(), versions: [] }, 'the mark is the end');
  journalChange(dir, 8, '2-b');
  journalChange(dir, 9, undefined);
  journalChange(dir, 8, '3-c');
  assert.deepEqual(cursor.read(), { repoIds: new Set([8, 9]), versions: ['2-b', '3-c'] });
  assert.deepEqual(cursor.read(), { repoIds: new Set(), versions: [] }, 'read once');

  // A line being written is taken once whole.
  appendFileSync(path, '10 4-');
  assert.deepEqual(cursor.read(), { repoIds: new Set(), versions: [] });
  appendFileSync(path, 'd\n');
  assert.deepEqual(cursor.read(), { repoIds: new Set([10]), versions: ['4-d'] });

  const cases: Array<[string, () => void]> = [
    ['a garbled line', () => appendFileSync(path, '11 5-e extra\n')],
    ['a file shorter than the offset', () => writeFileSync(path, readFileSync(path).subarray(0, 44))],
    ['another file (another header)', () => (rmSync(path), journalChange(dir, 12, '6-f'))],
    ['the file removed', () => rmSync(path)],
    ['replaced past its bound', () => journalChange(dir, 13, '7-g', 10)],
    ['a FIFO in its place (and a writer is not held by it)', () => (rmSync(path), mkfifo(path), journalChange(dir, 15, '9-i'))],
    ['grown past what is read', () => truncateSync(path, 64 * 1024 * 1024)],
  ];
  for (const [what, change] of cases) {
    rmSync(path, { force: true });
    journalChange(dir, 1, '0-z');
    cursor.mark();
    change();
    assert.equal(cursor.read(), undefined, what);
    assert.equal(cursor.read(), undefined, `${what}: still nothing told until the next mark`);
  }
  // Replaced past its bound: the new file holds only its header.
  rmSync(path);
  journalChange(dir, 14, '8-h');
  journalChange(dir, 14, '8-i', 10);
  assert.equal(readFileSync(path, 'latin1').split('\n').length, 2);
});

/** What a state serves and what it holds broken, comparable with a full read's. */
function summary(s: IndexState) {
  return {
    served: s.manifests.map((m) => [m.repoId, m.generation]),
    broken: s.broken.map((b) => [b.repoId, b.reason]),
  };
}

test("a view's reads after journaled changes are a full read's, and read only what the journal names", async () => {
  const data = join(root.path, 'data');
  const sources: string[] = [];
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) {
    const src = join(root.path, `src${i}`);
    mkdirSync(src);
    writeFileSync(join(src, 'a.txt'), `needle ${i}\n`);
    sources.push(src);
    ids.push((await indexLocal(src, { dataDir: data, symbols: false, workers: 1 })).repoId);
  }
  const reads = new ManifestReads();
  assert.deepEqual(summary(readIndexState(data, reads)), summary(readIndexState(data)));

  // Unannounced, a mark written by hand is not seen by a read after a journaled change of
  // another repository (only that one is read), and is seen after a bump the journal does not name.
  const mark = join(shardsDir(data, ids[0]!), BROKEN_MARK);
  writeFileSync(mark, JSON.stringify({ reason: 'written by hand' }));
  writeFileSync(join(sources[1]!, 'a.txt'), 'needle changed\n');
  await indexLocal(sources[1]!, { dataDir: data, symbols: false, workers: 1 });
  const partial = readIndexState(data, reads);
  assert.ok(
    partial.manifests.some((m) => m.repoId === ids[0]),
    'the repository the journal does not name is not read again',
  );
  assert.equal(partial.manifests.find((m) => m.repoId === ids[1])!.generation, readIndexState(data).manifests.find((m) => m.repoId === ids[1])!.generation);
  bumpIndexVersion(data);
  assert.deepEqual(summary(readIndexState(data, reads)), summary(readIndexState(data)), 'a bump the journal does not name: everything read');
  rmSync(mark);
  bumpIndexVersion(data);
  assert.deepEqual(summary(readIndexState(data, reads)), summary(readIndexState(data)));

  // Random sequences of the changes trawl makes, each compared with a full read.
  const random = seededRandom(7);
  const pick = () => ids[Math.floor(random() * ids.length)]!;
  for (let step = 0; step < 24; step++) {
    const id = pick();
    const i = ids.indexOf(id);
    const full = readIndexState(data);
    const served = full.manifests.find((m) => m.repoId === id);
    const kind = Math.floor(random() * 4);
    let what: string;
    if (kind === 0 || served === undefined) {
      writeFileSync(join(sources[i]!, 'a.txt'), `needle ${i} step ${step}\n`);
      await indexLocal(sources[i]!, { dataDir: data, symbols: false, workers: 1 });
      what = 're-indexed';
    } else if (kind === 1) {
      markBroken(data, id, served.generation, `damaged at step ${step}`);
      what = 'marked broken';
    } else if (kind === 2) {
      retireRepository(data, id);
      what = 'retired';
    } else {
      retireRepository(data, id, 0);
      collectGarbage(data, new Set(), Date.now() + 3_600_000);
      what = 'retired and collected';
    }
    assert.deepEqual(summary(readIndexState(data, reads)), summary(readIndexState(data)), `step ${step}: ${what} ${id}`);
  }
});
