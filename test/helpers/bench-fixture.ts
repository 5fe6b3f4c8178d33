// Synthetic "trawl-bench/1" results for the bench compare tests: complete and type-correct,
// with every sample drawn from a seeded generator so that a test can ask for "the same
// machine, another run" (another seed) or "this run, slower" (the same seed, scaled).
//
// What the seed does not touch is what the corpus fixes: search stats, match counts, index
// bytes. The scales are applied after drawing, so the same seed with scale 1.3 gives every
// sample of scale 1 multiplied by exactly 1.3.

import type { SearchStats } from '../../daemon/search/types.ts';
import { RESULT_FORMAT, type BenchResult, type PeerResult, type QueryResult } from '../../bench/suite/result.ts';
import { median, quantileSorted } from '../../bench/suite/percentiles.ts';
import { seededRandom } from '../../bench/suite/stats.ts';

export interface SyntheticOptions {
  seed?: number;
  /** Multiplies every latency sample: search queries, HTTP responses, stream first byte. */
  latencyScale?: number;
  /** Multiplies the HTTP throughput samples (req/s and MB/s). */
  throughputScale?: number;
  /** Multiplies the index build's wall time. */
  indexSecondsScale?: number;
  /** Samples per query (default 200). */
  iterations?: number;
  /** HTTP load responses timed (default 500). Tests of other figures ask for fewer: the bootstrap's cost grows with them. */
  responses?: number;
}

/** The fixture's query mix: medians from 0.5 ms to 500 ms, texts with XML's special characters. */
export const SYNTHETIC_QUERIES: ReadonlyArray<{ name: string; query: string; kind: string; regex: boolean; medianMs: number }> = [
  { name: 'rare-literal', query: 'ext4_mb_good_group_nolock', kind: 'rare-literal', regex: false, medianMs: 0.6 },
  { name: 'include-angle', query: '#include <linux/module.h>', kind: 'common-literal', regex: false, medianMs: 3 },
  { name: 're-and', query: 'if \\(\\w+ && \\w+ > 0\\)', kind: 'regex', regex: true, medianMs: 40 },
  { name: 'quoted', query: `"struct file_operations" 'x' lang:c`, kind: 'filter', regex: false, medianMs: 12 },
  { name: 'sym-kmalloc', query: 'sym:kmalloc', kind: 'symbol', regex: false, medianMs: 1.5 },
  {
    name: 'long-or',
    query: 'file:drivers/net/ethernet -file:test (spin_lock_irqsave or spin_unlock_irqrestore) case:yes',
    kind: 'or',
    regex: false,
    medianMs: 480,
  },
];

/** Standard normal draws (Box-Muller) from a seeded uniform generator. */
function gaussian(random: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Log-normal samples around `med` with spread sigma, and 1% slow outliers (×5), as latencies have. */
function logNormal(normal: () => number, random: () => number, n: number, med: number, sigma: number): number[] {
  return Array.from({ length: n }, () => med * Math.exp(sigma * normal()) * (random() < 0.01 ? 5 : 1));
}

function percentiles(samples: number[]): QueryResult['latencyMs'] {
  const s = [...samples].sort((a, b) => a - b);
  return {
    p50: quantileSorted(s, 0.5),
    p95: quantileSorted(s, 0.95),
    p99: quantileSorted(s, 0.99),
    mean: s.reduce((a, b) => a + b, 0) / s.length,
    min: s[0]!,
    max: s[s.length - 1]!,
  };
}

/** The work a query does is a property of the corpus and the engine, not of the run. */
function stats(i: number): SearchStats {
  return {
    actualMatchCount: 40 + i,
    totalMatchCount: 100 * (i + 1),
    duration: 1_000_000,
    fileCount: 10 + i,
    filesSkipped: 0,
    contentBytesLoaded: 65536 * (i + 1),
    indexBytesLoaded: 4096 * (i + 1),
    crashes: 0,
    shardFilesConsidered: 8,
    filesConsidered: 20 + i,
    filesLoaded: 12 + i,
    shardsScanned: 8,
    shardsSkipped: 0,
    shardsSkippedFilter: 0,
    ngramMatches: 30 * (i + 1),
    ngramLookups: 6,
    wait: 10_000,
    matchTreeConstruction: 5_000,
    matchTreeSearch: 200_000,
    regexpsConsidered: i % 2,
    flushReason: 'FLUSH_REASON_FINAL_FLUSH',
  };
}

export function syntheticResult(options: SyntheticOptions = {}): BenchResult {
  const { seed = 1, latencyScale = 1, throughputScale = 1, indexSecondsScale = 1, iterations = 200, responses = 500 } = options;
  const random = seededRandom(seed);
  const normal = gaussian(random);
  const scaled = (xs: number[], k: number) => xs.map((x) => x * k);

  const queries: QueryResult[] = SYNTHETIC_QUERIES.map((q, i) => {
    const samplesMs = scaled(logNormal(normal, random, iterations, q.medianMs, 0.25), latencyScale);
    return {
      name: q.name,
      query: q.query,
      set: 'synthetic',
      kind: q.kind,
      regex: q.regex,
      caseSensitive: true,
      matches: 100,
      samplesMs,
      latencyMs: percentiles(samplesMs),
      stats: stats(i),
      isSearchExhaustive: true,
      error: null,
    };
  });

  const httpSamplesMs = scaled(logNormal(normal, random, responses, 8, 0.3), latencyScale);
  const perSecondSamples = scaled(
    Array.from({ length: 10 }, () => 950 * Math.exp(0.03 * normal())),
    throughputScale,
  ).map(Math.round);
  const streamRuns = Array.from({ length: 8 }, () => {
    const totalMs = 400 * Math.exp(0.05 * normal());
    const bytes = 12_000_000;
    return {
      bytes,
      messages: 120,
      matches: 5000,
      firstByteMs: 6 * Math.exp(0.2 * normal()) * latencyScale,
      totalMs,
      mbPerSecond: (bytes / 1e6 / (totalMs / 1000)) * throughputScale,
    };
  });
  const idle = Array.from({ length: 30 }, () => 180e6 * (1 + 0.002 * normal())).map(Math.round);
  const load = Array.from({ length: 100 }, () => 260e6 * (1 + 0.02 * normal())).map(Math.round);
  const indexSeconds = 60 * Math.exp(0.05 * normal()) * indexSecondsScale;

  // rg runs the first three queries, three times each; ripgrep did not change between runs.
  const rgQueries = queries.slice(0, 3).map((q, i) => {
    const samples = Array.from({ length: 3 }, () => 900 * (i + 1) * Math.exp(0.05 * normal()));
    const medianMs = median(samples);
    return {
      name: q.name,
      command: ['rg', '-n', '-e', q.query, '/corpus'],
      samplesMs: samples,
      medianMs,
      ratioToTrawl: medianMs / q.latencyMs!.p50,
      timedOut: false,
      error: null,
    };
  });
  const rg: PeerResult = {
    peer: 'rg',
    available: true,
    version: 'ripgrep 14.1.0',
    note: null,
    index: null,
    queries: rgQueries,
    medianMs: median(rgQueries.map((q) => q.medianMs)),
    trawlMedianP50Ms: median(queries.slice(0, 3).map((q) => q.latencyMs!.p50)),
    ratio: null,
  };
  rg.ratio = rg.medianMs! / rg.trawlMedianP50Ms!;
  const csearch: PeerResult = {
    peer: 'csearch',
    available: false,
    version: null,
    note: 'not installed',
    index: null,
    queries: [],
    medianMs: null,
    trawlMedianP50Ms: null,
    ratio: null,
  };

  const contentBytes = 1_200_000_000;
  const indexBytes = 2_400_000_000;
  return {
    format: RESULT_FORMAT,
    startedAt: `2026-12-0${1 + (seed % 9)}T10:00:00.000Z`,
    finishedAt: `2026-12-0${1 + (seed % 9)}T10:20:00.000Z`,
    options: {
      corpus: 'linux',
      queries: 'bench/queries/synthetic.json',
      queriesSha256: 'a'.repeat(64),
      quick: false,
      iterations,
      workers: 2,
      indexRuns: 1,
      symbols: true,
      httpSeconds: 10,
      httpConnections: 8,
      streamRuns: streamRuns.length,
      peerRuns: 3,
      peerTimeoutSeconds: 300,
    },
    environment: {
      machine: { cpuModel: 'Synthetic CPU @ 2.0GHz', cores: 2, totalMemoryBytes: 8e9, platform: 'linux' },
      node: 'v20.20.0',
      kernel: '6.1.0-synthetic',
      trawlVersion: '0.1.0',
      gitCommit: `${seed.toString(16).padStart(7, '0')}${'0'.repeat(33)}`,
      ripgrep: 'ripgrep 14.1.0',
      codesearch: null,
      tinybench: '6.2.3',
      autocannon: '8.0.0',
    },
    corpus: { name: 'linux-6.1', path: '/corpus/linux-6.1', files: 78000, totalBytes: 1_300_000_000, sha256: 'c'.repeat(64), git: false },
    indexing: {
      runs: [
        {
          seconds: indexSeconds,
          mbPerSecond: 1300 / indexSeconds,
          peakRssBytes: 900e6,
          indexBytes,
          contentBytes,
          sizeRatio: indexBytes / contentBytes,
          files: 77500,
          skipped: 500,
          shards: 13,
          symbolCount: 4_000_000,
          contentSeconds: indexSeconds,
        },
      ],
    },
    search: { coldStartMs: 250, queries },
    http: {
      search: {
        query: '{"q":"mutex_lock"}',
        seconds: 10,
        connections: 8,
        requestsPerSecond: median(perSecondSamples),
        perSecondSamples,
        latencyMs: percentiles(httpSamplesMs),
        samplesMs: httpSamplesMs,
        non2xx: 0,
        errors: 0,
        timeouts: 0,
        serverCpuMsPerRequest: 1.2,
      },
      stream: {
        query: '{"q":"kmalloc","matches":5000}',
        matches: 5000,
        runs: streamRuns,
        mbPerSecondSamples: streamRuns.map((r) => r.mbPerSecond),
        firstByteMsSamples: streamRuns.map((r) => r.firstByteMs!),
      },
    },
    memory: { idleSamplesBytes: idle, loadSamplesBytes: load, idleMedianBytes: median(idle), loadMedianBytes: median(load), loadPeakBytes: Math.max(...load) },
    peers: [rg, csearch],
    foreignCores: { corpus: 0.01, indexing: 0.02, search: 0.01, http: 0.03, peers: 0.02 },
    summary: {
      searchMedianP50Ms: median(queries.map((q) => q.latencyMs!.p50)),
      indexSeconds,
      indexMbPerSecond: 1300 / indexSeconds,
      httpRequestsPerSecond: median(perSecondSamples),
      streamMbPerSecond: median(streamRuns.map((r) => r.mbPerSecond)),
    },
    notes: [],
  };
}
