// A worker's message in its flat buffer (file-codec.ts): what comes out is what went in,
// field for field, for random files with edge values (no ranges, line tables, several
// branches, non-ASCII paths and repositories, scores that are not integers, empty JSON,
// empty groups), and the JSON comes back as a view of the buffer, not a copy. A message's
// buffer is given back once every file of it is released, and the next message packed
// after the recycle is laid into it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dropSpares, packMessage, recycle, releaseFile, unpackMessage } from '../../daemon/search/file-codec.ts';
import type { ShapedFile } from '../../daemon/search/file-json.ts';
import { prng } from '../helpers/corpus.ts';

function file(r: ReturnType<typeof prng>, i: number): ShapedFile {
  const ranges = Array.from({ length: 2 * r.int(5) }, () => r.int(2 ** 32));
  const hit: ShapedFile['hit'] = {
    doc: r.int(2 ** 32),
    member: r.int(1000),
    ranges,
    nameRanges: Array.from({ length: 2 * r.int(2) }, () => r.int(300)),
    branches: r.chance(0.3) ? ['HEAD', 'v6.1', 'ünï/branch'] : r.chance(0.5) ? ['main'] : [],
    termFreqs: Array.from({ length: r.int(3) }, () => r.int(1000)),
    score: r.next() * 100 - 20,
    definition: r.chance(0.2),
  };
  if (r.chance(0.3)) hit.lines = Array.from({ length: 2 * ranges.length }, () => r.int(1e6));
  const json = Buffer.from(JSON.stringify({ fileName: `src/${i}/${r.chance(0.2) ? 'café' : 'x'}.c`, n: r.int(1e9) }));
  return {
    json: r.chance(0.1) ? new Uint8Array(0) : json,
    count: r.int(100),
    total: r.int(200),
    score: hit.score,
    repositoryId: r.int(1e6),
    repository: r.pick(['linux', 'github.com/a/b', 'données']),
    path: `dir/${i}/${r.pick(['a.c', 'Straße.go', '日本語.md'])}`,
    hit,
    shard: r.int(5000),
  };
}

function fields(f: ShapedFile): Record<keyof ShapedFile, unknown> {
  return {
    json: Buffer.from(f.json).toString(),
    count: f.count,
    total: f.total,
    score: f.score,
    repositoryId: f.repositoryId,
    repository: f.repository,
    path: f.path,
    hit: f.hit,
    shard: f.shard,
  };
}

test('files go through the flat buffer unchanged, in their groups', () => {
  const r = prng(20261125);
  for (let round = 0; round < 200; round++) {
    const groups = Array.from({ length: r.int(4) }, () => Array.from({ length: r.int(6) }, (_, i) => file(r, i)));
    const bytes = packMessage(null, groups);
    const back = unpackMessage(bytes).groups;
    assert.equal(back.length, groups.length);
    groups.forEach((files, g) => {
      assert.equal(back[g]!.length, files.length);
      files.forEach((f, k) => {
        const b = back[g]![k]!;
        // Every field of the file (its path and hit are read on demand: getters).
        assert.deepEqual(fields(b), fields(f));
        // The hit's keys in the order they are created (one hidden class per kind of object).
        assert.deepEqual(Object.keys(b.hit), Object.keys(f.hit));
        if (b.json.length > 0) assert.equal(b.json.buffer, bytes.buffer, 'the JSON is a view of the message');
      });
    });
  }
});

test('a message: its packed value, then its files, in one buffer', () => {
  const r = prng(11);
  const groups = [[file(r, 1), file(r, 2)], []];
  const value = [{ status: 'done', files: [], queuedNs: 5 }, { status: 'skipped' }];
  const bytes = packMessage(value, groups);
  assert.equal(bytes.byteOffset, 0);
  const back = unpackMessage(bytes);
  assert.deepEqual(back.value, value);
  assert.deepEqual(
    back.groups.map((g) => g.map((f) => f.path)),
    groups.map((g) => g.map((f) => f.path)),
  );
  assert.deepEqual(back.groups[0]![1]!.hit, groups[0]![1]!.hit);
});

test('room before a message: the caller writes its head there, and the message after it reads back the same', () => {
  const r = prng(12);
  const groups = [[file(r, 1)], [file(r, 2), file(r, 3)]];
  for (const room of [0, 8, 16, 64]) {
    const bytes = packMessage({ n: room }, groups, false, room);
    assert.equal(bytes.byteOffset, 0);
    bytes.fill(0xff, 0, room);
    const back = unpackMessage(bytes.subarray(room));
    assert.deepEqual(back.value, { n: room });
    assert.deepEqual(
      back.groups.map((g) => g.map(fields)),
      groups.map((g) => g.map(fields)),
    );
  }
  assert.throws(() => packMessage(null, groups, false, 12), /8-aligned/);
});

test('a message buffer goes back once all its files are released, and the next message is packed into it', () => {
  const r = prng(7);
  dropSpares();
  const groups = [[file(r, 1), file(r, 2)], [file(r, 3)]];
  const bytes = packMessage(null, groups);
  const given: ArrayBuffer[] = [];
  const back = unpackMessage(bytes, (b) => given.push(b)).groups;
  const all = back.flat();
  releaseFile(all[0]!);
  releaseFile(all[0]!); // a second release of one file counts once
  releaseFile(all[2]!);
  assert.equal(given.length, 0, 'a file is still unwritten');
  // A file made elsewhere (shaped again) is not the message's: releasing it changes nothing.
  releaseFile(groups[0]![1]!);
  assert.equal(given.length, 0);
  releaseFile(all[1]!);
  assert.deepEqual(given, [bytes.buffer]);

  // Recycled, the buffer takes the next message that fits; the files read right.
  recycle(given[0]!);
  const next = [[file(r, 4)]];
  const again = packMessage(null, next, true);
  assert.equal(again.buffer, bytes.buffer, 'packed into the buffer given back');
  assert.deepEqual(fields(unpackMessage(again).groups[0]![0]!), fields(next[0]![0]!));
  // Taken: a further message gets a buffer of its own.
  assert.notEqual(packMessage(null, next).buffer, bytes.buffer);

  // A message without files goes back at once.
  const empty: ArrayBuffer[] = [];
  unpackMessage(packMessage({ x: 1 }, [[]]), (b) => empty.push(b));
  assert.equal(empty.length, 1);
  dropSpares();
});
