// Three `trawl serve` processes in a cluster (replication 2) on a private PostgreSQL and
// Redis, indexing six git repositories through the cluster's own sync. Under a steady
// search load spread over two of them, the third is killed with SIGKILL: after 10 s no
// request fails and every answer is what the whole cluster answered before; the killed
// node's shards regain two live holders; restarted with its data dir and id, the node
// takes its shards back and the cluster returns to its placement (each shard held by
// exactly its two rendezvous owners). Then two nodes die: the last one builds again what
// only they held.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { newUserKey } from '../helpers/cli-users.ts';
import { generateCorpus, prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { call } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { clusterStatus, placed, startClusterBackends, startNode } from '../helpers/cluster.ts';
import type { ClusterStatus } from '../../daemon/cluster/status.ts';
import { stop, type ServeProcess } from '../helpers/serve.ts';

const dir = tempDir('cluster-kill');
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
let configPath = '';
let ownerKey = '';
const procs = new Map<string, ServeProcess>();

const start = (id: string): Promise<ServeProcess> => startNode(procs, configPath, dir.path, id);
const status = (url: string): Promise<ClusterStatus | undefined> => clusterStatus(url, ownerKey);

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  for (let i = 0; i < 6; i++) {
    const root = join(dir.path, 'repos', `k${i}`);
    generateCorpus(root, 100 + i, 40);
    TestRepo.init(root).commit({}, 'import');
  }
  configPath = join(dir.path, 'cluster.json');
  const cluster = {
    store: await postgres.newDatabase(),
    redis: redis.url,
    replicationFactor: 2,
    name: `k${process.pid}`,
    heartbeatMs: 250,
    nodeTimeoutMs: 1500,
  };
  const settings = { anonymousAccess: true, symbols: false };
  writeFileSync(configPath, JSON.stringify({ settings, cluster, connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } } }));
  ownerKey = await newUserKey('ops@example.com', ['--config', configPath], 'owner');
  await Promise.all(['a', 'b', 'c'].map(start));
});

after(async () => {
  await Promise.all([...procs.values()].map((p) => stop(p.child)));
  await redis?.stop();
  await postgres?.stop();
  dir.cleanup();
});

interface Sample {
  /** When the request started, and when its answer (or failure) came. */
  at: number;
  end: number;
  ok: boolean;
  why?: string;
}

/** Searches in a loop over `urls` with `clients` at once until stopped; each answer checked against `want`. */
function load(
  urls: () => string[],
  queries: Array<Record<string, unknown>>,
  want: string[],
  clients: number,
): { answered(): readonly Sample[]; stop(): Promise<Sample[]> } {
  const samples: Sample[] = [];
  let running = true;
  const r = prng(5);
  const client = async (c: number): Promise<void> => {
    for (let i = c; running; i++) {
      const k = r.int(queries.length);
      const list = urls();
      const at = Date.now();
      try {
        const res = await call(`${list[i % list.length]}/api/search`, { method: 'POST', json: queries[k] });
        const got = res.status === 200 ? answer(res.json) : `status ${res.status}: ${res.text.slice(0, 200)}`;
        const end = Date.now();
        samples.push(got === want[k] ? { at, end, ok: true } : { at, end, ok: false, why: `${JSON.stringify(queries[k])}\n${got}\n${want[k]}` });
      } catch (err) {
        samples.push({ at, end: Date.now(), ok: false, why: (err as Error).message });
      }
    }
  };
  const all = Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
  return {
    answered: () => samples,
    async stop() {
      running = false;
      await all;
      return samples;
    },
  };
}

/** What must not change when a node dies: the files and lines found, and that nothing is missing. */
function answer(json: unknown): string {
  const r = json as {
    files: Array<{ repository: string; fileName: { text: string }; chunks: Array<{ contentStart: { lineNumber: number } }> }>;
    isSearchExhaustive: boolean;
    unavailableShards?: unknown;
    stats: { actualMatchCount: number };
  };
  return JSON.stringify({
    files: r.files.map((f) => [f.repository, f.fileName.text, f.chunks.map((c) => c.contentStart.lineNumber)]),
    exhaustive: r.isSearchExhaustive,
    unavailable: r.unavailableShards ?? null,
    actual: r.stats.actualMatchCount,
  });
}

test('kill -9 of a node under load: complete answers after 10 s, two replicas again, the node rebalances back; two killed: the last rebuilds', async (t) => {
  if (skip) return t.skip(skip);
  const url = (id: string) => procs.get(id)!.url;
  let last: ClusterStatus | undefined;
  await until('the cluster synced six repositories, every shard on its two owners', async () => placed((last = await status(url('a'))), 3, 6), 120_000).catch(
    (err: Error) => {
      t.diagnostic(JSON.stringify(last));
      for (const [id, p] of procs) t.diagnostic(`${id}: ${p.stdout().slice(-3000)}`);
      throw err;
    },
  );

  const queries = WORDS.slice(0, 8).map((w, i) =>
    i % 2 === 0 ? { query: w, matches: 200 } : { query: `${w.slice(0, 3)}\\w+`, isRegexEnabled: true, matches: 100 },
  );
  const want: string[] = [];
  for (const q of queries) {
    const res = await call(`${url('c')}/api/search`, { method: 'POST', json: q });
    assert.equal(res.status, 200, res.text);
    want.push(answer(res.json));
    assert.equal((res.json as { unavailableShards?: unknown }).unavailableShards, undefined);
  }

  // Steady load on the two nodes that live (a load balancer's pool), then the third dies.
  // Each wait is for requests answered, not a fixed time a loaded machine can outrun
  // (no request answered before the kill, or none started 10 s after it).
  const ANSWERED = 8;
  const run = load(() => [url('a'), url('b')], queries, want, 4);
  // (A wait that fails stops the load's clients first: they would go on forever.)
  const stopped = (err: Error) => run.stop().then(() => Promise.reject(err));
  await until('the load answered requests before the kill', () => run.answered().length >= ANSWERED, 60_000).catch(stopped);
  const victim = procs.get('c')!;
  const killedAt = Date.now();
  victim.child.kill('SIGKILL');
  await new Promise<void>((r) => victim.child.once('exit', () => r()));
  await until(
    `${ANSWERED} requests started 10 s or more after the kill answered`,
    () => run.answered().filter((x) => x.at >= killedAt + 10_000).length >= ANSWERED,
    60_000,
  ).catch(stopped);
  const samples = await run.stop();
  // A request still in flight when the node died (it may have asked that node) is of the 10 s after, not before.
  const before = samples.filter((s) => s.end < killedAt);
  const early = samples.filter((s) => s.end >= killedAt && s.at < killedAt + 10_000);
  const late = samples.filter((s) => s.at >= killedAt + 10_000);
  t.diagnostic(
    `requests: ${before.length} before the kill, ${early.length} in the 10 s after (${early.filter((s) => !s.ok).length} failed), ${late.length} after (${late.filter((s) => !s.ok).length} failed)`,
  );
  for (const f of samples.filter((x) => !x.ok)) {
    const id = /request id ([0-9a-f-]+)/.exec(f.why ?? '')?.[1];
    if (id) for (const p of procs.values()) for (const line of p.stdout().split('\n')) if (line.includes(id)) t.diagnostic(line);
  }
  assert.ok(before.length > 0 && late.length > 0, 'the load ran');
  assert.deepEqual(
    before.filter((s) => !s.ok),
    [],
  );
  assert.deepEqual(
    late.filter((s) => !s.ok),
    [],
    'no request fails 10 s after the kill',
  );

  await until(
    'every shard on two live holders again',
    async () => {
      const s = await status(url('a'));
      return !!s && s.nodes.filter((n) => n.live).length === 2 && s.summary.ok === s.summary.shards && s.summary.shards > 0;
    },
    30_000,
  );

  // Restarted with its data dir and id: it joins, takes its shards back, and the copies made meanwhile are dropped.
  await start('c');
  await until(
    'the cluster back to its placement over three nodes',
    async () => placed(await status(url('b')), 3, 6) && placed(await status(url('c')), 3, 6),
    60_000,
  );
  const s = (await status(url('c')))!;
  // (Six small repositories end in one compound shard, on two of the three nodes: the restarted node may own none.)
  const owns = s.repositories.some((r) => r.shards.some((sh) => sh.owners.includes('c')));
  assert.equal(s.nodes.find((n) => n.id === 'c')!.shards > 0, owns, 'the restarted node holds the shards placed on it');
  for (const [k, q] of queries.entries()) {
    const res = await call(`${url('c')}/api/search`, { method: 'POST', json: q });
    assert.equal(answer(res.json), want[k], JSON.stringify(q));
  }
  const ready = await call(`${url('c')}/readyz`);
  assert.equal(ready.status, 200, ready.text);

  // Two of three killed: the shards only they held lost every copy. The last node queues
  // those repositories' builds again (it does not lead necessarily) and answers completely.
  for (const id of ['b', 'c']) {
    const p = procs.get(id)!;
    p.child.kill('SIGKILL');
    await new Promise<void>((r) => p.child.once('exit', () => r()));
    procs.delete(id);
  }
  let lastAnswer = '';
  await until(
    'the last node answers every query completely again',
    async () => {
      for (const [k, q] of queries.entries()) {
        const res = await call(`${url('a')}/api/search`, { method: 'POST', json: q });
        lastAnswer = res.status === 200 ? answer(res.json) : res.text;
        if (lastAnswer !== want[k]) return false;
      }
      return true;
    },
    60_000,
  ).catch((err: Error) => {
    t.diagnostic(`${lastAnswer.slice(0, 1000)}\n${procs.get('a')!.stdout().slice(-4000)}`);
    throw err;
  });
});
