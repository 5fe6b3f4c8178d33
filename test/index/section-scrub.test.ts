// The scrub (daemon/index/section-scrub.ts) verifies every section of the files it is given
// that is not checked yet, once, records the verdict in the files' shared checks, reports a
// corrupt section with the file's reader's words, and takes no notice of a file that has
// gone (retired and removed since it was listed). A catalog-only open (an incremental run's
// plan) checks the sections that list the documents and leaves the rest to the scrub.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FAILED, newChecks, PASSED, sectionStates, UNCHECKED } from '../../daemon/index/section-checks.ts';
import { SectionScrub, type ScrubFile } from '../../daemon/index/section-scrub.ts';
import { SECTION_NAMES, SectionKind } from '../../daemon/index/shard-format.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { checkShardHeader } from '../../daemon/index/section-file.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { sectionTable } from '../helpers/section-table.ts';

let root: { path: string; cleanup(): void };
/** The shard files of a small index. */
let shards: string[];

before(async () => {
  root = tempDir('scrub');
  const corpus = join(root.path, 'src');
  mkdirSync(corpus, { recursive: true });
  for (let i = 0; i < 30; i++) writeFileSync(join(corpus, `f${i}.c`), `int value_${i} = ${i};\nstatic int helper_${i % 4}(void) { return value_${i}; }\n`);
  const data = join(root.path, 'data');
  await indexLocal(corpus, { dataDir: data, symbols: false, workers: 1, shardTargetBytes: 1024 });
  const dir = join(data, 'shards', readdirSync(join(data, 'shards'))[0]!);
  shards = readdirSync(dir)
    .filter((f) => f.endsWith('.trawl'))
    .map((f) => join(dir, f));
  assert.ok(shards.length >= 2, `a few shards (${shards.length})`);
});

after(() => root.cleanup());

const fileOf = (path: string): ScrubFile => ({ path, kind: 'shard', checks: newChecks(0) });

/** Each section of the file (the content aside: its documents are checked as they are read) and its state. */
const states = (f: ScrubFile) => [...checkShardHeader(f.path).keys()].filter((k) => k !== SectionKind.Content).map((k) => sectionStates(f.checks)[k]);

test('the scrub verifies every section of every file once, and follows the files listed', async () => {
  const damage: string[] = [];
  const scrub = new SectionScrub({ activity: new SharedArrayBuffer(8), onDamage: (_f, message) => damage.push(message) });
  try {
    const [a, b, ...rest] = shards.map((p) => fileOf(p));
    scrub.set([a!, b!]);
    await scrub.idle();
    for (const f of [a!, b!])
      assert.ok(
        states(f).every((s) => s === PASSED),
        `${f.path}: every section passed`,
      );
    // A later listing: the new files are scrubbed, those already done are not read again
    // (their checks are reset here to see it), those no longer listed are forgotten.
    sectionStates(a!.checks).fill(UNCHECKED);
    scrub.set([a!, ...rest]);
    await scrub.idle();
    assert.ok(
      states(a!).every((s) => s === UNCHECKED),
      'a file scrubbed before is not scrubbed again',
    );
    for (const f of rest) assert.ok(states(f).every((s) => s === PASSED));
    assert.deepEqual(damage, []);
  } finally {
    await scrub.close();
  }
});

test('a corrupt section is reported once, its state failed; a file gone is passed over', async () => {
  const bad = join(root.path, 'bad.trawl');
  const b = Buffer.from(readFileSync(shards[0]!));
  b[sectionTable(b).get(SectionKind.ContentPostings)!.offset] ^= 0x01;
  writeFileSync(bad, b);
  const good = join(root.path, 'good.trawl');
  copyFileSync(shards[1]!, good);
  const damage: Array<{ path: string; message: string }> = [];
  const scrub = new SectionScrub({ activity: new SharedArrayBuffer(8), onDamage: (f, message) => damage.push({ path: f.path, message }) });
  try {
    const files = [fileOf(join(root.path, 'gone.trawl')), fileOf(bad), fileOf(good)];
    scrub.set(files);
    await scrub.idle();
    assert.equal(damage.length, 1, JSON.stringify(damage));
    assert.equal(damage[0]!.path, bad);
    assert.match(damage[0]!.message, /^shard .*bad\.trawl: section content-postings is corrupt \(checksum mismatch\); re-index the repository$/);
    assert.equal(sectionStates(files[1]!.checks)[SectionKind.ContentPostings], FAILED);
    assert.ok(
      states(files[2]!).every((s) => s === PASSED),
      'the next file is scrubbed',
    );
  } finally {
    await scrub.close();
  }
});

test('a catalog-only open checks the sections that list the documents and no other', () => {
  const damaged = (kind: SectionKind) => {
    const path = join(root.path, `catalog-${kind}.trawl`);
    const b = Buffer.from(readFileSync(shards[0]!));
    b[sectionTable(b).get(kind)!.offset] ^= 0x01;
    writeFileSync(path, b);
    return path;
  };
  const intact = Shard.open(shards[0]!);
  // Damaged posting lists: an incremental plan reads past them; a full open refuses them.
  const postings = damaged(SectionKind.ContentPostings);
  const listed = Shard.open(postings, { catalogOnly: true });
  assert.deepEqual(
    Array.from({ length: listed.docCount }, (_, d) => [listed.name(d), listed.oid(d)]),
    Array.from({ length: intact.docCount }, (_, d) => [intact.name(d), intact.oid(d)]),
  );
  assert.equal(listed.sectionsChecked(), false, 'its other sections are not taken as checked');
  assert.throws(() => Shard.open(postings), /section content-postings is corrupt/);
  // Damaged blob ids or paths: what the plan reads is refused.
  for (const kind of [SectionKind.Oids, SectionKind.Names])
    assert.throws(() => Shard.open(damaged(kind), { catalogOnly: true }), new RegExp(`section ${SECTION_NAMES[kind]} is corrupt`));
});
