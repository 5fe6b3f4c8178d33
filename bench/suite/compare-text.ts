// The text rendering of a bench comparison (compare.ts), for a terminal about 120 columns
// wide: plain aligned columns, no colours (it ends up in CI logs and pasted into issues),
// regressions in capitals so that they stand out and can be grepped.

import type { CompareReport, MetricComparison, MetricGroup, MetricUnit, RunIdentity } from './compare-report.ts';
import { formatBytes, sig3 } from '../../daemon/cli/format.ts';

const WIDTH = 120;
const GAP = '  ';

// ---- numbers ----

export function formatValue(v: number | null, unit: MetricUnit): string {
  if (v === null) return '—';
  switch (unit) {
    case 'ms':
      return `${sig3(v)} ms`;
    case 's':
      return `${sig3(v)} s`;
    case 'req/s':
      return `${Math.round(v)} req/s`;
    case 'MB/s':
      return `${sig3(v)} MB/s`;
    case 'bytes':
      return formatBytes(v);
    case 'ratio':
      return sig3(v);
  }
}

function change(ratio: number | null): string {
  if (ratio === null) return '—';
  const c = (ratio - 1) * 100;
  const text = Math.abs(c).toFixed(Math.abs(c) >= 100 ? 0 : 1);
  const sign = Number(text) === 0 ? '' : c > 0 ? '+' : '-';
  return `${sign}${text}%`;
}

function interval(m: MetricComparison): string {
  if (m.ratioLow === null || m.ratioHigh === null) return '—';
  return `[${m.ratioLow.toFixed(3)}, ${m.ratioHigh.toFixed(3)}]`;
}

function pValue(p: number | null): string {
  if (p === null) return '—';
  return p < 0.001 ? '<0.001' : p.toFixed(3);
}

const verdictText = (m: MetricComparison) => (m.verdict === 'regression' ? 'REGRESSION' : m.verdict);

// ---- layout ----

/** Cut to `width` code points, the last one an ellipsis when anything was cut. */
export function truncate(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}

const length = (s: string) => [...s].length;
const pad = (s: string, w: number, right: boolean) => (right ? ' '.repeat(w - length(s)) + s : s + ' '.repeat(w - length(s)));

/** Words to lines of at most WIDTH, continuation lines indented like the first line's text. */
function wrap(text: string, firstPrefix: string, restPrefix: string): string[] {
  const lines: string[] = [];
  let line = firstPrefix;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && length(line) + 1 + length(word) > WIDTH) {
      lines.push(line);
      line = restPrefix;
      empty = true;
    }
    line += (empty ? '' : ' ') + word;
    empty = false;
  }
  lines.push(line);
  return lines.map((l) => truncate(l, WIDTH));
}

interface Column {
  header: string;
  right: boolean;
  cell: (m: MetricComparison) => string;
}

function table(title: string, metrics: MetricComparison[], valueHeader: string): string[] {
  if (metrics.length === 0) return [];
  const columns: Column[] = [
    { header: 'metric', right: false, cell: (m) => m.label },
    { header: `old ${valueHeader}`.trim(), right: true, cell: (m) => formatValue(m.old.median, m.unit) },
    { header: `new ${valueHeader}`.trim(), right: true, cell: (m) => formatValue(m.new.median, m.unit) },
    { header: 'change', right: true, cell: (m) => change(m.ratio) },
    { header: '95% CI of ratio', right: true, cell: interval },
    { header: 'p', right: true, cell: (m) => pValue(m.p) },
    { header: 'verdict', right: false, cell: verdictText },
    { header: 'basis', right: false, cell: (m) => m.basis },
  ];
  if (metrics[0]!.group === 'search') columns[0]!.header = 'query';
  const cells = metrics.map((m) => columns.map((c) => c.cell(m)));
  const widths = columns.map((c, i) => Math.max(length(c.header), ...cells.map((row) => length(row[i]!))));
  // The label takes what the other columns leave, so that a long query cannot push a row past WIDTH.
  const others = widths.slice(1).reduce((a, b) => a + b, 0) + GAP.length * (columns.length - 1);
  widths[0] = Math.max(12, Math.min(widths[0]!, WIDTH - 2 - others));
  const row = (values: string[]) =>
    `  ${values
      .map((v, i) => pad(truncate(v, widths[i]!), widths[i]!, columns[i]!.right))
      .join(GAP)
      .trimEnd()}`;
  const lines = [title, row(columns.map((c) => c.header))];
  metrics.forEach((m, i) => {
    lines.push(row(cells[i]!));
    // What the engine did differently, under the row: how a latency change is traced to work.
    if (m.statsChanged.length > 0)
      lines.push(truncate(`      work${m.statsComparable ? '' : ' (stopped at the match limit: varies run to run)'}: ${m.statsChanged.join(', ')}`, WIDTH));
  });
  return lines;
}

// ---- header and summary ----

/** A 40-hex commit shortened to 12, keeping a "+uncommitted" suffix. */
const commit = (c: string) => c.replace(/^([0-9a-f]{12})[0-9a-f]{28}/, '$1');

function runLine(side: string, r: RunIdentity): string {
  return `  ${side}      ${commit(r.gitCommit)}  trawl ${r.trawlVersion}  Node ${r.node}  ${r.startedAt}  ${r.quick ? 'quick run' : 'full run'}`;
}

function corpusText(r: RunIdentity): string {
  return `${r.corpus.name}, ${r.corpus.files} files, ${formatBytes(r.corpus.totalBytes)}, sha256 ${r.corpus.sha256.slice(0, 12)}`;
}

const machineText = (r: RunIdentity) => `${r.machine.cpuModel} × ${r.machine.cores} cores`;

function sameOrBoth(label: string, oldText: string, newText: string): string[] {
  const head = `  ${label.padEnd(8)} `;
  if (oldText === newText) return [truncate(`${head}${oldText} (same on both sides)`, WIDTH)];
  return [truncate(`${head}old: ${oldText}`, WIDTH), truncate(`${' '.repeat(head.length)}new: ${newText}`, WIDTH)];
}

const plural = (n: number, word: string, words = `${word}s`) => `${n} ${n === 1 ? word : words}`;

function summaryLine(r: CompareReport): string {
  const parts = [plural(r.regressions, 'regression'), plural(r.improvements, 'improvement'), `${r.unchanged} unchanged`];
  if (r.notJudged > 0) parts.push(`${r.notJudged} not judged`);
  const meaning = r.exitStatus === 1 ? 'exit status 1: at least one regression' : 'exit status 0: no regression';
  return `${parts.join(', ')}; ${meaning}.`;
}

const SECTIONS: Array<{ group: MetricGroup; title: string; valueHeader: string }> = [
  { group: 'distinct', title: 'Search latency on held-out identifiers, each sent once', valueHeader: '' },
  { group: 'search', title: 'Repeated search latency per query (p50 over the timed runs, each after many runs of itself)', valueHeader: 'p50' },
  { group: 'http', title: 'HTTP', valueHeader: '' },
  { group: 'memory', title: 'Memory', valueHeader: '' },
  { group: 'index', title: 'Index build', valueHeader: '' },
  { group: 'commands', title: 'Whole trawl processes (spawn to exit)', valueHeader: '' },
  { group: 'auth', title: 'Authentication and rate limit (GET /api/repos)', valueHeader: '' },
  { group: 'web', title: "Web UI (median over the queries of each one's median)", valueHeader: '' },
  { group: 'reindex', title: 'Re-indexing (the corpus as a git repository)', valueHeader: '' },
  { group: 'many', title: 'Many repositories (each query sent once)', valueHeader: '' },
  { group: 'cluster', title: 'Cluster phase (one daemon, then clusters of N nodes)', valueHeader: '' },
];

export function compareText(report: CompareReport): string {
  const { options: o } = report;
  const lines: string[] = [
    'trawl bench compare',
    runLine('old', report.old),
    runLine('new', report.new),
    ...sameOrBoth('corpus', corpusText(report.old), corpusText(report.new)),
    ...sameOrBoth('machine', machineText(report.old), machineText(report.new)),
    `  judged   changes beyond ${Math.round(o.threshold * 100)}% at alpha ${o.alpha}; beyond ${Math.round(o.singleThreshold * 100)}% for figures with fewer than 5 samples`,
    ...(report.searchNoiseFloor === null
      ? []
      : [
          `           search queries: beyond ${(Math.max(o.threshold, report.searchNoiseFloor) * 100).toFixed(1)}%, the larger of that and the run-to-run noise the`,
          `           queries' spread shows (${(report.searchNoiseFloor * 100).toFixed(1)}%)`,
        ]),
    '',
  ];
  if (report.warnings.length > 0) {
    lines.push(`Warnings (${report.warnings.length})`);
    for (const w of report.warnings) lines.push(...wrap(w, '  ! ', '    '));
    lines.push('');
  }
  // The peers did not change between the runs: their movement is the machine's, and it is
  // the yardstick for how far to trust a verdict of similar size.
  const drift = report.machineDrift.filter((d) => d.ratio !== null);
  if (drift.length === 0) lines.push("Machine drift: no peer ran the same queries on both sides; the machine's own drift is unknown.");
  else {
    const parts = drift.map((d) => `${d.peer} new/old ×${d.ratio!.toFixed(3)} (${change(d.ratio)}) over ${plural(d.queries, 'query', 'queries')}`);
    lines.push(...wrap(`Machine drift (peers, unchanged between the runs): ${parts.join('; ')}`, '', '  '));
  }
  lines.push('');
  for (const s of SECTIONS) {
    const t = table(
      s.title,
      report.metrics.filter((m) => m.group === s.group),
      s.valueHeader,
    );
    if (t.length > 0) lines.push(...t, '');
  }
  lines.push(summaryLine(report));
  return `${lines.join('\n')}\n`;
}
