// The opt-in phases' metrics of a bench comparison (the HTTP query mix, auth, the web UI and
// its viewer, reindex, the cluster), each only when either side ran the phase. Each is a
// MetricSpec, judged by compare-judge.ts.

import type { MetricSpec } from './compare-judge.ts';
import { clusterKey, clusterName, replicationFor } from './cluster-figures.ts';
import { median } from './percentiles.ts';
import type { AnyBenchResult, AuthVariant, ClusterConfiguration, HttpQueryResult, ReindexPhase, WebQuery } from './result.ts';

/** The opt-in phases' metrics, when either side ran the phase (a side without it is not judged). */
export function phaseSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  return [...httpQueriesSpecs(oldR, newR), ...authSpecs(oldR, newR), ...webSpecs(oldR, newR), ...viewerSpecs(oldR, newR), ...reindexSpecs(oldR, newR)];
}

/** Each query of the mix over HTTP from one client. */
function httpQueriesSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.httpQueries && !newR.httpQueries) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  // One figure per query (its p50, or its daemon CPU per request): the mix's spread, tested.
  const perQuery = (r: AnyBenchResult, pick: (q: HttpQueryResult) => number | null | undefined) =>
    (r.httpQueries?.queries ?? []).flatMap((q) => {
      const x = pick(q);
      return x === null || x === undefined ? [] : [x];
    });
  return [
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
  ];
}

/** Search with and without the API key, and what the step costs. */
function authSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.auth && !newR.auth) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  const specs: MetricSpec[] = [];
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
  return specs;
}

/** The web UI: a search from the page load to its results on screen. */
function webSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.web && !newR.web) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  // One figure per query (its median over the page loads): the mix's spread, tested.
  const perQuery = (r: AnyBenchResult, pick: (q: WebQuery) => number[]) => (r.web?.queries ?? []).flatMap((q) => (pick(q).length > 0 ? [median(pick(q))] : []));
  return [
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
  ];
}

/** The code viewer of the web UI. */
function viewerSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.viewer && !newR.viewer) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  return [
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
  ];
}

/** Index builds of a repository with branches, and the syncs that follow. */
function reindexSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
  if (!oldR.reindex && !newR.reindex) return [];
  const both = <T>(pick: (r: AnyBenchResult) => T) => ({ old: pick(oldR), new: pick(newR) });
  const specs: MetricSpec[] = [];
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
  return specs;
}

/**
 * The cluster phase's figures per configuration (the one daemon, and each node count),
 * when either side ran it: throughput per second of the load run, the nodes' CPU per
 * request per second of it, and each query's p50 from one client (the mix's spread, tested).
 * A configuration only one side measured is not judged.
 */
export function clusterSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
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
