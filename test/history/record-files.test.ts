// The history's record files as bytes (history/diff-store.ts TRAWLDF2, commit-records.ts
// version 2): what is written reads back the same, and a damaged file (cut short, of another
// format, a size field that lies, a flipped compressed byte, records that point past their
// ends) is refused with an error saying what is wrong, before anything is read out of
// bounds or memory is taken for sizes it does not hold; the readers the searches and
// updates use read such a file as none (the next update makes it again).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { CommitCatalog } from '../../daemon/history/commit-catalog.ts';
import { type CommitRecord, formatCommitRecords, parseCommitRecords, readCommitRecords, readCommitRecordsHead } from '../../daemon/history/commit-records.ts';
import type { LoggedDiff } from '../../daemon/history/diff-log.ts';
import { decodeRecords, encodeRecords, readRecords, recordedCommits, recordedDiffs, updateRecords, writeRecords } from '../../daemon/history/diff-store.ts';
import { prng, tempDir } from '../helpers/corpus.ts';

const dir = tempDir('record-files');
after(() => dir.cleanup());

const id = (n: number): string => n.toString(16).padStart(40, '0');
const line = (text: string, added: boolean, noEol = false) => ({ added, text: Buffer.from(text, 'utf8'), ...(noEol ? { noEol: true as const } : {}) });

/** Commits 1..5 parents first; 3 is a merge (no lines), 5 a commit without lines. */
const DONE = [1, 2, 3, 4, 5].map(id);
const DIFFS: LoggedDiff[] = [
  {
    id: id(1),
    files: [
      {
        path: 'a.txt',
        hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 3, lines: [line('alpha', true), line('', true), line('gamma é', true, true)] }],
      },
      { path: 'crlf.txt', hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: [line('dos\r', true)] }] },
    ],
  },
  {
    id: id(2),
    files: [
      {
        path: 'b.txt',
        oldPath: 'a.txt',
        hunks: [
          { oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, lines: [line('gamma é', false, true), line('gamma é', true)] },
          { oldStart: 900, oldLines: 2, newStart: 7, newLines: 0, lines: [line('alpha', false), line('', false)] },
        ],
      },
    ],
  },
  {
    id: id(4),
    files: [{ path: 'dir with space/c', hunks: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: [line('x', false), line('y', true)] }] }],
  },
];

test('diff records read back as they were written, in a file much smaller than their lines', () => {
  const bytes = encodeRecords(DONE, [...DIFFS].reverse(), 7);
  const r = decodeRecords(bytes);
  assert.deepEqual(r.commits, DONE);
  assert.deepEqual([...r.done], DONE);
  assert.equal(r.leftOut, 7);
  assert.equal(r.bytes, bytes.length);
  // In the commits' order whatever the order given; lines as git gave them (the ends they had or lacked).
  assert.deepEqual(recordedDiffs(r), DIFFS);
  assert.throws(() => encodeRecords(DONE.slice(0, 2), DIFFS), /commit 0+4, which the records do not cover/);
  const many: LoggedDiff[] = Array.from({ length: 300 }, (_, c) => ({
    id: id(c + 1),
    files: [
      { path: `src/file${c % 7}.ts`, hunks: [{ oldStart: c, oldLines: 1, newStart: c, newLines: 1, lines: [line(`  return value_${c % 11} + ${c};`, true)] }] },
    ],
  }));
  const big = encodeRecords(
    many.map((d) => d.id),
    many,
  );
  assert.deepEqual(recordedDiffs(decodeRecords(big)), many);
  assert.ok(big.length < 300 * 40, `${big.length} bytes: the ids alone are 12,000 before compression`);
});

test('an update of diff records writes the bytes a whole encoding of the same diffs writes', () => {
  const r = prng(20261128);
  const words = ['alpha', '', 'gamma é', 'dos\r', 'x', 'y', 'return 0;', '}', '  }', 'import a'];
  const randomDiff = (n: number): LoggedDiff => ({
    id: id(n),
    files: Array.from({ length: 1 + r.int(3) }, (_, k) => ({
      path: `p${r.int(6)}/${k}.ts`,
      ...(r.chance(0.2) ? { oldPath: `old${r.int(3)}.ts` } : {}),
      hunks: Array.from({ length: 1 + r.int(3) }, () => ({
        oldStart: r.int(500),
        oldLines: r.int(4),
        newStart: r.int(500),
        newLines: r.int(4),
        lines: Array.from({ length: 1 + r.int(5) }, () => line(r.pick(words) + (r.chance(0.3) ? String(r.int(40)) : ''), r.chance(0.5), r.chance(0.1))),
      })),
    })),
  });
  for (let round = 0; round < 30; round++) {
    const all = Array.from({ length: 40 }, (_, i) => i + 1);
    const before = all.filter(() => r.chance(0.8));
    const diffs = new Map(all.map((n) => [n, r.chance(0.15) ? { id: id(n), files: [] } : randomDiff(n)]));
    const old = decodeRecords(
      encodeRecords(
        before.map(id),
        before.map((n) => diffs.get(n)!),
        0,
      ),
    );
    // Some commits dropped, new ones anywhere in the order (a branch merged in, a force-push).
    const after = all.filter((n) => (before.includes(n) ? r.chance(0.85) : r.chance(0.6)));
    const fresh = after.filter((n) => !before.includes(n)).map((n) => diffs.get(n)!);
    const kept = recordedDiffs(old).filter((d) => after.map(id).includes(d.id));
    const whole = encodeRecords(after.map(id), [...kept, ...fresh], round);
    assert.deepEqual(updateRecords(old, after.map(id), fresh, round), whole, `round ${round}`);
    assert.deepEqual(
      recordedDiffs(decodeRecords(whole)),
      after.map((n) => diffs.get(n)!).filter((d) => d.files.length > 0),
    );
  }
  assert.throws(() => updateRecords(decodeRecords(GOOD), DONE.slice(0, 2), [DIFFS[2]!]), /commit 0+4, which the records do not cover/);
});

/** The fields of a TRAWLDF2 header. */
const META_COMPRESSED = 8;
const META_BYTES = 12;
const BODY_COMPRESSED = 16;
const BODY_BYTES = 20;
const HEADER = 24;

const GOOD = encodeRecords(DONE, DIFFS);

function withWord(buf: Buffer, at: number, value: number): Buffer {
  const out = Buffer.from(buf);
  out.writeUInt32LE(value >>> 0, at);
  return out;
}

function flipped(buf: Buffer, at: number): Buffer {
  const out = Buffer.from(buf);
  out[at]! ^= 0x5a;
  return out;
}

const zstd = (raw: Buffer): Buffer => zstdCompressSync(raw, { params: { [constants.ZSTD_c_checksumFlag]: 1 } });

/** GOOD with its meta and body as `edit` makes them, compressed again with sizes that agree: damage no checksum sees. */
function rewritten(edit: (parts: { meta: Buffer; body: Buffer }) => { meta: Buffer; body: Buffer }): Buffer {
  const metaCompressed = GOOD.readUInt32LE(META_COMPRESSED);
  const parts = edit({
    meta: zstdDecompressSync(GOOD.subarray(HEADER, HEADER + metaCompressed)),
    body: zstdDecompressSync(GOOD.subarray(HEADER + metaCompressed)),
  });
  const meta = zstd(parts.meta);
  const body = zstd(parts.body);
  const head = Buffer.alloc(HEADER);
  head.write('TRAWLDF2', 0, 'latin1');
  head.writeUInt32LE(meta.length, META_COMPRESSED);
  head.writeUInt32LE(parts.meta.length, META_BYTES);
  head.writeUInt32LE(body.length, BODY_COMPRESSED);
  head.writeUInt32LE(parts.body.length, BODY_BYTES);
  return Buffer.concat([head, meta, body]);
}

/** Where the body's parts start (diff-store.ts's format). */
function bodyLayout(body: Buffer) {
  const files = 0;
  const hunks = files + 4 + 16 * body.readUInt32LE(files);
  const entries = hunks + 4 + 20 * body.readUInt32LE(hunks);
  const entryCount = body.readUInt32LE(entries);
  const lineCount = entries + 4 + 4 * entryCount;
  const noEol = lineCount + 4;
  const text = noEol + 4 + 4 * body.readUInt32LE(noEol);
  return { files, hunks, entries, entryCount, lineCount, noEol, text };
}

const metaJson = (meta: Buffer) => JSON.parse(meta.toString('utf8')) as Record<string, unknown>;
const json = (v: unknown) => Buffer.from(JSON.stringify(v), 'utf8');
const metaCompressed = GOOD.readUInt32LE(META_COMPRESSED);

const DAMAGED_DIFFS: Array<[string, Buffer, RegExp]> = [
  ['an empty file', Buffer.alloc(0), /: the diff records file is not one \(or of another format version\)$/],
  ['a file of the first format', Buffer.concat([Buffer.from('TRAWLDF1'), GOOD.subarray(8)]), /is not one \(or of another format version\)/],
  ['another magic', Buffer.concat([Buffer.from('TRAWLXX2'), GOOD.subarray(8)]), /is not one \(or of another format version\)/],
  ['cut inside the header', GOOD.subarray(0, 15), /is cut short: its header ends early/],
  ['cut inside the meta', GOOD.subarray(0, HEADER + 3), /is cut short: it holds 27 bytes, its header says/],
  ['cut inside the body', GOOD.subarray(0, GOOD.length - 1), /is cut short: it holds \d+ bytes, its header says \d+/],
  ['a byte after the body', Buffer.concat([GOOD, Buffer.from([0])]), /is damaged: it holds \d+ bytes, its header says \d+/],
  [
    'a meta size larger than the meta',
    withWord(GOOD, META_BYTES, GOOD.readUInt32LE(META_BYTES) + 1),
    /damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
  ],
  [
    'a meta size a byte short',
    withWord(GOOD, META_BYTES, GOOD.readUInt32LE(META_BYTES) - 1),
    /damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
  ],
  ['a meta size far short', withWord(GOOD, META_BYTES, 10), /damaged: its compressed part holds more than the 10 bytes it says/],
  ['a meta size past its bound', withWord(GOOD, META_BYTES, 0xffffffff), /damaged: it says it holds 4294967295 bytes, over the \d+ it may hold/],
  [
    'a body size larger than the body',
    withWord(GOOD, BODY_BYTES, GOOD.readUInt32LE(BODY_BYTES) + 1),
    /damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
  ],
  [
    'a body size a byte short',
    withWord(GOOD, BODY_BYTES, GOOD.readUInt32LE(BODY_BYTES) - 1),
    /damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
  ],
  ['a body size far short', withWord(GOOD, BODY_BYTES, 0), /damaged: its compressed part holds more than the 0 bytes it says/],
  // Within the bound, far from the truth: decompressing takes what the frame holds, not what the field says.
  ['a body size of 2 GB', withWord(GOOD, BODY_BYTES, 2 ** 31 - 2), /damaged: its compressed part holds \d+ bytes, not the 2147483646 it says/],
  ['a body size past its bound', withWord(GOOD, BODY_BYTES, 2 ** 31), /damaged: it says it holds 2147483648 bytes, over the 2147483647 it may hold/],
  ['a meta frame size past the file', withWord(GOOD, META_COMPRESSED, 0xfffffff0), /is cut short/],
  [
    'frame sizes that move the line between the frames',
    withWord(withWord(GOOD, META_COMPRESSED, metaCompressed + 2), BODY_COMPRESSED, GOOD.readUInt32LE(BODY_COMPRESSED) - 2),
    /is damaged: Unknown frame descriptor/,
  ],
  ['a flipped byte in the meta frame', flipped(GOOD, HEADER + Math.floor(metaCompressed / 2)), /: the diff records file is damaged: /],
  ['a flipped byte in the body frame', flipped(GOOD, HEADER + metaCompressed + 20), /: the diff records file is (damaged|cut short): /],
  ['a flipped byte of the body checksum', flipped(GOOD, GOOD.length - 1), /is damaged: Restored data doesn't match checksum/],
  ['a meta that is not JSON', rewritten(({ body }) => ({ meta: Buffer.from('{"leftOut":0,'), body })), /damaged: its meta is not JSON/],
  [
    'a meta without its commits',
    rewritten(({ meta, body }) => ({ meta: json({ ...metaJson(meta), commits: undefined }), body })),
    /damaged: its meta lacks leftOut, commits or paths/,
  ],
  [
    'a file of a commit not covered',
    rewritten(({ meta, body }) => ({ meta: json({ ...metaJson(meta), commits: DONE.slice(0, 3) }), body })),
    /damaged: a file of a commit it does not cover/,
  ],
  ['a path past the last', rewritten(({ meta, body }) => ({ meta: json({ ...metaJson(meta), paths: ['a.txt'] }), body })), /damaged: a path past the last/],
  [
    'a line id past the last',
    rewritten(({ meta, body }) => {
      const out = Buffer.from(body);
      const { entries, entryCount } = bodyLayout(body);
      // Entry 0's highest byte plane: its line id becomes huge.
      out[entries + 4 + 3 * entryCount] = 0x7f;
      return { meta, body: out };
    }),
    /damaged: a line past the last/,
  ],
  [
    'more lines counted than the text can hold',
    rewritten(({ meta, body }) => ({ meta, body: withWord(body, bodyLayout(body).lineCount, 0xfffffff0) })),
    /damaged: it counts more lines than its text holds/,
  ],
  [
    'a line end missing from the text',
    rewritten(({ meta, body }) => ({ meta, body: body.subarray(0, body.length - 1) })),
    /damaged: its text holds fewer lines than it counts/,
  ],
  [
    'a line too many in the text',
    rewritten(({ meta, body }) => ({ meta, body: Buffer.concat([body, Buffer.from('extra\n\n')]) })),
    /damaged: its text holds more than its lines/,
  ],
  [
    'a line without its end past the last',
    rewritten(({ meta, body }) => {
      const { noEol } = bodyLayout(body);
      return { meta, body: withWord(body, noEol + 4, 999) };
    }),
    /damaged: a line past the last ends its file/,
  ],
  [
    'hunk line counts past the lines',
    rewritten(({ meta, body }) => {
      const out = Buffer.from(body);
      const hunkCount = body.readUInt32LE(bodyLayout(body).hunks);
      // The first hunk's line count (the fifth column), lowest plane.
      out[bodyLayout(body).hunks + 4 + 4 * hunkCount] = 200;
      return { meta, body: out };
    }),
    /damaged: lines out of order/,
  ],
  ['a body cut inside its numbers', rewritten(({ meta, body }) => ({ meta, body: body.subarray(0, 30) })), /damaged: its body ends early/],
];

for (const [name, bytes, error] of DAMAGED_DIFFS) {
  test(`diff records: ${name} is refused with a clear error`, () => {
    assert.throws(() => decodeRecords(bytes), error);
  });
}

test('the readers the searches and updates use read damaged diff records as none', () => {
  DAMAGED_DIFFS.forEach(([name, bytes], i) => {
    writeRecords(dir.path, i + 1, bytes);
    assert.equal(readRecords(dir.path, i + 1), undefined, name);
  });
  writeRecords(dir.path, 1000, GOOD);
  assert.deepEqual([...recordedCommits(dir.path, 1000)!], DONE, 'the meta alone names the commits');
  // What an update checks reads the header and the meta: damage there reads as no records (and makes them again).
  for (const name of [
    'a file of the first format',
    'cut inside the body',
    'a byte after the body',
    'a meta size past its bound',
    'a flipped byte in the meta frame',
    'a meta size far short',
  ]) {
    const i = DAMAGED_DIFFS.findIndex(([n]) => n === name);
    assert.equal(recordedCommits(dir.path, i + 1), undefined, name);
  }
  assert.equal(recordedCommits(dir.path, 9999), undefined, 'no file');
});

const person = (name: string, date: string) => ({ name, email: `${name}@example.com`, date });
const COMMITS: CommitRecord[] = [
  {
    id: id(2),
    parents: [id(1)],
    author: person('b', '2024-01-02T00:00:00+01:00'),
    committer: person('b', '2024-01-02T00:00:00+01:00'),
    message: 'second\n\nwith a body é',
  },
  { id: id(1), parents: [], author: person('a', '2024-01-01T00:00:00Z'), committer: person('c', '2024-01-01T00:00:00Z'), message: 'first' },
];
const RECORDS = { tips: [id(2)], leftOut: 3, commits: COMMITS };
const GOOD_COMMITS = formatCommitRecords(RECORDS);
const headEnd = GOOD_COMMITS.indexOf(0x0a) + 1;
const commitsHead = JSON.parse(GOOD_COMMITS.toString('utf8', 0, headEnd)) as Record<string, unknown>;
const withHead = (change: Record<string, unknown>, frame = GOOD_COMMITS.subarray(headEnd)): Buffer =>
  Buffer.concat([Buffer.from(`${JSON.stringify({ ...commitsHead, ...change })}\n`), frame]);

test('commit records read back as they were written; the header alone says their tips', () => {
  assert.deepEqual(parseCommitRecords(GOOD_COMMITS), RECORDS);
  const path = join(dir.path, 'good.commits');
  writeFileSync(path, GOOD_COMMITS);
  assert.deepEqual(readCommitRecordsHead(path), { tips: RECORDS.tips, leftOut: 3 });
  assert.equal(commitsHead.version, 2);
  const many = Array.from({ length: 200 }, (_, i) => ({ ...COMMITS[0]!, id: id(i + 10), message: `fix: the widget number ${i % 5} again` }));
  const raw = many.reduce((n, c) => n + Buffer.byteLength(c.message) + 200, 0);
  assert.ok(formatCommitRecords({ tips: [], leftOut: 0, commits: many }).length < raw / 4);
});

const DAMAGED_COMMITS: Array<[string, Buffer, RegExp]> = [
  ['an empty file', Buffer.alloc(0), /: the commit records file is not one: it has no header line$/],
  [
    'a file of version 1',
    Buffer.from(`${JSON.stringify({ format: 'trawl-commits', version: 1, tips: [id(2)], leftOut: 0 })}\n${id(2)}\0\0a\0a@x\0d\0a\0a@x\0d\0m\0`),
    /is not one \(or of another format version\)/,
  ],
  ['a header that is not JSON', Buffer.concat([Buffer.from('{"format":\n'), GOOD_COMMITS.subarray(headEnd)]), /is not one \(or of another format version\)/],
  ['a header without its sizes', withHead({ bytes: undefined }), /is not one \(or of another format version\)/],
  ['cut inside the records', GOOD_COMMITS.subarray(0, GOOD_COMMITS.length - 3), /is cut short: its records end early/],
  ['a byte after the records', Buffer.concat([GOOD_COMMITS, Buffer.from('x')]), /is damaged: bytes follow its records/],
  [
    'a size larger than the records',
    withHead({ bytes: (commitsHead.bytes as number) + 1 }),
    /damaged: its compressed part holds \d+ bytes, not the \d+ it says/,
  ],
  ['a size a byte short', withHead({ bytes: (commitsHead.bytes as number) - 1 }), /damaged: its compressed part holds \d+ bytes, not the \d+ it says/],
  ['a size far short', withHead({ bytes: 5 }), /damaged: its compressed part holds more than the 5 bytes it says/],
  ['a size past its bound', withHead({ bytes: 2 ** 40 }), /damaged: it says it holds 1099511627776 bytes, over the 536870912 it may hold/],
  ['a frame size larger than the frame', withHead({ compressed: (commitsHead.compressed as number) + 1 }), /is cut short: its records end early/],
  ['a frame size smaller than the frame', withHead({ compressed: (commitsHead.compressed as number) - 1 }), /is damaged: bytes follow its records/],
  ['a flipped byte in the records', flipped(GOOD_COMMITS, headEnd + 12), /: the commit records file is (damaged|cut short): /],
  ['a flipped byte of the checksum', flipped(GOOD_COMMITS, GOOD_COMMITS.length - 2), /is damaged: Restored data doesn't match checksum/],
  [
    'records that are not nine fields a commit',
    (() => {
      const raw = Buffer.from(`${id(2)}\0\0a\0a@x\0d\0a\0a@x\0d\0`);
      const frame = zstd(raw);
      return withHead({ bytes: raw.length, compressed: frame.length }, frame);
    })(),
    /is damaged: its records are not nine fields a commit/,
  ],
];

for (const [name, bytes, error] of DAMAGED_COMMITS) {
  test(`commit records: ${name} is refused with a clear error`, () => {
    assert.throws(() => parseCommitRecords(bytes), error);
  });
}

test('the readers the searches and updates use read damaged commit records as none', () => {
  const catalog = new CommitCatalog();
  DAMAGED_COMMITS.forEach(([name, bytes], i) => {
    const path = join(dir.path, `damaged-${i}.commits`);
    writeFileSync(path, bytes);
    assert.throws(() => readCommitRecords(path), Error, name);
    assert.equal(catalog.records(path), undefined, name);
  });
  // A file of version 1 is not read: its tips are none, so the update makes the records again.
  const v1 = join(dir.path, `damaged-${DAMAGED_COMMITS.findIndex(([n]) => n === 'a file of version 1')}.commits`);
  assert.equal(readCommitRecordsHead(v1), undefined);
});
