// The headline latency of a run on one corpus: held-out identifiers drawn from the corpus
// (identifiers.ts: none that the query mix holds), each sent once over HTTP by one client
// after a warm-up on other identifiers (distinct-latency.ts), against a `trawl serve`
// started here over the built data dir, timed to ready with its first search. With
// `--cold`, a second daemon is started, the page cache dropped once it is ready, and
// further identifiers are timed the same way.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { corpusIdentifiers, drawSets } from './identifiers.ts';
import { client, coldIdentifiers, identifierSpecs, identifiersAfterReady, type IdentifierSets } from './distinct-latency.ts';
import { round2, stopServer } from './load.ts';
import { cpuMark, foreignCores } from './machine.ts';
import type { BenchQuery } from './queries.ts';
import type { DistinctPhase, Warmup } from './result.ts';
import { serveUntilReady } from './serve-ready.ts';
import { literalQuery, peerKind, peerLine } from './peer-kinds.ts';

export interface DistinctPhaseOptions {
  root: string;
  corpus: string;
  dataDir: string;
  work: string;
  /** Identifiers timed (and, with `cold`, as many again after the drop). */
  count: number;
  warmup: Warmup;
  cold: boolean;
  seed: number;
}

/** The names in a query mix's queries: held out of the identifiers drawn. */
export function mixNames(queries: readonly BenchQuery[]): Set<string> {
  return new Set(queries.flatMap((q) => q.query.match(/[A-Za-z0-9_]+/g) ?? []));
}

/**
 * The measurement, and each timed identifier's time by its position (for the peers'
 * ratios, distinctPeers); undefined (and why, in `notes`) when the corpus holds too few
 * identifiers for one.
 */
export async function distinctPhase(
  o: DistinctPhaseOptions,
  queries: readonly BenchQuery[],
  log: (s: string) => void,
  notes: string[],
): Promise<{ phase: DistinctPhase; msByRequest: Array<number | null> } | undefined> {
  const candidates = corpusIdentifiers(o.corpus, { exclude: mixNames(queries) });
  const drawn = drawSets(candidates, identifierSpecs(o.count, o.warmup, o.cold, candidates.length), o.seed);
  if (drawn.first.length === 0 || drawn.measured.length === 0) {
    notes.push(`no distinct-query latency: the corpus holds ${candidates.length} identifiers (identifiers.ts), too few to time`);
    return undefined;
  }
  if (drawn.measured.length < o.count)
    notes.push(`distinct-query latency over ${drawn.measured.length} identifiers, not ${o.count}: the corpus holds ${candidates.length}`);
  const names = (xs: Array<{ name: string }>) => xs.map((x) => x.name);
  const sets: IdentifierSets = { first: drawn.first[0]!.name, warmup: names(drawn.warmup), measured: names(drawn.measured), cold: names(drawn.cold) };
  log(`distinct ${candidates.length} identifiers in the corpus; timing ${sets.measured.length}, each once, after a warm-up on ${sets.warmup.length} others`);
  const cwd = join(o.work, 'serve-distinct');
  mkdirSync(cwd, { recursive: true });
  const serve = () => serveUntilReady({ root: o.root, dataDir: o.dataDir, cwd });
  // The daemons are this process's children, reaped before the end: their CPU is not foreign.
  const from = cpuMark();
  const ready = await serve();
  const c = client(ready.server.url);
  const warm = await identifiersAfterReady(ready, c, sets, { warmup: o.warmup, log, label: 'distinct' }).finally(async () => {
    c.agent.destroy();
    await stopServer(ready.server);
  });
  const cold = o.cold && sets.cold.length > 1 ? await coldIdentifiers(serve, sets.cold, log, 'distinct') : undefined;
  const cores = foreignCores(from, cpuMark());
  return {
    phase: {
      seed: o.seed,
      candidates: candidates.length,
      start: warm.start,
      warmup: warm.warmup,
      identifiers: warm.identifiers,
      ...(cold ? { cold } : {}),
      foreignCores: cores === null ? null : round2(cores),
    },
    msByRequest: warm.msByRequest,
  };
}

/**
 * The peers on the timed identifiers, once the peers phase has built csearch's index
 * (`csearchIndex`; undefined: none): csearch on every one, rg on the first `rgSample`,
 * each once as a whole process. Fills `phase.csearch` and `phase.rg`.
 */
export function distinctPeers(
  phase: DistinctPhase,
  msByRequest: ReadonlyArray<number | null>,
  o: { corpus: string; csearchIndex: string | undefined; rgSample: number; timeoutSeconds: number },
  log: (s: string) => void,
): void {
  const queries = phase.identifiers.queries.map((q, i) => literalQuery(`distinct-${i}`, q));
  phase.csearch =
    o.csearchIndex === undefined
      ? null
      : peerKind('csearch', queries, msByRequest, { take: queries.length, corpus: o.corpus, csearchIndex: o.csearchIndex, timeoutSeconds: o.timeoutSeconds });
  phase.rg = peerKind('rg', queries, msByRequest, { take: o.rgSample, corpus: o.corpus, timeoutSeconds: o.timeoutSeconds });
  log(`distinct csearch ${peerLine(phase.csearch)}; rg ${peerLine(phase.rg)}`);
}
