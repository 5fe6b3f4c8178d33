// A history shard stores each path's versions next to one another, newest first, most of
// them as deltas against the one before and deflated (index/version-deltas.ts): every
// document must read back as exactly git's blob, in any order, from a cold or a warm
// reader; a chain never holds more than DELTA_CHAIN_MAX - 1 deltas; and damage to what is
// stored (a delta's bytes, the flags) fails the document cleanly as corrupt.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { hash32 } from '../../core/index.ts';
import { historyDataDir, shardsDir } from '../../daemon/index/data-dir.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { ShardError } from '../../daemon/index/shard-error.ts';
import { DELTA_CHAIN_MAX, DOC_FLAG_DEFLATE, DOC_FLAG_DELTA, DOC_RECORD_SIZE, SectionKind } from '../../daemon/index/shard-format.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { git, TestRepo } from '../helpers/git.ts';

const dir = tempDir('history-deltas');
const src = join(dir.path, 'src');
const data = join(dir.path, 'data');
let shards: string[] = [];

function line(r: ReturnType<typeof prng>): string {
  return `${'  '.repeat(r.int(3))}${Array.from({ length: 1 + r.int(5) }, () => r.pick(WORDS)).join(' ')};`;
}

before(async () => {
  const r = prng(4242);
  const repo = TestRepo.init(src);
  const main = Array.from({ length: 60 }, () => line(r));
  const crlf = Array.from({ length: 30 }, () => line(r));
  const large = Array.from({ length: 3000 }, () => line(r));
  // 40 commits, each editing the files a little (a line changed, added or removed), so that
  // chains run past DELTA_CHAIN_MAX; a file rewritten whole each time (its delta is no
  // smaller); a file emptied and filled again; a file deleted and brought back as it was.
  for (let i = 0; i < 40; i++) {
    const at = r.int(main.length);
    if (i % 3 === 0) main.splice(at, 0, line(r));
    else if (i % 3 === 1) main[at] = `${main[at]} /* ${r.pick(WORDS)} */`;
    else main.splice(at, 1);
    crlf[r.int(crlf.length)] = line(r);
    const files: Record<string, string | null> = {
      'src/main.c': `${main.join('\n')}\n`,
      'notes/crlf.txt': `${crlf.join('\r\n')}\r\n`,
      'gen/random.txt': `${Array.from({ length: 20 }, () => line(r)).join('\n')}\n`,
      'tiny.txt': `${i}\n`,
      'empty.txt': i % 4 === 0 ? '' : `${line(r)}\n`,
      'back.txt': i % 10 === 5 ? null : 'always the same\n',
    };
    if (i % 8 === 0) {
      large[r.int(large.length)] = line(r);
      files['big/large.txt'] = `${large.join('\n')}\n`;
    }
    repo.commit(files, `change ${i}`);
  }
  const summary = await indexLocal(src, { dataDir: data, name: 'deltas', workers: 1, symbols: false });
  assert.notEqual(await indexLocalHistory(summary, { dataDir: data, workers: 1, symbols: false }), 'unchanged');
  const root = historyDataDir(data);
  const m = readManifest(root, summary.repoId);
  assert.ok(m?.version === 2);
  shards = m.shards.map((s) => join(shardsDir(root, summary.repoId), s.file));
});

after(() => dir.cleanup());

/** The shard file's docs section and content section offsets (layout at the top of shard-reader.ts). */
function sections(file: Buffer): Map<number, { entry: number; offset: number; length: number }> {
  const out = new Map<number, { entry: number; offset: number; length: number }>();
  for (let i = 0; i < file.readUInt32LE(24); i++) {
    const o = 64 + 24 * i;
    out.set(file.readUInt32LE(o), { entry: o, offset: Number(file.readBigUInt64LE(o + 8)), length: Number(file.readBigUInt64LE(o + 16)) });
  }
  return out;
}

/** Rewrites the checksums of the docs section, the table of contents and the header after an edit of the docs. */
function rehashDocs(file: Buffer): void {
  const s = sections(file);
  const docs = s.get(SectionKind.Docs)!;
  file.writeUInt32LE(hash32(file.subarray(docs.offset, docs.offset + docs.length)), docs.entry + 4);
  file.writeUInt32LE(hash32(file.subarray(64, 64 + 24 * s.size)), 28);
  file.writeUInt32LE(hash32(file.subarray(0, 60)), 60);
}

function docFlags(file: Buffer, doc: number): number {
  return file.readUInt16LE(sections(file).get(SectionKind.Docs)!.offset + doc * DOC_RECORD_SIZE + 26);
}

function blob(oid: string): Buffer {
  return execFileSync('git', ['-C', src, 'cat-file', 'blob', oid], { maxBuffer: 1 << 26 });
}

test('every document of the history reads back as git blob, in any order, cold or warm', () => {
  let deltas = 0;
  let deflated = 0;
  let docs = 0;
  for (const path of shards) {
    const shard = Shard.open(path);
    const expected = Array.from({ length: shard.docCount }, (_, d) => blob(shard.oid(d)!));
    for (let d = 0; d < shard.docCount; d++) assert.deepEqual(shard.contentOf(d), expected[d], `${shard.name(d)} in document order`);
    const file = readFileSync(path);
    for (let d = 0; d < shard.docCount; d++) {
      if (docFlags(file, d) & DOC_FLAG_DELTA) deltas++;
      if (docFlags(file, d) & DOC_FLAG_DEFLATE) deflated++;
    }
    docs += shard.docCount;
    // A fresh reader, documents in a random order, twice (the second time from its cache of versions or checked already).
    const r = prng(docs);
    const order = Array.from({ length: shard.docCount }, (_, d) => d);
    for (let i = order.length - 1; i > 0; i--) {
      const j = r.int(i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const cold = Shard.open(path);
    for (let round = 0; round < 2; round++) for (const d of order) assert.deepEqual(cold.contentOf(d), expected[d], `${shard.name(d)} in a random order`);
  }
  assert.ok(docs > 100, `${docs} documents`);
  assert.ok(deltas > 0 && deltas < docs, `${deltas} of ${docs} documents are deltas`);
  assert.ok(deflated > 0, 'some documents are deflated');
});

test("one path's versions are adjacent, newest first (the newest stored whole), in chains of at most DELTA_CHAIN_MAX - 1 deltas", () => {
  const commits = git(src, 'rev-list', '--topo-order', '--reverse', 'main').trim().split('\n');
  const firstSeen: string[] = [];
  for (const c of commits) {
    const oid = git(src, 'rev-parse', `${c}:src/main.c`).trim();
    if (!firstSeen.includes(oid)) firstSeen.push(oid);
  }
  const seen: string[] = [];
  for (const path of shards) {
    const shard = Shard.open(path);
    const file = readFileSync(path);
    const ended = new Set<string>();
    let run = 0;
    for (let d = 0; d < shard.docCount; d++) {
      const name = shard.name(d);
      if (d > 0 && shard.name(d - 1) !== name) ended.add(shard.name(d - 1));
      assert.ok(!ended.has(name), `the versions of ${name} are adjacent`);
      if (docFlags(file, d) & DOC_FLAG_DELTA) {
        assert.ok(d > 0 && shard.name(d - 1) === name, `a delta follows a version of its path (${name})`);
        run++;
        assert.ok(run <= DELTA_CHAIN_MAX - 1, `${run} deltas in a row at ${name}`);
      } else run = 0;
      if (name === 'src/main.c') {
        // Each version a small edit of the one before: a delta, but for every DELTA_CHAIN_MAX-th, which starts a chain.
        assert.equal((docFlags(file, d) & DOC_FLAG_DELTA) !== 0, seen.length % DELTA_CHAIN_MAX !== 0, `version ${seen.length} of src/main.c`);
        seen.push(shard.oid(d)!);
      }
    }
  }
  assert.deepEqual(seen, firstSeen.reverse());
});

/** A copy of the first shard, changed by `edit` (given the file and its documents' records offset), then opened. */
function damaged(name: string, edit: (file: Buffer, docs: number, content: number) => void): Shard {
  const copy = join(dir.path, `${name}.trawl`);
  copyFileSync(shards[0]!, copy);
  const file = readFileSync(copy);
  const s = sections(file);
  edit(file, s.get(SectionKind.Docs)!.offset, s.get(SectionKind.Content)!.offset);
  writeFileSync(copy, file);
  return Shard.open(copy);
}

/** The documents of `path` in the first shard. */
function docsOf(path: string): number[] {
  const shard = Shard.open(shards[0]!);
  return Array.from({ length: shard.docCount }, (_, d) => d).filter((d) => shard.name(d) === path);
}

test('a damaged delta fails its document and the versions built on it as corrupt, and no other', () => {
  const file = readFileSync(shards[0]!);
  const mains = docsOf('src/main.c');
  const victims = mains.filter((d) => docFlags(file, d) & DOC_FLAG_DELTA);
  assert.ok(victims.length > 4);
  for (const victim of [victims[1]!, victims[3]!]) {
    const shard = damaged('delta-bytes', (f, docs, content) => {
      const o = docs + victim * DOC_RECORD_SIZE;
      const at = content + f.readUInt32LE(o + 8) + (f.readUInt32LE(o + 20) >> 1);
      f[at] ^= 0xff;
    });
    assert.throws(
      () => shard.contentOf(victim),
      (err: unknown) => err instanceof ShardError && /corrupt/.test(err.message),
    );
    // A version applying the damaged delta (the next one, if it is a delta) fails too; the path before it and other paths read well.
    if (docFlags(file, victim + 1) & DOC_FLAG_DELTA) assert.throws(() => shard.contentOf(victim + 1), ShardError);
    assert.deepEqual(shard.contentOf(victim - 1), blob(shard.oid(victim - 1)!));
    const other = docsOf('notes/crlf.txt').at(-1)!;
    assert.deepEqual(shard.contentOf(other), blob(shard.oid(other)!));
  }
});

test('a chain longer than DELTA_CHAIN_MAX - 1 deltas, or a delta with nothing before it, is refused as corrupt', () => {
  const mains = docsOf('src/main.c');
  assert.ok(mains.length > DELTA_CHAIN_MAX);
  const long = damaged('long-chain', (f, docs) => {
    for (const d of mains.slice(1)) f.writeUInt16LE(f.readUInt16LE(docs + d * DOC_RECORD_SIZE + 26) | DOC_FLAG_DELTA, docs + d * DOC_RECORD_SIZE + 26);
    rehashDocs(f);
  });
  assert.throws(() => long.contentOf(mains[DELTA_CHAIN_MAX]!), /more than 15 deltas/);
  const first = damaged('no-base', (f, docs) => {
    f.writeUInt16LE(f.readUInt16LE(docs + 26) | DOC_FLAG_DELTA, docs + 26);
    rehashDocs(f);
  });
  assert.throws(() => first.contentOf(0), /a delta with no base/);
});

test('a deflated document whose stored bytes are damaged fails as corrupt', () => {
  const file = readFileSync(shards[0]!);
  const shard0 = Shard.open(shards[0]!);
  const victim = Array.from({ length: shard0.docCount }, (_, d) => d).find(
    (d) => docFlags(file, d) === (docFlags(file, d) & ~DOC_FLAG_DELTA) && docFlags(file, d) & DOC_FLAG_DEFLATE,
  );
  assert.ok(victim !== undefined, 'a document stored whole, deflated');
  for (const [name, edit] of [
    ['flipped', (f: Buffer, at: number, _len: number) => (f[at + 2] ^= 0x55)],
    ['zeroed', (f: Buffer, at: number, len: number) => f.fill(0, at, at + len)],
    ['all ones', (f: Buffer, at: number, len: number) => f.fill(0xff, at, at + len)],
  ] as const) {
    const shard = damaged(`deflated-${name}`, (f, docs, content) => {
      const o = docs + victim * DOC_RECORD_SIZE;
      edit(f, content + f.readUInt32LE(o + 8), f.readUInt32LE(o + 20));
    });
    assert.throws(
      () => shard.contentOf(victim),
      (err: unknown) => err instanceof ShardError && /corrupt/.test(err.message),
      name,
    );
  }
});
