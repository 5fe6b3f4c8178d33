// The peers on the same corpus and queries in the same run, when installed: ripgrep
// (no index: reads the tree on every query) and codesearch (cindex builds its trigram
// index here, csearch queries it). Each query with a peer equivalent (queries.ts)
// runs `runs` times as a child process, output to /dev/null; the median is compared with
// trawl's p50 as a ratio (peer / trawl: how many times faster trawl is).

import { join } from 'node:path';
import { buildCindex } from './build.ts';
import { settleIo } from './machine.ts';
import { measurePeer, type PeerName } from './peers.ts';
import type { BenchQuery } from './queries.ts';
import type { PeerResult, QueryResult } from './result.ts';
import { median } from './percentiles.ts';

export interface PeersPhaseOptions {
  corpus: string;
  corpusBytes: number;
  work: string;
  runs: number;
  timeoutSeconds: number;
  versions: Record<PeerName, string | null>;
}

/** Where the phase builds csearch's index in the work dir (the distinct identifiers' peers read it too). */
export const csearchIndexIn = (work: string) => join(work, 'csindex');

const ratio = (a: number | null, b: number | null) => (a === null || b === null || b <= 0 ? null : a / b);

export async function peersPhase(o: PeersPhaseOptions, queries: BenchQuery[], trawl: QueryResult[], log: (s: string) => void): Promise<PeerResult[]> {
  const trawlP50 = new Map(trawl.map((t) => [t.name, t.latencyMs?.p50 ?? null]));
  const out: PeerResult[] = [];
  for (const peer of ['csearch', 'rg'] as const) {
    let index: PeerResult['index'] = null;
    let csearchIndex: string | undefined;
    if (peer === 'csearch') {
      await settleIo();
      const built = buildCindex(o.corpus, o.corpusBytes, csearchIndexIn(o.work), o.work);
      if (built) {
        csearchIndex = built.indexPath;
        index = { seconds: built.seconds, mbPerSecond: built.mbPerSecond, indexBytes: built.indexBytes, peakRssBytes: built.peakRssBytes };
        log(`cindex  ${built.seconds.toFixed(2)} s, ${built.mbPerSecond.toFixed(1)} MB/s, index ${(built.indexBytes / 1e6).toFixed(1)} MB`);
      }
    }
    const measured = measurePeer(peer, queries, { corpus: o.corpus, csearchIndex, runs: o.runs, timeoutMs: o.timeoutSeconds * 1000 }, log);
    const pq = measured.queries.map((q) => {
      const medianMs = q.error || q.samplesMs.length === 0 ? null : q.medianMs;
      return {
        name: q.name,
        command: q.command,
        samplesMs: q.samplesMs,
        medianMs,
        ratioToTrawl: ratio(medianMs, trawlP50.get(q.name) ?? null),
        timedOut: q.timedOut,
        error: q.error ?? null,
      };
    });
    // Over the queries both ran successfully.
    const both = pq.filter((q) => q.medianMs !== null && (trawlP50.get(q.name) ?? null) !== null);
    const peerMedian = both.length ? median(both.map((q) => q.medianMs!)) : null;
    const trawlMedian = both.length ? median(both.map((q) => trawlP50.get(q.name)!)) : null;
    out.push({
      peer,
      available: measured.available,
      version: o.versions[peer],
      note: measured.note ?? null,
      index,
      queries: pq,
      medianMs: peerMedian,
      trawlMedianP50Ms: trawlMedian,
      ratio: ratio(peerMedian, trawlMedian),
    });
  }
  return out;
}
