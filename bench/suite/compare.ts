// `trawl bench compare OLD.json NEW.json`: two "trawl-bench/1" results in, one
// report out (its shape and field names: compare-report.ts). Pure: no files, no clock, no
// randomness beyond stats.ts's seeded bootstrap, so the same two results always give the
// same report. This file sets the order of the metrics and of the warnings; the metrics are
// gathered by compare-search-metrics.ts, compare-core-metrics.ts, compare-phase-metrics.ts
// and compare-many-metrics.ts, each judged by compare-judge.ts; compare-warnings.ts says
// where the runs are not like for like.

import {
  COMPARE_FORMAT,
  type CompareReport,
  type CompareResultsOptions,
  type MetricComparison,
  type MetricVerdict,
  type RunIdentity,
} from './compare-report.ts';
import { metric } from './compare-judge.ts';
import { searchMetrics } from './compare-search-metrics.ts';
import { coreSpecs } from './compare-core-metrics.ts';
import { clusterSpecs, phaseSpecs } from './compare-phase-metrics.ts';
import { distinctSpecs, manySpecs } from './compare-many-metrics.ts';
import { driftWarnings, machineDrift, queryWarnings, runWarnings } from './compare-warnings.ts';
import { RESULT_FORMAT, type AnyBenchResult } from './result.ts';

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

function otherMetrics(oldR: AnyBenchResult, newR: AnyBenchResult, opts: Required<CompareResultsOptions>): MetricComparison[] {
  return [...distinctSpecs(oldR, newR), ...coreSpecs(oldR, newR), ...phaseSpecs(oldR, newR), ...manySpecs(oldR, newR), ...clusterSpecs(oldR, newR)].map((s) =>
    metric(s, opts),
  );
}
