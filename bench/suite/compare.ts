// `trawl bench compare OLD.json NEW.json`: two "trawl-bench/1" results in, one
// report out. Pure: no files, no clock, no randomness beyond stats.ts's seeded bootstrap, so
// the same two results always give the same report. `--json` prints the report as is, so
// its field names are an interface for CI; every field is always present (null, never
// missing), and no NaN or Infinity gets in.
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

import type { SearchStats } from '../../daemon/search/types.ts';
import {
  hasCorePhases,
  RESULT_FORMAT,
  type AnyBenchResult,
  type AuthVariant,
  type ClusterConfiguration,
  type CommandRuns,
  type CommandsPhase,
  type DistinctPhase,
  type HttpQueryResult,
  type ManyReposCorpus,
  type PeerResult,
  type QueryResult,
  type ReindexPhase,
  type WebQuery,
} from './result.ts';
import { median, quantileSorted } from './percentiles.ts';
import { clusterKey, clusterName, replicationFor } from './cluster-figures.ts';
import { compareSamples, type Verdict } from './stats.ts';

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

/** Fewer samples than this on a side: one noisy figure, judged against singleThreshold. */
export const MIN_TESTED_SAMPLES = 5;
/**
 * The bootstrap sorts every resample, 2000 times per side: the HTTP load run's per-response
 * latencies (one sample per response, 10^5 and more) would take minutes. Larger sides are
 * thinned to this many evenly spaced order statistics, which keeps the distribution's shape
 * and only widens the interval and raises p: conservative.
 */
const MAX_TESTED_SAMPLES = 5000;
/** bench/METHOD.md: above 0.2 foreign cores in a phase, its figures are not clean. */
const BUSY_FOREIGN_CORES = 0.2;
/** Wall-clock timings of the engine; they are the latency samples' business, not a stats change. */
const TIMING_STATS: ReadonlySet<keyof SearchStats> = new Set<keyof SearchStats>(['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch']);

export function compareResults(oldR: AnyBenchResult, newR: AnyBenchResult, options: CompareResultsOptions = {}): CompareReport {
  for (const [side, r] of [
    ['old', oldR],
    ['new', newR],
  ] as const) {
    if (r.format !== RESULT_FORMAT) throw new Error(`${side} result has format ${JSON.stringify(r.format)}, expected ${RESULT_FORMAT}`);
  }
  const opts: Required<CompareResultsOptions> = {
    threshold: options.threshold ?? 0.05,
    alpha: options.alpha ?? 0.01,
    singleThreshold: options.singleThreshold ?? 0.25,
  };
  const search = searchMetrics(oldR, newR, opts);
  const metrics = [...search.metrics, ...otherMetrics(oldR, newR, opts)];
  const drift = machineDrift(oldR.peers ?? [], newR.peers ?? []);
  const count = (v: MetricVerdict) => metrics.filter((m) => m.verdict === v).length;
  const regressions = count('regression');
  return {
    format: COMPARE_FORMAT,
    old: identity(oldR),
    new: identity(newR),
    options: opts,
    searchNoiseFloor: search.noiseFloor,
    warnings: [...runWarnings(oldR, newR), ...queryWarnings(oldR, newR), ...driftWarnings(drift, opts.threshold)],
    machineDrift: drift,
    metrics,
    regressions,
    improvements: count('improvement'),
    unchanged: count('no change'),
    notJudged: count('not judged'),
    exitStatus: regressions > 0 ? 1 : 0,
  };
}

function identity(r: AnyBenchResult): RunIdentity {
  return {
    gitCommit: r.environment.gitCommit,
    trawlVersion: r.environment.trawlVersion,
    node: r.environment.node,
    startedAt: r.startedAt,
    quick: r.options.quick,
    queriesSha256: r.options.queriesSha256,
    corpus: { name: r.corpus.name, sha256: r.corpus.sha256, files: r.corpus.files, totalBytes: r.corpus.totalBytes },
    machine: { cpuModel: r.environment.machine.cpuModel, cores: r.environment.machine.cores },
  };
}

// ---- judging one metric ----

type Kind = 'sampled' | 'exact';
type Judgement = Pick<MetricComparison, 'old' | 'new' | 'ratio' | 'ratioLow' | 'ratioHigh' | 'p' | 'verdict' | 'basis'>;

function summarise(sorted: readonly number[]): SampleSummary {
  const n = sorted.length;
  return {
    n,
    median: n > 0 ? quantileSorted(sorted, 0.5) : null,
    p95: n >= 20 ? quantileSorted(sorted, 0.95) : null,
    p99: n >= 100 ? quantileSorted(sorted, 0.99) : null,
  };
}

function thin(sorted: readonly number[]): readonly number[] {
  if (sorted.length <= MAX_TESTED_SAMPLES) return sorted;
  const step = (sorted.length - 1) / (MAX_TESTED_SAMPLES - 1);
  return Array.from({ length: MAX_TESTED_SAMPLES }, (_, i) => sorted[Math.round(i * step)]!);
}

/** The verdict for a metric where lower is better, turned round when higher is. */
function oriented(lowerIsBetter: Verdict, better: 'lower' | 'higher'): Verdict {
  if (better === 'lower' || lowerIsBetter === 'no change') return lowerIsBetter;
  return lowerIsBetter === 'regression' ? 'improvement' : 'regression';
}

/** Beyond 1 ± bound in the ratio, as a lower-is-better verdict. */
function byRatio(ratio: number, bound: number): Verdict {
  if (ratio > 1 + bound) return 'regression';
  if (ratio < 1 - bound) return 'improvement';
  return 'no change';
}

function judge(
  oldValues: readonly number[],
  newValues: readonly number[],
  kind: Kind,
  better: 'lower' | 'higher',
  opts: Required<CompareResultsOptions>,
): Judgement {
  const sortedOld = oldValues.filter(Number.isFinite).sort((a, b) => a - b);
  const sortedNew = newValues.filter(Number.isFinite).sort((a, b) => a - b);
  const summaries = { old: summarise(sortedOld), new: summarise(sortedNew) };
  const oldMedian = summaries.old.median;
  const newMedian = summaries.new.median;
  const unjudged = { ...summaries, ratio: null, ratioLow: null, ratioHigh: null, p: null, verdict: 'not judged', basis: 'none' } as const;
  if (oldMedian === null || newMedian === null) return unjudged;
  // A zero baseline (no throughput at all, say) has no ratio to judge against.
  if (oldMedian <= 0) return unjudged;
  const ratio = newMedian / oldMedian;
  if (kind === 'exact') {
    return { ...summaries, ratio, ratioLow: null, ratioHigh: null, p: null, verdict: oriented(byRatio(ratio, opts.threshold), better), basis: 'exact' };
  }
  if (sortedOld.length < MIN_TESTED_SAMPLES || sortedNew.length < MIN_TESTED_SAMPLES) {
    return {
      ...summaries,
      ratio,
      ratioLow: null,
      ratioHigh: null,
      p: null,
      verdict: oriented(byRatio(ratio, opts.singleThreshold), better),
      basis: 'threshold',
    };
  }
  // compareSamples calls a rise a regression. For higher-is-better figures its verdict is
  // turned round rather than its input: the ratio and its interval are then those of the
  // values as measured, and a second with no completed request (0 req/s, the stall one
  // wants to see) stays a plain 0 where a reciprocal would be infinite.
  const c = compareSamples(thin(sortedOld), thin(sortedNew), { threshold: opts.threshold, alpha: opts.alpha });
  return { ...summaries, ratio, ratioLow: c.ratioLow, ratioHigh: c.ratioHigh, p: c.p, verdict: oriented(c.verdict, better), basis: 'test' };
}

interface MetricSpec {
  id: string;
  group: MetricGroup;
  label: string;
  unit: MetricUnit;
  better: 'lower' | 'higher';
  kind: Kind;
  old: readonly number[];
  new: readonly number[];
}

function metric(spec: MetricSpec, opts: Required<CompareResultsOptions>): MetricComparison {
  const j = judge(spec.old, spec.new, spec.kind, spec.better, opts);
  return {
    id: spec.id,
    group: spec.group,
    label: spec.label,
    queryName: null,
    unit: spec.unit,
    better: spec.better,
    ...j,
    stats: null,
    statsChanged: [],
    statsComparable: true,
  };
}

// ---- the metrics ----

/** Queries by name, old's order first, then those only new has. */
function pairQueries(oldR: AnyBenchResult, newR: AnyBenchResult): Array<{ name: string; old: QueryResult | null; new: QueryResult | null }> {
  const oldByName = new Map((oldR.search?.queries ?? []).map((q) => [q.name, q]));
  const newByName = new Map((newR.search?.queries ?? []).map((q) => [q.name, q]));
  const names = [...oldByName.keys(), ...[...newByName.keys()].filter((n) => !oldByName.has(n))];
  return names.map((name) => ({ name, old: oldByName.get(name) ?? null, new: newByName.get(name) ?? null }));
}

/** A failed query's samples (if any) are not the query's latency. */
const latencySamples = (q: QueryResult | null): number[] => (q && q.error === null ? q.samplesMs : []);

/**
 * Two runs of the same commit differ by more than their samples say: each run's samples
 * share one process, one worker pool, one page-cache layout, so a query's median moves
 * between runs by more than its own spread suggests (two runs of one commit on Linux 6.1
 * differ per query by more than the threshold, and every difference is "significant").
 * That run-to-run noise is estimated from the queries themselves: the robust spread
 * (1.4826 × median absolute deviation) of the log of every query's ratio, three times
 * over. A change common to every query moves the median of the ratios, not their spread,
 * so a release 30% slower everywhere still stands out; a few queries that regress are
 * outliers to the MAD and do not raise it.
 */
export const NOISE_MIN_QUERIES = 8;
const NOISE_SIGMAS = 3;

export function searchNoiseFloor(pairs: Array<{ old: readonly number[]; new: readonly number[] }>): number | null {
  const logRatios: number[] = [];
  for (const p of pairs) {
    if (p.old.length < MIN_TESTED_SAMPLES || p.new.length < MIN_TESTED_SAMPLES) continue;
    const a = median([...p.old]);
    const b = median([...p.new]);
    if (a > 0 && b > 0) logRatios.push(Math.log(b / a));
  }
  if (logRatios.length < NOISE_MIN_QUERIES) return null;
  const centre = median(logRatios);
  const mad = median(logRatios.map((x) => Math.abs(x - centre)));
  return Math.exp(NOISE_SIGMAS * 1.4826 * mad) - 1;
}

function searchMetrics(
  oldR: AnyBenchResult,
  newR: AnyBenchResult,
  opts: Required<CompareResultsOptions>,
): { metrics: MetricComparison[]; noiseFloor: number | null } {
  const pairs = pairQueries(oldR, newR);
  const noiseFloor = searchNoiseFloor(pairs.map((p) => ({ old: latencySamples(p.old), new: latencySamples(p.new) })));
  const queryOpts = { ...opts, threshold: Math.max(opts.threshold, noiseFloor ?? 0) };
  const metrics = pairs.map(({ name, old, new: cur }) => {
    const m = metric(
      {
        id: `search/${name}/latency`,
        group: 'search',
        label: (cur ?? old)!.query,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        old: latencySamples(old),
        new: latencySamples(cur),
      },
      queryOpts,
    );
    const deltas = statDeltas(old?.stats ?? null, cur?.stats ?? null);
    const statsComparable = old?.isSearchExhaustive !== false && cur?.isSearchExhaustive !== false;
    return { ...m, queryName: name, stats: deltas.stats, statsChanged: deltas.changed, statsComparable };
  });
  return { metrics, noiseFloor };
}

function statDeltas(oldStats: SearchStats | null, newStats: SearchStats | null): { stats: Record<string, StatDelta> | null; changed: string[] } {
  if (oldStats === null && newStats === null) return { stats: null, changed: [] };
  // Fields are taken from the objects rather than listed here, so that a counter added to
  // SearchStats later is compared without anyone remembering to add it.
  const numeric = (s: SearchStats | null, k: string): number | null => {
    const v = s === null ? undefined : (s as unknown as Record<string, unknown>)[k];
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  };
  const keys = new Set([...Object.keys(oldStats ?? {}), ...Object.keys(newStats ?? {})]);
  const stats: Record<string, StatDelta> = {};
  const changed: string[] = [];
  for (const k of keys) {
    if (TIMING_STATS.has(k as keyof SearchStats)) continue;
    const o = numeric(oldStats, k);
    const n = numeric(newStats, k);
    if (o === null && n === null) continue; // not a number on either side (flushReason)
    stats[k] = { old: o, new: n, delta: o !== null && n !== null ? n - o : null };
    // A query missing or failed on one side changed everything; the warnings say so once.
    if (o !== n && oldStats !== null && newStats !== null) changed.push(`${k} ${o ?? '—'}→${n ?? '—'}`);
  }
  return { stats, changed };
}

function otherMetrics(oldR: AnyBenchResult, newR: AnyBenchResult, opts: Required<CompareResultsOptions>): MetricComparison[] {
  return [...distinctSpecs(oldR, newR), ...coreSpecs(oldR, newR), ...phaseSpecs(oldR, newR), ...manySpecs(oldR, newR), ...clusterSpecs(oldR, newR)].map((s) =>
    metric(s, opts),
  );
}

/**
 * The core phases' figures, when either side has them (a run of the cluster phase alone
 * has none: two such runs compare on the cluster's figures only, and against a full run
 * these are not judged).
 */
function coreSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!hasCorePhases(oldR) && !hasCorePhases(newR)) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  // A memory figure without its samples (an older writer, say) still counts as one sample.
  const memory = (samples: number[] | undefined, medianBytes: number | null | undefined) =>
    samples && samples.length > 0 ? samples : medianBytes == null ? [] : [medianBytes];
  const runs = (r: AnyBenchResult) => r.indexing?.runs ?? [];
  return [
    {
      id: 'http/search/latency',
      group: 'http',
      label: 'POST /api/search latency',
      unit: 'ms',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => r.http?.search.samplesMs ?? []),
    },
    {
      id: 'http/search/throughput',
      group: 'http',
      label: 'POST /api/search throughput',
      unit: 'req/s',
      better: 'higher',
      kind: 'sampled',
      ...both((r) => r.http?.search.perSecondSamples ?? []),
    },
    {
      id: 'http/stream/throughput',
      group: 'http',
      label: 'stream throughput',
      unit: 'MB/s',
      better: 'higher',
      kind: 'sampled',
      ...both((r) => r.http?.stream.mbPerSecondSamples ?? []),
    },
    {
      id: 'http/stream/firstByte',
      group: 'http',
      label: 'stream first byte',
      unit: 'ms',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => r.http?.stream.firstByteMsSamples ?? []),
    },
    // Measured since the stream's opening comment stopped passing for its first results.
    ...(oldR.http?.stream.firstResultMsSamples || newR.http?.stream.firstResultMsSamples
      ? [
          {
            id: 'http/stream/firstResult',
            group: 'http',
            label: 'stream first results',
            unit: 'ms',
            better: 'lower',
            kind: 'sampled',
            ...both((r) => r.http?.stream.firstResultMsSamples ?? []),
          } satisfies MetricSpec,
        ]
      : []),
    {
      id: 'memory/idle',
      group: 'memory',
      label: 'daemon RSS, idle',
      unit: 'bytes',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => memory(r.memory?.idleSamplesBytes, r.memory?.idleMedianBytes)),
    },
    {
      id: 'memory/load',
      group: 'memory',
      label: 'daemon RSS, under load',
      unit: 'bytes',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => memory(r.memory?.loadSamplesBytes, r.memory?.loadMedianBytes)),
    },
    ...splitSpecs(oldR, newR),
    {
      id: 'index/seconds',
      group: 'index',
      label: 'index build time',
      unit: 's',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => runs(r).map((x) => x.seconds)),
    },
    {
      id: 'index/contentSeconds',
      group: 'index',
      label: 'index: content searchable after',
      unit: 's',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => runs(r).flatMap((x) => (x.contentSeconds == null ? [] : [x.contentSeconds]))),
    },
    {
      id: 'index/peakRss',
      group: 'index',
      label: 'index build peak RSS',
      unit: 'bytes',
      better: 'lower',
      kind: 'sampled',
      ...both((r) => runs(r).flatMap((x) => (x.peakRssBytes === null ? [] : [x.peakRssBytes]))),
    },
    // The same corpus indexes to the same bytes: any change is real, no test needed.
    { id: 'index/bytes', group: 'index', label: 'index size', unit: 'bytes', better: 'lower', kind: 'exact', ...both((r) => runs(r).map((x) => x.indexBytes)) },
    {
      id: 'index/sizeRatio',
      group: 'index',
      label: 'index size / content',
      unit: 'ratio',
      better: 'lower',
      kind: 'exact',
      ...both((r) => runs(r).map((x) => x.sizeRatio)),
    },
    ...commandSpecs(oldR, newR),
  ];
}

/**
 * The HTTP layer's cost and the split memory figures, when either side has them (a file
 * written before they were measured has neither, so two old files compare as they always did): the HTTP layer's CPU per cheap
 * request, and RssAnon and RssFile apart.
 */
function splitSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  const specs: MetricSpec[] = [];
  const names = new Set([...(oldR.http?.overhead ?? []), ...(newR.http?.overhead ?? [])].map((o) => o.name));
  for (const name of names) {
    const kind = (r: AnyBenchResult) => r.http?.overhead?.find((o) => o.name === name);
    const request = (kind(newR) ?? kind(oldR))!.request;
    specs.push(
      {
        id: `http/overhead/${name}/cpu`,
        group: 'http',
        label: `${request} daemon CPU per request`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => kind(r)?.serverCpuMsPerRequestSamples ?? []),
      },
      {
        id: `http/overhead/${name}/throughput`,
        group: 'http',
        label: `${request} throughput`,
        unit: 'req/s',
        better: 'higher',
        kind: 'sampled',
        ...both((r) => kind(r)?.perSecondSamples ?? []),
      },
    );
  }
  if (oldR.memory?.idleAnonSamplesBytes || newR.memory?.idleAnonSamplesBytes) {
    specs.push(
      {
        id: 'memory/idleAnon',
        group: 'memory',
        label: 'daemon RssAnon, idle',
        unit: 'bytes',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => r.memory?.idleAnonSamplesBytes ?? []),
      },
      {
        id: 'memory/loadAnon',
        group: 'memory',
        label: 'daemon RssAnon, under load',
        unit: 'bytes',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => r.memory?.loadAnonSamplesBytes ?? []),
      },
      {
        id: 'memory/loadFile',
        group: 'memory',
        label: 'daemon RssFile (mapped shards), under load',
        unit: 'bytes',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => r.memory?.loadFileSamplesBytes ?? []),
      },
    );
  }
  return specs;
}

/**
 * Whole `trawl` processes, when either side has them: a file written before has
 * none, so two old files compare as they always did, and an old side is not judged.
 */
function commandSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.commands && !newR.commands) return [];
  const both = (pick: (c: CommandsPhase) => CommandRuns | null) => ({
    old: (oldR.commands && pick(oldR.commands)?.secondsSamples) ?? [],
    new: (newR.commands && pick(newR.commands)?.secondsSamples) ?? [],
  });
  const query = (newR.commands?.search ?? oldR.commands?.search)?.query ?? 'LITERAL';
  const spec = (id: string, label: string, pick: (c: CommandsPhase) => CommandRuns | null): MetricSpec => ({
    id,
    group: 'commands',
    label,
    unit: 's',
    better: 'lower',
    kind: 'sampled',
    ...both(pick),
  });
  return [
    spec('commands/help/seconds', 'trawl --help', (c) => c.help),
    spec('commands/search/seconds', `trawl search ${query}, small index`, (c) => c.search),
    spec('commands/sync/first/seconds', 'trawl sync, first (a full build)', (c) => c.sync.first),
    spec('commands/sync/oneFile/seconds', 'trawl sync, one file changed', (c) => c.sync.oneFile),
  ];
}

/** The opt-in phases' metrics, when either side ran the phase (a side without it is not judged). */
function phaseSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  const specs: MetricSpec[] = [];
  if (oldR.httpQueries || newR.httpQueries) {
    // One figure per query (its p50, or its daemon CPU per request): the mix's spread, tested.
    const perQuery = (r: AnyBenchResult, pick: (q: HttpQueryResult) => number | null | undefined) =>
      (r.httpQueries?.queries ?? []).flatMap((q) => {
        const x = pick(q);
        return x === null || x === undefined ? [] : [x];
      });
    specs.push(
      {
        id: 'http/queries/p50',
        group: 'http',
        label: 'each query over HTTP, one client (p50 per query)',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => perQuery(r, (q) => q.latencyMs?.p50)),
      },
      {
        id: 'http/queries/cpu',
        group: 'http',
        label: 'daemon CPU per request (per query)',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => perQuery(r, (q) => q.serverCpuMsPerRequest)),
      },
    );
  }
  if (oldR.auth || newR.auth) {
    const variant = (r: AnyBenchResult, name: AuthVariant['name']) => r.auth?.variants.find((v) => v.name === name);
    for (const [name, label] of [
      ['anonymous', 'anonymous'],
      ['apiKey', 'API key'],
    ] as const) {
      specs.push(
        {
          id: `auth/${name}/latency`,
          group: 'auth',
          label: `${label} latency`,
          unit: 'ms',
          better: 'lower',
          kind: 'sampled',
          ...both((r) => variant(r, name)?.samplesMs ?? []),
        },
        {
          id: `auth/${name}/throughput`,
          group: 'auth',
          label: `${label} throughput`,
          unit: 'req/s',
          better: 'higher',
          kind: 'sampled',
          ...both((r) => variant(r, name)?.perSecondSamples ?? []),
        },
      );
    }
    const step = (r: AnyBenchResult) =>
      r.auth?.stepCpuUsPerRequest === null || r.auth?.stepCpuUsPerRequest === undefined ? [] : [r.auth.stepCpuUsPerRequest / 1000];
    specs.push({ id: 'auth/stepCpu', group: 'auth', label: 'CPU the step adds per request', unit: 'ms', better: 'lower', kind: 'sampled', ...both(step) });
  }
  if (oldR.web || newR.web) {
    // One figure per query (its median over the page loads): the mix's spread, tested.
    const perQuery = (r: AnyBenchResult, pick: (q: WebQuery) => number[]) =>
      (r.web?.queries ?? []).flatMap((q) => (pick(q).length > 0 ? [median(pick(q))] : []));
    specs.push(
      {
        id: 'web/firstResult',
        group: 'web',
        label: 'first result on screen (per query)',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => perQuery(r, (q) => q.firstResultMsSamples)),
      },
      {
        id: 'web/done',
        group: 'web',
        label: 'search done on screen (per query)',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => perQuery(r, (q) => q.doneMsSamples)),
      },
    );
  }
  if (oldR.viewer || newR.viewer) {
    specs.push(
      {
        id: 'viewer/open',
        group: 'web',
        label: 'code viewer: open a 200,000-line file at a line',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => r.viewer?.openMsSamples ?? []),
      },
      {
        id: 'viewer/jump',
        group: 'web',
        label: 'code viewer: jump by #L',
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => r.viewer?.jumpMsSamples ?? []),
      },
    );
  }
  if (oldR.reindex || newR.reindex) {
    const build = (r: AnyBenchResult, name: keyof ReindexPhase['builds']) => r.reindex?.builds[name];
    const labels: Record<keyof ReindexPhase['builds'], string> = {
      full: 'full build, one branch',
      branches: 'full build, ten branches',
      unchanged: 'refs unmoved',
      oneFile: 'one file changed (delta)',
    };
    for (const name of ['full', 'branches', 'unchanged', 'oneFile'] as const) {
      specs.push({
        id: `reindex/${name}/seconds`,
        group: 'reindex',
        label: labels[name],
        unit: 's',
        better: 'lower',
        kind: 'sampled',
        ...both((r) => build(r, name)?.secondsSamples ?? []),
      });
    }
    for (const name of ['full', 'branches'] as const) {
      specs.push({
        id: `reindex/${name}/bytes`,
        group: 'reindex',
        label: `${labels[name]}: index size`,
        unit: 'bytes',
        better: 'lower',
        kind: 'exact',
        ...both((r) => {
          const b = build(r, name);
          return b ? [b.indexBytes] : [];
        }),
      });
    }
    // Measured later than the builds: an older run has no syncs.
    if (oldR.reindex?.sync || newR.reindex?.sync) {
      specs.push(
        {
          id: 'reindex/syncFirst/seconds',
          group: 'reindex',
          label: 'trawl sync, first',
          unit: 's',
          better: 'lower',
          kind: 'sampled',
          ...both((r) => r.reindex?.sync?.first.secondsSamples ?? []),
        },
        {
          id: 'reindex/syncOneLine/seconds',
          group: 'reindex',
          label: 'trawl sync, one line changed',
          unit: 's',
          better: 'lower',
          kind: 'sampled',
          ...both((r) => r.reindex?.sync?.oneLine.secondsSamples ?? []),
        },
      );
    }
  }
  return specs;
}

/**
 * The cluster phase's figures per configuration (the one daemon, and each node count),
 * when either side ran it: throughput per second of the load run, the nodes' CPU per
 * request per second of it, and each query's p50 from one client (the mix's spread, tested).
 * A configuration only one side measured is not judged.
 */
function clusterSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.cluster && !newR.cluster) return [];
  // (A cluster of a result from before replication was named has replicationFor's.)
  const shape = (c: ClusterConfiguration) => ({ nodes: c.nodes, replicationFactor: c.replicationFactor ?? replicationFor(c.nodes) });
  const key = (c: ClusterConfiguration) => (c.kind === 'plain' ? 'plain' : clusterKey(shape(c)));
  const label = (c: ClusterConfiguration) => (c.kind === 'plain' ? 'one daemon' : clusterName(shape(c)));
  const all = [...(oldR.cluster?.configurations ?? []), ...(newR.cluster?.configurations ?? [])];
  const keys = [...new Set(all.map(key))];
  const specs: MetricSpec[] = [];
  for (const k of keys) {
    const config = (r: AnyBenchResult) => r.cluster?.configurations.find((c) => key(c) === k);
    const both = (pick: (c: ClusterConfiguration) => number[]) => ({
      old: (config(oldR) && pick(config(oldR)!)) ?? [],
      new: (config(newR) && pick(config(newR)!)) ?? [],
    });
    const name = label(all.find((c) => key(c) === k)!);
    specs.push(
      {
        id: `cluster/${k}/throughput`,
        group: 'cluster',
        label: `${name}: the mix's load throughput`,
        unit: 'req/s',
        better: 'higher',
        kind: 'sampled',
        ...both((c) => c.load.perSecondSamples),
      },
      {
        id: `cluster/${k}/cpu`,
        group: 'cluster',
        label: `${name}: nodes' CPU per request`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => c.load.cpuMsPerRequestSamples),
      },
      {
        id: `cluster/${k}/p50`,
        group: 'cluster',
        label: `${name}: one client, p50 per query`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => c.queries.flatMap((q) => (q.latencyMs ? [q.latencyMs.p50] : []))),
      },
    );
  }
  return specs;
}

/**
 * The held-out identifiers, each sent once (the headline), when either side has them: the
 * same corpus and seed draw the same identifiers, so the two sets of samples are of the
 * same queries. A side without them (a result from before) is not judged.
 */
function distinctSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.distinct && !newR.distinct) return [];
  const both = (pick: (d: DistinctPhase) => Array<number | null | undefined> | undefined) => ({
    old: numbers(oldR.distinct && pick(oldR.distinct)),
    new: numbers(newR.distinct && pick(newR.distinct)),
  });
  const specs: MetricSpec[] = [
    {
      id: 'distinct/latency',
      group: 'distinct',
      label: 'held-out identifiers, each sent once',
      unit: 'ms',
      better: 'lower',
      kind: 'sampled',
      ...both((d) => d.identifiers.samplesMs),
    },
  ];
  if (oldR.distinct?.cold || newR.distinct?.cold) {
    specs.push({
      id: 'distinct/cold',
      group: 'distinct',
      label: 'the same after the page cache was dropped',
      unit: 'ms',
      better: 'lower',
      kind: 'sampled',
      ...both((d) => d.cold?.identifiers.samplesMs),
    });
  }
  specs.push(
    { id: 'distinct/ready', group: 'distinct', label: 'trawl serve to ready', unit: 'ms', better: 'lower', kind: 'sampled', ...both((d) => [d.start.readyMs]) },
    {
      id: 'distinct/firstSearch',
      group: 'distinct',
      label: 'its first search',
      unit: 'ms',
      better: 'lower',
      kind: 'sampled',
      ...both((d) => [d.start.firstSearchMs]),
    },
  );
  return specs;
}

/** The many-repositories phase, per corpus (by name) and query kind, when either side ran it. */
function manySpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.manyRepos && !newR.manyRepos) return [];
  const names = [...new Set([...(oldR.manyRepos?.corpora ?? []), ...(newR.manyRepos?.corpora ?? [])].map((c) => c.name))];
  const specs: MetricSpec[] = [];
  for (const name of names) {
    const corpus = (r: AnyBenchResult) => r.manyRepos?.corpora.find((c) => c.name === name);
    const both = (pick: (c: ManyReposCorpus) => Array<number | null | undefined> | undefined) => {
      const o = corpus(oldR);
      const n = corpus(newR);
      return { old: numbers(o && pick(o)), new: numbers(n && pick(n)) };
    };
    const kinds = [...new Set([...(corpus(oldR)?.queries ?? []), ...(corpus(newR)?.queries ?? [])].map((q) => q.kind))];
    for (const kind of kinds) {
      specs.push({
        id: `many/${name}/${kind}/latency`,
        group: 'many',
        label: `${name}: ${kind}, each sent once`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => c.queries.find((q) => q.kind === kind)?.samplesMs),
      });
    }
    if (corpus(oldR)?.cold || corpus(newR)?.cold) {
      specs.push({
        id: `many/${name}/cold`,
        group: 'many',
        label: `${name}: identifiers after the page cache was dropped`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => c.cold?.identifiers.samplesMs),
      });
    }
    specs.push(
      {
        id: `many/${name}/sync`,
        group: 'many',
        label: `${name}: trawl sync from nothing`,
        unit: 's',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => [c.sync.seconds]),
      },
      {
        id: `many/${name}/ready`,
        group: 'many',
        label: `${name}: trawl serve to ready`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => [c.start.readyMs]),
      },
      {
        id: `many/${name}/change`,
        group: 'many',
        label: `${name}: one-line change searchable after trawl sync starts`,
        unit: 'ms',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => c.change.searchableSamplesMs ?? [c.change.searchableMs]),
      },
      {
        id: `many/${name}/load`,
        group: 'many',
        label: `${name}: one literal, ${(corpus(newR) ?? corpus(oldR))!.load.connections} connections`,
        unit: 'req/s',
        better: 'higher',
        kind: 'sampled',
        ...both((c) => [c.load.requestsPerSecond]),
      },
      {
        id: `many/${name}/idleAnon`,
        group: 'many',
        label: `${name}: daemon RssAnon, right after the queries`,
        unit: 'bytes',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => [c.memory.idleAnonBytes]),
      },
      {
        id: `many/${name}/settledAnon`,
        group: 'many',
        label: `${name}: daemon RssAnon, idle (settled)`,
        unit: 'bytes',
        better: 'lower',
        kind: 'sampled',
        ...both((c) => (c.memory.settledAnonBytes == null ? [] : [c.memory.settledAnonBytes])),
      },
      {
        id: `many/${name}/indexBytes`,
        group: 'many',
        label: `${name}: index size`,
        unit: 'bytes',
        better: 'lower',
        kind: 'exact',
        ...both((c) => [c.sync.indexBytes]),
      },
    );
  }
  return specs;
}

/** The numbers of a list that may hold unknowns (null: not measured). */
const numbers = (xs: ReadonlyArray<number | null | undefined> | undefined): number[] => (xs ?? []).filter((x): x is number => typeof x === 'number');

// ---- machine drift ----

function machineDrift(oldPeers: PeerResult[], newPeers: PeerResult[]): MachineDrift[] {
  const usable = (q: PeerResult['queries'][number]) => q.medianMs !== null && q.medianMs > 0 && !q.timedOut && q.error === null;
  const out: MachineDrift[] = [];
  for (const o of oldPeers) {
    const n = newPeers.find((p) => p.peer === o.peer);
    if (!o.available || !n?.available) continue;
    const newByName = new Map(n.queries.filter(usable).map((q) => [q.name, q.medianMs!]));
    const ratios = o.queries.filter(usable).flatMap((q) => {
      const nm = newByName.get(q.name);
      return nm === undefined ? [] : [nm / q.medianMs!];
    });
    out.push({ peer: o.peer, queries: ratios.length, ratio: ratios.length > 0 ? median(ratios) : null });
  }
  return out;
}

// ---- warnings ----

const short = (sha: string) => sha.slice(0, 12);
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;

function runWarnings(o: AnyBenchResult, n: AnyBenchResult): string[] {
  const w: string[] = [];
  if (o.corpus.sha256 !== n.corpus.sha256) {
    w.push(
      `corpus differs (old ${o.corpus.name}, ${o.corpus.files} files, sha256 ${short(o.corpus.sha256)}; new ${n.corpus.name}, ${n.corpus.files} files, sha256 ${short(n.corpus.sha256)}): not like for like`,
    );
  }
  const om = o.environment.machine;
  const nm = n.environment.machine;
  if (om.cpuModel !== nm.cpuModel || om.cores !== nm.cores) {
    w.push(`machine differs (old ${om.cpuModel} × ${om.cores} cores, new ${nm.cpuModel} × ${nm.cores} cores): timings are not like for like`);
  }
  if (o.environment.node !== n.environment.node) w.push(`Node differs (old ${o.environment.node}, new ${n.environment.node}): timings may move with it`);
  if (o.options.queriesSha256 !== n.options.queriesSha256) {
    w.push(`query mix differs (queries sha256 ${short(o.options.queriesSha256)} vs ${short(n.options.queriesSha256)}): queries are matched by name`);
  }
  if (o.options.quick !== n.options.quick) {
    w.push(
      `quick and full runs mixed (old ${o.options.quick ? 'quick' : 'full'}, new ${n.options.quick ? 'quick' : 'full'}): the quick side has fewer samples`,
    );
  }
  for (const [side, r] of [
    ['old', o],
    ['new', n],
  ] as const) {
    const cores: Array<[string, number | null]> = [
      ...Object.entries(r.foreignCores ?? {}),
      ...(r.cluster ? [['cluster', r.cluster.foreignCores] as [string, number | null]] : []),
    ];
    const busy = cores.filter(([, v]) => v !== null && v > BUSY_FOREIGN_CORES);
    if (busy.length > 0) {
      w.push(
        `${side} run: the machine was busy (foreign cores ${busy.map(([phase, v]) => `${phase} ${v!.toFixed(2)}`).join(', ')}; above ${BUSY_FOREIGN_CORES} the figures are not clean)`,
      );
    }
    const h = r.http?.search;
    if (h && (h.non2xx > 0 || h.errors > 0 || h.timeouts > 0)) {
      w.push(`${side} run: the HTTP load had ${h.non2xx} non-2xx responses, ${h.errors} errors, ${h.timeouts} timeouts (throughput counts 2xx only)`);
    }
    for (const c of r.cluster?.configurations ?? []) {
      const l = c.load;
      if (l.non2xx > 0 || l.errors > 0 || l.timeouts > 0)
        w.push(
          `${side} run: the cluster phase's load on ${c.kind === 'plain' ? 'one daemon' : `${c.nodes} nodes`} had ${l.non2xx} non-2xx responses, ${l.errors} errors, ${l.timeouts} timeouts`,
        );
      if (c.mismatches.length > 0) w.push(`${side} run: ${c.nodes} nodes answered ${c.mismatches.length} request(s) differently from one daemon`);
    }
  }
  if (
    o.cluster &&
    n.cluster &&
    (o.cluster.connections !== n.cluster.connections || o.cluster.seconds !== n.cluster.seconds || o.cluster.workersPerNode !== n.cluster.workersPerNode)
  ) {
    w.push(
      `cluster load differs (old ${o.cluster.connections} connections, ${o.cluster.seconds} s, ${o.cluster.workersPerNode} worker(s) per node; new ${n.cluster.connections}, ${n.cluster.seconds} s, ${n.cluster.workersPerNode}): cluster figures are not like for like`,
    );
  }
  if (o.http && n.http) {
    if (o.http.search.query !== n.http.search.query) w.push('HTTP load query differs: http/search figures are not like for like');
    if (o.http.stream.query !== n.http.stream.query || o.http.stream.matches !== n.http.stream.matches) {
      w.push('HTTP stream request differs: http/stream figures are not like for like');
    } else {
      const received = (r: AnyBenchResult) => r.http?.stream.runs.find((x) => x.matches !== null)?.matches ?? null;
      const [rOld, rNew] = [received(o), received(n)];
      if (rOld !== null && rNew !== null && rOld !== rNew) w.push(`HTTP stream results changed: ${rOld}→${rNew} matches streamed`);
    }
  }
  const [io, ino] = [o.indexing?.runs[0], n.indexing?.runs[0]];
  if (io && ino && o.corpus.sha256 === n.corpus.sha256) {
    const diffs = (['files', 'skipped', 'contentBytes'] as const).filter((k) => io[k] !== ino[k]).map((k) => `${k} ${io[k]}→${ino[k]}`);
    if (diffs.length > 0) w.push(`index content changed on the same corpus (${diffs.join(', ')}): index figures cover different work`);
  }
  return w;
}

function queryWarnings(o: AnyBenchResult, n: AnyBenchResult): string[] {
  const w: string[] = [];
  for (const { name, old, new: cur } of pairQueries(o, n)) {
    if (!old || !cur) {
      w.push(`query "${name}" only in ${old ? 'old' : 'new'}`);
      continue;
    }
    const asked = (q: QueryResult) => JSON.stringify([q.query, q.kind, q.regex, q.caseSensitive, q.matches]);
    if (asked(old) !== asked(cur)) w.push(`query "${name}" differs (text, kind, regex, case or matches asked for): not like for like`);
    for (const [side, q] of [
      ['old', old],
      ['new', cur],
    ] as const) {
      if (q.error !== null) w.push(`query "${name}" failed in ${side}: ${q.error}`);
    }
    if (old.stats && cur.stats) {
      // A search that stopped at the match limit counts the matches its workers had found by
      // then, which depends on timing: its total is compared only when both were exhaustive.
      const exhaustive = old.isSearchExhaustive === true && cur.isSearchExhaustive === true;
      const counts = (exhaustive ? (['totalMatchCount', 'actualMatchCount'] as const) : (['actualMatchCount'] as const))
        .filter((k) => old.stats![k] !== cur.stats![k])
        .map((k) => `${k} ${old.stats![k]}→${cur.stats![k]}`);
      if (old.isSearchExhaustive !== null && cur.isSearchExhaustive !== null && old.isSearchExhaustive !== cur.isSearchExhaustive) {
        counts.push(`isSearchExhaustive ${old.isSearchExhaustive}→${cur.isSearchExhaustive}`);
      }
      if (counts.length > 0) w.push(`query "${name}": results changed (${counts.join(', ')})`);
    }
  }
  return w;
}

function driftWarnings(drift: MachineDrift[], threshold: number): string[] {
  // When the peers moved by more than the smallest change reported, a verdict of that size
  // may be the machine's rather than trawl's.
  return drift
    .filter((d) => d.ratio !== null && Math.abs(d.ratio - 1) > threshold)
    .map(
      (d) =>
        `machine drift: ${d.peer} (unchanged between the runs) moved ${pct(d.ratio! - 1)} over ${d.queries} queries; changes of that size may be the machine's`,
    );
}
