// The headline figures (medians over the query mix, ratios to the peers, the targets) and
// their Markdown rendering.

import type { CindexBuild, TrawlBuild } from './build.ts';
import type { CorpusIdentity } from './corpus.ts';
import type { TrawlLatency } from './latency.ts';
import type { Environment } from './machine.ts';
import type { PeerResults } from './peers.ts';
import type { BenchQuery } from './queries.ts';
import { median } from './stats.ts';

export const TARGETS = {
  /** cindex build time / trawl build time, at least. */
  buildSpeedup: 1.5,
  /** trawl index bytes / indexed content bytes, at most (content is stored in the shards). */
  indexSizeRatio: 2.5,
  /** csearch median latency / trawl median latency, at least. */
  csearchSpeedup: 5,
  /** rg median latency / trawl median latency, at least. */
  rgSpeedup: 50,
  /** p50 of every rare-literal query, below (ms). */
  rareLiteralP50Ms: 10,
};

export interface TargetCheck {
  name: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

export interface BenchSummary {
  queries: number;
  trawlMedianP50Ms: number;
  rgMedianMs: number | null;
  csearchMedianMs: number | null;
  csearchOverTrawl: number | null;
  rgOverTrawl: number | null;
  rareLiteral: { queries: number; medianP50Ms: number; worstP50Ms: number; worstQuery: string } | null;
  buildSpeedup: number | null;
  indexSizeRatio: number;
  targets: TargetCheck[];
}

function peerMedian(peer: PeerResults | undefined, names: Set<string>): number | null {
  if (!peer?.available) return null;
  const ms = peer.queries.filter((q) => names.has(q.name) && Number.isFinite(q.medianMs)).map((q) => q.medianMs);
  return ms.length > 0 ? median(ms) : null;
}

const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);
const atLeast = (name: string, v: number | null, t: number): TargetCheck => ({ name, target: `≥ ${t}×`, value: v, met: v === null ? null : v >= t });

export function summarize(
  queries: BenchQuery[],
  trawl: TrawlLatency[],
  build: TrawlBuild,
  cindex: CindexBuild | null,
  peers: PeerResults[],
): BenchSummary {
  const ok = trawl.filter((t) => t.p50 !== undefined);
  const names = new Set(ok.map((t) => t.name));
  const trawlMedianP50Ms = median(ok.map((t) => t.p50!));
  const rgMedianMs = peerMedian(peers.find((p) => p.peer === 'rg'), names);
  const csearchMedianMs = peerMedian(peers.find((p) => p.peer === 'csearch'), names);
  const rare = ok.filter((t) => queries.find((q) => q.name === t.name)?.kind === 'rare-literal');
  const worst = rare.reduce<TrawlLatency | undefined>((w, t) => (!w || t.p50! > w.p50! ? t : w), undefined);
  const rareLiteral = worst ? { queries: rare.length, medianP50Ms: median(rare.map((t) => t.p50!)), worstP50Ms: worst.p50!, worstQuery: worst.name } : null;
  const buildSpeedup = cindex ? cindex.seconds / build.seconds : null;
  const csearchOverTrawl = ratio(csearchMedianMs, trawlMedianP50Ms);
  const rgOverTrawl = ratio(rgMedianMs, trawlMedianP50Ms);
  return {
    queries: ok.length,
    trawlMedianP50Ms,
    rgMedianMs,
    csearchMedianMs,
    csearchOverTrawl,
    rgOverTrawl,
    rareLiteral,
    buildSpeedup,
    indexSizeRatio: build.sizeRatio,
    targets: [
      atLeast('index build speed vs cindex', buildSpeedup, TARGETS.buildSpeedup),
      { name: 'index size / indexed content', target: `≤ ${TARGETS.indexSizeRatio}×`, value: build.sizeRatio, met: build.sizeRatio <= TARGETS.indexSizeRatio },
      atLeast('median latency vs csearch', csearchOverTrawl, TARGETS.csearchSpeedup),
      atLeast('median latency vs rg', rgOverTrawl, TARGETS.rgSpeedup),
      {
        name: 'rare literal p50 (worst)',
        target: `< ${TARGETS.rareLiteralP50Ms} ms`,
        value: rareLiteral?.worstP50Ms ?? null,
        met: rareLiteral ? rareLiteral.worstP50Ms < TARGETS.rareLiteralP50Ms : null,
      },
    ],
  };
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 100 ? `${ms.toFixed(1)} ms` : ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function fmtBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : n < 10 ? 2 : 1)} ${units[i]}`;
}

const fmtX = (x: number | null) => (x === null || !Number.isFinite(x) ? '—' : x >= 100 ? `${Math.round(x)}×` : `${x.toFixed(x < 10 ? 2 : 1)}×`);
const fmtMet = (c: TargetCheck) => (c.met === null ? 'n/a' : c.met ? 'met' : 'missed');
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/`/g, "'");

export function markdown(args: {
  date: string;
  env: Environment;
  contention: Record<string, number | null>;
  corpus: CorpusIdentity;
  build: TrawlBuild;
  cindex: CindexBuild | null;
  queries: BenchQuery[];
  trawl: TrawlLatency[];
  peers: PeerResults[];
  summary: BenchSummary;
  iterations: number;
  peerRuns: number;
  coldStartMs: number;
}): string {
  const { env, corpus, build, cindex, summary: s } = args;
  const t = s.targets;
  const rss = (b: number | null) => (b === null ? '' : `, peak RSS ${fmtBytes(b)}`);
  const lines = [
    `### trawl ${env.trawlVersion} on ${corpus.name} — ${args.date}`,
    '',
    `${corpus.files.toLocaleString('en-US')} files, ${fmtBytes(corpus.totalBytes)} (sha256 ${corpus.sha256.slice(0, 12)}…); ` +
      `${env.machine.cpuModel}, ${env.machine.cores} cores, ${fmtBytes(env.machine.totalMemoryBytes)} RAM; Node ${env.node}; commit ${env.gitCommit.slice(0, 12)}${env.gitCommit.includes('uncommitted') ? ' (uncommitted changes)' : ''}; ` +
      `${env.ripgrep ?? 'rg not installed'}; codesearch ${env.codesearch ?? 'not installed'}. ` +
      `Cores used by other processes during ${Object.keys(args.contention).join(' / ')}: ${Object.values(args.contention).map((c) => (c === null ? '?' : c.toFixed(2))).join(' / ')}.`,
    '',
    '| | trawl | cindex / csearch | rg | target | |',
    '|---|---|---|---|---|---|',
    `| Index build | ${build.seconds.toFixed(1)} s (${build.mbPerSecond.toFixed(1)} MB/s${rss(build.peakRssBytes)}) | ${cindex ? `${cindex.seconds.toFixed(1)} s (${cindex.mbPerSecond.toFixed(1)} MB/s${rss(cindex.peakRssBytes)})` : '—'} | — | cindex/trawl ${t[0]!.target} | ${fmtX(s.buildSpeedup)} ${fmtMet(t[0]!)} |`,
    `| Index size | ${fmtBytes(build.indexBytes)} for ${fmtBytes(build.contentBytes)} of content (${build.files.toLocaleString('en-US')} files, ${build.shards} shard${build.shards === 1 ? '' : 's'}) | ${cindex ? fmtBytes(cindex.indexBytes) : '—'} | — | ${t[1]!.target} content | ${fmtX(s.indexSizeRatio)} ${fmtMet(t[1]!)} |`,
    `| Median latency over ${s.queries} queries (trawl: p50) | ${fmtMs(s.trawlMedianP50Ms)} | ${fmtMs(s.csearchMedianMs)} | ${fmtMs(s.rgMedianMs)} | csearch/trawl ${t[2]!.target}, rg/trawl ${t[3]!.target} | ${fmtX(s.csearchOverTrawl)} ${fmtMet(t[2]!)}, ${fmtX(s.rgOverTrawl)} ${fmtMet(t[3]!)} |`,
    `| Rare literal p50 (${s.rareLiteral ? `median / worst of ${s.rareLiteral.queries}` : 'none'}) | ${s.rareLiteral ? `${fmtMs(s.rareLiteral.medianP50Ms)} / ${fmtMs(s.rareLiteral.worstP50Ms)}` : '—'} | | | worst ${t[4]!.target} | ${fmtMet(t[4]!)} |`,
    '',
    `trawl: in-process Searcher, after an untimed pass over the mix (first search of the run: ${fmtMs(args.coldStartMs)}), ${args.iterations} timed runs per query after one warm-up, matches=100. ` +
      (args.peers.some((p) => p.available)
        ? `rg and csearch: median of ${args.peerRuns} run${args.peerRuns === 1 ? '' : 's'}, every match printed to /dev/null.`
        : 'Peers not run.'),
    '',
    '| query | kind | trawl p50 | trawl p95 | shown / total matches | csearch | rg | csearch / trawl | rg / trawl |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const peer = (name: string, q: string) => args.peers.find((p) => p.peer === name)?.queries.find((r) => r.name === q);
  for (const q of args.queries) {
    const r = args.trawl.find((x) => x.name === q.name)!;
    const cs = peer('csearch', q.name);
    const rg = peer('rg', q.name);
    const peerCell = (p: typeof cs) => (p ? (p.error ? 'error' : `${p.timedOut ? '≥ ' : ''}${fmtMs(p.medianMs)}`) : '—');
    const pattern = `\`${cell(q.query)}\`${q.regex ? ' (regex' : ' (literal'}${q.caseSensitive ? ')' : ', -i)'}`;
    const matches = r.stats ? `${r.stats.actualMatchCount} / ${r.stats.totalMatchCount}` : '—';
    lines.push(
      `| ${pattern} | ${q.kind} | ${r.error ? `error: ${cell(r.error.slice(0, 60))}` : fmtMs(r.p50)} | ${fmtMs(r.p95)} | ${matches} | ${peerCell(cs)} | ${peerCell(rg)} | ${fmtX(ratio(cs?.medianMs ?? null, r.p50 ?? null))} | ${fmtX(ratio(rg?.medianMs ?? null, r.p50 ?? null))} |`,
    );
  }
  return lines.join('\n') + '\n';
}
