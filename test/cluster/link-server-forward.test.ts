// A served part's replies go to the coordinator in their worker's message as it came
// (cluster/link-server.ts, PoolRun.onMessage): the REPLIES frame carries the message's
// bytes unchanged behind a head naming the part's units; replies made on the serving node
// (units it does not hold) are packed there; no reply goes twice, and END comes last.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodies, frame, KIND, NOT_HELD, readFrame, readReplies } from '../../daemon/cluster/link-frames.ts';
import { serveLink } from '../../daemon/cluster/link-server.ts';
import { packMessage, unpackMessage } from '../../daemon/search/file-codec.ts';
import type { PoolRun } from '../../daemon/search/pool.ts';
import type { ShardReply } from '../../daemon/search/protocol.ts';
import type { Searcher } from '../../daemon/search/searcher.ts';
import type { ShapedFile } from '../../daemon/search/file-json.ts';

const file = (path: string, shard: number): ShapedFile => ({
  json: Buffer.from(JSON.stringify({ fileName: path })),
  count: 1,
  total: 2,
  score: 3,
  repositoryId: 1,
  repository: 'linux',
  path,
  hit: { doc: 7, member: 0, ranges: [0, 4, 9, 12], nameRanges: [], branches: ['HEAD'], termFreqs: [2], score: 3, definition: true },
  shard,
});

test("a worker's message of replies is forwarded byte for byte, units renamed; replies made here are packed; END last", async () => {
  const answers: Array<(r: ShardReply) => void> = [];
  const run = {
    replies: [0, 1].map(() => new Promise<ShardReply>((r) => answers.push(r))),
    grant() {},
    stop() {},
    definitionsOnly() {},
  } as unknown as PoolRun;
  // Units 0 and 2 are held (run shards 0 and 1); unit 1 is not.
  const searcher = {
    startUnits: () => ({ run, held: [0, -1, 1], workers: 1, reshape: () => undefined, corrupt() {}, release() {} }),
  } as unknown as Searcher;
  const got: Buffer[] = [];
  const session = serveLink(searcher, {
    send: (frames) => frames.forEach((f) => got.push(Buffer.from(f))),
    close: (why) => assert.fail(`the link was closed: ${why}`),
  });
  session.message(
    frame(KIND.SEARCH, 4, bodies.pack({ task: { plan: new Uint8Array([1]), planId: 1 }, units: [0, 1, 2].map((i) => ({ repoId: 1, file: `g1-${i}.trawl` })) })),
  );
  assert.equal(typeof run.onMessage, 'function', 'the served part takes its worker messages whole');

  // One worker message answering both run shards, as the pool hands it over.
  const done = (found: number): ShardReply => ({
    status: 'done',
    result: { found } as never,
    files: [],
    repositories: [{ id: 1, name: 'linux' } as never],
    queuedNs: 5,
  });
  const values = [done(1), done(0)];
  const message = packMessage(values, [[file('a.c', 0)], []]);
  const sent = Buffer.from(message);
  run.onMessage!([1, 0], message);
  // The pool reuses the buffer once the hook returns: what was sent must not change with it.
  message.fill(0xee);
  answers[1]!(values[0]!);
  answers[0]!(values[1]!);
  // Until END was sent (the part's last frame), not a fixed time a loaded machine can
  // outrun; then a few more turns, so that a frame sent after END would be seen.
  const ended = () => got.some((b) => readFrame(b).kind === KIND.END);
  const deadline = Date.now() + 10_000;
  while (!ended() && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  assert.ok(ended(), `END was not sent within 10 s (frames ${got.map((b) => readFrame(b).kind).join(',')})`);
  for (let turns = 0; turns < 10; turns++) await new Promise((r) => setImmediate(r));

  const kinds = got.map((b) => readFrame(b).kind);
  assert.deepEqual(kinds.filter((k) => k === KIND.REPLIES).length, 2, `frames ${kinds.join(',')}`);
  assert.equal(kinds.at(-1), KIND.END);
  const replies = got.filter((b) => readFrame(b).kind === KIND.REPLIES).map((b) => readReplies(readFrame(b).payload));
  // First the reply made here (unit 1 not held), then the worker's message.
  assert.deepEqual(replies[0]!.units, [1]);
  const here = unpackMessage(replies[0]!.message).value as ShardReply[];
  assert.deepEqual(
    here.map((r) => (r.status === 'failed' ? r.error : r.status)),
    [NOT_HELD],
  );
  assert.deepEqual(replies[1]!.units, [2, 0], 'run shards 1 and 0 are units 2 and 0');
  assert.deepEqual(Buffer.from(replies[1]!.message), sent, "the worker's message, unchanged");
  const { groups } = unpackMessage(replies[1]!.message);
  assert.deepEqual(
    groups.map((g) => g.map((f) => f.path)),
    [['a.c'], []],
  );
  session.closed();
});
