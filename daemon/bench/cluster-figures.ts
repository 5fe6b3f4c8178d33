// The cluster phase's arithmetic, apart from the processes it runs (phase-cluster.ts), so
// that it is tested on its own: which node counts and replication, the fan-out's overhead
// per query against the single daemon, answers that differ from it, CPU per request.

import { median } from './percentiles.ts';
import type { ClusterQuery } from './result.ts';
import type { QueryLatency } from './mix-latency.ts';

/** `--cluster-nodes` without a value. */
export const DEFAULT_NODE_COUNTS = [1, 2, 4];
/** More nodes than this on one machine measure the machine's scheduler, not the cluster. */
export const MAX_NODES = 16;

/**
 * `--cluster-nodes 1,2,4`: distinct node counts, 1 to MAX_NODES, in the order given.
 * Throws a one-line reason otherwise.
 */
export function parseNodeCounts(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  const out: number[] = [];
  for (const p of parts) {
    const n = Number(p);
    if (p === '' || !Number.isInteger(n) || n < 1 || n > MAX_NODES) throw new Error(`--cluster-nodes takes node counts from 1 to ${MAX_NODES} separated by commas, like 1,2,4; got "${text}"`);
    if (out.includes(n)) throw new Error(`--cluster-nodes names ${n} twice`);
    out.push(n);
  }
  return out;
}

/**
 * The replication factor of a cluster of `nodes`: 2, the default and what a deployment
 * runs (a node may fail), except on one node, which can hold one copy only.
 */
export function replicationFor(nodes: number): number {
  return nodes === 1 ? 1 : 2;
}

/**
 * Each query's p50 minus the baseline's (the fan-out's cost to one request), and the
 * median of those differences over the queries both answered. A difference per query, then
 * the median, rather than a difference of medians: the mix's queries differ by 10× in
 * latency, and the median query of one configuration need not be the other's.
 */
export function overheads(measured: readonly QueryLatency[], baseline: readonly QueryLatency[]): { perQuery: Map<string, number>; medianMs: number | null } {
  const base = new Map(baseline.flatMap((q) => (q.latencyMs ? [[q.name, q.latencyMs.p50] as const] : [])));
  const perQuery = new Map<string, number>();
  for (const q of measured) {
    const b = base.get(q.name);
    if (q.latencyMs && b !== undefined) perQuery.set(q.name, round4(q.latencyMs.p50 - b));
  }
  return { perQuery, medianMs: perQuery.size > 0 ? round4(median([...perQuery.values()])) : null };
}

/** The result's per-query figures of one configuration. */
export function clusterQueries(measured: readonly QueryLatency[], perQuery: ReadonlyMap<string, number> | null): ClusterQuery[] {
  return measured.map((q) => ({ name: q.name, samplesMs: q.samplesMs, latencyMs: q.latencyMs, error: q.error, overheadMs: perQuery?.get(q.name) ?? null }));
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
