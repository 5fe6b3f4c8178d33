// The serving side of a link (cluster/link-server.ts) says a part is alive every ALIVE_MS
// it has sent nothing, for as long as the part runs, and stops once the part ends: the
// coordinator gives up a part silent for FIRST_ANSWER_MS (peer-link.ts), so one ALIVE at
// the start would fail every part whose shards take longer than that. A part of one shard
// that answers after 1.4 s, on a searcher whose run is driven by the test.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALIVE_MS, bodies, frame, KIND, readFrame } from '../../daemon/cluster/link-frames.ts';
import { serveLink } from '../../daemon/cluster/link-server.ts';
import type { PoolRun } from '../../daemon/search/pool.ts';
import type { ShardReply } from '../../daemon/search/protocol.ts';
import type { Searcher } from '../../daemon/search/searcher.ts';

test('a running part is said alive every ALIVE_MS it sends nothing, and no more once it ended', async () => {
  let answer!: (r: ShardReply) => void;
  const run = {
    replies: [new Promise<ShardReply>((r) => (answer = r))],
    grant() {},
    stop() {},
    definitionsOnly() {},
  } as unknown as PoolRun;
  let released = false;
  const searcher = {
    startUnits: () => ({ run, held: [0], workers: 1, reshape: () => undefined, corrupt() {}, release: () => (released = true) }),
  } as unknown as Searcher;
  const sent: Array<{ kind: number; at: number }> = [];
  const t0 = performance.now();
  const session = serveLink(searcher, {
    send: (frames) => frames.forEach((f) => sent.push({ kind: readFrame(f).kind, at: performance.now() - t0 })),
    close: (why) => assert.fail(`the link was closed: ${why}`),
  });
  const plan = new Uint8Array([1, 2, 3]);
  session.message(frame(KIND.SEARCH, 7, bodies.pack({ task: { plan, planId: 1 }, units: [{ repoId: 1, file: 'g1-0.trawl' }] })));

  // Until two ALIVE frames came (the second is what one ALIVE at the start would lack),
  // not a fixed 2.8 ALIVE_MS: on a loaded machine the first tick can come late, and the
  // interval counts from it. Their spacing is what is checked below.
  const alives = () => sent.filter((f) => f.kind === KIND.ALIVE);
  const deadline = Date.now() + 10_000;
  while (alives().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const alive = alives();
  assert.ok(alive.length >= 2, `ALIVE frames within 10 s: ${alive.length}`);
  // None more than FIRST_ANSWER_MS apart: spaced by ALIVE_MS (timers may run late on a busy machine).
  alive.forEach((f, i) => assert.ok(f.at - (i === 0 ? 0 : alive[i - 1]!.at) < ALIVE_MS * 2, `ALIVE at ${alive.map((a) => a.at.toFixed(0)).join(', ')} ms`));

  answer({ status: 'skipped' });
  const ended = () => sent.some((f) => f.kind === KIND.END);
  const endBy = Date.now() + 10_000;
  while (!ended() && Date.now() < endBy) await new Promise((r) => setImmediate(r));
  assert.ok(ended(), 'END was not sent within 10 s of the answer');
  assert.equal(sent.at(-1)!.kind, KIND.END, 'the part ended');
  assert.equal(released, true);
  const count = sent.length;
  await new Promise((r) => setTimeout(r, ALIVE_MS * 2.2));
  assert.equal(sent.length, count, 'nothing after its end');
  session.closed();
});
