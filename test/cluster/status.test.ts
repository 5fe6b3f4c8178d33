// `trawl cluster status` and the cluster's figures in /metrics, against a real cluster:
// three nodes (replication 2) in this process on a private Redis and PostgreSQL. While
// every shard has its two copies the command exits 0 and says what GET /api/cluster says;
// each node's /metrics shows the nodes, the shards' health, what it holds and what it
// copied; a search counts the shards asked of other nodes. Then a node stops without
// leaving: a search right away counts the failed shard requests asked again of the other
// holder, and once the node is dead the command exits 1 and names the under-replicated
// shards (the survivors' replicators are stopped first, so that their copies are not made
// again before anyone looks).

import { cover } from '../../daemon/cluster/nodes-to-ask.ts';
import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { clusterCommand } from '../../daemon/cli/cluster-command.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { type ClusterStatus, settled } from '../../daemon/cluster/status.ts';
import { loadConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { openPgStore } from '../../daemon/store/pg-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { generateCorpus, tempDir, WORDS } from '../helpers/corpus.ts';
import { call } from '../helpers/daemon.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { startClusterBackends } from '../helpers/cluster.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';

const dir = tempDir('cluster-status');
const IDS = ['a', 'b', 'c'];
/**
 * Long enough that the search right after a node stops runs, on a loaded machine, while the
 * others still count it live (its closing and the search take seconds there).
 */
const NODE_TIMEOUT_MS = 6000;
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let shared: Store | undefined;
let skip: string | undefined;
let configPath = '';
const nodes: Daemon[] = [];
/** An owner's key, for GET /api/cluster. */
let ownerKey = '';

/** Runs `trawl cluster status` in this process: its exit status and its lines. */
async function status(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const lines: string[] = [];
  const code = await clusterCommand(['status', '--config', configPath, ...args], {
    out: (l) => lines.push(l),
    err: (l) => lines.push(l),
    now: () => new Date(),
  });
  return { code, lines };
}

/** Samples of /metrics by series (name with its labels, as exposed). */
async function scrape(d: Daemon): Promise<Map<string, number>> {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.startsWith('trawl_cluster_')) out.set(line.slice(0, line.lastIndexOf(' ')), Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}

/** What `id` holds of repositories another node built: each was copied to it. */
function copiedTo(s: ClusterStatus, id: string): Array<{ repositoryId: number; shard: string }> {
  return s.repositories
    .filter((r) => r.builtBy !== id)
    .flatMap((r) => r.shards.filter((x) => x.holders.includes(id)).map((x) => ({ repositoryId: r.repositoryId, shard: x.shard })));
}

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  const storeUrl = await postgres.newDatabase();
  shared = openPgStore(storeUrl);
  configPath = join(dir.path, 'cluster.json');
  const settings = { anonymousAccess: true };
  writeFileSync(
    configPath,
    JSON.stringify({
      settings,
      cluster: { store: storeUrl, redis: redis.url, replicationFactor: 2, name: `s${process.pid}`, heartbeatMs: 250, nodeTimeoutMs: NODE_TIMEOUT_MS },
    }),
  );
  const config = loadConfig(configPath);
  for (const id of IDS)
    nodes.push(
      await startDaemon({ config, dataDir: join(dir.path, id), host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false, nodeId: id }),
    );
  // Three repositories of several shards each, each built on one node and published from there.
  const publishing: Array<Promise<void>> = [];
  for (const [i, id] of IDS.entries()) {
    const root = join(dir.path, 'repos', `r${i}`);
    generateCorpus(root, 40 + i, 60);
    TestRepo.init(root).commit({}, 'import');
    const n = nodes[i]!;
    await indexLocal(root, {
      dataDir: join(dir.path, id),
      store: shared,
      symbols: false,
      shardTargetBytes: 8 * 1024,
      onCommit: (m) => void publishing.push(n.cluster!.onCommit(m)),
    });
  }
  await Promise.all(publishing);
  // Settled: every shard held by exactly its placement's owners (a builder drops what is not
  // placed on it once the owners hold it), as every node sees it.
  await until(
    'every shard on its two owners, as every node sees it',
    async () => {
      for (const n of nodes) {
        const s = await n.cluster!.status();
        if (s.summary.shards < 6 || s.summary.ok !== s.summary.shards) return false;
        if (!settled(s)) return false;
      }
      return true;
    },
    20_000,
  );
  ownerKey = await newUserKey('ops@example.com', ['--config', configPath], 'owner');
});

after(async () => {
  for (const d of nodes.reverse()) await d.close().catch(() => {});
  await shared?.close().catch(() => {});
  await redis?.stop();
  await postgres?.stop();
  dir.cleanup();
});

describe('trawl cluster status and the cluster in /metrics (three nodes, replication 2)', () => {
  test('every shard ok: exit 0, the nodes table and the summary; --json is what GET /api/cluster answers', async (t) => {
    if (skip) return t.skip(skip);
    const api = (await call(`${nodes[0]!.url}/api/cluster`, { headers: { Authorization: `Bearer ${ownerKey}` } })).json as ClusterStatus;
    const { code, lines } = await status();
    assert.equal(code, 0, lines.join('\n'));
    assert.equal(lines[0], `cluster "s${process.pid}": 3 nodes, 3 live; replication factor 2`);
    assert.match(lines[1]!, /^NODE +URL +STATE +LIVE +HEARTBEAT +SHARDS +REPOSITORIES$/);
    for (const [k, n] of api.nodes.entries()) {
      const cells = lines[2 + k]!.split(/ {2,}/);
      assert.deepEqual([cells[0], cells[1], cells[2], cells[3], cells[5], cells[6]], [n.id, n.url, 'serving', 'yes', String(n.shards), String(n.repositories)]);
      // Heartbeats every 250 ms: seconds old at most, by Redis's clock.
      assert.match(cells[4]!, /^\d\.\ds ago$/);
    }
    const { shards } = api.summary;
    assert.equal(lines[5], `shards: ${shards} published, ${shards} ok, 0 under-replicated, 0 unavailable`);
    assert.equal(lines.length, 6, 'no shard is listed');

    const json = await status('--json');
    assert.equal(json.code, 0);
    const cli = JSON.parse(json.lines.join('\n')) as Omit<ClusterStatus, 'self'>;
    const { self: _self, ...answered } = api;
    const heartbeats = (s: Omit<ClusterStatus, 'self'>) => ({ ...s, nodes: s.nodes.map((n) => ({ ...n, lastHeartbeat: '' })) });
    assert.deepEqual(heartbeats(cli), heartbeats(answered));
  });

  test('/metrics: the nodes, the shards by health, what each node holds and copied; a search counts the shards asked of others', async (t) => {
    if (skip) return t.skip(skip);
    const s = await nodes[0]!.cluster!.status();
    let copiedEverywhere = 0;
    for (const [k, id] of IDS.entries()) {
      const m = await scrape(nodes[k]!);
      assert.equal(m.get('trawl_cluster_nodes{state="serving"}'), 3, id);
      assert.equal(m.get('trawl_cluster_nodes{state="leaving"}'), 0, id);
      assert.equal(m.get('trawl_cluster_nodes{state="dead"}'), 0, id);
      assert.equal(m.get('trawl_cluster_shards{health="ok"}'), s.summary.shards, id);
      assert.equal(m.get('trawl_cluster_shards{health="under-replicated"}'), 0, id);
      assert.equal(m.get('trawl_cluster_shards{health="unavailable"}'), 0, id);
      assert.equal(m.get('trawl_cluster_shards_held'), s.nodes.find((n) => n.id === id)!.shards, id);
      // Every shard it holds of another node's build was copied here, at least once (a shard
      // placed elsewhere since may have been copied and dropped); their files' bytes with it.
      const copied = copiedTo(s, id);
      const bytes = copied.reduce((sum, c) => sum + statSync(join(shardsDir(join(dir.path, id), c.repositoryId), c.shard)).size, 0);
      assert.ok(
        m.get('trawl_cluster_copied_shards_total')! >= copied.length,
        `${id}: ${m.get('trawl_cluster_copied_shards_total')} copied, holds ${copied.length}`,
      );
      assert.ok(m.get('trawl_cluster_copied_bytes_total')! >= bytes, `${id}: ${m.get('trawl_cluster_copied_bytes_total')} bytes copied, holds ${bytes}`);
      assert.equal(m.get('trawl_cluster_copy_failures_total'), 0, id);
      copiedEverywhere += m.get('trawl_cluster_copied_shards_total')!;
    }
    assert.ok(copiedEverywhere > 0);

    // Node a asks every shard it does not hold of another node, as few nodes as cover them (cluster/nodes-to-ask.ts): one part per node.
    const units = nodes[0]!.cluster!.view.units();
    const notHere = units.filter((u) => !u.holders.includes('a'));
    const asked = [
      ...cover(
        units.map((u) => u.holders),
        'a',
      ).keys(),
    ].filter((n) => n !== 'a');
    assert.ok(notHere.length > 0, 'some shards are not on node a');
    const was = await scrape(nodes[0]!);
    const res = await call(`${nodes[0]!.url}/api/search`, { method: 'POST', json: { query: WORDS[2]!, matches: 100_000 } });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json as { isSearchExhaustive: boolean }).isSearchExhaustive, true);
    const now = await scrape(nodes[0]!);
    const delta = (name: string) => now.get(name)! - was.get(name)!;
    t.diagnostic(`${s.summary.shards} shards; node a holds ${s.nodes[0]!.shards} and asked ${notHere.length} of others`);
    // This search never reaches its cut: the shards node a searched speculatively (fan-out.ts)
    // it asked again, whole, and only those.
    const again = delta('trawl_cluster_shards_asked_again_total');
    assert.ok(again <= delta('trawl_cluster_speculative_shards_total'));
    assert.ok(delta('trawl_cluster_remote_shards_total') >= notHere.length);
    assert.ok(delta('trawl_cluster_remote_shards_total') <= notHere.length + again);
    if (again === 0) assert.equal(delta('trawl_cluster_remote_requests_total'), asked.length);
    else assert.ok(delta('trawl_cluster_remote_requests_total') >= asked.length);
    assert.equal(delta('trawl_cluster_shard_failures_total'), 0);
    assert.equal(delta('trawl_cluster_shard_retries_total'), 0);
    assert.equal(delta('trawl_cluster_unavailable_shards_total'), 0);

    // A search nothing matches: every shard it bet on comes back searched whole (no
    // candidate), so none is asked again, however early the merge waits for its reply.
    for (let k = 0; k < 5; k++) {
      const before = await scrape(nodes[0]!);
      const none = await call(`${nodes[0]!.url}/api/search`, { method: 'POST', json: { query: `${WORDS[2]!}_nowhere_${k}`, matches: 10 } });
      assert.equal(none.status, 200, none.text);
      assert.equal((none.json as { files: unknown[] }).files.length, 0);
      const after = await scrape(nodes[0]!);
      assert.equal(after.get('trawl_cluster_shards_asked_again_total')! - before.get('trawl_cluster_shards_asked_again_total')!, 0);
      assert.equal(after.get('trawl_cluster_remote_requests_total')! - before.get('trawl_cluster_remote_requests_total')!, asked.length);
    }
  });

  test('a node stops without leaving: failed shard requests go to the other holder; once it is dead, exit 1 and the under-replicated shards', async (t) => {
    if (skip) return t.skip(skip);
    const [a] = nodes;
    // The victim: a node that node a asks for shards it does not hold.
    const victimId = [
      ...cover(
        a!.cluster!.view.units().map((u) => u.holders),
        'a',
      ).keys(),
    ].find((n) => n !== 'a')!;
    const victim = nodes[IDS.indexOf(victimId)]!;
    const survivor = nodes.find((n) => n !== a && n !== victim)!;
    // Without their replicators the survivors keep the copies they have: the shards the
    // victim held stay under-replicated until the test has looked.
    await a!.cluster!.replicator.stop();
    await survivor.cluster!.replicator.stop();
    const was = await scrape(a!);
    const stoppedAt = Date.now();
    // A crash as the others see it: no leave, no more heartbeats, no answers.
    await victim.cluster!.close(false);
    await victim.close();
    const res = await call(`${a!.url}/api/search`, { method: 'POST', json: { query: WORDS[2]!, matches: 100_000 } });
    assert.ok(Date.now() - stoppedAt < NODE_TIMEOUT_MS, `the search ran while the victim still counted as live (nodeTimeoutMs ${NODE_TIMEOUT_MS})`);
    assert.equal(res.status, 200, res.text);
    const body = res.json as { isSearchExhaustive: boolean; unavailableShards?: unknown };
    assert.equal(body.isSearchExhaustive, true);
    assert.equal(body.unavailableShards, undefined);
    const now = await scrape(a!);
    const delta = (name: string) => now.get(name)! - was.get(name)!;
    t.diagnostic(
      `node ${victimId} stopped: ${delta('trawl_cluster_shard_failures_total')} shard requests failed and went to node ${survivor.cluster!.membership.id}`,
    );
    assert.ok(delta('trawl_cluster_shard_failures_total') > 0, 'the victim failed its shards');
    assert.equal(delta('trawl_cluster_shard_retries_total'), delta('trawl_cluster_shard_failures_total'), 'each asked again of its other holder');
    assert.equal(delta('trawl_cluster_unavailable_shards_total'), 0);

    // Dead after nodeTimeoutMs: the command says so, exits 1 and lists each shard left with one copy.
    let degraded = { code: 0, lines: [] as string[] };
    await until('trawl cluster status exits 1', async () => (degraded = await status()).code === 1, 20_000);
    const json = JSON.parse((await status('--json')).lines.join('\n')) as Omit<ClusterStatus, 'self'>;
    const under = json.repositories.flatMap((r) => r.shards.filter((x) => x.health === 'under-replicated').map((x) => ({ repo: r.repository, ...x })));
    assert.ok(under.length > 0);
    t.diagnostic(`${under.length} of ${json.summary.shards} shards under-replicated`);
    assert.equal(json.summary.underReplicated, under.length);
    assert.equal(json.summary.unavailable, 0);
    for (const x of under) assert.ok(x.holders.length === 1 && x.holders[0] !== victimId, `${x.shard}: one live holder, not the dead node (${x.holders})`);
    const { lines } = degraded;
    assert.equal(lines[0], `cluster "s${process.pid}": 3 nodes, 2 live; replication factor 2`);
    const row = lines.find((l) => l.startsWith(`${victimId} `))!.split(/ {2,}/);
    assert.deepEqual([row[2], row[3], row[5], row[6]], ['dead', 'no', '0', '0']);
    assert.match(row[4]!, /^\d+\.\ds ago$/);
    assert.ok(
      lines.includes(`shards: ${json.summary.shards} published, ${json.summary.ok} ok, ${under.length} under-replicated, 0 unavailable`),
      lines.join('\n'),
    );
    const listed = lines.filter((l) => l.startsWith('under-replicated: '));
    assert.equal(listed.length, Math.min(under.length, 20) + (under.length > 20 ? 1 : 0));
    const first = under[0]!;
    assert.equal(listed[0], `under-replicated: ${first.repo} ${first.shard}: held by ${first.holders.join(', ')}; placed on ${first.owners.join(', ')}`);

    // The same through the command line's own exit status.
    const run = await runTrawl(['cluster', 'status', '--config', configPath], dir.path);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, '');
    assert.match(run.stdout, /\n[^\n]*dead {2,}no {2,}/);

    // And in node a's /metrics, as its view has it (read again every heartbeat by its
    // replicator's rounds; that replicator is stopped, so read again here).
    await until(
      "node a's gauges show the dead node and the under-replicated shards",
      async () => {
        await a!.cluster!.view.refresh();
        const m = await scrape(a!);
        return (
          m.get('trawl_cluster_nodes{state="dead"}') === 1 &&
          m.get('trawl_cluster_nodes{state="serving"}') === 2 &&
          m.get('trawl_cluster_shards{health="under-replicated"}') === under.length &&
          m.get('trawl_cluster_shards{health="ok"}') === json.summary.ok
        );
      },
      10_000,
    );
  });
});
