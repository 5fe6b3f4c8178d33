// The cluster phase's arithmetic, apart from the processes it runs (phase-cluster.ts), so
// that it is tested on its own: which node counts and replication, the fan-out's overhead
// per query against the single daemon, answers that differ from it, CPU per request.

import { median } from './percentiles.ts';
import type { ClusterConfiguration, ClusterQuery, ClusterShape } from './result.ts';
import type { QueryLatency } from './mix-latency.ts';

/**
 * `--cluster-nodes` without a value: one node; two and four at the default replication
 * (on two nodes every node then holds every shard: no search asks another node); two
 * nodes holding one copy each, where every search asks the other node while no more
 * processes run than this machine has cores: the fan-out's own cost; and four nodes that
 * each hold every shard, the control of the four at replication 2 (sameNodesOverheads):
 * the same processes sharing the same cores and taking the same turns, no search asking
 * another node, so that what four nodes on two cores cost apart from the fan-out is measured
 * rather than guessed.
 */
export const DEFAULT_CLUSTERS: ClusterShape[] = [
  { nodes: 1, replicationFactor: 1 },
  { nodes: 2, replicationFactor: 2 },
  { nodes: 2, replicationFactor: 1 },
  { nodes: 4, replicationFactor: 2 },
  { nodes: 4, replicationFactor: 4 },
];
/** More nodes than this on one machine measure the machine's scheduler, not the cluster. */
export const MAX_NODES = 16;

/**
 * `--cluster-nodes 1,2,2/1,4`: clusters of N nodes at the default replication
 * (replicationFor), or N/R: N nodes at replication R (1 to N); distinct, 1 to MAX_NODES
 * nodes, in the order given. Throws a one-line reason otherwise.
 */
export function parseClusters(text: string): ClusterShape[] {
  const out: ClusterShape[] = [];
  for (const p of text.split(',').map((x) => x.trim())) {
    const m = /^(\d+)(?:\/(\d+))?$/.exec(p);
    const nodes = m ? Number(m[1]) : NaN;
    const replicationFactor = m?.[2] !== undefined ? Number(m[2]) : replicationFor(nodes);
    if (!m || nodes < 1 || nodes > MAX_NODES || replicationFactor < 1 || replicationFactor > nodes) {
      throw new Error(
        `--cluster-nodes takes node counts from 1 to ${MAX_NODES}, each with an optional /replication (1 to the count), separated by commas, like 1,2,2/1,4; got "${text}"`,
      );
    }
    if (out.some((c) => c.nodes === nodes && c.replicationFactor === replicationFactor)) throw new Error(`--cluster-nodes names ${p} twice`);
    out.push({ nodes, replicationFactor });
  }
  return out;
}

/**
 * The replication factor of a cluster of `nodes` unless said otherwise: 2, the default and
 * what a deployment runs (a node may fail), except on one node, which can hold one copy only.
 */
export function replicationFor(nodes: number): number {
  return nodes === 1 ? 1 : 2;
}

/** A cluster's name in reports: its node count, and its replication when not replicationFor's. */
export function clusterName(c: ClusterShape): string {
  const n = `${c.nodes} node${c.nodes > 1 ? 's' : ''}`;
  return c.replicationFactor === replicationFor(c.nodes) ? n : `${n}, replication ${c.replicationFactor}`;
}

/** A cluster's key in compared results: n4, or n2r1 away from the default replication. */
export function clusterKey(c: ClusterShape): string {
  return c.replicationFactor === replicationFor(c.nodes) ? `n${c.nodes}` : `n${c.nodes}r${c.replicationFactor}`;
}

/**
 * Each query's p50 minus the baseline's (the fan-out's cost to one request), and the
 * median of those differences over the queries both answered. A difference per query, then
 * the median, rather than a difference of medians: the mix's queries differ in latency by
 * an order of magnitude, and the median query of one configuration need not be the other's.
 */
export function overheads(measured: readonly P50Of[], baseline: readonly P50Of[]): { perQuery: Map<string, number>; medianMs: number | null } {
  const base = new Map(baseline.flatMap((q) => (q.latencyMs ? [[q.name, q.latencyMs.p50] as const] : [])));
  const perQuery = new Map<string, number>();
  for (const q of measured) {
    const b = base.get(q.name);
    if (q.latencyMs && b !== undefined) perQuery.set(q.name, round4(q.latencyMs.p50 - b));
  }
  return { perQuery, medianMs: perQuery.size > 0 ? round4(median([...perQuery.values()])) : null };
}

/** What overheads() reads of a query's figures (a QueryLatency, or a result's ClusterQuery). */
type P50Of = Pick<QueryLatency, 'name' | 'latencyMs'>;

/**
 * The fan-out's overhead apart from the processes around it: for each cluster whose nodes
 * do not each hold every shard, the median over queries of its overhead minus that of the
 * cluster of as many nodes that each hold every shard (replication = nodes: no search asks
 * another node), when the phase measured one. Both run the same processes on the same
 * cores, taking the same turns with one client, so the difference is what asking other
 * nodes costs; against the single daemon (overheads) it also holds what N processes
 * sharing this machine's cores cost. Per query the two overheads' difference: where each
 * was measured against the daemon interleaved with it (mix-latency.ts reference), the
 * machine's drift between the two configurations' windows cancels; otherwise it is the
 * difference of their p50s. Indexed like `configurations`; null where there is no such
 * control, for the controls themselves and for the plain daemon.
 */
export function sameNodesOverheads(
  configurations: readonly Pick<ClusterConfiguration, 'kind' | 'nodes' | 'replicationFactor' | 'queries'>[],
): Array<number | null> {
  return configurations.map((c) => {
    if (c.kind !== 'cluster' || c.replicationFactor === c.nodes) return null;
    const control = configurations.find((o) => o.kind === 'cluster' && o.nodes === c.nodes && o.replicationFactor === o.nodes);
    if (!control) return null;
    const theirs = new Map(control.queries.flatMap((q) => (q.overheadMs === null ? [] : [[q.name, q.overheadMs] as const])));
    const diffs = c.queries.flatMap((q) => {
      const t = theirs.get(q.name);
      return q.overheadMs === null || t === undefined ? [] : [q.overheadMs - t];
    });
    return diffs.length > 0 ? round4(median(diffs)) : null;
  });
}

/** The result's per-query figures of one configuration. */
export function clusterQueries(measured: readonly QueryLatency[], perQuery: ReadonlyMap<string, number> | null): ClusterQuery[] {
  return measured.map((q) => {
    const row: ClusterQuery = { name: q.name, samplesMs: q.samplesMs, latencyMs: q.latencyMs, error: q.error, overheadMs: perQuery?.get(q.name) ?? null };
    if (q.reference) row.referenceP50Ms = q.reference.latencyMs?.p50 ?? null;
    return row;
  });
}

/**
 * What a cluster's overheads are taken against: the single daemon interleaved with it in
 * the same window where the mix had it as its reference (every query that has one), else
 * the daemon's own earlier measurement (`baseline`); null without either.
 */
export function overheadBaseline(measured: readonly QueryLatency[], baseline: readonly QueryLatency[] | undefined): readonly P50Of[] | null {
  if (measured.some((q) => q.reference)) return measured.map((q) => ({ name: q.name, latencyMs: q.reference?.latencyMs ?? null }));
  return baseline ?? null;
}

/** Median over the queries of each one's p50; null when every query failed. */
export function medianP50(measured: readonly QueryLatency[]): number | null {
  const p50s = measured.flatMap((q) => (q.latencyMs ? [q.latencyMs.p50] : []));
  return p50s.length > 0 ? round4(median(p50s)) : null;
}

/**
 * Where a node answered differently from the baseline (the single daemon's answer to the
 * same request), one line each: a cluster must answer exactly what one daemon with every
 * shard answers. Queries that failed on a side are the latency figures' business.
 */
export function mismatches(measured: readonly QueryLatency[], baseline: readonly QueryLatency[], nodeIds: readonly string[]): string[] {
  const base = new Map(baseline.map((q) => [q.name, q.answers[0]]));
  const out: string[] = [];
  for (const q of measured) {
    const want = base.get(q.name);
    if (want === undefined) continue;
    q.answers.forEach((got, i) => {
      if (got !== want) out.push(`${q.name} through ${nodeIds[i] ?? `node ${i}`}: ${got}; one daemon: ${want}`);
    });
  }
  return out;
}

/** CPU milliseconds per request: the sum of the processes' CPU over the requests completed; null when a figure is missing or nothing completed. */
export function cpuPerRequest(cpuMs: ReadonlyArray<number | null>, requests: number): number | null {
  if (requests <= 0 || cpuMs.length === 0 || cpuMs.some((c) => c === null)) return null;
  return Math.round(((cpuMs as number[]).reduce((s, c) => s + c, 0) / requests) * 1e4) / 1e4;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
