// The configurations the cluster phase measures (phase-cluster.ts), each started from
// nothing and stopped afterwards, each indexing the same git repository through trawl's own
// sync:
//   plain     `trawl sync` of a configuration naming the repository into an empty data dir,
//             an owner's API key made in it (for GET /readyz's counts), then one `trawl
//             serve` over it with the same settings and no connections (no sync pass runs
//             while it is measured): the baseline, a daemon without a cluster section;
//   cluster   a private PostgreSQL and Redis (runtime/private-*.ts), an owner's API key made
//             with `trawl users add` / `trawl keys create --config` (for GET /api/cluster
//             and GET /readyz's counts),
//             and N `trawl serve --node-id` processes on the configuration with a cluster
//             section: the leader lists the connection and queues the build, a node builds
//             and publishes, the others copy the shards placed on them. Ready when every
//             node agrees that every shard is where the placement puts it (cluster-ready.ts).
// Every server runs `--workers W` and anonymous access; nothing differs between node counts
// but the count and the replication factor (cluster-figures.ts replicationFor).

import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readAllManifests, shardFiles } from '../../daemon/index/manifest.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../../daemon/runtime/private-postgres.ts';
import { startPrivateRedis, type PrivateRedis } from '../../daemon/runtime/private-redis.ts';
import { clusterGap, type ClusterStatusView, type ReadyView } from './cluster-ready.ts';
import { liveIndex } from './live-index.ts';
import { childEnv, startServer, stopServer, track, waitHealthy, type Server } from './load.ts';
import { processTicks } from './machine.ts';
import type { Accounted } from './mix-load.ts';
import { treeTicks } from './proc-tree.ts';

export interface SetupOptions {
  root: string;
  /** Where this configuration's files go (a directory of its own is made in it). */
  work: string;
  /** The bare git repository every configuration syncs. */
  gitDir: string;
  symbols: boolean;
  /** Search threads per server. */
  workers: number;
  /** How long a cluster may take to be ready (build and copies included). */
  readyTimeoutMs: number;
}

/** A configuration, started and ready. */
export interface Configuration {
  kind: 'plain' | 'cluster';
  replicationFactor: number | null;
  servers: Server[];
  ids: string[];
  dataDirs: string[];
  /** The servers (role node), PostgreSQL and Redis (role support). */
  accounted: Accounted[];
  readySeconds: number;
  shards: number;
  indexBytes: number;
  /** Shards each node holds, in server order. */
  shardsPerNode: number[];
  /** Why it is not (still) in the state it was measured in, or null (a cluster's nodes are asked again). */
  gap(): Promise<string | null>;
  stop(): Promise<void>;
}

/** The same for every configuration: anonymous searches (never counted against a limit), symbols as the run asks. */
const settings = (symbols: boolean) => ({ anonymousAccess: true, symbols });
const connections = (gitDir: string) => ({ corpus: { type: 'git', url: gitDir } });
const OWNER = 'owner@bench.invalid';

function trawl(root: string, args: string[], cwd: string): string {
  const r = spawnSync(process.execPath, [join(root, 'bin', 'trawl.js'), ...args], { cwd, env: childEnv(), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`trawl ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr.trim().slice(-2000)}`);
  return r.stdout.trim();
}

/** An owner added to the store `where` names (`--config` or `--data-dir`), and the header carrying a new key of theirs. */
function ownerKey(root: string, where: string[], cwd: string): Record<string, string> {
  trawl(root, ['users', 'add', '--email', OWNER, '--role', 'owner', ...where], cwd);
  return {
    'X-Sourcebot-Api-Key': trawl(root, ['keys', 'create', '--user', OWNER, '--name', 'bench', ...where], cwd)
      .split('\n')
      .at(-1)!,
  };
}

/** Bytes of every file under `dir`. */
function treeBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    try {
      total += statSync(join(e.parentPath, e.name)).size;
    } catch {
      // removed meanwhile (a retired file collected)
    }
  }
  return total;
}

/**
 * Bytes of the published index: each shard's files (shard, symbols, membership) as some
 * node holds them. No node need hold all of it (the builder drops what is not placed on
 * it), and a file name means one content in the whole cluster (cluster/published.ts).
 */
function publishedBytes(dataDirs: string[], shards: Array<{ repoId: number; file: string }>): number {
  const held = dataDirs.map((d) => ({ dir: d, manifests: readAllManifests(d) }));
  let total = 0;
  for (const want of shards) {
    for (const { dir, manifests } of held) {
      const s = manifests.find((m) => m.repoId === want.repoId)?.shards.find((x) => x.file === want.file);
      if (!s) continue;
      const f = shardFiles(dir, want.repoId, s);
      for (const path of [f.path, ...(f.symbols ? [f.symbols] : []), ...(f.membership ? [f.membership] : [])]) total += statSync(path).size;
      break;
    }
  }
  return total;
}

/** Shards the data dir's manifests name. */
const shardCount = (dataDir: string) => readAllManifests(dataDir).reduce((n, m) => n + m.shards.length, 0);

export function nodeFigures(dataDir: string): { indexBytes: number; dataDirBytes: number } {
  return { indexBytes: liveIndex(dataDir).indexBytes, dataDirBytes: treeBytes(dataDir) };
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, { headers });
  const text = await r.text();
  try {
    return { status: r.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: r.status, body: { reason: text.slice(0, 200) } };
  }
}

/** GET /readyz with an owner's key: its repository counts are for owners only (http/readiness.ts). */
async function readyOf(server: Server, headers: Record<string, string>): Promise<ReadyView> {
  const r = await getJson(`${server.url}/readyz`, headers);
  return { status: r.status, body: r.body as ReadyView['body'] };
}

export async function startPlain(o: SetupOptions, log: (s: string) => void): Promise<Configuration> {
  const dir = join(o.work, 'plain');
  mkdirSync(dir, { recursive: true });
  const syncConfig = join(dir, 'sync.json');
  const serveConfig = join(dir, 'serve.json');
  writeFileSync(syncConfig, `${JSON.stringify({ settings: settings(o.symbols), connections: connections(o.gitDir) }, null, 2)}\n`);
  writeFileSync(serveConfig, `${JSON.stringify({ settings: settings(o.symbols) }, null, 2)}\n`);
  const dataDir = join(dir, 'data');
  const started = performance.now();
  trawl(o.root, ['sync', '--config', syncConfig, '--data-dir', dataDir], dir);
  const readySeconds = (performance.now() - started) / 1000;
  const headers = ownerKey(o.root, ['--data-dir', dataDir], dir);
  const server = await startServer(
    'plain',
    [
      join(o.root, 'bin', 'trawl.js'),
      'serve',
      '--config',
      serveConfig,
      '--data-dir',
      dataDir,
      '--port',
      '0',
      '--workers',
      String(o.workers),
      '--log-level',
      'silent',
    ],
    dir,
  );
  try {
    await waitHealthy(server.url);
    const gap = async () => {
      const r = await readyOf(server, headers);
      const repos = r.body.repositories;
      if (r.status !== 200 || !repos || repos.total === 0 || repos.searchable !== repos.total || repos.symbolsPending > 0)
        return `not ready: ${JSON.stringify(r.body)}`;
      return null;
    };
    const why = await gap();
    if (why !== null) throw new Error(`the plain daemon over the synced data dir is ${why}`);
    const shards = shardCount(dataDir);
    log(`cluster plain daemon: trawl sync ${readySeconds.toFixed(1)} s, ${shards} shards; trawl serve at ${server.url} (pid ${server.child.pid})`);
    return {
      kind: 'plain',
      replicationFactor: null,
      servers: [server],
      ids: ['plain'],
      dataDirs: [dataDir],
      accounted: [{ name: 'plain', role: 'node', ticks: () => processTicks(server.child.pid) }],
      readySeconds,
      shards,
      indexBytes: liveIndex(dataDir).indexBytes,
      shardsPerNode: [shards],
      gap,
      stop: () => stopServer(server),
    };
  } catch (err) {
    await stopServer(server);
    throw err;
  }
}

export async function startCluster(o: SetupOptions & { nodes: number; replicationFactor: number }, log: (s: string) => void): Promise<Configuration> {
  // A directory of its own per shape: two clusters of as many nodes must not share data dirs (each syncs from nothing).
  const dir = join(o.work, `cluster-${o.nodes}-r${o.replicationFactor}`);
  mkdirSync(dir, { recursive: true });
  let postgres: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  const servers: Server[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => stopServer(s)));
    await redis?.stop();
    await postgres?.stop();
  };
  try {
    postgres = await startPrivatePostgres();
    track(postgres.child);
    redis = await startPrivateRedis();
    track(redis.child);
    const config = join(dir, 'trawl.json');
    const cluster = { store: postgres.url, redis: redis.url, replicationFactor: o.replicationFactor, name: 'bench' };
    writeFileSync(config, `${JSON.stringify({ settings: settings(o.symbols), connections: connections(o.gitDir), cluster }, null, 2)}\n`);
    const headers = ownerKey(o.root, ['--config', config], dir);
    const ids = Array.from({ length: o.nodes }, (_, i) => `n${i + 1}`);
    const dataDirs = ids.map((id) => join(dir, id));
    const started = performance.now();
    for (const [i, id] of ids.entries()) {
      servers.push(
        await startServer(
          id,
          [
            join(o.root, 'bin', 'trawl.js'),
            'serve',
            '--config',
            config,
            '--data-dir',
            dataDirs[i]!,
            '--port',
            '0',
            '--node-id',
            id,
            '--workers',
            String(o.workers),
            '--log-level',
            'silent',
          ],
          dir,
        ),
      );
    }
    for (const s of servers) await waitHealthy(s.url);
    const states = async () => {
      for (const s of servers)
        if (s.child.exitCode !== null || s.child.signalCode !== null)
          throw new Error(`node ${s.name} exited (${s.child.exitCode ?? s.child.signalCode}); stderr:\n${s.stderr()}`);
      return Promise.all(
        servers.map(async (s) => {
          const c = await getJson(`${s.url}/api/cluster`, headers);
          if (c.status !== 200) throw new Error(`GET ${s.url}/api/cluster answered ${c.status}: ${JSON.stringify(c.body).slice(0, 300)}`);
          return { cluster: c.body as ClusterStatusView, ready: await readyOf(s, headers) };
        }),
      );
    };
    const gap = async () => clusterGap(await states(), o.nodes);
    // Ready twice in a row, two heartbeats apart (the default cluster.heartbeatMs: 1 s):
    // a node reads the others' holdings a heartbeat after they change.
    let readyAt: number | undefined;
    let said = 0;
    for (;;) {
      const why = await gap();
      const now = performance.now();
      if (why === null) {
        readyAt ??= now;
        if (now - readyAt >= 2000) break;
      } else {
        readyAt = undefined;
        if (now - started > o.readyTimeoutMs)
          throw new Error(`the ${o.nodes}-node cluster was not ready within ${Math.round(o.readyTimeoutMs / 1000)} s: ${why}`);
        if (now - said > 15_000) {
          said = now;
          log(`cluster ${o.nodes} node(s): waiting (${((now - started) / 1000).toFixed(0)} s): ${why}`);
        }
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const readySeconds = (readyAt! - started) / 1000;
    const status = (await states())[0]!.cluster;
    const shardsPerNode = ids.map((id) => status.nodes.find((n) => n.id === id)?.shards ?? 0);
    const builders = new Set(status.repositories.map((p) => p.builtBy));
    const shards = status.repositories.reduce((n, p) => n + p.shards.length, 0);
    const indexBytes = publishedBytes(
      dataDirs,
      status.repositories.flatMap((p) => p.shards.map((x) => ({ repoId: p.repositoryId, file: x.shard }))),
    );
    log(
      `cluster ${o.nodes} node(s), replication ${o.replicationFactor}: ready after ${readySeconds.toFixed(1)} s; ${shards} shards built by ${[...builders].join(', ')}; held per node ${shardsPerNode.join(' / ')}`,
    );
    const pg = postgres;
    const rd = redis;
    return {
      kind: 'cluster',
      replicationFactor: o.replicationFactor,
      servers,
      ids,
      dataDirs,
      accounted: [
        ...servers.map((s): Accounted => ({ name: s.name, role: 'node', ticks: () => processTicks(s.child.pid) })),
        { name: 'postgres', role: 'support', ticks: () => treeTicks(pg.child.pid) },
        { name: 'redis', role: 'support', ticks: () => processTicks(rd.child.pid) },
      ],
      readySeconds,
      shards,
      indexBytes,
      shardsPerNode,
      gap,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
