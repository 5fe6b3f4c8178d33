// The serving side of a link (cluster/link-server.ts) packs each REPLIES frame in place and,
// once the frame is sent (LinkPeer.send copies it), packs the next ones into the same
// buffer: a new buffer per frame was memory V8 counts against its heap. What the peer got
// reads back the same although the buffer served again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodies, frame, KIND, readFrame, readReplies } from '../../daemon/cluster/link-frames.ts';
import { serveLink } from '../../daemon/cluster/link-server.ts';
import { unpackMessage } from '../../daemon/search/file-codec.ts';
import type { PoolRun } from '../../daemon/search/pool.ts';
import type { ShardReply } from '../../daemon/search/protocol.ts';
import type { Searcher } from '../../daemon/search/searcher.ts';
import type { ShapedFile } from '../../daemon/search/file-json.ts';

const file = (path: string): ShapedFile => ({
  json: Buffer.from(JSON.stringify({ fileName: path, text: path.repeat(50) })),
  count: 1,
  total: 1,
  score: 2,
  repositoryId: 1,
  repository: 'linux',
  path,
  hit: { doc: 3, member: 0, ranges: [0, 4], nameRanges: [], branches: ['HEAD'], termFreqs: [1], score: 2, definition: false },
  shard: 0,
});

test('a REPLIES frame is packed into the buffer of the one sent before it, and both read back as sent', async () => {
  const answers: Array<(r: ShardReply) => void> = [];
  const run = {
    replies: [0, 1, 2].map(() => new Promise<ShardReply>((r) => answers.push(r))),
    grant() {},
    stop() {},
    definitionsOnly() {},
  } as unknown as PoolRun;
  const searcher = {
    startUnits: () => ({ run, held: [0, 1, 2], workers: 1, reshape: () => undefined, corrupt() {}, release() {} }),
  } as unknown as Searcher;
  // What the peer got (copied, as uWS copies), and the buffer each frame was in.
  const got: Array<{ bytes: Buffer; buffer: ArrayBufferLike }> = [];
  const session = serveLink(searcher, {
    send: (frames) => frames.forEach((f) => got.push({ bytes: Buffer.from(f), buffer: f.buffer })),
    close: (why) => assert.fail(`the link was closed: ${why}`),
  });
  session.message(
    frame(KIND.SEARCH, 9, bodies.pack({ task: { plan: new Uint8Array([1]), planId: 1 }, units: [0, 1, 2].map((i) => ({ repoId: 1, file: `g1-${i}.trawl` })) })),
  );
  // The longest first: a buffer serves again for what fits in it.
  const paths = ['d/e/f.rs', 'b/c.h', 'a.c'];
  const repliesSent = () => got.filter((g) => readFrame(g.bytes).kind === KIND.REPLIES);
  for (let i = 0; i < 3; i++) {
    // A reply that found something goes at the next turn, in a frame of its own: the next
    // answer waits until that frame was sent, not a fixed time a loaded machine can outrun.
    answers[i]!({ status: 'done', result: { found: 1 } as never, files: [file(paths[i]!)], repositories: [{ id: 1, name: 'linux' } as never], queuedNs: 0 });
    for (let turns = 0; repliesSent().length <= i && turns < 1000; turns++) await new Promise((r) => setImmediate(r));
    assert.equal(repliesSent().length, i + 1, `reply ${i} was sent in a frame of its own`);
  }
  const replies = repliesSent();
  assert.equal(replies.length, 3);
  assert.equal(replies[1]!.buffer, replies[0]!.buffer, "the second frame was packed into the first one's buffer");
  assert.equal(replies[2]!.buffer, replies[0]!.buffer);
  replies.forEach((g, i) => {
    const { units, message } = readReplies(readFrame(g.bytes).payload);
    assert.deepEqual(units, [i]);
    const { groups } = unpackMessage(message);
    assert.deepEqual(
      groups[0]!.map((f) => [f.path, Buffer.from(f.json).toString()]),
      [[paths[i], Buffer.from(file(paths[i]!).json).toString()]],
    );
  });
  assert.equal(readFrame(got.at(-1)!.bytes).kind, KIND.END);
  session.closed();
});
