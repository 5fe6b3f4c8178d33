// The headline figures (medians over the query mix, ratios to the peers, the targets, the
// filter pairs), their Markdown rendering, and the comparison with an earlier result file.

import type { CindexBuild, TrawlBuild } from './build.ts';
import type { CorpusIdentity } from './corpus.ts';
import { MATCH_LIMIT, type TrawlLatency } from './latency.ts';
import type { Environment } from './machine.ts';
import type { PeerQueryResult, PeerResults } from './peers.ts';
import type { BenchQuery } from './queries.ts';
import { median } from './stats.ts';

export const TARGETS = {
  /** cindex build time / trawl build time (content only, --no-symbols), at least. */
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

/**
 * The query set the latency targets are checked on: the issue-2 mix, unchanged since the
 * first result, so that every result file's headline median is like for like. Queries
 * added later are reported in their own rows. When no query carries this set, all do.
 */
export const TARGET_SET = 'issue-2';

export interface TargetCheck {
  name: string;
  target: string;
  value: number | null;
  met: boolean | null;
}

export interface MixMedian {
  queries: number;
  trawlMedianP50Ms: number;
  csearchMedianMs: number | null;
  rgMedianMs: number | null;
  csearchOverTrawl: number | null;
  rgOverTrawl: number | null;
}

export interface FilterPair {
  unfiltered: string;
  filtered: string;
  unfilteredQuery: string;
  filteredQuery: string;
  matches: number;
  p50Ms: [number, number];
  /** unfiltered p50 / filtered p50. */
  speedup: number;
  contentBytesLoaded: [number, number];
  filesLoaded: [number, number];
  shardsScanned: [number, number];
  shardsSkippedFilter: [number, number];
  totalMatchCount: [number, number];
  isSearchExhaustive: [boolean | null, boolean | null];
}

export interface BenchSummary {
  /** The set the next six fields and the latency targets are computed on (TARGET_SET). */
  mixSet: string;
  queries: number;
  trawlMedianP50Ms: number;
  rgMedianMs: number | null;
  csearchMedianMs: number | null;
  csearchOverTrawl: number | null;
  rgOverTrawl: number | null;
  /** Every query trawl answered (peers: over the ones they ran, which differ: see withPeer). */
  all: { queries: number; trawlMedianP50Ms: number };
  /** Every query with a peer equivalent: trawl and both peers over the same queries. */
  withPeer: MixMedian;
  /** Per set of the query file. */
  sets: Record<string, MixMedian>;
  rareLiteral: { queries: number; medianP50Ms: number; worstP50Ms: number; worstQuery: string } | null;
  /** cindex seconds / trawl --no-symbols seconds (the target). */
  buildSpeedup: number | null;
  /** cindex seconds / trawl seconds with symbols (no target: cindex extracts no symbols). */
  buildSpeedupWithSymbols: number | null;
  indexSizeRatio: number;
  indexSizeRatioWithSymbols: number;
  filterPairs: FilterPair[];
  targets: TargetCheck[];
}

export interface Builds {
  /** `trawl index --no-symbols`: what cindex does, the build target's comparison. */
  content: TrawlBuild;
  /** `trawl index` (symbols from universal-ctags): the index the queries run on. */
  symbols: TrawlBuild;
}

const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);
const atLeast = (name: string, v: number | null, t: number): TargetCheck => ({ name, target: `≥ ${t}×`, value: v, met: v === null ? null : v >= t });
const atMost = (name: string, v: number, t: number): TargetCheck => ({ name, target: `≤ ${t}×`, value: v, met: v <= t });

function peerResult(peers: PeerResults[], peer: 'rg' | 'csearch', name: string): PeerQueryResult | undefined {
  const p = peers.find((x) => x.peer === peer);
  return p?.available ? p.queries.find((q) => q.name === name) : undefined;
}

/** Medians over `names` (queries trawl answered): trawl's p50s, each peer's medians over the ones it ran. */
function mixMedian(names: string[], trawl: TrawlLatency[], peers: PeerResults[]): MixMedian {
  const p50 = names.map((n) => trawl.find((t) => t.name === n)!.p50!);
  const peerMedian = (peer: 'rg' | 'csearch') => {
    const ms = names.map((n) => peerResult(peers, peer, n)?.medianMs).filter((x): x is number => x !== undefined && Number.isFinite(x));
    return ms.length > 0 ? median(ms) : null;
  };
  const trawlMedianP50Ms = median(p50);
  const csearchMedianMs = peerMedian('csearch');
  const rgMedianMs = peerMedian('rg');
  return {
    queries: names.length,
    trawlMedianP50Ms,
    csearchMedianMs,
    rgMedianMs,
    csearchOverTrawl: ratio(csearchMedianMs, trawlMedianP50Ms),
    rgOverTrawl: ratio(rgMedianMs, trawlMedianP50Ms),
  };
}

function filterPairs(queries: BenchQuery[], trawl: TrawlLatency[]): FilterPair[] {
  const out: FilterPair[] = [];
  for (const f of queries) {
    if (f.pairOf === undefined) continue;
    const b = queries.find((q) => q.name === f.pairOf)!;
    const tb = trawl.find((t) => t.name === b.name);
    const tf = trawl.find((t) => t.name === f.name);
    if (!tb?.stats || !tf?.stats || tb.p50 === undefined || tf.p50 === undefined) continue;
    const both = <T>(get: (t: TrawlLatency) => T): [T, T] => [get(tb), get(tf)];
    out.push({
      unfiltered: b.name,
      filtered: f.name,
      unfilteredQuery: b.query,
      filteredQuery: f.query,
      matches: f.matches ?? MATCH_LIMIT,
      p50Ms: both((t) => t.p50!),
      speedup: tb.p50 / tf.p50,
      contentBytesLoaded: both((t) => t.stats!.contentBytesLoaded),
      filesLoaded: both((t) => t.stats!.filesLoaded),
      shardsScanned: both((t) => t.stats!.shardsScanned),
      shardsSkippedFilter: both((t) => t.stats!.shardsSkippedFilter),
      totalMatchCount: both((t) => t.stats!.totalMatchCount),
      isSearchExhaustive: both((t) => t.isSearchExhaustive),
    });
  }
  return out;
}

export function summarize(queries: BenchQuery[], trawl: TrawlLatency[], builds: Builds, cindex: CindexBuild | null, peers: PeerResults[]): BenchSummary {
  const answered = (qs: BenchQuery[]) => qs.filter((q) => trawl.find((t) => t.name === q.name)?.p50 !== undefined).map((q) => q.name);
  const hasTargetSet = queries.some((q) => q.set === TARGET_SET);
  const mixQueries = hasTargetSet ? queries.filter((q) => q.set === TARGET_SET) : queries;
  const mix = mixMedian(answered(mixQueries), trawl, peers);
  const allNames = answered(queries);
  const withPeer = mixMedian(answered(queries.filter((q) => q.peer !== null)), trawl, peers);
  const sets: Record<string, MixMedian> = {};
  for (const set of [...new Set(queries.map((q) => q.set))]) sets[set] = mixMedian(answered(queries.filter((q) => q.set === set)), trawl, peers);

  const rareNames = new Set(answered(mixQueries.filter((q) => q.kind === 'rare-literal')));
  const rare = trawl.filter((t) => rareNames.has(t.name));
  const worst = rare.reduce<TrawlLatency | undefined>((w, t) => (!w || t.p50! > w.p50! ? t : w), undefined);
  const rareLiteral = worst ? { queries: rare.length, medianP50Ms: median(rare.map((t) => t.p50!)), worstP50Ms: worst.p50!, worstQuery: worst.name } : null;
  const buildSpeedup = cindex ? cindex.seconds / builds.content.seconds : null;
  const buildSpeedupWithSymbols = cindex ? cindex.seconds / builds.symbols.seconds : null;
  const setLabel = hasTargetSet ? `${TARGET_SET} ` : '';
  return {
    mixSet: hasTargetSet ? TARGET_SET : '(all)',
    ...mix,
    all: { queries: allNames.length, trawlMedianP50Ms: median(allNames.map((n) => trawl.find((t) => t.name === n)!.p50!)) },
    withPeer,
    sets,
    rareLiteral,
    buildSpeedup,
    buildSpeedupWithSymbols,
    indexSizeRatio: builds.content.sizeRatio,
    indexSizeRatioWithSymbols: builds.symbols.sizeRatio,
    filterPairs: filterPairs(queries, trawl),
    targets: [
      atLeast('index build speed vs cindex (content only, --no-symbols)', buildSpeedup, TARGETS.buildSpeedup),
      atMost('index size / indexed content (content only)', builds.content.sizeRatio, TARGETS.indexSizeRatio),
      atMost('index size / indexed content (with symbols)', builds.symbols.sizeRatio, TARGETS.indexSizeRatio),
      atLeast(`median latency vs csearch (${setLabel}mix)`, mix.csearchOverTrawl, TARGETS.csearchSpeedup),
      atLeast(`median latency vs rg (${setLabel}mix)`, mix.rgOverTrawl, TARGETS.rgSpeedup),
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
const fmtMet = (c: TargetCheck | undefined) => (!c || c.met === null ? 'n/a' : c.met ? 'met' : 'missed');
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/`/g, "'");
const code = (s: string) => `\`${cell(s)}\``;
const count = (n: number) => n.toLocaleString('en-US');

export function markdown(args: {
  date: string;
  env: Environment;
  contention: Record<string, number | null>;
  ioPressure: Record<string, number | null>;
  corpus: CorpusIdentity;
  builds: Builds;
  cindex: CindexBuild | null;
  queries: BenchQuery[];
  trawl: TrawlLatency[];
  peers: PeerResults[];
  summary: BenchSummary;
  iterations: number;
  peerRuns: number;
  coldStartMs: number;
}): string {
  const { env, corpus, builds, cindex, summary: s } = args;
  const t = (prefix: string) => s.targets.find((c) => c.name.startsWith(prefix));
  const rss = (b: number | null) => (b === null ? '' : `, peak RSS ${fmtBytes(b)}`);
  const buildCell = (b: TrawlBuild | CindexBuild) => `${b.seconds.toFixed(1)} s (${b.mbPerSecond.toFixed(1)} MB/s${rss(b.peakRssBytes)})`;
  const cindexCell = cindex ? buildCell(cindex) : '—';
  const sizeCell = (b: TrawlBuild) =>
    `${fmtBytes(b.indexBytes)} for ${fmtBytes(b.contentBytes)} of content (${count(b.files)} files, ${b.shards} shard${b.shards === 1 ? '' : 's'})`;
  const sym = builds.symbols;
  const symbolNote = sym.symbolCount === null ? '' : `; ${count(sym.symbolCount)} symbols${sym.symbolFailures ? `, ctags failed on ${count(sym.symbolFailures)} files` : ''}`;
  const ci = s.withPeer;
  const lines = [
    `### trawl ${env.trawlVersion} on ${corpus.name} — ${args.date}`,
    '',
    `${count(corpus.files)} files, ${fmtBytes(corpus.totalBytes)} (sha256 ${corpus.sha256.slice(0, 12)}…); ` +
      `${env.machine.cpuModel}, ${env.machine.cores} cores, ${fmtBytes(env.machine.totalMemoryBytes)} RAM; Node ${env.node}; commit ${env.gitCommit.slice(0, 12)}${env.gitCommit.includes('uncommitted') ? ' (uncommitted changes)' : ''}; ` +
      `${env.ripgrep ?? 'rg not installed'}; codesearch ${env.codesearch ?? 'not installed'}. ` +
      `Cores used by other processes during ${Object.keys(args.contention).join(' / ')}: ${Object.values(args.contention).map((c) => (c === null ? '?' : c.toFixed(2))).join(' / ')}; ` +
      `share of the time some task waited for I/O: ${Object.keys(args.contention).map((k) => { const v = args.ioPressure[k]; return v === null || v === undefined ? '?' : v.toFixed(2); }).join(' / ')}.`,
    '',
    '| | trawl | cindex / csearch | rg | target | |',
    '|---|---|---|---|---|---|',
    `| Index build, content only (\`--no-symbols\`, like cindex) | ${buildCell(builds.content)} | ${cindexCell} | — | cindex/trawl ${t('index build')?.target ?? ''} | ${fmtX(s.buildSpeedup)} ${fmtMet(t('index build'))} |`,
    `| Index build with symbols (default, universal-ctags${symbolNote}) | ${buildCell(sym)} | ${cindexCell} (no symbols) | — | none: cindex extracts no symbols | cindex/trawl ${fmtX(s.buildSpeedupWithSymbols)} |`,
    `| Index size, content only | ${sizeCell(builds.content)} | ${cindex ? fmtBytes(cindex.indexBytes) : '—'} | — | ${t('index size / indexed content (content')?.target ?? ''} content | ${fmtX(s.indexSizeRatio)} ${fmtMet(t('index size / indexed content (content'))} |`,
    `| Index size with symbols (searched below) | ${sizeCell(sym)} | ${cindex ? fmtBytes(cindex.indexBytes) : '—'} | — | ${t('index size / indexed content (with')?.target ?? ''} content | ${fmtX(s.indexSizeRatioWithSymbols)} ${fmtMet(t('index size / indexed content (with'))} |`,
    `| Median latency over the ${s.queries} ${s.mixSet === '(all)' ? '' : `${s.mixSet} `}queries (trawl: p50) | ${fmtMs(s.trawlMedianP50Ms)} | ${fmtMs(s.csearchMedianMs)} | ${fmtMs(s.rgMedianMs)} | csearch/trawl ${t('median latency vs csearch')?.target ?? ''}, rg/trawl ${t('median latency vs rg')?.target ?? ''} | ${fmtX(s.csearchOverTrawl)} ${fmtMet(t('median latency vs csearch'))}, ${fmtX(s.rgOverTrawl)} ${fmtMet(t('median latency vs rg'))} |`,
    `| Median latency over all ${s.all.queries} queries (trawl: p50) | ${fmtMs(s.all.trawlMedianP50Ms)} | | | — | |`,
    `| Median latency over the ${ci.queries} queries with a peer equivalent | ${fmtMs(ci.trawlMedianP50Ms)} | ${fmtMs(ci.csearchMedianMs)} | ${fmtMs(ci.rgMedianMs)} | — | csearch/trawl ${fmtX(ci.csearchOverTrawl)}, rg/trawl ${fmtX(ci.rgOverTrawl)} |`,
    ...Object.entries(s.sets)
      .filter(([set]) => set !== s.mixSet)
      .map(([set, m]) => `| Median latency over the ${m.queries} ${set} queries (trawl: p50; peers: over the ones they ran) | ${fmtMs(m.trawlMedianP50Ms)} | ${fmtMs(m.csearchMedianMs)} | ${fmtMs(m.rgMedianMs)} | — | |`),
    `| Rare literal p50 (${s.rareLiteral ? `median / worst of ${s.rareLiteral.queries}` : 'none'}) | ${s.rareLiteral ? `${fmtMs(s.rareLiteral.medianP50Ms)} / ${fmtMs(s.rareLiteral.worstP50Ms)}` : '—'} | | | worst ${t('rare literal')?.target ?? ''} | ${fmtMet(t('rare literal'))} |`,
    '',
    `trawl: in-process Searcher over the index with symbols, after an untimed pass over the mix (first search of the run: ${fmtMs(args.coldStartMs)}), ${args.iterations} timed runs per query after one warm-up, matches=${MATCH_LIMIT} unless stated. ` +
      (args.peers.some((p) => p.available)
        ? `rg and csearch: median of ${args.peerRuns} run${args.peerRuns === 1 ? '' : 's'}, every match printed to /dev/null; "n/a": the query has no peer equivalent (sym:, lang:, negation, AND of terms).`
        : 'Peers not run.'),
  ];

  if (s.filterPairs.length > 0) {
    lines.push(
      '',
      '**Filter pairs** — the same query without and with a `file:` filter that rules out all shards but one (stats of the last timed run):',
      '',
      '| query | matches (shown / total) | trawl p50 | content loaded | files loaded | shards scanned | shardsSkippedFilter | csearch | rg |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const p of s.filterPairs) {
      for (const [k, name] of [p.unfiltered, p.filtered].entries()) {
        const r = args.trawl.find((x) => x.name === name)!;
        const cs = peerResult(args.peers, 'csearch', name);
        const rg = peerResult(args.peers, 'rg', name);
        lines.push(
          `| ${code(k === 0 ? p.unfilteredQuery : p.filteredQuery)}${p.matches !== MATCH_LIMIT ? ` (matches=${p.matches})` : ''} | ${r.stats!.actualMatchCount} / ${r.stats!.totalMatchCount} | ${fmtMs(p.p50Ms[k])} | ${fmtBytes(p.contentBytesLoaded[k]!)} | ${count(p.filesLoaded[k]!)} | ${p.shardsScanned[k]} | ${p.shardsSkippedFilter[k]} | ${peerCell(cs)} | ${peerCell(rg)} |`,
        );
      }
    }
    lines.push('');
    for (const p of s.filterPairs) {
      const filter = p.filteredQuery.startsWith(p.unfilteredQuery) ? p.filteredQuery.slice(p.unfilteredQuery.length).trim() : p.filteredQuery;
      const bytes = ratio(p.contentBytesLoaded[0], p.contentBytesLoaded[1]);
      lines.push(
        `- ${code(filter)} on ${code(p.unfilteredQuery)}: p50 ${fmtMs(p.p50Ms[0])} → ${fmtMs(p.p50Ms[1])} (${p.speedup >= 1 ? `${fmtX(p.speedup)} faster` : `${fmtX(1 / p.speedup)} slower`}), ` +
          `content loaded ${fmtBytes(p.contentBytesLoaded[0])} → ${fmtBytes(p.contentBytesLoaded[1])}${bytes === null ? '' : bytes >= 1 ? ` (${fmtX(bytes)} less)` : ` (${fmtX(1 / bytes)} more)`}, ` +
          `shards scanned ${p.shardsScanned[0]} → ${p.shardsScanned[1]}, shardsSkippedFilter ${p.shardsSkippedFilter[0]} → ${p.shardsSkippedFilter[1]}.`,
      );
    }
  }

  lines.push(
    '',
    '| query | kind | set | trawl p50 | trawl p95 | shown / total matches | content loaded | csearch | rg | csearch / trawl | rg / trawl |',
    '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const q of args.queries) {
    const r = args.trawl.find((x) => x.name === q.name)!;
    const cs = peerResult(args.peers, 'csearch', q.name);
    const rg = peerResult(args.peers, 'rg', q.name);
    const mode = `${q.regex ? 'regex' : 'literal'}${q.caseSensitive ? '' : ', -i'}${q.matches !== undefined ? `, matches=${q.matches}` : ''}`;
    // The peers' pattern is shown when it is not just the query's one term.
    const derived = q.peer !== null && q.peer.path === undefined && (q.peer.pattern === q.query || q.peer.pattern === unquote(q.query));
    const peerNote = q.peer === null || derived ? '' : ` → peers: ${code(q.peer.pattern)} (${q.peer.regex ? 'regex' : 'literal'}${q.peer.caseSensitive ? '' : ', -i'}${q.peer.path ? `, under ${q.peer.path}/` : ''})`;
    const matches = r.stats ? `${r.stats.actualMatchCount} / ${r.stats.totalMatchCount}` : '—';
    const na = q.peer === null && args.peers.some((p) => p.available);
    lines.push(
      `| ${code(q.query)} (${mode})${peerNote} | ${q.kind} | ${q.set} | ${r.error ? `error: ${cell(r.error.slice(0, 60))}` : fmtMs(r.p50)} | ${fmtMs(r.p95)} | ${matches} | ${r.stats ? fmtBytes(r.stats.contentBytesLoaded) : '—'} | ` +
        `${na ? 'n/a' : peerCell(cs)} | ${na ? 'n/a' : peerCell(rg)} | ${na ? 'n/a' : fmtX(ratio(cs?.medianMs ?? null, r.p50 ?? null))} | ${na ? 'n/a' : fmtX(ratio(rg?.medianMs ?? null, r.p50 ?? null))} |`,
    );
  }
  return lines.join('\n') + '\n';
}

function peerCell(p: PeerQueryResult | undefined): string {
  return p ? (p.error ? 'error' : `${p.timedOut ? '≥ ' : ''}${fmtMs(p.medianMs)}`) : '—';
}

/** The text of a query that is one quoted string (for display only). */
function unquote(q: string): string | null {
  if (!/^"(?:[^"\\]|\\.)*"$/.test(q)) return null;
  return q.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

// --- Comparison with an earlier result file ----------------------------------------------

/** The parts of an earlier result JSON the comparison reads (any version of this bench). */
export interface EarlierResult {
  startedAt?: string;
  environment?: { gitCommit?: string };
  corpus?: { name?: string; sha256?: string };
  index?: { trawl?: { seconds: number }; trawlContentOnly?: { seconds: number }; cindex?: { seconds: number } | null };
  queries: Array<{ name: string; trawl?: { p50?: number; stats?: { totalMatchCount: number } | null }; peers?: Record<string, { medianMs?: number } | undefined> }>;
  summary?: { trawlMedianP50Ms?: number };
}

export interface ComparisonRow {
  name: string;
  query: string;
  before: number | null;
  after: number | null;
  /** after / before. */
  ratio: number | null;
  totalMatchesBefore: number | null;
  totalMatchesAfter: number | null;
}

export interface Comparison {
  file: string;
  earlierCommit: string | null;
  earlierStartedAt: string | null;
  /** Both runs searched the same tree (corpus sha256); false: the figures are not comparable. */
  sameCorpus: boolean;
  rows: ComparisonRow[];
  /** Medians over the queries both runs answered. */
  medianBefore: number;
  medianAfter: number;
  /** rg's median over the same queries in each run: how fast the machine was (rg has no index). */
  rgMedianBefore: number | null;
  rgMedianAfter: number | null;
  csearchMedianBefore: number | null;
  csearchMedianAfter: number | null;
  /** trawl --no-symbols build now vs the earlier trawl build (which had no symbols). */
  buildSecondsBefore: number | null;
  buildSecondsAfter: number;
  cindexSecondsBefore: number | null;
  cindexSecondsAfter: number | null;
}

/** Per query of the earlier run's mix that this run also has (matched by name, in this run's set TARGET_SET). */
export function compare(file: string, earlier: EarlierResult, corpus: CorpusIdentity, queries: BenchQuery[], trawl: TrawlLatency[], peers: PeerResults[], builds: Builds, cindex: CindexBuild | null): Comparison {
  const inMix = queries.filter((q) => q.set === TARGET_SET || !queries.some((x) => x.set === TARGET_SET));
  const rows: ComparisonRow[] = [];
  for (const q of inMix) {
    const old = earlier.queries.find((e) => e.name === q.name);
    if (!old) continue;
    const now = trawl.find((t) => t.name === q.name);
    const before = old.trawl?.p50 ?? null;
    const after = now?.p50 ?? null;
    rows.push({
      name: q.name,
      query: q.query,
      before,
      after,
      ratio: ratio(after, before),
      totalMatchesBefore: old.trawl?.stats?.totalMatchCount ?? null,
      totalMatchesAfter: now?.stats?.totalMatchCount ?? null,
    });
  }
  const both = rows.filter((r) => r.before !== null && r.after !== null);
  const peerMedian = (peer: 'rg' | 'csearch', when: 'before' | 'after') => {
    const ms = both
      .map((r) => (when === 'before' ? earlier.queries.find((e) => e.name === r.name)?.peers?.[peer]?.medianMs : peerResult(peers, peer, r.name)?.medianMs))
      .filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
    return ms.length === both.length && ms.length > 0 ? median(ms) : null;
  };
  return {
    file,
    earlierCommit: earlier.environment?.gitCommit ?? null,
    earlierStartedAt: earlier.startedAt ?? null,
    sameCorpus: earlier.corpus?.sha256 === corpus.sha256,
    rows,
    medianBefore: median(both.map((r) => r.before!)),
    medianAfter: median(both.map((r) => r.after!)),
    rgMedianBefore: peerMedian('rg', 'before'),
    rgMedianAfter: peerMedian('rg', 'after'),
    csearchMedianBefore: peerMedian('csearch', 'before'),
    csearchMedianAfter: peerMedian('csearch', 'after'),
    buildSecondsBefore: earlier.index?.trawlContentOnly?.seconds ?? earlier.index?.trawl?.seconds ?? null,
    buildSecondsAfter: builds.content.seconds,
    cindexSecondsBefore: earlier.index?.cindex?.seconds ?? null,
    cindexSecondsAfter: cindex?.seconds ?? null,
  };
}

export function comparisonMarkdown(c: Comparison): string {
  const both = c.rows.filter((r) => r.before !== null && r.after !== null).length;
  const fmtR = (x: number | null) => (x === null || !Number.isFinite(x) ? '—' : `${x.toFixed(2)}×`);
  const lines = [
    '',
    `### Compared with ${c.file.split('/').pop()}`,
    '',
    `Earlier run: commit ${c.earlierCommit?.slice(0, 12) ?? '?'}${c.earlierCommit?.includes('uncommitted') ? ' (uncommitted changes)' : ''}, started ${c.earlierStartedAt ?? '?'}. ` +
      `Same queries, matched by name (queries with spaces are now quoted so that they mean what they meant). after / before < 1: faster now.` +
      (c.sameCorpus ? ' Same corpus (sha256).' : ' **Different corpus (sha256 differs): the figures are not comparable.**'),
    '',
    '| query | trawl p50 before | after | after / before | total matches before → after |',
    '|---|--:|--:|--:|--:|',
    ...c.rows.map(
      (r) =>
        `| ${code(r.query)} | ${fmtMs(r.before)} | ${fmtMs(r.after)} | ${fmtR(r.ratio)} | ${r.totalMatchesBefore ?? '—'} → ${r.totalMatchesAfter ?? '—'} |`,
    ),
    `| **median over the ${both} queries** | **${fmtMs(c.medianBefore)}** | **${fmtMs(c.medianAfter)}** | **${fmtR(c.medianAfter / c.medianBefore)}** | |`,
    '',
    `Same machine conditions? rg median over these queries ${fmtMs(c.rgMedianBefore)} → ${fmtMs(c.rgMedianAfter)}, csearch ${fmtMs(c.csearchMedianBefore)} → ${fmtMs(c.csearchMedianAfter)}; ` +
      `trawl build without symbols ${c.buildSecondsBefore?.toFixed(1) ?? '—'} s → ${c.buildSecondsAfter.toFixed(1)} s, cindex ${c.cindexSecondsBefore?.toFixed(1) ?? '—'} s → ${c.cindexSecondsAfter?.toFixed(1) ?? '—'} s.`,
  ];
  return lines.join('\n') + '\n';
}
