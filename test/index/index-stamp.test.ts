// The index's stamp (daemon/index/index-stamp.ts): a bump is seen by the next search, in
// this process at once and in another through the change signal, without a stat per search
// while the signal holds; a bump whose signal was never written (its writer killed between
// the two) and a signal file made anew are seen within the bound of a second.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../daemon/index/data-dir.ts';
import { INDEX_SEQ_FILE, INDEX_VERSION_FILE, indexVersionStamp, signalIndexChange } from '../../daemon/index/index-stamp.ts';
import { bumpIndexVersion } from '../../daemon/index/manifest.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function dataDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-stamp-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** index-version replaced as another process's bump replaces it: this process's stamp is not told. */
function replaceVersion(dir: string, text: string): void {
  writeFileAtomic(join(dir, INDEX_VERSION_FILE), `${text}\n`);
}

/**
 * A bump of this process, then the stamp as a searcher holds it once settled: two turns,
 * the first maps the signal, the second takes the stamp while the signal holds.
 */
async function settled(dir: string): Promise<string> {
  bumpIndexVersion(dir, '1-a');
  await nextTurn();
  indexVersionStamp(dir);
  await nextTurn();
  return indexVersionStamp(dir);
}

test('no index-version: the stamp is empty; a bump of this process is seen at once, in the same turn', (t) => {
  const dir = dataDir(t);
  assert.equal(indexVersionStamp(dir), '');
  bumpIndexVersion(dir, '1-a');
  const first = indexVersionStamp(dir);
  assert.notEqual(first, '');
  const signal = readFileSync(join(dir, INDEX_SEQ_FILE));
  assert.equal(signal.length, 8);
  assert.ok(
    signal.some((b) => b !== 0),
    'the bump wrote the change signal',
  );
  bumpIndexVersion(dir, '2-b');
  assert.notEqual(indexVersionStamp(dir), first);
  assert.equal(statSync(join(dir, INDEX_SEQ_FILE)).size, 8, 'the signal is written in place, never appended to');
  assert.notDeepEqual(readFileSync(join(dir, INDEX_SEQ_FILE)), signal);
});

test("another writer's bump (index-version replaced, then the signal) is seen at the next turn", async (t) => {
  const dir = dataDir(t);
  const before = await settled(dir);
  await nextTurn();
  replaceVersion(dir, '2-b');
  assert.equal(indexVersionStamp(dir), before, 'within a turn, the stamp taken in it holds');
  signalIndexChange(dir);
  await nextTurn();
  assert.notEqual(indexVersionStamp(dir), before);
});

test('a bump by another process is seen at the next search', async (t) => {
  const dir = dataDir(t);
  const before = await settled(dir);
  const script = `import { bumpIndexVersion } from ${JSON.stringify(join(ROOT, 'daemon/index/manifest.ts'))}; bumpIndexVersion(${JSON.stringify(dir)});`;
  execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: 'pipe' });
  await nextTurn();
  assert.notEqual(indexVersionStamp(dir), before);
});

test('a replacement whose signal was never written is seen within a second; so is a signal file made anew', async (t) => {
  const dir = dataDir(t);
  const before = await settled(dir);
  const start = performance.now();
  replaceVersion(dir, '2-b');
  await nextTurn();
  const soon = indexVersionStamp(dir);
  // The signal held: the stamp is trusted (unless this machine took the whole second to get here).
  if (performance.now() - start < 900) assert.equal(soon, before, 'no stat while the signal holds');
  await sleep(1100);
  const seen = indexVersionStamp(dir);
  assert.notEqual(seen, before);

  // The signal file removed and made anew (a data dir restored, say): the old mapping never moves again.
  unlinkSync(join(dir, INDEX_SEQ_FILE));
  signalIndexChange(dir);
  await sleep(1100);
  await nextTurn();
  indexVersionStamp(dir); // the periodic stat maps the new file
  await nextTurn();
  const mapped = indexVersionStamp(dir);
  replaceVersion(dir, '3-c');
  signalIndexChange(dir);
  await nextTurn();
  assert.notEqual(indexVersionStamp(dir), mapped, 'the new signal file is the one read');
});

test('a signal file that is not a regular file is never opened for long: the stamp still follows bumps', async (t) => {
  const dir = dataDir(t);
  execFileSync('mkfifo', [join(dir, INDEX_SEQ_FILE)]);
  bumpIndexVersion(dir, '1-a');
  const first = indexVersionStamp(dir);
  await nextTurn();
  replaceVersion(dir, '2-b');
  signalIndexChange(dir);
  await sleep(1100);
  assert.notEqual(indexVersionStamp(dir), first);
  // A short signal file (not written by trawl) is not mapped either.
  unlinkSync(join(dir, INDEX_SEQ_FILE));
  writeFileSync(join(dir, INDEX_SEQ_FILE), 'x');
  await sleep(1100);
  const short = indexVersionStamp(dir);
  replaceVersion(dir, '3-c');
  await sleep(1100);
  assert.notEqual(indexVersionStamp(dir), short);
});
