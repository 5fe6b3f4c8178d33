// The cluster phase (`--cluster`): does a cluster scale, and what does
// its fan-out cost a request? The corpus becomes one git repository (phase-reindex.ts
// makeRepository), and each configuration syncs it from nothing (cluster-setup.ts): first a
// single daemon without a cluster section (the baseline), then each cluster of
// `--cluster-nodes` (cluster-figures.ts DEFAULT_CLUSTERS: 1 node; 2 and 4 at replication 2;
// 2 at replication 1, where every search asks the other node; 4 at replication 4, the
// control of the four at 2: same processes, no search asking another node). On each, with
// nothing else running:
//   0. the load below for WARM_SECONDS, untimed: every process past its start-up;
//   1. the query mix, one client, the nodes taking turns (mix-latency.ts), each request
//      paired with one to the plain daemon, which stays up for that (the order alternating):
//      each query's p50 and the same minus the daemon's over the paired requests: the
//      fan-out's overhead, measured in one window (the machine's speed drifts between
//      configurations measured minutes apart); every node's answer is checked against the
//      baseline's (a cluster must answer what one daemon answers); and meanwhile the nodes'
//      threads' CPU and their time waiting for a core per request (sched-stat.ts): with more
//      busy threads than cores, latency is partly queueing;
//   2. RSS of each node, idle;
//   3. the same load on every configuration (mix-load.ts): `connections` connections dealt
//      round-robin over the nodes, each looping over the mix, for `seconds` after a short
//      warm-up run: requests per second, every response's latency, and CPU per request =
//      the nodes' CPU time (every thread) over the requests completed; PostgreSQL's and
//      Redis's apart; errors and non-2xx (must be 0);
//   4. the cluster asked again whether it is still as measured (no node died, nothing moved).
// On a machine with fewer cores than nodes the nodes share the cores, so throughput cannot
// grow with nodes there: CPU per request is then the figure that says what the protocol
// costs, and requests per second per core follow from it (docs/deployment.md, "Sizing").

import { join } from 'node:path';
import { startCluster, startPlain, nodeFigures, type Configuration } from './cluster-setup.ts';
import { clusterName, clusterQueries, cpuPerRequest, medianP50, mismatches, overheadBaseline, overheads, sameNodesOverheads } from './cluster-figures.ts';
import { requestFor } from './latency.ts';
import { load, type LoadRequest, type Mark } from './load.ts';
import { cpuMark } from './machine.ts';
import { sampleRss, sampleRssFor, type RssSample } from './memory.ts';
import { processSchedTimes, schedPerRequest } from './sched-stat.ts';
import { mixLatency, type QueryLatency } from './mix-latency.ts';
import { mixLoad } from './mix-load.ts';
import { median, summarize } from './percentiles.ts';
import { makeRepository } from './phase-reindex.ts';
import type { BenchQuery } from './queries.ts';
import type { ClusterConfiguration, ClusterNodeFigures, ClusterPhase, ClusterShape, Warmup } from './result.ts';
import { freshCheck } from './trawl-process.ts';

export interface ClusterPhaseOptions {
  root: string;
  corpus: string;
  work: string;
  clusters: ClusterShape[];
  /** One client: timed requests per query and the warm-up before them. */
  iterations: number;
  warmup: Warmup;
  /** The load run. */
  seconds: number;
  connections: number;
  symbols: boolean;
  /** How long each node's idle RSS is sampled. */
  idleMs: number;
}

/** Search threads per server: one, so that a node is one core's worth of search whatever the machine. */
export const WORKERS_PER_NODE = 1;
/** A cluster's build, publication and copies must end within this: far above what Linux takes. */
const READY_TIMEOUT_MS = 30 * 60_000;
const WARMUP_LOAD_SECONDS = 1;
/**
 * The load, untimed, on every configuration before its one-client mix. V8 compiles a path
 * once it has run often, and sizes its heap from what it has seen: a node of four takes a
 * quarter of the requests a single daemon takes, so the mix's warm-up alone left a
 * cluster's nodes colder than the daemon for most of the mix (on Linux, a no-hit search
 * through a node just started was markedly slower than after a few thousand requests). The same load
 * for the same time on every configuration, as a server runs once it has been up a while.
 */
export const WARM_SECONDS = 15;

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export async function clusterPhase(o: ClusterPhaseOptions, queries: BenchQuery[], log: (s: string) => void): Promise<{ phase: ClusterPhase; notes: string[] }> {
  const notes: string[] = [];
  const gitDir = join(o.work, 'cluster.git');
  const t0 = performance.now();
  makeRepository(o.corpus, gitDir, o.work);
  const repositorySeconds = Math.round((performance.now() - t0) / 100) / 10;
  log(`cluster the corpus as a git repository (${repositorySeconds.toFixed(1)} s)`);
  const fresh = await freshCheck(o.root);
  const mix: LoadRequest[] = queries.map((q) => ({ method: 'POST', path: '/api/search', body: JSON.stringify(requestFor(q)) }));
  let foreign: number | null = null;
  const seeForeign = (cores: number | null) => {
    if (cores !== null) foreign = Math.max(foreign ?? 0, cores);
  };

  const setup = { root: o.root, work: o.work, gitDir, symbols: o.symbols, workers: WORKERS_PER_NODE, readyTimeoutMs: READY_TIMEOUT_MS };
  const configurations: ClusterConfiguration[] = [];
  let baseline: QueryLatency[] | undefined;
  // The plain daemon stays up beside each cluster, idle but for the one client's requests
  // interleaved with the cluster's: the overheads are taken within one window.
  let plain: Configuration | undefined;
  try {
    for (const shape of [undefined, ...o.clusters]) {
      const label = shape === undefined ? 'plain' : clusterName(shape);
      if (!fresh())
        notes.push(
          `cluster: the compiled build was older than the sources when the ${shape === undefined ? 'plain daemon' : `cluster of ${label}`} started (edited during the run): its processes ran through tsx, so its figures are not a release's`,
        );
      const cfg = shape === undefined ? await startPlain(setup, log) : await startCluster({ ...setup, ...shape }, log);
      if (shape === undefined) plain = cfg;
      try {
        const measured = await measure(cfg, o, { queries, mix, label, baseline, reference: shape === undefined ? undefined : plain, seeForeign, log });
        configurations.push(measured.figures);
        notes.push(...measured.notes);
        baseline ??= measured.latency;
      } finally {
        if (cfg !== plain) await cfg.stop();
      }
    }
  } finally {
    await plain?.stop();
  }
  sameNodesOverheads(configurations).forEach((x, i) => {
    const c = configurations[i]!;
    c.sameNodesOverheadMs = x;
    if (x !== null)
      log(
        `cluster ${clusterName({ nodes: c.nodes, replicationFactor: c.replicationFactor! })}: overhead ${x.toFixed(3)} ms against ${c.nodes} nodes that each hold every shard`,
      );
  });
  return {
    phase: {
      nodeCounts: o.clusters.map((c) => c.nodes),
      repositorySeconds,
      workersPerNode: WORKERS_PER_NODE,
      iterations: o.iterations,
      warmup: o.warmup,
      warmSeconds: WARM_SECONDS,
      connections: o.connections,
      seconds: o.seconds,
      configurations,
      foreignCores: foreign,
    },
    notes,
  };
}

function markOf(cfg: Configuration, also?: Configuration): Mark {
  return { cpu: cpuMark(), servers: [...cfg.accounted, ...(also?.accounted ?? [])].map((a) => ({ name: a.name, ticks: a.ticks() })) };
}

/** What one configuration is measured on, and against what. */
interface Measurement {
  queries: BenchQuery[];
  /** The load's requests: the queries as search requests. */
  mix: LoadRequest[];
  label: string;
  /** The plain daemon's latencies, the overheads' and the answers' reference (undefined: none yet). */
  baseline: QueryLatency[] | undefined;
  /** The plain daemon, running: the one client's reference, its requests interleaved with this configuration's. */
  reference: Configuration | undefined;
  /** Told the other processes' cores of each window. */
  seeForeign: (cores: number | null) => void;
  log: (s: string) => void;
}

async function measure(
  cfg: Configuration,
  o: ClusterPhaseOptions,
  m: Measurement,
): Promise<{ figures: ClusterConfiguration; latency: QueryLatency[]; notes: string[] }> {
  const { queries, mix, label, baseline, reference, seeForeign, log } = m;
  const notes: string[] = [];
  await mixLoad({ targets: cfg.servers, mix, connections: o.connections, seconds: WARM_SECONDS, accounted: cfg.accounted, label: `${label} warming` });
  const before = markOf(cfg, reference);
  const schedOf = () => cfg.servers.map((s) => (s.child.pid === undefined ? null : processSchedTimes(s.child.pid)));
  const sched0 = schedOf();
  const mixed = await mixLatency(
    { targets: cfg.servers.map((s) => s.url), reference: reference?.servers[0]?.url, queries, iterations: o.iterations, warmup: o.warmup },
    log,
    label,
  );
  const latency = mixed.queries;
  const oneClient = schedPerRequest(sched0, schedOf(), mixed.requests);
  seeForeign(load(before, markOf(cfg, reference)).foreignCores);
  for (const q of latency) if (q.error) notes.push(`cluster ${label}: query ${q.name} failed: ${q.error}`);
  const against = overheadBaseline(latency, baseline);
  const over = against ? overheads(latency, against) : null;
  const wrong = baseline ? mismatches(latency, baseline, cfg.ids) : [];
  if (wrong.length > 0) notes.push(`cluster ${label}: ${wrong.length} answer(s) differ from the plain daemon's, e.g. ${wrong[0]}`);

  const idle = await Promise.all(cfg.servers.map((s) => sampleRssFor(s.child.pid, o.idleMs)));
  await mixLoad({ targets: cfg.servers, mix, connections: o.connections, seconds: WARMUP_LOAD_SECONDS, accounted: cfg.accounted, label: `${label} warm-up` });
  const samplers = cfg.servers.map((s) => sampleRss(s.child.pid));
  const run = await mixLoad({ targets: cfg.servers, mix, connections: o.connections, seconds: o.seconds, accounted: cfg.accounted, label });
  const loaded = samplers.map((s) => s.stop());
  seeForeign(run.load.foreignCores);
  if (run.non2xx + run.errors + run.timeouts > 0)
    notes.push(
      `cluster ${label}: the load run had ${run.non2xx} non-2xx responses, ${run.errors} errors, ${run.timeouts} timeouts${run.firstError ? ` (first error: ${run.firstError})` : ''}`,
    );
  const after = await cfg.gap();
  if (after !== null) notes.push(`cluster ${label}: after the load run the configuration was no longer as measured: ${after}`);

  const nodeCpu = cfg.accounted.filter((a) => a.role === 'node').map((a) => run.cpuMs[a.name] ?? null);
  const support = cfg.accounted.filter((a) => a.role === 'support').map((a) => run.cpuMs[a.name] ?? null);
  const samplesMs = Array.from(run.latenciesMs, round3);
  const perNode: ClusterNodeFigures[] = cfg.servers.map((s, i) => {
    const pick = (xs: RssSample[], k: keyof RssSample) => xs.map((x) => x[k]);
    const med = (xs: number[]) => (xs.length ? median(xs) : null);
    const peak = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
    return {
      id: cfg.ids[i]!,
      shards: cfg.shardsPerNode[i]!,
      ...nodeFigures(cfg.dataDirs[i]!),
      idleRssBytes: med(pick(idle[i]!, 'rss')),
      idleAnonBytes: med(pick(idle[i]!, 'anon')),
      idleFileBytes: med(pick(idle[i]!, 'file')),
      loadRssPeakBytes: peak(pick(loaded[i]!, 'rss')),
      loadAnonPeakBytes: peak(pick(loaded[i]!, 'anon')),
      loadCpuMs: run.cpuMs[s.name] ?? null,
      loadRequests: run.okPerTarget[i]!,
    };
  });
  const figures: ClusterConfiguration = {
    kind: cfg.kind,
    nodes: cfg.servers.length,
    replicationFactor: cfg.replicationFactor,
    readySeconds: Math.round(cfg.readySeconds * 10) / 10,
    shards: cfg.shards,
    indexBytes: cfg.indexBytes,
    perNode,
    queries: clusterQueries(latency, over?.perQuery ?? null),
    medianP50Ms: medianP50(latency),
    overheadMs: over?.medianMs ?? null,
    oneClient,
    load: {
      seconds: run.seconds,
      requests: run.requests,
      requestsPerSecond: Math.round((run.ok / run.seconds) * 10) / 10,
      perSecondSamples: run.perSecond,
      latencyMs: samplesMs.length > 0 ? summarize(samplesMs) : null,
      non2xx: run.non2xx,
      errors: run.errors,
      timeouts: run.timeouts,
      cpuMsPerRequest: cpuPerRequest(nodeCpu, run.requests),
      cpuMsPerRequestSamples: run.cpuMsPerRequestSamples,
      supportCpuMsPerRequest: support.length > 0 ? cpuPerRequest(support, run.requests) : null,
      loadGeneratorCores: run.load.benchCores,
      foreignCores: run.load.foreignCores,
    },
    mismatches: wrong,
  };
  log(
    `cluster ${label}: median p50 ${figures.medianP50Ms?.toFixed(2) ?? '—'} ms${figures.overheadMs === null ? '' : ` (overhead ${figures.overheadMs.toFixed(3)} ms)`}; ` +
      `${figures.load.requestsPerSecond} req/s, CPU ${figures.load.cpuMsPerRequest?.toFixed(3) ?? '—'} ms/request` +
      (oneClient
        ? `; one client: ${oneClient.cpuMsPerRequest.toFixed(2)} ms of CPU and ${oneClient.waitMsPerRequest.toFixed(2)} ms waiting for a core per request, over the threads`
        : ''),
  );
  return { figures, latency, notes };
}
