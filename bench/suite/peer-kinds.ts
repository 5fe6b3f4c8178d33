// A peer on queries trawl sent once each (distinct-latency.ts): every query run once as a
// whole process (peers.ts measurePeer, output to /dev/null), its median beside trawl's over
// the same queries, and their ratio (peer / trawl: how many times faster trawl is). Used
// for the held-out identifiers of a run on one corpus and for each query kind of the
// many-repositories phase.

import { measurePeer, type PeerName } from './peers.ts';
import { median } from './percentiles.ts';
import type { BenchQuery } from './queries.ts';
import type { PeerKind } from './result.ts';

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** Which of the queries a peer runs, and where. */
export interface PeerKindRun {
  /** The first `take` queries are run. */
  take: number;
  corpus: string;
  /** csearch's index (undefined: none, or another peer). */
  csearchIndex?: string | undefined;
  timeoutSeconds: number;
}

/**
 * `peer` on the first `take` of `queries` (each with its peer pattern); `trawlMs[i]` is
 * trawl's time for `queries[i]` (null: it failed). null when the peer is not installed, or
 * csearch has no index.
 */
export function peerKind(
  peer: PeerName,
  queries: readonly BenchQuery[],
  trawlMs: ReadonlyArray<number | null>,
  { take, corpus, csearchIndex, timeoutSeconds }: PeerKindRun,
): PeerKind | null {
  const run = queries.slice(0, take);
  const m = measurePeer(peer, run, { corpus, csearchIndex, runs: 1, timeoutMs: timeoutSeconds * 1000 }, () => {});
  if (!m.available) return null;
  const byName = new Map(run.map((q, i) => [q.name, i]));
  const samplesMs: number[] = [];
  const trawl: number[] = [];
  let errors = 0;
  let firstError: string | null = null;
  for (const r of m.queries) {
    if (r.error || r.timedOut || r.samplesMs.length === 0) {
      errors++;
      firstError ??= r.error ?? 'timed out';
      continue;
    }
    samplesMs.push(round4(r.samplesMs[0]!));
    const t = trawlMs[byName.get(r.name)!];
    if (t !== null && t !== undefined) trawl.push(t);
  }
  const medianMs = samplesMs.length ? round4(median(samplesMs)) : null;
  const trawlMedianMs = trawl.length ? round4(median(trawl)) : null;
  return {
    queries: run.length,
    samplesMs,
    medianMs,
    trawlMedianMs,
    ratio: medianMs === null || !trawlMedianMs ? null : round4(medianMs / trawlMedianMs),
    errors,
    firstError,
  };
}

/** A literal as the peers run it (case-sensitive, as trawl's distinct queries are sent). */
export function literalQuery(name: string, literal: string, extra: Partial<NonNullable<BenchQuery['peer']>> = {}): BenchQuery {
  return {
    name,
    query: literal,
    regex: false,
    caseSensitive: true,
    kind: 'rare-literal',
    set: 'distinct',
    peer: { pattern: literal, regex: false, caseSensitive: true, ...extra },
  };
}

/** One line for the log. */
export function peerLine(p: PeerKind | null): string {
  if (!p) return 'not run';
  return `median ${p.medianMs === null ? '—' : `${p.medianMs.toFixed(1)} ms`} over ${p.samplesMs.length} (trawl ${p.trawlMedianMs === null ? '—' : `${p.trawlMedianMs.toFixed(2)} ms`}, ratio ${p.ratio === null ? '—' : p.ratio.toFixed(1)})${p.errors ? `, ${p.errors} errors (${p.firstError})` : ''}`;
}
