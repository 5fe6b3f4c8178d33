// Compressed sections (compressed-section.ts): the codec's round trips and refusals, a shard and a
// symbols file written compressed answering as the same files written plain, and compressed
// sections checked at open: damage is found before anything is decompressed, a compressed mark
// where the format allows none is refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hash32 } from '../../core/index.ts';
import { MAX_DECOMPRESSED, compressSection, decompressSection } from '../../daemon/index/compressed-section.ts';
import { newChecks } from '../../daemon/index/section-checks.ts';
import { buildShard, type ShardJob } from '../../daemon/index/shard-builder.ts';
import { HEADER_SIZE, COMPRESSIBLE_SECTIONS, SECTION_COMPRESSED, SectionKind, TOC_ENTRY_SIZE } from '../../daemon/index/shard-format.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { addSymbols } from '../../daemon/index/symbols-pass.ts';
import { ctagsAvailable } from '../../daemon/symbols/ctags.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { sectionTable } from '../helpers/section-table.ts';
import { jobRepo } from '../helpers/shard-job.ts';

test('a compressed section decompresses to its bytes, at a multiple of 8', () => {
  const random = prng(7);
  const noise = Buffer.alloc(100_000);
  for (let i = 0; i < noise.length; i++) noise[i] = random.int(256);
  const cases: Array<[string, Buffer]> = [
    ['empty', Buffer.alloc(0)],
    ['one byte', Buffer.from([1])],
    ['the layout comment example', Buffer.from([1, 0, 0, 0])],
    ['random bytes (compressed larger than they are)', noise],
    ['repeating records', Buffer.concat(Array.from({ length: 5000 }, (_, i) => Buffer.from(`record ${i % 40}\0`)))],
  ];
  for (const [name, bytes] of cases) {
    const stored = compressSection(bytes);
    assert.equal(stored.readUInt32LE(0), bytes.length, name);
    assert.equal(stored.readUInt32LE(4), 0, name);
    const back = decompressSection(stored);
    assert.ok(back.equals(bytes), name);
    assert.equal(back.byteOffset % 8, 0, name);
  }
  // The example of the layout comment: the length, then a zstd frame.
  assert.deepEqual([...compressSection(Buffer.from([1, 0, 0, 0])).subarray(0, 12)], [4, 0, 0, 0, 0, 0, 0, 0, 0x28, 0xb5, 0x2f, 0xfd]);
});

test('stored bytes that are not a compressed section are refused with what is wrong', () => {
  const good = compressSection(Buffer.from('a section of some bytes, some bytes, some bytes\n'.repeat(20)));
  const withLength = (n: number): Buffer => {
    const b = Buffer.from(good);
    b.writeUInt32LE(n % 0x1_0000_0000, 0);
    b.writeUInt32LE(Math.floor(n / 0x1_0000_0000), 4);
    return b;
  };
  const flipped = Buffer.from(good);
  flipped[flipped.length - 10]! ^= 0x40;
  const cases: Array<[string, Buffer, RegExp]> = [
    ['no bytes', Buffer.alloc(0), /cut short \(0 bytes\)/],
    ['part of the length', good.subarray(0, 5), /cut short \(5 bytes\)/],
    [
      'a length past the bound',
      withLength(MAX_DECOMPRESSED + 1),
      /compressed section is damaged: it says it holds 1073741825 bytes, over the 1073741824 it may hold/,
    ],
    ['a length past 4 GB', withLength(2 ** 33), /it says it holds 8589934592 bytes, over the/],
    ['a length shorter than the frame', withLength(10), /holds more than the 10 bytes it says/],
    ['a length longer than the frame', withLength(good.readUInt32LE(0) + 1), /holds 960 bytes, not the 961 it says/],
    ['a flipped byte in the frame', flipped, /compressed section is damaged/],
    ['the frame cut short', good.subarray(0, good.length - 6), /compressed section is cut short: its compressed part ends early/],
    ['no frame', good.subarray(0, 8), /compressed section is (cut short|damaged)/],
  ];
  for (const [name, stored, expected] of cases) assert.throws(() => decompressSection(stored), expected, name);
});

function cFile(i: number): string {
  return `struct compressed_s${i} {\n  int a;\n};\nstatic int compressed_f${i}(int x)\n{\n  return x + ${i}; /* needle */\n}\n`;
}

/** A shard of versions of a few C files (as a history shard holds them), built plain and compressed. */
function buildPair(dir: string, symbols: boolean): { plain: string; compressed: string } {
  const files = Array.from({ length: 30 }, (_, i) => {
    const text = cFile(i % 7) + `/* version ${i} */\n`.repeat(1 + (i % 3));
    return { path: `src/f${i % 7}.c`, size: Buffer.byteLength(text), data: Buffer.from(text) };
  }).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const job = (finalPath: string, compressed: boolean): ShardJob => ({
    finalPath,
    repo: jobRepo(dir),
    shardIndex: 0,
    files,
    maxFileSize: 1 << 20,
    maxTrigrams: 20_000,
    indexedAt: '2026-11-28T00:00:00.000Z',
    branches: ['a', 'b'],
    symbols,
    ...(symbols ? {} : { later: true }),
    grouped: true,
    versionDeltas: true,
    ...(compressed ? { compressed: true } : {}),
  });
  const plain = join(dir, 'plain.trawl');
  const compressed = join(dir, 'compressed.trawl');
  buildShard(job(plain, false));
  buildShard(job(compressed, true));
  return { plain, compressed };
}

/** Everything a search reads of a shard, document by document. */
function readAll(shard: Shard): unknown {
  const docs = Array.from({ length: shard.docCount }, (_, d) => ({
    name: shard.name(d),
    content: shard.contentOf(d).toString(),
    oid: shard.oid(d),
    symbols: shard.symbolsOf(d),
  }));
  return { meta: { ...shard.meta, builder: undefined }, docs, branches: shard.branches.names, index: shard.symbolIndex?.nameCount };
}

test('a shard written compressed marks its compressible sections and answers as the same shard written plain', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, () => {
  const dir = tempDir('compressed');
  try {
    const { plain, compressed } = buildPair(dir.path, true);
    const table = sectionTable(readFileSync(compressed));
    for (const [kind, s] of table) assert.equal(s.compressed, COMPRESSIBLE_SECTIONS.has(kind), `section ${kind}`);
    for (const s of sectionTable(readFileSync(plain)).values()) assert.equal(s.compressed, false);
    assert.ok(readFileSync(compressed).length < readFileSync(plain).length);
    const a = Shard.open(plain);
    const b = Shard.open(compressed);
    assert.equal(a.compressed, false);
    assert.equal(b.compressed, true);
    assert.ok(a.symbolsOf(0).length > 0);
    assert.deepEqual(readAll(b), readAll(a));
    // Opened with checks shared between threads (as a search worker opens it): the same.
    assert.deepEqual(readAll(Shard.open(compressed, { verified: newChecks(b.docCount) })), readAll(a));
  } finally {
    dir.cleanup();
  }
});

test('the symbols pass compresses the symbols file of a compressed shard', { skip: !ctagsAvailable() && 'universal-ctags is not installed' }, () => {
  const dir = tempDir('compressed');
  try {
    const { plain, compressed } = buildPair(dir.path, false);
    addSymbols({ from: plain, finalPath: join(dir.path, 'plain.symbols') });
    addSymbols({ from: compressed, finalPath: join(dir.path, 'compressed.symbols') });
    for (const [kind, s] of sectionTable(readFileSync(join(dir.path, 'compressed.symbols')))) assert.equal(s.compressed, COMPRESSIBLE_SECTIONS.has(kind));
    for (const s of sectionTable(readFileSync(join(dir.path, 'plain.symbols'))).values()) assert.equal(s.compressed, false);
    const a = Shard.open(plain, { symbols: join(dir.path, 'plain.symbols') });
    const b = Shard.open(compressed, { symbols: join(dir.path, 'compressed.symbols') });
    assert.ok(a.symbolsOf(0).length > 0);
    assert.deepEqual(readAll(b), readAll(a));
    assert.deepEqual(b.contentWords!.docsWith(Buffer.from('return')), a.contentWords!.docsWith(Buffer.from('return')));
  } finally {
    dir.cleanup();
  }
});

/** Sets the kind word of section `kind` and the checksums over the table and the header, as a writer would have. */
function rewriteKind(bytes: Buffer, kind: SectionKind, word: (w: number) => number, version?: number): Buffer {
  const out = Buffer.from(bytes);
  if (version !== undefined) out.writeUInt32LE(version, 8);
  const count = out.readUInt32LE(24);
  for (let i = 0; i < count; i++) {
    const o = HEADER_SIZE + i * TOC_ENTRY_SIZE;
    if ((out.readUInt32LE(o) & ~SECTION_COMPRESSED) === kind) out.writeUInt32LE(word(out.readUInt32LE(o)) >>> 0, o);
  }
  out.writeUInt32LE(hash32(out.subarray(HEADER_SIZE, HEADER_SIZE + count * TOC_ENTRY_SIZE)), 28);
  out.writeUInt32LE(hash32(out.subarray(0, 60)), 60);
  return out;
}

test('a damaged compressed section fails the open, and a compressed mark the format does not allow is refused', () => {
  const dir = tempDir('compressed');
  try {
    const { compressed } = buildPair(dir.path, false);
    const good = readFileSync(compressed);
    const variant = (name: string, bytes: Buffer): string => {
      const p = join(dir.path, name);
      writeFileSync(p, bytes);
      return p;
    };
    // A flipped byte inside the compressed names: its checksum fails at open, with or without shared checks.
    const names = sectionTable(good).get(SectionKind.Names)!;
    const flipped = Buffer.from(good);
    flipped[names.offset + names.length - 3]! ^= 0x10;
    const path = variant('flipped.trawl', flipped);
    assert.throws(() => Shard.open(path), /section names is corrupt/);
    assert.throws(() => Shard.open(path, { verified: newChecks(1000) }), /section names is corrupt/);
    // Compressed bytes that pass the checksum but do not decompress (a writer's bug) fail the shard cleanly.
    const lying = Buffer.from(good);
    lying.writeUInt32LE(lying.readUInt32LE(names.offset) + 1, names.offset);
    const count = lying.readUInt32LE(24);
    for (let i = 0; i < count; i++) {
      const o = HEADER_SIZE + i * TOC_ENTRY_SIZE;
      if ((lying.readUInt32LE(o) & ~SECTION_COMPRESSED) === SectionKind.Names)
        lying.writeUInt32LE(hash32(lying.subarray(names.offset, names.offset + names.length)), o + 4);
    }
    const relabelled = rewriteKind(lying, SectionKind.Names, (w) => w);
    assert.throws(
      () => Shard.open(variant('lying.trawl', relabelled)),
      /shard .*lying\.trawl: compressed section is damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
    );
    // A compressed mark on the content (never compressible), or in a version 9 shard (before compressing).
    assert.throws(
      () =>
        Shard.open(
          variant(
            'content.trawl',
            rewriteKind(good, SectionKind.Content, (w) => w | SECTION_COMPRESSED),
          ),
        ),
      /section content is marked compressed, which version 10 does not allow/,
    );
    assert.throws(
      () =>
        Shard.open(
          variant(
            'v9.trawl',
            rewriteKind(good, SectionKind.Names, (w) => w, 9),
          ),
        ),
      /section names is marked compressed, which version 9 does not allow/,
    );
  } finally {
    dir.cleanup();
  }
});
