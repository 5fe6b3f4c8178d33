// A cluster of three nodes (replication 2) in this process, on a private Redis and a
// private PostgreSQL (the store they share, each node with its own connections): every repository's shards end on two nodes or more, and a search through
// any node answers exactly what one node with everything indexed answers (differential,
// over random queries). Then a node stops without leaving (a crash as the others see it):
// its shards are searched on their other copies at once, copied again to reach two
// replicas, and nothing is reported unavailable.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { loadConfig, parseConfig } from '../../daemon/config/load.ts';
import { writeFileSync } from 'node:fs';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { generateCorpus, prng, tempDir, WORDS } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { call } from '../helpers/daemon.ts';
import { metrics, until } from '../helpers/haystack.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { startClusterBackends, stopCluster } from '../helpers/cluster.ts';
import { settled } from '../../daemon/cluster/status.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { openPgStore } from '../../daemon/store/pg-store.ts';
import WebSocket from 'ws';
import { PeerLink } from '../../daemon/cluster/peer-link.ts';
import { NOT_HELD } from '../../daemon/cluster/link-frames.ts';

const dir = tempDir('cluster');
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
const stores: Store[] = [];
const daemons: Daemon[] = [];
let reference: Daemon;
let configPath = '';
const nodes: Daemon[] = [];
const PUBLIC_URL = 'http://trawl.example';

/**
 * Shards of ~90 files: more than the 64 candidates below which a shard bet on is searched
 * whole anyway (shard-search.ts), so that replies come back speculative and the bet's both
 * sides are compared (with 8 KiB shards none ever did).
 */
const SHARD_BYTES = 96 * 1024;

/** Three repositories of generated code (400 files each: several shards), committed. */
function makeRepos(): string[] {
  return [11, 22, 33].map((seed, i) => {
    const root = join(dir.path, 'repos', `r${i}`);
    generateCorpus(root, seed, 400);
    TestRepo.init(root).commit({}, 'import');
    return root;
  });
}

const settings = { anonymousAccess: true, publicUrl: PUBLIC_URL };

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  const repos = makeRepos();
  // The reference: one node with every repository.
  const refStore = openSqliteStore(join(dir.path, 'ref.db'));
  stores.push(refStore);
  const refData = join(dir.path, 'ref');
  for (const path of repos) await indexLocal(path, { dataDir: refData, store: refStore, symbols: true, shardTargetBytes: SHARD_BYTES });
  reference = await startDaemon({
    config: parseConfig(JSON.stringify({ settings }), join(dir.path, 'ref.json')),
    dataDir: refData,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    sync: false,
    store: refStore,
  });
  daemons.push(reference);

  // The cluster: three nodes sharing one store (the same ids as the reference's).
  const storeUrl = await postgres.newDatabase();
  const shared = openPgStore(storeUrl);
  stores.push(shared);
  configPath = join(dir.path, 'cluster.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      settings,
      cluster: { store: storeUrl, redis: redis.url, replicationFactor: 2, name: `t${process.pid}`, heartbeatMs: 250, nodeTimeoutMs: 3000 },
    }),
  );
  const config = loadConfig(configPath);
  for (const id of ['a', 'b', 'c']) {
    const d = await startDaemon({
      config,
      dataDir: join(dir.path, id),
      host: '127.0.0.1',
      port: 0,
      logger: silentHttpLogger,
      workers: 1,
      sync: false,
      nodeId: id,
    });
    daemons.push(d);
    nodes.push(d);
  }
  // Each repository is built on one node and published from there.
  const publishing: Array<Promise<void>> = [];
  for (const [i, path] of repos.entries()) {
    const n = nodes[i]!;
    await indexLocal(path, {
      dataDir: join(dir.path, ['a', 'b', 'c'][i]!),
      store: shared,
      symbols: true,
      shardTargetBytes: SHARD_BYTES,
      onCommit: (m) => void publishing.push(n.cluster!.onCommit(m)),
    });
  }
  await Promise.all(publishing);
  // Each node reads the others' holdings a heartbeat or so after they change: all three agree.
  await until(
    'every shard on two nodes, as every node sees it',
    async () => {
      for (const n of nodes) {
        const s = await n.cluster!.status();
        if (s.summary.shards <= 3 || s.summary.ok !== s.summary.shards) return false;
      }
      return true;
    },
    20_000,
  );
});

after(() => stopCluster({ daemons, stores, redis, postgres, dir }));

/**
 * What must agree between one node and the cluster: everything but the measurements of
 * work done (timings, and totalMatchCount, which counts the matches of shards that ran
 * before the search stopped: on one node too it depends on the threads' timing).
 */
function comparable(json: unknown): unknown {
  const r = json as { files: unknown[]; repositoryInfo: unknown[]; isSearchExhaustive: boolean; stats: Record<string, number>; unavailableShards?: unknown };
  return {
    files: r.files,
    repositoryInfo: r.repositoryInfo,
    isSearchExhaustive: r.isSearchExhaustive,
    actual: r.stats.actualMatchCount,
    unavailable: r.unavailableShards,
  };
}

function queries(seed: number, n: number): Array<Record<string, unknown>> {
  const r = prng(seed);
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    const w = r.pick(WORDS);
    const kind = r.int(5);
    if (kind === 0) out.push({ query: w, matches: 1 + r.int(200) });
    else if (kind === 1) out.push({ query: `${w} ${r.pick(WORDS)}`, matches: 50 });
    else if (kind === 2) out.push({ query: `${w.slice(0, 3)}.*${r.pick(WORDS).slice(0, 2)}`, isRegexEnabled: true, matches: 30 });
    else if (kind === 3) out.push({ query: `file:\\.c$ ${w}`, matches: 100, contextLines: 1 });
    else out.push({ query: `sym:${w}`, matches: 20 });
  }
  return out;
}

describe('a cluster of three nodes, replication 2', () => {
  test('placement: every shard has two holders or more, spread over the nodes', async (t) => {
    if (skip) return t.skip(skip);
    const s = await nodes[1]!.cluster!.status();
    assert.equal(s.nodes.length, 3);
    for (const repo of s.repositories) for (const shard of repo.shards) assert.ok(shard.replicas >= 2, `${repo.repository} ${shard.shard}: ${shard.holders}`);
    for (const n of s.nodes) assert.ok(n.shards > 0, `${n.id} holds shards`);
    // Settled (the builders dropped what is not placed on them), a round walks nothing again until something moves.
    await until(
      'every shard on exactly its owners',
      async () => {
        for (const n of nodes) {
          const st = await n.cluster!.status();
          if (!settled(st)) return false;
        }
        return true;
      },
      20_000,
    );
    for (const n of nodes) {
      await n.cluster!.replicator.schedule();
      assert.equal((await n.cluster!.replicator.schedule()).idle, true, 'a quiet cluster: the round is idle');
    }
  });

  test('a search through any node answers exactly what one node answers (random queries)', async (t) => {
    if (skip) return t.skip(skip);
    let differences = 0;
    const counted = async () => {
      const sum = { speculative: 0, again: 0, cut: 0, shaped: 0 };
      for (const n of nodes) {
        const m = await metrics(n.url, [
          'trawl_cluster_speculative_shards_total',
          'trawl_cluster_shards_asked_again_total',
          'trawl_cluster_files_cut_total',
          'trawl_cluster_files_shaped_remotely_total',
        ]);
        sum.speculative += m.trawl_cluster_speculative_shards_total!;
        sum.again += m.trawl_cluster_shards_asked_again_total!;
        sum.cut += m.trawl_cluster_files_cut_total!;
        sum.shaped += m.trawl_cluster_files_shaped_remotely_total!;
      }
      return sum;
    };
    const before = await counted();
    for (const [k, q] of queries(7, 60).entries()) {
      const want = await call(`${reference.url}/api/search`, { method: 'POST', json: q });
      const node = nodes[k % 3]!;
      const got = await call(`${node.url}/api/search`, { method: 'POST', json: q });
      assert.equal(got.status, want.status, JSON.stringify(q));
      if (want.status !== 200) continue;
      try {
        assert.deepEqual(comparable(got.json), comparable(want.json));
      } catch (err) {
        differences++;
        if (differences <= 3) t.diagnostic(`${JSON.stringify(q)} via ${k % 3}: ${(err as Error).message.slice(0, 2000)}`);
      }
    }
    assert.equal(differences, 0);
    // Both sides of the fan-out's bet (fan-out.ts, speculation) were compared: shards
    // searched for their definitions only past the cut, and shards asked again whole.
    const after = await counted();
    t.diagnostic(`shards searched speculatively: ${after.speculative - before.speculative}, asked again whole: ${after.again - before.again}`);
    assert.ok(after.again - before.again > 0, 'some bets were lost');
    assert.ok(after.speculative - before.speculative > after.again - before.again, 'some bets were won');
    // Files of other nodes cut where the budget ended, here from their JSON (their node
    // shapes them again where that cannot be: the next test).
    t.diagnostic(`files cut here: ${after.cut - before.cut}, shaped again by their node: ${after.shaped - before.shaped}`);
    assert.ok(after.cut - before.cut > 0, 'some files were cut from their JSON');
  });

  test('streams agree too', async (t) => {
    if (skip) return t.skip(skip);
    for (const q of queries(9, 10)) {
      const want = await call(`${reference.url}/api/stream_search`, { method: 'POST', json: q });
      const got = await call(`${nodes[2]!.url}/api/stream_search`, { method: 'POST', json: q });
      const files = (text: string) =>
        text
          .split('\n')
          .filter((l) => l.startsWith('data: {'))
          .map((l) => JSON.parse(l.slice(6)) as { type: string; files?: Array<{ repository: string; fileName: { text: string } }> })
          .flatMap((m) => m.files ?? [])
          .map((f) => `${f.repository}/${f.fileName.text}`)
          .sort();
      assert.deepEqual(files(got.text), files(want.text), JSON.stringify(q));
    }
  });

  test('a key created with --config works on every node at once; GET /api/cluster is for owners', async (t) => {
    if (skip) return t.skip(skip);
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => {}, now: () => new Date() };
    assert.equal(await usersCommand(['add', '--email', 'boss@example.com', '--name', 'Boss', '--role', 'owner', '--config', configPath], io), 0);
    assert.equal(await keysCommand(['create', '--user', 'boss@example.com', '--config', configPath], io), 0);
    const key = out.at(-1)!;
    for (const n of nodes) {
      const res = await call(`${n.url}/api/cluster`, { headers: { 'X-Sourcebot-Api-Key': key } });
      assert.equal(res.status, 200, res.text);
      assert.equal((res.json as { nodes: unknown[] }).nodes.length, 3);
      assert.equal((await call(`${n.url}/api/cluster`)).status, 401, 'anonymous callers do not see it');
    }
    // The node-to-node endpoints refuse a user's key: the link that carries searches, and a shard file.
    const link = new WebSocket(`${nodes[0]!.url.replace('http:', 'ws:')}/_cluster/link`, { headers: { 'X-Sourcebot-Api-Key': key } });
    const refused = await new Promise<number>((resolve, reject) => {
      link.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      link.on('open', () => reject(new Error('a user key opened a link between nodes')));
      link.on('error', () => {});
    });
    link.terminate();
    assert.equal(refused, 401);
    const file = await call(`${nodes[0]!.url}/_cluster/file?repo=1&name=x`, { headers: { 'X-Sourcebot-Api-Key': key } });
    assert.equal(file.status, 401);
  });

  test('the daily limit is exact across nodes; a revoked key fails on every node at the next request', async (t) => {
    if (skip) return t.skip(skip);
    const out: string[] = [];
    const io = { out: (l: string) => out.push(l), err: () => {}, now: () => new Date() };
    assert.equal(await usersCommand(['add', '--email', 'busy@example.com', '--name', 'Busy', '--config', configPath], io), 0);
    assert.equal(await usersCommand(['limit', 'busy@example.com', '10', '--config', configPath], io), 0);
    assert.equal(await keysCommand(['create', '--user', 'busy@example.com', '--config', configPath], io), 0);
    const key = out.at(-1)!;
    // 16 at once, spread over the three nodes.
    const replies = await Promise.all(
      Array.from({ length: 16 }, (_, k) =>
        call(`${nodes[k % 3]!.url}/api/search`, { method: 'POST', headers: { 'X-Sourcebot-Api-Key': key }, json: { query: WORDS[k]!, matches: 5 } }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 10, statuses.join(' '));
    assert.equal(statuses.filter((s) => s === 429).length, 6, statuses.join(' '));
    // Revoked through the shared store: the next request on each node is refused.
    const listed: string[] = [];
    assert.equal(await keysCommand(['list', '--user', 'busy@example.com', '--json', '--config', configPath], { ...io, out: (l) => listed.push(l) }), 0);
    const [{ id }] = JSON.parse(listed[0]!) as Array<{ id: string }>;
    assert.equal(await usersCommand(['limit', 'busy@example.com', 'default', '--config', configPath], io), 0);
    const again = await call(`${nodes[1]!.url}/api/search`, {
      method: 'POST',
      headers: { 'X-Sourcebot-Api-Key': key },
      json: { query: WORDS[1]!, matches: 5 },
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(await keysCommand(['revoke', id!, '--config', configPath], io), 0);
    for (const n of nodes)
      assert.equal(
        (await call(`${n.url}/api/search`, { method: 'POST', headers: { 'X-Sourcebot-Api-Key': key }, json: { query: WORDS[1]!, matches: 5 } })).status,
        401,
      );
  });

  test('a file shaped again on another holder when the node that answered its shard cannot (it dropped or lost it since)', async (t) => {
    if (skip) return t.skip(skip);
    // Node a's first request to shape a file again fails for every other file, as when the
    // node that answered the shard dropped its copy between its reply and the request: the
    // file is then shaped by another holder (a second request, or node a itself).
    // (Only node a coordinates here: the other nodes' links are not asked to shape files.)
    const original = PeerLink.prototype.reshape;
    let refused = 0;
    let asked = 0;
    // (By file: the files of one search are asked for at once.)
    const seen = new Set<string>();
    PeerLink.prototype.reshape = function (this: PeerLink, ...args: Parameters<PeerLink['reshape']>) {
      const [unit, , f, budget] = args;
      const key = `${unit.repoId}/${unit.file}/${f.path}/${budget}`;
      const first = !seen.has(key);
      seen.add(key);
      if (first && asked++ % 2 === 0) {
        refused++;
        return Promise.reject(new Error(NOT_HELD));
      }
      return original.apply(this, args);
    };
    let n = 0;
    try {
      // Until a few were refused: a file is asked of a node only when a search's last file
      // is cut where its node did not cut it, inside a chunk that names definitions (else
      // it is cut here: search/file-json-cut.ts), which context lines make likelier.
      for (const [k, q] of queries(13, 400).entries()) {
        if (refused >= 3) break;
        const req = { ...q, matches: 5 + ((k * 7) % 60), contextLines: 3 + (k % 8) };
        const want = await call(`${reference.url}/api/search`, { method: 'POST', json: req });
        const got = await call(`${nodes[0]!.url}/api/search`, { method: 'POST', json: req });
        n++;
        assert.equal(got.status, want.status, `${JSON.stringify(req)}: ${got.text.slice(0, 300)}`);
        if (want.status === 200) assert.deepEqual(comparable(got.json), comparable(want.json), JSON.stringify(req));
      }
    } finally {
      PeerLink.prototype.reshape = original;
    }
    t.diagnostic(`${n} searches: ${asked} requests to shape a file again, ${refused} of them refused and shaped elsewhere`);
    assert.ok(refused >= 3, 'files of remote shards were shaped again elsewhere');
  });

  test('a node that stops without leaving: searches stay complete, its shards regain two replicas', async (t) => {
    if (skip) return t.skip(skip);
    const victim = nodes[2]!;
    // A crash as the others see it: no leave, no more heartbeats, no answers.
    await victim.cluster!.close(false);
    await victim.close();
    const q = { query: WORDS[3]!, matches: 100 };
    const want = comparable((await call(`${reference.url}/api/search`, { method: 'POST', json: q })).json);
    for (const n of nodes.slice(0, 2)) assert.deepEqual(comparable((await call(`${n.url}/api/search`, { method: 'POST', json: q })).json), want);
    await until(
      'every shard on two live nodes again',
      async () => {
        const s = await nodes[0]!.cluster!.status();
        return s.nodes.filter((n) => n.live).length === 2 && s.summary.ok === s.summary.shards;
      },
      20_000,
    );
    for (const n of nodes.slice(0, 2)) assert.deepEqual(comparable((await call(`${n.url}/api/search`, { method: 'POST', json: q })).json), want);
  });
});
