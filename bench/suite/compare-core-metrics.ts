// The core phases' metrics of a bench comparison, apart from the search queries'
// (compare-search-metrics.ts): the HTTP load and stream, the daemon's memory, the index
// build, and whole `trawl` commands. Each is a MetricSpec, judged by compare-judge.ts.

import type { MetricSpec } from './compare-judge.ts';
import { hasCorePhases, type AnyBenchResult, type CommandRuns, type CommandsPhase } from './result.ts';

/**
 * The core phases' figures, when either side has them (a run of the cluster phase alone
 * has none: two such runs compare on the cluster's figures only, and against a full run
 * these are not judged).
 */
export function coreSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
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
