// Search worker: evaluates shard tasks. Keeps the shards it has opened mapped, and the
// matcher of the current query, across tasks.

import { parentPort } from 'node:worker_threads';
import { Shard, ShardError } from '../index/shard-reader.ts';
import { Matcher } from './matcher.ts';
import { planTerms, type Plan } from '../query/terms.ts';
import { packr, shardKey, type Envelope, type ShardReply, type ShardTask } from './protocol.ts';
import { searchShard } from './shard-search.ts';

const port = parentPort!;
const shards = new Map<string, Shard>();
let lastPlanKey = '';
let plan: Plan | undefined;
let matchers: Matcher[] = [];

function shardAt(path: string, membership?: string): Shard {
  const key = shardKey(path, membership);
  let shard = shards.get(key);
  if (!shard) {
    shard = Shard.open(path, membership);
    shards.set(key, shard);
  }
  return shard;
}

port.on('message', (msg: Envelope | { forget: string[] }) => {
  if ('forget' in msg) {
    for (const p of msg.forget) shards.delete(p);
    return;
  }
  const queuedNs = Math.max(0, Math.round((performance.timeOrigin + performance.now() - msg.sentAt!) * 1e6));
  const task = packr.unpack(msg.body) as ShardTask;
  let reply: ShardReply;
  const flag = new Int32Array(msg.cancel!);
  if (Atomics.load(flag, 0) !== 0) {
    port.postMessage({ seq: msg.seq, body: packr.pack({ status: 'skipped' } satisfies ShardReply) } satisfies Envelope);
    return;
  }
  try {
    // The shards of one search share its plan: decode it and build its matchers (RE2
    // objects) once.
    const key = `${task.brute ? 'b' : 'i'}:${task.planId}`;
    if (key !== lastPlanKey || !plan) {
      plan = packr.unpack(task.plan) as Plan;
      matchers = planTerms(plan).map((t) => new Matcher(t, task.brute ? 'reference' : 'indexed'));
      lastPlanKey = key;
    }
    const result = searchShard(shardAt(task.shardPath, task.membership), plan, matchers, task.limit, () => Atomics.load(flag, 0) !== 0, !task.brute, task.repo);
    reply = { status: 'done', result, queuedNs };
  } catch (err) {
    shards.delete(shardKey(task.shardPath, task.membership));
    reply = { status: 'failed', error: (err as Error).message, queuedNs, corrupt: err instanceof ShardError };
  }
  const body = packr.pack(reply);
  port.postMessage({ seq: msg.seq, body } satisfies Envelope);
});
