// The report's tables of the many-repositories phase (phase-many-repos.ts): one row per
// corpus for the index and the daemon, then per corpus one row per query kind, trawl beside
// csearch and rg with their ratios (peer median / trawl median over the same queries: how
// many times faster trawl is).

import { formatBytes, formatMs } from '../../daemon/cli/format.ts';
import type { ManyReposCorpus, ManyReposKind, ManyReposPhase, PeerKind } from './result.ts';

const LABELS: Record<ManyReposKind, string> = {
  identifier: 'identifier',
  noHit: 'literal found nowhere',
  repo: '`repo:^NAME$ IDENT`',
  lang: '`lang:c IDENT`',
  sym: '`sym:IDENT`',
  reposPage: '`GET /api/repos` page',
};

const count = (n: number) => n.toLocaleString('en-US');
const bytes = (n: number | null) => (n === null ? '—' : formatBytes(n));
const secs = (s: number | null | undefined) => (s === null || s === undefined ? '—' : `${s.toFixed(s < 10 ? 2 : 1)} s`);
const times = (x: number | null) => (x === null ? '' : ` (${x >= 100 ? Math.round(x) : x.toFixed(x < 10 ? 2 : 1)}×)`);
const peer = (p: PeerKind | null) =>
  p === null ? '' : p.medianMs === null ? `— (${p.errors} errors)` : `${formatMs(p.medianMs)}${times(p.ratio)}, n=${p.samplesMs.length}`;

function corpusRow(c: ManyReposCorpus): string {
  const m = c.memory;
  return (
    `| ${c.name} | ${count(c.repos)} | ${count(c.files)}, ${bytes(c.bytes)} | ${secs(c.sync.seconds)}${c.sync.failed ? ` (${c.sync.failed} failed)` : ''}, peak RSS ${bytes(c.sync.peakRssBytes)} | ` +
    `${c.cindex ? secs(c.cindex.seconds) : '—'} | ${bytes(c.sync.indexBytes)} in ${count(c.sync.indexFiles)} files | ${formatMs(c.start.readyMs)}; first search ${formatMs(c.start.firstSearchMs)} | ` +
    `${m.settledAnonBytes == null ? '' : `${bytes(m.settledAnonBytes)}${m.settledAnonPerByte == null ? '' : ` (${m.settledAnonPerByte.toFixed(2)}×)`}; right after the queries `}` +
    `${bytes(m.idleAnonBytes)}${m.anonPerByte === null ? '' : ` (${m.anonPerByte.toFixed(2)}×)`}, peak under load ${bytes(m.loadAnonPeakBytes)} | ` +
    `${Math.round(c.load.requestsPerSecond)} req/s, p50 ${formatMs(c.load.latencyMs.p50)}, p99 ${formatMs(c.load.latencyMs.p99)} | ` +
    `${c.change.searchableMs === null ? 'not found' : formatMs(c.change.searchableMs)}${changeRuns(c.change)} (sync ${secs(c.change.syncSeconds)}) |`
  );
}

/** ", median of 3 (…, …, …)" when the change was measured more than once. */
function changeRuns(change: ManyReposCorpus['change']): string {
  const runs = change.searchableSamplesMs;
  if (runs === undefined || runs.length < 2) return '';
  return `, median of ${runs.length} (${runs.map((ms) => (ms === null ? 'not found' : formatMs(ms))).join(', ')})`;
}

function kindTable(c: ManyReposCorpus): string[] {
  const lines = [
    '',
    `| ${c.name}: each query sent once, one client, after a warm-up on ${c.warmup.requests} other identifiers | n | p50 | p90 | p99 | daemon p50 | found | csearch (×) | rg (×) |`,
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const q of c.queries) {
    const l = q.latencyMs;
    lines.push(
      `| ${LABELS[q.kind]}, e.g. \`${(q.queries[0] ?? '').replace(/\|/g, '\\|').replace(/`/g, "'")}\` | ${q.samplesMs.length}${q.errors ? ` (${q.errors} errors)` : ''} | ${formatMs(l?.p50)} | ${formatMs(l?.p90)} | ${formatMs(l?.p99)} | ` +
        `${formatMs(q.serverDurationP50Ms)} | ${q.found === null ? '' : q.found} | ${peer(q.csearch)} | ${peer(q.rg)} |`,
    );
  }
  if (c.cold) {
    const l = c.cold.identifiers.latencyMs;
    lines.push(
      `| cold page cache (dropped once a new daemon was ready): first search, then ${c.cold.identifiers.samplesMs.length} identifiers | ${c.cold.identifiers.samplesMs.length} | ${formatMs(l?.p50)} | ${formatMs(l?.p90)} | ${formatMs(l?.p99)} | ${formatMs(c.cold.identifiers.serverDurationP50Ms)} | first search ${formatMs(c.cold.firstSearchMs)} | | |`,
    );
  }
  return lines;
}

export function manyReposText(p: ManyReposPhase): string[] {
  const lines = [
    '',
    `| many repositories (seed ${p.seed}) | repos | files | \`trawl sync\` from nothing | cindex | trawl index | \`trawl serve\` to ready | daemon RssAnon idle, settled (× bytes) | 8 connections, one literal | one-line change searchable after \`trawl sync\` starts |`,
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...p.corpora.map(corpusRow),
  ];
  for (const c of p.corpora) lines.push(...kindTable(c));
  const cores = p.corpora.map((c) => `${c.name} ${c.foreignCores === null ? '—' : c.foreignCores.toFixed(2)}`).join(', ');
  lines.push('', `Many repositories: other processes kept busy ${cores} cores meanwhile.`);
  return lines;
}
