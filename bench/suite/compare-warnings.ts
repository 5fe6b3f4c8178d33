// Why two runs of a bench comparison may not be like for like: the machine's drift, measured
// on the peers (ripgrep and csearch did not change between the runs), and the warnings of
// the report (corpus, machine, Node, query mix, a busy machine, failed requests, results
// that changed).

import type { MachineDrift } from './compare-report.ts';
import { pairQueries } from './compare-search-metrics.ts';
import { median } from './percentiles.ts';
import type { AnyBenchResult, PeerResult, QueryResult } from './result.ts';

/** bench/METHOD.md: above 0.2 foreign cores in a phase, its figures are not clean. */
const BUSY_FOREIGN_CORES = 0.2;

const short = (sha: string) => sha.slice(0, 12);
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(0)}%`;

export function machineDrift(oldPeers: PeerResult[], newPeers: PeerResult[]): MachineDrift[] {
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

export function runWarnings(o: AnyBenchResult, n: AnyBenchResult): string[] {
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

export function queryWarnings(o: AnyBenchResult, n: AnyBenchResult): string[] {
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

export function driftWarnings(drift: MachineDrift[], threshold: number): string[] {
  // When the peers moved by more than the smallest change reported, a verdict of that size
  // may be the machine's rather than trawl's.
  return drift
    .filter((d) => d.ratio !== null && Math.abs(d.ratio - 1) > threshold)
    .map(
      (d) =>
        `machine drift: ${d.peer} (unchanged between the runs) moved ${pct(d.ratio! - 1)} over ${d.queries} queries; changes of that size may be the machine's`,
    );
}
