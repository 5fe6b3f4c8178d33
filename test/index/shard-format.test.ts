// The shard format: the worked example of shard-reader.ts byte for byte, version and
// integrity checks, and the atomic write.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildShard } from '../../daemon/index/shard-builder.ts';
import { checkShardHeader } from '../../daemon/index/section-file.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import { ShardError } from '../../daemon/index/shard-error.ts';
import { HEADER_SIZE } from '../../daemon/index/shard-format.ts';
import { ShardWriter } from '../../daemon/index/shard-writer.ts';
import { prng, tempDir } from '../helpers/corpus.ts';
import { jobRepo } from '../helpers/shard-job.ts';

function exampleShard(dir: string, files: Array<{ path: string; text: string }> = [{ path: 'a.c', text: 'int x;\n' }], versionDeltas = false): string {
  const finalPath = join(dir, 'g1-0.trawl');
  buildShard({
    finalPath,
    repo: jobRepo(dir, { name: 'example' }),
    shardIndex: 0,
    files: files.map((f) => ({ path: f.path, size: Buffer.byteLength(f.text), data: Buffer.from(f.text) })),
    maxFileSize: 1 << 20,
    maxTrigrams: 20000,
    branches: ['HEAD'],
    indexedAt: '2026-11-22T00:00:00.000Z',
    ...(versionDeltas ? { versionDeltas: true } : {}),
  });
  return finalPath;
}

test('the worked example of shard-reader.ts holds byte for byte', () => {
  const dir = tempDir('shard');
  try {
    const path = exampleShard(dir.path);
    const bytes = readFileSync(path);
    assert.equal(bytes.toString('latin1', 0, 8), 'TRAWLIDX');
    assert.equal(bytes.readUInt32LE(8), 10);
    assert.equal(bytes.readUInt32LE(12), 64);
    assert.equal(bytes.readUInt32LE(16), bytes.length);
    assert.equal(bytes.readUInt32LE(24), 18);
    // toc[0]: the content section at offset 496, 7 bytes long.
    assert.equal(bytes.readUInt32LE(HEADER_SIZE), 1);
    assert.equal(bytes.readUInt32LE(HEADER_SIZE + 8), 496);
    assert.equal(bytes.readUInt32LE(HEADER_SIZE + 16), 7);
    assert.equal(bytes.toString('latin1', 496, 503), 'int x;\n');
    const sectionBytes = (kind: number): number[] | undefined => {
      for (let i = 0; i < 18; i++) {
        const o = HEADER_SIZE + i * 24;
        if (bytes.readUInt32LE(o) !== kind) continue;
        const at = bytes.readUInt32LE(o + 8);
        return [...bytes.subarray(at, at + bytes.readUInt32LE(o + 16))];
      }
      return undefined;
    };
    // content-follow: one byte per trigram, ascending id order (" x;" "int" "nt " "t x" "x;\n").
    assert.deepEqual(sectionBytes(15), [0x04, 0x01, 0x01, 0x08, 0x01]);
    // content-words: no word is in 8 documents; the section is its header (minDocs 8) and
    // the two one-entry offset arrays.
    assert.deepEqual(sectionBytes(16), [0, 0, 0, 0, 8, 0, 0, 0, ...new Array(16).fill(0)]);
    // content-segments: empty, the document being under 64 KB; doc-groups: empty, the postings by document.
    assert.deepEqual(sectionBytes(17), []);
    assert.deepEqual(sectionBytes(18), []);

    const shard = Shard.open(path);
    assert.equal(shard.docCount, 1);
    assert.equal(shard.name(0), 'a.c');
    assert.equal(shard.language(0), 'C');
    assert.equal(shard.contentOf(0).toString(), 'int x;\n');
    const ids = ['int', 'nt ', 't x', ' x;', 'x;\n'].map((t) => (t.charCodeAt(0) << 16) | (t.charCodeAt(1) << 8) | t.charCodeAt(2));
    assert.deepEqual(
      [...shard.content.ids],
      [...ids].sort((a, b) => a - b),
    );
    for (const id of ids) assert.deepEqual([...shard.content.postingList(id).docs], [0]);
    assert.equal(shard.meta.repo.name, 'example');
    assert.deepEqual(shard.symbolsOf(0), [{ name: 'x', kind: 'variable', line: 1, endLine: 1 }]);
    assert.deepEqual(shard.branches.names, ['HEAD']);
    assert.deepEqual([...shard.branches.docs(0)], [0]);
    assert.equal(shard.oid(0), undefined);
    // The symbol index: one name, "x", defined once (record 0), spelled at byte 4.
    const index = shard.symbolIndex!;
    assert.equal(index.nameCount, 1);
    assert.equal(index.name(0).toString(), 'x');
    assert.deepEqual([...index.defsOf(0)], [0]);
    assert.equal(index.start(0), 4);
    assert.equal(index.strings.toString(), 'x\n');
  } finally {
    dir.cleanup();
  }
});

test('the worked example of version deltas in shard-reader.ts holds byte for byte', () => {
  const dir = tempDir('shard');
  try {
    const versions = ['int a;\n', 'int a;\nint b;\n', 'int a;\nint b;\nint c;\n'];
    const path = exampleShard(
      dir.path,
      versions.map((text) => ({ path: 'a.c', text })),
      true,
    );
    const bytes = readFileSync(path);
    const section = (kind: number): Buffer => {
      for (let i = 0; i < bytes.readUInt32LE(24); i++) {
        const o = HEADER_SIZE + i * 24;
        if (bytes.readUInt32LE(o) === kind) return bytes.subarray(bytes.readUInt32LE(o + 8), bytes.readUInt32LE(o + 8) + bytes.readUInt32LE(o + 16));
      }
      throw new Error(`no section ${kind}`);
    };
    const docs = section(2);
    const record = (d: number) => ({
      contentOff: docs.readUInt32LE(d * 32 + 8),
      contentLen: docs.readUInt32LE(d * 32 + 12),
      storedLen: docs.readUInt32LE(d * 32 + 20),
      flags: docs.readUInt16LE(d * 32 + 26) & ~2, // (bit 1, the folding flag, is beside the point)
    });
    assert.deepEqual([0, 1, 2].map(record), [
      { contentOff: 0, contentLen: 7, storedLen: 0, flags: 0 },
      { contentOff: 7, contentLen: 14, storedLen: 10, flags: 4 },
      { contentOff: 17, contentLen: 21, storedLen: 10, flags: 4 },
    ]);
    assert.equal(section(1).toString('hex'), '696e7420613b0a' + '0f000e696e7420623b0a' + '1d000e696e7420633b0a');
    const shard = Shard.open(path);
    assert.deepEqual(
      [0, 1, 2].map((d) => shard.contentOf(d).toString()),
      versions,
    );
    assert.deepEqual(
      [0, 1, 2].map((d) => shard.contentLength(d)),
      [7, 14, 21],
    );
  } finally {
    dir.cleanup();
  }
});

test('a compound shard is never built with version deltas (its documents are copied out again by a merge)', () => {
  const dir = tempDir('shard');
  try {
    const repo = {
      name: 'one',
      id: 1,
      codeHostType: 'genericGitHost',
      source: dir.path,
      kind: 'directory' as const,
      branch: 'HEAD',
      commit: '',
      remoteUrl: '',
      archived: false,
      fork: false,
      visibility: 'public' as const,
    };
    const job = {
      finalPath: join(dir.path, 'p1-0.trawl'),
      repo,
      shardIndex: 0,
      files: [{ path: 'a.c', size: 7, data: Buffer.from('int x;\n') }],
      maxFileSize: 1 << 20,
      maxTrigrams: 20000,
      branches: ['HEAD'],
      indexedAt: '2026-11-22T00:00:00.000Z',
      members: [{ repo, branches: ['HEAD'] }],
    };
    assert.throws(() => buildShard({ ...job, versionDeltas: true }), /a compound shard is never built with version deltas/);
    assert.equal(readdirSync(dir.path).length, 0, 'nothing is left behind');
    buildShard(job);
    assert.equal(Shard.open(job.finalPath).contentOf(0).toString(), 'int x;\n');
  } finally {
    dir.cleanup();
  }
});

test('a reader refuses an unknown version, a truncated file and corrupt sections', () => {
  const dir = tempDir('shard');
  try {
    const path = exampleShard(dir.path, [
      { path: 'a.c', text: 'int x;\n' },
      { path: 'b.c', text: 'static int y = 42;\n' },
    ]);
    const good = readFileSync(path);
    const variant = (name: string, mutate: (b: Buffer) => Buffer): string => {
      const p = join(dir.path, name);
      writeFileSync(p, mutate(Buffer.from(good)));
      return p;
    };
    assert.throws(
      () => Shard.open(variant('v.trawl', (b) => (b.writeUInt32LE(11, 8), b))),
      /unsupported shard format version 11 \(this trawl reads versions 2 to 10\)/,
    );
    assert.throws(() => Shard.open(variant('t.trawl', (b) => b.subarray(0, b.length - 10))), /truncated/);
    assert.throws(() => Shard.open(variant('short.trawl', (b) => b.subarray(0, 20))), /truncated/);
    assert.throws(() => Shard.open(variant('m.trawl', (b) => (b.write('NOTTRAWL', 0, 'latin1'), b))), /not a trawl shard/);
    // A flipped byte in the last section (meta) is caught at open...
    assert.throws(() => Shard.open(variant('c.trawl', (b) => ((b[b.length - 3] ^= 0xff), b))), ShardError);
    // ... and one in a document's content when the document is first read.
    const shard = Shard.open(variant('d.trawl', (b) => ((b[496 + 8] ^= 0x20), b)));
    assert.equal(shard.contentOf(0).toString(), 'int x;\n');
    assert.throws(() => shard.contentOf(1), /content of b\.c is corrupt/);
  } finally {
    dir.cleanup();
  }
});

test('a shard that is not a regular file is refused before it is mapped or read, without waiting on a FIFO', () => {
  const dir = tempDir('shard');
  const fifo = join(dir.path, 'g1-1.trawl');
  assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  // Should the reader open the FIFO after all (it must not), this writer unblocks it after a
  // while, so that the test fails instead of hanging.
  const writer = spawn('sh', ['-c', `sleep 3; printf x > "${fifo}"`], { stdio: 'ignore' });
  try {
    const zero = join(dir.path, 'g1-0.trawl');
    symlinkSync('/dev/zero', zero);
    const cases: Array<[string, string]> = [
      [zero, 'a symbolic link to a character device'],
      [fifo, 'a FIFO'],
      [dir.path, 'a directory'],
    ];
    for (const [path, kind] of cases) {
      for (const open of [() => Shard.open(path), () => checkShardHeader(path)]) {
        const started = performance.now();
        assert.throws(open, (err: unknown) => err instanceof ShardError && err.message === `shard ${path}: is not a regular file (${kind})`);
        assert.ok(performance.now() - started < 1000, `${kind}: refused at once`);
      }
    }
    // A symbols file is mapped the same way.
    const shard = exampleShard(mkdirSync(join(dir.path, 'good'), { recursive: true })!);
    assert.throws(
      () => Shard.open(shard, { symbols: fifo }),
      (err: unknown) => err instanceof ShardError && /^symbols file .*: is not a regular file \(a FIFO\)$/.test(err.message),
    );
  } finally {
    writer.kill();
    dir.cleanup();
  }
});

test('a shard is invisible under its final name until it is complete', () => {
  const dir = tempDir('shard');
  try {
    const finalPath = join(dir.path, 'g1-0.trawl');
    const writer = new ShardWriter(finalPath);
    writer.appendContent(Buffer.from('partial'));
    assert.equal(existsSync(finalPath), false);
    assert.equal(readdirSync(dir.path).length, 1); // only the temporary file
    writer.abort();
    assert.deepEqual(readdirSync(dir.path), []);
  } finally {
    dir.cleanup();
  }
});

test('files that are binary, too large or have too many trigrams are recorded as skipped', () => {
  const dir = tempDir('shard');
  try {
    const finalPath = join(dir.path, 'g1-0.trawl');
    const r = prng(7);
    let noise = '';
    for (let i = 0; i < 60000; i++) noise += String.fromCharCode(33 + r.int(90));
    const result = buildShard({
      finalPath,
      repo: jobRepo(dir.path),
      shardIndex: 0,
      files: [
        { path: 'bin', size: 3, data: Buffer.from([1, 0, 2]) },
        { path: 'big', size: 300_000, data: Buffer.alloc(300_000, 97) },
        { path: 'noise', size: noise.length, data: Buffer.from(noise) },
        { path: 'ok.txt', size: 5, data: Buffer.from('hello') },
      ],
      maxFileSize: 200_000,
      maxTrigrams: 20000,
      indexedAt: '2026-11-22T00:00:00.000Z',
      branches: ['HEAD'],
    });
    assert.equal(result.docCount, 1);
    assert.deepEqual(
      result.skipped.map((s) => [s.path, s.reason]),
      [
        ['bin', 'binary'],
        ['big', 'too-large'],
        ['noise', 'too-many-trigrams'],
      ],
    );
    const shard = Shard.open(finalPath);
    assert.deepEqual(
      shard.meta.skipped.map((s) => s.reason),
      ['binary', 'too-large', 'too-many-trigrams'],
    );
    assert.equal(shard.name(0), 'ok.txt');
  } finally {
    dir.cleanup();
  }
});

test('a document is flagged when it holds no code point whose case folding reaches ASCII (U+212A, U+017F)', () => {
  const dir = tempDir('shard');
  try {
    const finalPath = join(dir.path, 'g1-0.trawl');
    // The multi-byte cases around the two: other non-ASCII text, a truncated sequence, each one alone and at a block's edge.
    const files: Record<string, string> = {
      'ascii.c': 'int kelvin_stream;\n',
      'utf8.c': 'caf\u00e9 \u65e5\u672c \u00c5ngstr\u00f6m\n',
      'kelvin.c': '3 \u212A\n',
      'longs.c': `${'x'.repeat(15)}\u017Ftream\n`,
      'lone-lead.c': Buffer.from([0x61, 0xe2, 0x84, 0x62, 0xc5, 0x41]).toString('latin1'),
    };
    buildShard({
      finalPath,
      repo: jobRepo(dir.path),
      shardIndex: 0,
      files: Object.entries(files).map(([path, text]) => {
        const data = path === 'lone-lead.c' ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
        return { path, size: data.length, data };
      }),
      maxFileSize: 1 << 20,
      maxTrigrams: 20000,
      indexedAt: '2026-11-22T00:00:00.000Z',
      branches: ['HEAD'],
    });
    const shard = Shard.open(finalPath);
    const flagged = Object.fromEntries(Array.from({ length: shard.docCount }, (_, d) => [shard.name(d), shard.asciiFoldsOnly(d)]));
    assert.deepEqual(flagged, { 'ascii.c': true, 'utf8.c': true, 'kelvin.c': false, 'longs.c': false, 'lone-lead.c': true });
  } finally {
    dir.cleanup();
  }
});

test('documents are in static-rank order: plain files, then documentation, tests, vendored, generated; shallower first; then path', () => {
  const dir = tempDir('shard');
  try {
    // Given in path order, as the indexer lists them; two branches, so the lists are checked too.
    const given = ['README.md', 'a/b/deep.c', 'a/z.c', 'docs/x.c', 'gen/x.pb.go', 'm.c', 'src/tests/t.c', 'src/x.c', 'vendor/v.c', 'z/test_y.py'];
    const finalPath = join(dir.path, 'g1-0.trawl');
    buildShard({
      finalPath,
      repo: {
        name: 'r',
        id: 1,
        codeHostType: 'genericGitHost',
        source: dir.path,
        kind: 'git',
        branch: 'main',
        commit: '',
        remoteUrl: '',
        archived: false,
        fork: false,
        visibility: 'public',
      },
      shardIndex: 0,
      files: given.map((path, i) => ({
        path,
        size: path.length + 1,
        data: Buffer.from(`${path}\n`),
        oid: String(i + 1).padStart(40, '0'),
        branches: path.includes('test') ? [1] : [0, 1],
      })),
      maxFileSize: 1 << 20,
      maxTrigrams: 20000,
      branches: ['main', 'dev'],
      indexedAt: '2026-11-22T00:00:00.000Z',
    });
    const shard = Shard.open(finalPath);
    const names = Array.from({ length: shard.docCount }, (_, d) => shard.name(d));
    assert.deepEqual(names, ['m.c', 'a/z.c', 'src/x.c', 'a/b/deep.c', 'README.md', 'docs/x.c', 'z/test_y.py', 'src/tests/t.c', 'vendor/v.c', 'gen/x.pb.go']);
    // Each document keeps its own content, blob id and branches.
    for (let d = 0; d < shard.docCount; d++) {
      assert.equal(shard.contentOf(d).toString(), `${names[d]}\n`);
      assert.equal(shard.oid(d), String(given.indexOf(names[d]!) + 1).padStart(40, '0'));
    }
    const onBranch = (b: number) => Array.from(shard.branches.docs(b), (d) => names[d]);
    assert.deepEqual(onBranch(0), ['m.c', 'a/z.c', 'src/x.c', 'a/b/deep.c', 'README.md', 'docs/x.c', 'vendor/v.c', 'gen/x.pb.go']);
    assert.deepEqual(onBranch(1), names);
    assert.equal(shard.meta.builder, 'trawl-shard-builder/3');
  } finally {
    dir.cleanup();
  }
});
