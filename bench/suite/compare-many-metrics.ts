// The metrics of a bench comparison for the phases of held-out identifiers, each sent once:
// on the one corpus (distinct), and over many repositories per corpus with their sync,
// start, change, load and memory (many). Each is a MetricSpec, judged by compare-judge.ts.

import type { MetricSpec } from './compare-judge.ts';
import type { AnyBenchResult, DistinctPhase, ManyReposCorpus } from './result.ts';

/** The numbers of a list that may hold unknowns (null: not measured). */
const numbers = (xs: ReadonlyArray<number | null | undefined> | undefined): number[] => (xs ?? []).filter((x): x is number => typeof x === 'number');

/**
 * The held-out identifiers, each sent once (the headline), when either side has them: the
 * same corpus and seed draw the same identifiers, so the two sets of samples are of the
 * same queries. A side without them (a result from before) is not judged.
 */
export function distinctSpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
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
export function manySpecs(oldR: AnyBenchResult, newR: AnyBenchResult): MetricSpec[] {
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
