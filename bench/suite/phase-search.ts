// Search latency in process: one Searcher over the built index, as the daemon runs it
// minus HTTP (latency.ts: an untimed pass over the mix, one warm-up per query, then
// `iterations` timed runs under tinybench), with the search stats of the last run so that
// a latency change can be traced to the work that changed.

import { MATCH_LIMIT, measureTrawl } from './latency.ts';
import type { BenchQuery } from './queries.ts';
import type { QueryResult, SearchPhase, Warmup } from './result.ts';

export async function searchPhase(dataDir: string, queries: BenchQuery[], iterations: number, warmup: Warmup, log: (s: string) => void): Promise<SearchPhase> {
  const measured = await measureTrawl(dataDir, queries, iterations, warmup, log);
  const results = queries.map((q, i): QueryResult => {
    const m = measured.queries[i]!;
    const ok = m.error === undefined && m.samplesMs.length > 0;
    return {
      name: q.name,
      query: q.query,
      kind: q.kind,
      set: q.set,
      regex: q.regex,
      caseSensitive: q.caseSensitive,
      matches: q.matches ?? MATCH_LIMIT,
      samplesMs: m.samplesMs.map((x) => Math.round(x * 1e4) / 1e4),
      latencyMs: ok ? { p50: m.p50!, p95: m.p95!, p99: m.p99!, mean: m.mean!, min: m.min!, max: m.max! } : null,
      stats: m.stats,
      isSearchExhaustive: m.isSearchExhaustive,
      error: m.error ?? null,
    };
  });
  return { coldStartMs: Number.isFinite(measured.coldStartMs) ? measured.coldStartMs : null, queries: results };
}
