// The frames that carry a worker message over a link (link-frames.ts [message]): packed in
// place behind their head, read back the same whether the WebSocket message lies 8-aligned
// in its buffer (read where it lies) or not (read from a copy), for each kind's head; and a
// frame cut short is an error, not a misread.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KIND, messageFrame, readFrame, readMessage, readReplies, repliesHead } from '../../daemon/cluster/link-frames.ts';
import { packMessage, unpackMessage } from '../../daemon/search/file-codec.ts';
import type { ShapedFile } from '../../daemon/search/file-json.ts';

const file = (path: string): ShapedFile => ({
  json: Buffer.from(JSON.stringify({ fileName: path })),
  count: 1,
  total: 2,
  score: 3.5,
  repositoryId: 7,
  repository: 'linux',
  path,
  hit: { doc: 9, member: 0, ranges: [1, 4], nameRanges: [], branches: ['HEAD'], termFreqs: [2], score: 3.5, definition: false },
  shard: 0,
});

/** `bytes` at `offset` in a buffer of its own (as a WebSocket library may hand a message over). */
function at(bytes: Uint8Array, offset: number): Buffer {
  const b = Buffer.from(new ArrayBuffer(offset + bytes.length), offset, bytes.length);
  b.set(bytes);
  return b;
}

const heads: Array<{ name: string; kind: number; head: Uint8Array; read(payload: Buffer): Uint8Array }> = [
  { name: 'REPLIES of 3 units', kind: KIND.REPLIES, head: repliesHead([0, 5, 2]), read: (p) => readReplies(p).message },
  { name: 'REPLIES of 1 unit', kind: KIND.REPLIES, head: repliesHead([4]), read: (p) => readReplies(p).message },
  { name: 'PARTIAL', kind: KIND.PARTIAL, head: Uint8Array.of(3, 0, 0, 0), read: (p) => readMessage(p, 4) },
  { name: 'RESHAPED (no head)', kind: KIND.RESHAPED, head: new Uint8Array(0), read: (p) => readMessage(p, 0) },
];

for (const h of heads) {
  test(`${h.name}: the message reads back the same, in place when aligned and copied when not`, () => {
    const value = [{ status: 'done', queuedNs: 1 }];
    const files = [file('a/b.c'), file('Straße.go')];
    const sent = messageFrame(h.kind, 42, h.head, (room) => packMessage(value, [files], false, room));
    for (const offset of [0, 8, 3, 5]) {
      const bytes = at(sent, offset);
      const f = readFrame(bytes);
      assert.equal(f.kind, h.kind);
      assert.equal(f.id, 42);
      assert.deepEqual(Buffer.from(f.payload.subarray(0, h.head.length)), Buffer.from(h.head));
      const message = h.read(f.payload);
      assert.equal(message.buffer === bytes.buffer, offset % 8 === 0, `offset ${offset}: read in place only when aligned`);
      const back = unpackMessage(message);
      assert.deepEqual(back.value, value);
      assert.deepEqual(
        back.groups[0]!.map((g) => [g.path, Buffer.from(g.json).toString()]),
        files.map((g) => [g.path, Buffer.from(g.json).toString()]),
      );
    }
  });
}

test('REPLIES names its units; a frame cut short is an error', () => {
  const sent = messageFrame(KIND.REPLIES, 1, repliesHead([2, 0]), (room) => packMessage([{ status: 'skipped' }, { status: 'skipped' }], [[], []], false, room));
  assert.deepEqual(readReplies(readFrame(sent).payload).units, [2, 0]);
  assert.throws(() => readReplies(readFrame(sent.subarray(0, 9)).payload), /REPLIES frame of 2 units/);
  assert.throws(() => readReplies(readFrame(sent.subarray(0, 7)).payload), /without its count/);
  assert.throws(() => readMessage(readFrame(sent.subarray(0, 20)).payload, 12), /no message after its head/);
});
