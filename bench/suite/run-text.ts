// The report of one `trawl bench run`, as Markdown (readable in a terminal, and pasted
// as is into the README's benchmark table): what was measured on what, then one table
// per phase. The result file holds every raw sample; this shows the summaries.

import { formatBytes, formatMs } from '../../daemon/cli/format.ts';
import { median } from './percentiles.ts';
import { clusterText } from './cluster-text.ts';
import { manyReposText } from './many-repos-text.ts';
import { hasCorePhases, type AnyBenchResult, type BenchResult, type CommandRuns, type DistinctPhase, type PeerResult, type ReindexBuild } from './result.ts';
import { LARGE_SOURCE_BYTES, TARGETS } from './targets.ts';

const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/`/g, "'");
const code = (s: string) => `\`${cell(s)}\``;
const count = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toLocaleString('en-US'));
const times = (x: number | null | undefined) =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : x >= 100 ? `${Math.round(x)}×` : `${x.toFixed(x < 10 ? 2 : 1)}×`;
const bytes = (n: number | null | undefined) => (n === null || n === undefined ? '—' : formatBytes(n));

function peerCell(p: PeerResult | undefined, name: string): { ms: string; ratio: string } {
  if (!p?.available) return { ms: '', ratio: '' };
  const q = p.queries.find((x) => x.name === name);
  if (!q) return { ms: 'n/a', ratio: '' };
  if (q.medianMs === null) return { ms: q.error ? 'error' : '—', ratio: '' };
  return { ms: `${q.timedOut ? '≥ ' : ''}${formatMs(q.medianMs)}`, ratio: times(q.ratioToTrawl) };
}

const seconds = (xs: number[]) =>
  xs.length === 0 ? '—' : `${median(xs).toFixed(2)} s${xs.length > 1 ? ` (runs: ${xs.map((x) => x.toFixed(2)).join(' / ')})` : ''}`;
const cores = (c: number | null) => (c === null ? '—' : c.toFixed(2));

/** The tables of the opt-in phases that ran (--auth, --web, --reindex, --cluster). */
function phaseText(r: AnyBenchResult): string[] {
  const lines: string[] = [];
  if (r.auth) {
    const a = r.auth;
    lines.push(
      '',
      `| \`${a.request}\`, ${a.connections} connections, ${a.rounds} × ${a.seconds} s | req/s | p50 | p99 | daemon CPU/request | non-2xx, errors |`,
      '|---|--:|--:|--:|--:|--:|',
    );
    for (const v of a.variants) {
      lines.push(
        `| ${v.name === 'anonymous' ? 'anonymous' : 'API key (Bearer), counted'} | ${Math.round(v.requestsPerSecond)} | ${formatMs(v.latencyMs?.p50)} | ${formatMs(v.latencyMs?.p99)} | ` +
          `${v.serverCpuMsPerRequest === null ? '—' : `${v.serverCpuMsPerRequest.toFixed(3)} ms`} | ${v.non2xx + v.errors} |`,
      );
    }
    lines.push(
      `| the authentication and rate-limit step adds | | | | ${a.stepCpuUsPerRequest === null ? '—' : `${a.stepCpuUsPerRequest.toFixed(1)} µs`} | other processes: ${cores(a.foreignCores)} cores |`,
    );
  }
  if (r.web) {
    const w = r.web;
    lines.push('', `| web UI, Chromium ${w.chromium}, ${w.runs} page loads per query | first result | done |`, '|---|--:|--:|');
    for (const q of w.queries) {
      lines.push(
        `| ${code(q.query)} | ${q.firstResultMsSamples.length ? formatMs(median(q.firstResultMsSamples)) : '— (no result)'} | ${formatMs(median(q.doneMsSamples))} |`,
      );
    }
    lines.push(`| median over the queries | ${formatMs(w.medianFirstResultMs)} | ${formatMs(w.medianDoneMs)} |`);
  }
  if (r.viewer) {
    const v = r.viewer;
    lines.push(
      '',
      `| code viewer, Chromium ${v.chromium}, ${v.lines.toLocaleString('en-US')} lines (${(v.bytes / 1e6).toFixed(1)} MB), ${v.runs} page loads | median | max |`,
      '|---|--:|--:|',
    );
    lines.push(
      `| open at line ${v.targetLine.toLocaleString('en-US')} (navigation to the line drawn) | ${formatMs(v.medianOpenMs)} | ${formatMs(Math.max(...v.openMsSamples))} |`,
    );
    lines.push(`| jump by #L, to line 1 and back | ${formatMs(v.medianJumpMs)} | ${formatMs(Math.max(...v.jumpMsSamples))} |`);
    lines.push(`| lines in the page after opening | ${v.drawnLines} | |`);
  }
  if (r.reindex) {
    const x = r.reindex;
    const b = x.builds;
    const row = (label: string, y: ReindexBuild, rate = '') =>
      `| ${label} | ${seconds(y.secondsSamples)} | ${rate} | ${bytes(y.indexBytes)} | ${bytes(y.branchListBytes)} | ${bytes(y.peakRssBytes)} |`;
    lines.push(
      '',
      `| re-indexing the corpus as a git repository (other processes: ${cores(x.foreignCores)} cores) | time | MB/s: corpus; indexed content | live index | branch lists | peak RSS |`,
      '|---|--:|--:|--:|--:|--:|',
    );
    lines.push(
      row('full build, one branch', b.full, buildRate(x.corpusBytes, b.full)),
      row(`full build, main + ${x.branches - 1} branches (${x.changedFilesPerBranch} files changed each)`, b.branches, buildRate(x.corpusBytes, b.branches)),
      row('again, refs unmoved', b.unchanged),
      row('again after one file changed on main (delta)', b.oneFile),
    );
    if (x.sync) {
      lines.push(
        `| \`trawl sync\` of the repository, first (main, a full build) | ${seconds(x.sync.first.secondsSamples)} | | | | |`,
        `| \`trawl sync\` after one line changed in one file on main | ${seconds(x.sync.oneLine.secondsSamples)} | | | | |`,
      );
    }
  }
  if (r.manyRepos) lines.push(...manyReposText(r.manyRepos));
  if (r.cluster) lines.push(...clusterText(r.cluster));
  return lines;
}

/** A peer on the held-out identifiers: its median (ratio to trawl's median over the same identifiers), n. */
function distinctPeer(p: DistinctPhase['csearch']): string {
  if (!p) return '';
  return p.medianMs === null ? `— (${p.errors} errors)` : `${formatMs(p.medianMs)} (${times(p.ratio)}), n=${p.samplesMs.length}`;
}

/** The headline rows: held-out identifiers each sent once (phase-distinct.ts), and with --cold the same after the page cache was dropped. */
function distinctRows(d: DistinctPhase): string[] {
  const l = d.identifiers.latencyMs;
  const rows = [
    `| **search latency: ${d.identifiers.samplesMs.length} held-out identifiers of the corpus, each sent once** over HTTP, one client, after a warm-up on ${d.warmup.requests} others (p50 / p90 / p99; the daemon's own p50); the peers: median, one process per identifier (× trawl's median over the same) | ` +
      `**${formatMs(l?.p50)}** / ${formatMs(l?.p90)} / ${formatMs(l?.p99)}; daemon ${formatMs(d.identifiers.serverDurationP50Ms)}${d.identifiers.errors ? `; ${d.identifiers.errors} errors` : ''} | ${distinctPeer(d.csearch)} | ${distinctPeer(d.rg)} |`,
    `| \`trawl serve\` to ready; its first search | ${formatMs(d.start.readyMs)}; ${formatMs(d.start.firstSearchMs)} | | |`,
  ];
  if (d.cold) {
    const c = d.cold.identifiers.latencyMs;
    rows.push(
      `| cold page cache (dropped once a new daemon was ready): first search; then ${d.cold.identifiers.samplesMs.length} identifiers (p50 / p90 / p99) | ${formatMs(d.cold.firstSearchMs)}; ${formatMs(c?.p50)} / ${formatMs(c?.p90)} / ${formatMs(c?.p99)} | | |`,
    );
  }
  return rows;
}

/** Corpus MB/s; indexed content MB/s of a full build (median seconds); empty when a side is unknown (older results). */
function buildRate(corpusBytes: number | undefined, b: ReindexBuild): string {
  if (b.secondsSamples.length === 0) return '';
  const s = median(b.secondsSamples);
  const rate = (n: number | undefined) => (n === undefined ? '—' : (n / 1e6 / s).toFixed(1));
  return corpusBytes === undefined && b.contentBytes === undefined ? '' : `${rate(corpusBytes)}; ${rate(b.contentBytes)}`;
}

/** A figure against its target: met or missed, or no verdict when the target is about larger sources. */
function againstTarget(x: number, target: number, applies: boolean, unit: (v: number) => string, higherIsBetter = false): string {
  const goal = `${higherIsBetter ? '≥' : '≤'} ${unit(target)}`;
  if (!applies) return `${goal} (for a source of ≥ ${formatBytes(LARGE_SOURCE_BYTES)}: not this one)`;
  return `${goal}: ${(higherIsBetter ? x >= target : x <= target) ? 'met' : 'missed'}`;
}

/**
 * The targets (targets.ts): each figure of a whole `trawl` process next to its
 * target; the last two only when --reindex ran (they are its figures).
 */
function wholeProcessText(r: BenchResult): string[] {
  const c = r.commands;
  if (!c) return [];
  // Whole milliseconds under a second (the start-up figures), seconds above.
  const time = (s: number) => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(2)} s`);
  const mid = (t: CommandRuns) => median(t.secondsSamples);
  const range = (t: CommandRuns) => (t.secondsSamples.length < 2 ? '' : `${time(Math.min(...t.secondsSamples))} – ${time(Math.max(...t.secondsSamples))}`);
  const row = (label: string, t: CommandRuns, target?: number, applies = true) =>
    `| ${label} | ${time(mid(t))} | ${range(t)} | ${target === undefined ? '' : againstTarget(mid(t), target, applies, time)} |`;
  const lines = [
    '',
    `| whole process: spawn to exit, Node's start-up included (median of ${c.runs}; other processes: ${cores(c.foreignCores)} cores) | median | min – max | target |`,
    '|---|--:|--:|---|',
  ];
  lines.push(row('`trawl --help`', c.help, TARGETS.helpSeconds));
  if (c.search) {
    const i = c.search.index;
    lines.push(
      row(
        `${code(`trawl search ${c.search.query}${c.search.caseSensitive ? ' --case' : ''}`)} on ${bytes(i.indexBytes)} of index (${count(i.files)} files, ${bytes(i.contentBytes)} of content${i.symbols ? ', with symbols' : ''}${c.search.matches !== undefined ? `; ${count(c.search.matches)} matches` : ''})`,
        c.search,
        TARGETS.searchSeconds,
      ),
    );
  }
  lines.push(
    row(`\`trawl sync\`, one file changed in a ${count(c.sync.files)}-file git repository`, c.sync.oneFile, TARGETS.syncOneFileSeconds),
    row('its first `trawl sync` (a full build)', c.sync.first),
  );
  const x = r.reindex;
  if (x?.sync) {
    const large = (x.corpusBytes ?? r.corpus.totalBytes) >= LARGE_SOURCE_BYTES;
    lines.push(row('`trawl sync`, one line changed in one file of the corpus as a git repository', x.sync.oneLine, TARGETS.syncOneLineSeconds, large));
    const full = x.builds.full;
    const mbps = (x.corpusBytes ?? r.corpus.totalBytes) / 1e6 / median(full.secondsSamples);
    lines.push(
      `| the corpus as a git repository, \`trawl index --no-symbols\` (full build), corpus MB/s | ${mbps.toFixed(1)} MB/s | | ${againstTarget(mbps, TARGETS.gitIndexMbPerSecond, large, (v) => `${v} MB/s`, true)} |`,
    );
  }
  return lines;
}

/** What was measured on what, for a run of the cluster phase alone (`--only cluster`). */
function onlyText(r: AnyBenchResult): string {
  const e = r.environment;
  const lines = [
    `### trawl ${e.trawlVersion} on ${r.corpus.name}: ${r.startedAt.slice(0, 10)}${r.options.quick ? ' (quick)' : ''}, the ${r.options.only ?? 'cluster'} phase alone`,
    '',
    `${count(r.corpus.files)} files, ${bytes(r.corpus.totalBytes)} (sha256 ${r.corpus.sha256.slice(0, 12)}…); ${e.machine.cpuModel}, ${e.machine.cores} cores, ` +
      `${bytes(e.machine.totalMemoryBytes)} RAM; Node ${e.node}; commit ${e.gitCommit.slice(0, 12)}${e.gitCommit.endsWith('+uncommitted') ? ' (uncommitted changes)' : ''}.`,
    ...phaseText(r),
  ];
  if (r.notes.length) lines.push('', ...r.notes.map((n) => `- ${n}`));
  return `${lines.join('\n')}\n`;
}

export function runText(any: AnyBenchResult): string {
  if (!hasCorePhases(any)) return onlyText(any);
  const r: BenchResult = any;
  const e = r.environment;
  const rg = r.peers.find((p) => p.peer === 'rg');
  const cs = r.peers.find((p) => p.peer === 'csearch');
  const idx = r.indexing.runs.at(-1)!;
  const lines: string[] = [];
  lines.push(`### trawl ${e.trawlVersion} on ${r.corpus.name}: ${r.startedAt.slice(0, 10)}${r.options.quick ? ' (quick)' : ''}`);
  lines.push('');
  lines.push(
    `${count(r.corpus.files)} files, ${bytes(r.corpus.totalBytes)} (sha256 ${r.corpus.sha256.slice(0, 12)}…); ${e.machine.cpuModel}, ${e.machine.cores} cores, ` +
      `${bytes(e.machine.totalMemoryBytes)} RAM; Node ${e.node}; commit ${e.gitCommit.slice(0, 12)}${e.gitCommit.endsWith('+uncommitted') ? ' (uncommitted changes)' : ''}; ` +
      `${e.ripgrep ?? 'ripgrep not installed'}; codesearch ${e.codesearch ?? 'not installed'}. ` +
      `${r.options.iterations} timed runs per query${r.options.warmup ? ` after ≥ ${r.options.warmup.runs} and ≥ ${r.options.warmup.ms} ms untimed` : ''}; peers: median of ${r.options.peerRuns} run(s), every match printed to /dev/null. ` +
      `Cores used by other processes (corpus / indexing / search / HTTP / peers): ${Object.values(r.foreignCores)
        .map((c) => (c === null ? '—' : c.toFixed(2)))
        .join(' / ')}.`,
  );
  lines.push('');
  lines.push('| | trawl | csearch | rg |');
  lines.push('|---|---|---|---|');
  lines.push(
    `| index build | ${idx.seconds.toFixed(1)} s${idx.contentSeconds != null && idx.contentSeconds < idx.seconds ? ` (content searchable after ${idx.contentSeconds.toFixed(1)} s)` : ''}, ${idx.mbPerSecond.toFixed(1)} MB/s, peak RSS ${bytes(idx.peakRssBytes)}${r.options.symbols ? ` (with symbols: ${count(idx.symbolCount)})` : ''} | ` +
      `${cs?.index ? `${cs.index.seconds.toFixed(1)} s, ${cs.index.mbPerSecond.toFixed(1)} MB/s, peak RSS ${bytes(cs.index.peakRssBytes)} (no symbols)` : '—'} | no index |`,
  );
  lines.push(
    `| index size | ${bytes(idx.indexBytes)}, ${idx.sizeRatio.toFixed(2)}× the ${bytes(idx.contentBytes)} of content indexed (content included), ${count(idx.files)} files, ${idx.shards} shards | ${cs?.index ? `${bytes(cs.index.indexBytes)} (no content)` : '—'} | |`,
  );
  if (r.distinct) lines.push(...distinctRows(r.distinct));
  const warm = r.options.warmup ? `≥ ${r.options.warmup.runs} runs of itself` : 'a run of itself';
  for (const p of [cs, rg]) {
    if (p?.available && p.medianMs !== null) {
      lines.push(
        `| repeated: median latency over the ${p.queries.filter((q) => q.medianMs !== null).length} queries of the mix ${p.peer} ran (trawl p50, each after ${warm}) | ${formatMs(p.trawlMedianP50Ms)} | ${p === cs ? `${formatMs(p.medianMs)} (${times(p.ratio)})` : ''} | ${p === rg ? `${formatMs(p.medianMs)} (${times(p.ratio)})` : ''} |`,
      );
    }
  }
  lines.push(
    `| repeated: median latency over all ${r.search.queries.length} queries of the mix, in process (p50, each after ${warm}) | ${formatMs(r.summary.searchMedianP50Ms)} | | |`,
  );
  const overHttp = r.httpQueries;
  if (overHttp) {
    lines.push(
      `| repeated: the same over HTTP, one client (median p50; p99 of every request) | ${formatMs(overHttp.medianP50Ms)}; p99 ${formatMs(overHttp.allSamplesMs?.p99)} | | |`,
    );
  }
  lines.push('');
  lines.push(
    '| query (repeated: each timed after many runs of itself) | kind | p50 | p95 | p99 | HTTP p50 | HTTP p99 | shown / total | files loaded | content loaded | csearch | rg |',
  );
  lines.push('|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const q of r.search.queries) {
    const c = peerCell(cs, q.name);
    const g = peerCell(rg, q.name);
    const l = q.latencyMs;
    const h = overHttp?.queries.find((x) => x.name === q.name);
    const hp = (k: 'p50' | 'p99') => (!h ? '' : h.latencyMs ? formatMs(h.latencyMs[k]) : k === 'p50' ? 'error' : '');
    lines.push(
      `| ${code(q.query)}${q.regex ? ' (regex)' : ''}${q.caseSensitive ? '' : ' (-i)'} | ${q.kind} | ${l ? formatMs(l.p50) : `error: ${cell(q.error ?? '?')}`} | ${formatMs(l?.p95)} | ${formatMs(l?.p99)} | ${hp('p50')} | ${hp('p99')} | ` +
        `${q.stats ? `${count(q.stats.actualMatchCount)} / ${count(q.stats.totalMatchCount)}` : '—'} | ${count(q.stats?.filesLoaded)} | ${bytes(q.stats?.contentBytesLoaded)} | ` +
        `${c.ms}${c.ratio ? ` (${c.ratio})` : ''} | ${g.ms}${g.ratio ? ` (${g.ratio})` : ''} |`,
    );
  }
  const h = r.http.search;
  const s = r.http.stream;
  const st = s.runs.at(-1);
  lines.push('');
  lines.push('| HTTP (daemon on loopback) | |');
  lines.push('|---|---|');
  lines.push(
    `| \`POST /api/search\` ${code(h.query)}, ${h.connections} connections, ${h.seconds} s | ${Math.round(h.requestsPerSecond)} req/s; latency p50 ${formatMs(h.latencyMs?.p50)}, p95 ${formatMs(h.latencyMs?.p95)}, p99 ${formatMs(h.latencyMs?.p99)}; ` +
      `daemon CPU ${h.serverCpuMsPerRequest === null ? '—' : `${h.serverCpuMsPerRequest.toFixed(2)} ms`}/request; non-2xx ${h.non2xx}, errors ${h.errors} |`,
  );
  if (st) {
    const mid = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
    const fr = s.firstResultMsSamples ?? [];
    lines.push(
      `| \`POST /api/stream_search\` ${code(s.query)} (matches ${count(s.matches)}) | ${bytes(st.bytes)}, ${count(st.matches)} matches; median ${(r.summary.streamMbPerSecond ?? 0).toFixed(1)} MB/s ` +
        `(runs: ${s.mbPerSecondSamples.map((x) => x.toFixed(1)).join(' / ')}); first byte ${formatMs(mid(s.firstByteMsSamples))} (the stream's opening comment)${fr.length ? `, first results ${formatMs(mid(fr))}` : ''} |`,
    );
  }
  for (const o of r.http.overhead ?? []) {
    lines.push(
      `| \`${o.request}\`${o.name === 'noHitSearch' ? ' (no hit)' : ''}, ${o.connections} connections, ${o.seconds} s | ${Math.round(o.requestsPerSecond)} req/s; latency p50 ${formatMs(o.latencyMs?.p50)}, p99 ${formatMs(o.latencyMs?.p99)}; ` +
        `daemon CPU ${o.serverCpuMsPerRequest === null ? '—' : `${o.serverCpuMsPerRequest.toFixed(3)} ms`}/request; non-2xx ${o.non2xx}, errors ${o.errors} |`,
    );
  }
  const m = r.memory;
  lines.push(
    `| daemon RSS, corpus loaded | idle ${bytes(m.idleMedianBytes)}; under the search load median ${bytes(m.loadMedianBytes)}, peak ${bytes(m.loadPeakBytes)} |`,
  );
  if (m.idleAnonMedianBytes !== undefined) {
    // RssFile is mapped shard pages (the kernel drops them when it needs memory); RssAnon is the daemon's own.
    const content = r.indexing.runs.at(-1)?.contentBytes;
    const share = (x: number | null | undefined) => (x == null || !content ? '' : ` (${(x / content).toFixed(2)}× content)`);
    lines.push(
      `| of which RssAnon (heaps, buffers) | idle ${bytes(m.idleAnonMedianBytes)}${share(m.idleAnonMedianBytes)}; under load median ${bytes(m.loadAnonMedianBytes)}, peak ${bytes(m.loadAnonPeakBytes)}${share(m.loadAnonPeakBytes)} |`,
      `| of which RssFile (mapped shard pages) | idle ${bytes(m.idleFileMedianBytes)}; under load median ${bytes(m.loadFileMedianBytes)} |`,
    );
  }
  lines.push(...wholeProcessText(r));
  lines.push(...phaseText(r));
  if (r.notes.length) {
    lines.push('');
    for (const n of r.notes) lines.push(`- ${n}`);
  }
  return `${lines.join('\n')}\n`;
}
