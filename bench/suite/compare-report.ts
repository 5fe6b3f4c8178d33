// The report of `trawl bench compare` (compare.ts makes it; compare-text.ts and chart.ts
// render it). `--json` prints the report as is, so its field names are an interface for
// CI; every field is always present (null, never missing), and no NaN or Infinity gets in.
//
// CompareReport ("trawl-bench-compare/1"):
//   format        'trawl-bench-compare/1'
//   old, new      RunIdentity of each result, nothing that depends on where the file lives:
//                 gitCommit, trawlVersion, node, startedAt, quick, queriesSha256,
//                 corpus {name, sha256, files, totalBytes}, machine {cpuModel, cores}
//   options       {threshold, alpha, singleThreshold} as used (defaults filled in)
//   warnings      string[]: why the two runs may not be like for like, and results that
//                 changed (a faster release returning fewer matches must not look like a win)
//   machineDrift  [{peer, queries, ratio}]: per peer that ran on both sides, the median
//                 over the queries both ran of new peer median / old peer median. The peers
//                 did not change between the runs, so a ratio away from 1 is the machine's.
//   metrics       MetricComparison[], in the order search (per query), http, memory, index,
//                 commands (when either side has them; a run of the cluster phase alone has
//                 none of these), then the opt-in phases that either side ran (auth, web,
//                 reindex, cluster):
//     id          stable key: search/<query name>/latency, http/search/latency,
//                 http/search/throughput, http/stream/throughput, http/stream/firstByte,
//                 http/stream/firstResult,
//                 memory/idle, memory/load, (when either side has them: http/overhead/<kind>/cpu,
//                 http/overhead/<kind>/throughput, memory/idleAnon, memory/loadAnon,
//                 memory/loadFile), index/seconds, index/peakRss, index/bytes,
//                 index/sizeRatio; commands/help/seconds, commands/search/seconds,
//                 commands/sync/first/seconds, commands/sync/oneFile/seconds;
//                 auth/<variant>/latency, auth/<variant>/throughput,
//                 auth/stepCpu; web/firstResult, web/done; viewer/open, viewer/jump; reindex/<build>/seconds,
//                 reindex/full/bytes, reindex/branches/bytes, (when either side has them)
//                 reindex/syncFirst/seconds, reindex/syncOneLine/seconds;
//                 cluster/<configuration>/throughput, cluster/<configuration>/cpu,
//                 cluster/<configuration>/p50 (configuration: plain, or n<nodes>);
//                 (when either side has them) distinct/latency, distinct/cold, distinct/ready,
//                 distinct/firstSearch; many/<corpus>/<kind>/latency, many/<corpus>/cold,
//                 many/<corpus>/sync, many/<corpus>/ready, many/<corpus>/change,
//                 many/<corpus>/load, many/<corpus>/idleAnon, many/<corpus>/indexBytes
//     group       'distinct' | 'search' | 'http' | 'memory' | 'index' | 'commands' | 'auth' | 'web' | 'reindex' | 'many' | 'cluster'
//     label       for people (a search metric's is the query text)
//     queryName   the query's name for search metrics, else null
//     unit        'ms' | 'req/s' | 'MB/s' | 'bytes' | 's' | 'ratio'
//     better      'lower' | 'higher'
//     old, new    {n, median, p95, p99} over the side's samples; median null when n = 0,
//                 p95 null under 20 samples and p99 under 100 (they would be the maximum)
//     ratio       new median / old median (of the values as measured, throughput included)
//     ratioLow, ratioHigh  95% bootstrap interval of the ratio (basis 'test' only)
//     p           two-sided Mann-Whitney p-value (basis 'test' only)
//     verdict     'regression' | 'improvement' | 'no change' | 'not judged'
//     basis       how the verdict was reached:
//                   'test'      >= 5 samples each side: stats.ts compareSamples (significant
//                               at alpha AND the whole interval beyond 1 ± threshold)
//                   'threshold' fewer samples on a side: the ratio beyond 1 ± singleThreshold
//                   'exact'     deterministic figures (index bytes, size ratio): beyond
//                               1 ± threshold
//                   'none'      a side has no figure (or the old one is 0): not judged
//     stats       search metrics: {field: {old, new, delta}} for every numeric SearchStats
//                 field except the nanosecond timings; null elsewhere or without stats
//     statsChanged  e.g. ["filesLoaded 12→15"]: the work that changed, to explain a latency
//                 change; [] when nothing did
//   regressions, improvements, unchanged, notJudged  counts of verdicts over metrics
//   exitStatus    1 when any metric regressed, else 0

import type { PeerResult } from './result.ts';
import type { Verdict } from './stats.ts';

export const COMPARE_FORMAT = 'trawl-bench-compare/1';

export type MetricGroup = 'distinct' | 'search' | 'http' | 'memory' | 'index' | 'commands' | 'auth' | 'web' | 'reindex' | 'many' | 'cluster';
export type MetricUnit = 'ms' | 'req/s' | 'MB/s' | 'bytes' | 's' | 'ratio';
export type MetricVerdict = Verdict | 'not judged';
export type Basis = 'test' | 'threshold' | 'exact' | 'none';

export interface CompareResultsOptions {
  /** Smallest relative change reported for sampled and exact metrics (default 0.05). */
  threshold?: number;
  /** Significance level of the U test (default 0.01). */
  alpha?: number;
  /** Smallest relative change reported when a side has fewer than 5 samples (default 0.25). */
  singleThreshold?: number;
}

export interface RunIdentity {
  gitCommit: string;
  trawlVersion: string;
  node: string;
  startedAt: string;
  quick: boolean;
  queriesSha256: string;
  corpus: { name: string; sha256: string; files: number; totalBytes: number };
  machine: { cpuModel: string; cores: number };
}

export interface SampleSummary {
  n: number;
  median: number | null;
  p95: number | null;
  p99: number | null;
}

export interface StatDelta {
  old: number | null;
  new: number | null;
  /** new - old; null when a side lacks the field. */
  delta: number | null;
}

export interface MetricComparison {
  id: string;
  group: MetricGroup;
  label: string;
  queryName: string | null;
  unit: MetricUnit;
  better: 'lower' | 'higher';
  old: SampleSummary;
  new: SampleSummary;
  ratio: number | null;
  ratioLow: number | null;
  ratioHigh: number | null;
  p: number | null;
  verdict: MetricVerdict;
  basis: Basis;
  stats: Record<string, StatDelta> | null;
  statsChanged: string[];
  /**
   * false when the search stopped early (isSearchExhaustive false) on a side: how much
   * work it did depends on when its workers reached the match limit, so its stats vary
   * from run to run and their changes explain nothing.
   */
  statsComparable: boolean;
}

export interface MachineDrift {
  peer: PeerResult['peer'];
  /** Queries both runs of the peer measured. */
  queries: number;
  /** Median over those queries of new median / old median; null without any. */
  ratio: number | null;
}

export interface CompareReport {
  format: typeof COMPARE_FORMAT;
  old: RunIdentity;
  new: RunIdentity;
  options: Required<CompareResultsOptions>;
  /**
   * Run-to-run noise of one query's median, estimated from the spread of every query's
   * ratio; the threshold a search query's change must pass is the larger of it and
   * options.threshold. null with fewer than NOISE_MIN_QUERIES queries.
   */
  searchNoiseFloor: number | null;
  warnings: string[];
  machineDrift: MachineDrift[];
  metrics: MetricComparison[];
  regressions: number;
  improvements: number;
  unchanged: number;
  notJudged: number;
  exitStatus: 0 | 1;
}
