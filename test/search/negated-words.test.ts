// A negated literal that is a word the shard's content-words index lists (content-words.ts)
// rules out the listed documents without reading them; the others are decided by their
// bytes as before. The answers are the brute-force scan's, byte for byte, in every case of
// what the index does not see: the word inside a longer word, in another case, under an
// OR or an AND, a word the index does not list (too rare), and a literal that is no word.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { searchShard } from '../../daemon/search/shard-search.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { hash32 } from '../../core/index.ts';
import { HEADER_SIZE, SectionKind, TOC_ENTRY_SIZE } from '../../daemon/index/shard-format.ts';

const filler = 'static int counter;\n'.repeat(20);

async function build(root: string): Promise<Shard> {
  const tree = join(root, 'tree');
  mkdirSync(tree, { recursive: true });
  const put = (name: string, text: string) => writeFileSync(join(tree, name), `${filler}${text}\n${filler}`);
  // Listed: the whole word, 20 documents (more than the index's 8).
  for (let i = 0; i < 20; i++) put(`listed-${i}.c`, `mutex_lock(&m${i});\nwork();\nmutex_unlock(&m${i});`);
  // Not listed under mutex_unlock: inside longer words, or in another case.
  for (let i = 0; i < 6; i++) put(`inside-${i}.c`, `mutex_lock(&m);\n__mutex_unlock_slowpath(&m);`);
  for (let i = 0; i < 6; i++) put(`upper-${i}.c`, `mutex_lock(&m);\nMUTEX_UNLOCK(m);`);
  // A rare word (3 documents, fewer than 8): never listed.
  for (let i = 0; i < 3; i++) put(`rare-${i}.c`, `mutex_lock(&m);\nrare_unlock_word(m);`);
  // The answers of `mutex_lock -mutex_unlock`.
  for (let i = 0; i < 5; i++) put(`only-${i}.c`, `mutex_lock(&m);\nbar(m);`);
  const dataDir = join(root, 'data');
  await indexLocal(tree, { dataDir, workers: 1 });
  const m = readAllManifests(dataDir)[0]!;
  assert.equal(m.shards.length, 1);
  return Shard.open(join(shardsDir(dataDir, m.repoId), m.shards[0]!.file));
}

function run(shard: Shard, query: string, caseSensitive: boolean, useIndex: boolean) {
  const plan = planQuery({ query, isRegexEnabled: false, isCaseSensitivityEnabled: caseSensitive });
  return searchShard(shard, { plan, matchers: planTerms(plan).map((t) => new Matcher(t, useIndex ? 'indexed' : 'reference')), limit: 1000, useIndex });
}

test('a negated word listed by the content-words index rules documents out unread, with the oracle’s answers', async () => {
  const dir = tempDir('negated-words');
  try {
    const shard = await build(dir.path);
    assert.ok(shard.version >= 6, `a shard with content words (version ${shard.version})`);
    const listed = shard.contentWords!.docsWith(Buffer.from('mutex_unlock'));
    assert.deepEqual([...(listed ?? [])].map((d) => shard.name(d)).sort(), Array.from({ length: 20 }, (_, i) => `listed-${i}.c`).sort());
    assert.equal(shard.contentWords!.docsWith(Buffer.from('rare_unlock_word')), null);

    const cases: Array<[string, boolean, string[]]> = [
      ['mutex_lock -mutex_unlock', true, ['only', 'rare', 'upper']],
      ['mutex_lock -mutex_unlock', false, ['only', 'rare']],
      ['mutex_lock -MUTEX_UNLOCK', true, ['inside', 'listed', 'only', 'rare']],
      ['mutex_lock -(mutex_unlock or bar)', true, ['rare', 'upper']],
      ['mutex_lock -(mutex_unlock work)', true, ['inside', 'only', 'rare', 'upper']],
      ['mutex_lock -rare_unlock_word', true, ['inside', 'listed', 'only', 'upper']],
      ['mutex_lock -"unlock("', true, ['inside', 'only', 'rare', 'upper']],
    ];
    for (const [query, cs, groups] of cases) {
      const indexed = run(shard, query, cs, true);
      const brute = run(shard, query, cs, false);
      const names = (r: typeof indexed) => r.hits.map((h) => shard.name(h.doc)).sort();
      assert.deepEqual([...new Set(names(indexed).map((n) => n.split('-')[0]))].sort(), groups, `${query} (case ${cs})`);
      assert.deepEqual(names(indexed), names(brute), `${query} (case ${cs})`);
      assert.deepEqual(
        indexed.hits.map((h) => h.ranges),
        brute.hits.map((h) => h.ranges),
        `${query} (case ${cs})`,
      );
    }
    // The 20 listed documents are not read for `mutex_lock -mutex_unlock`: of the 40
    // candidates 20 are loaded (the others, decided by their bytes).
    const r = run(shard, 'mutex_lock -mutex_unlock', true, true);
    assert.equal(r.counters.filesLoaded, 20);

    // The same shard as version 5 wrote it (no content-words section) reads every candidate
    // and answers the same.
    const old = Shard.open(asVersion5(shard.path, join(dir.path, 'v5.trawl')));
    assert.equal(old.contentWords, undefined);
    for (const [query, cs] of cases) {
      const a = run(old, query, cs, true);
      const b = run(shard, query, cs, true);
      assert.deepEqual(
        a.hits.map((h) => [h.doc, h.ranges]),
        b.hits.map((h) => [h.doc, h.ranges]),
        `${query} (case ${cs}) on version 5`,
      );
    }
    assert.equal(run(old, 'mutex_lock -mutex_unlock', true, true).counters.filesLoaded, 40);
  } finally {
    dir.cleanup();
  }
});

/**
 * A copy of a current shard that a version 5 reader would take for its own: the
 * content-words, content-segments and doc-groups entries dropped from the table of
 * contents (their bytes stay, unreferenced),
 * the version and the section count lowered, the checksums redone.
 */
/** The sections a version 5 shard does not have. */
const LATER = new Set<number>([SectionKind.ContentWords, SectionKind.ContentSegments, SectionKind.DocGroups]);

function asVersion5(path: string, out: string): string {
  const b = readFileSync(path);
  const count = b.readUInt32LE(24);
  const entries: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const e = b.subarray(HEADER_SIZE + i * TOC_ENTRY_SIZE, HEADER_SIZE + (i + 1) * TOC_ENTRY_SIZE);
    const kind = e.readUInt32LE(0);
    if (!LATER.has(kind)) entries.push(Buffer.from(e));
  }
  assert.equal(entries.length, count - LATER.size);
  const toc = Buffer.concat([...entries, Buffer.alloc(LATER.size * TOC_ENTRY_SIZE)]);
  toc.copy(b, HEADER_SIZE);
  b.writeUInt32LE(5, 8);
  b.writeUInt32LE(entries.length, 24);
  b.writeUInt32LE(hash32(toc.subarray(0, entries.length * TOC_ENTRY_SIZE)), 28);
  b.writeUInt32LE(hash32(b.subarray(0, 60)), 60);
  writeFileSync(out, b);
  return out;
}
