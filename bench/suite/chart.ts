// The chart of a bench comparison (compare.ts): per search query, old and new p50 as
// horizontal bars on a log scale (the mix's latencies span orders of magnitude; on a linear
// scale the fast queries would be invisible), p95 as whiskers. A self-contained SVG: no fonts, scripts
// or stylesheets fetched, so it can be attached to an issue or a CI artifact as is.
// Regressions and improvements differ in colour AND carry a text marker (and regressions a
// hatch), so that the chart still reads printed in greyscale or by a colour-blind reader.
// Deterministic: the same report gives the same bytes (fixed decimals, no dates, no ids
// beyond fixed ones).

import type { CompareReport, MetricComparison } from './compare-report.ts';
import { truncate } from './compare-text.ts';

const WIDTH = 980;
const LABEL_X = 10; // left edge of the query labels
const LABEL_CHARS = 46; // ≈ what fits in front of PLOT_X at 11 px monospace
const PLOT_X = 330;
const PLOT_WIDTH = 440;
const MARKER_X = PLOT_X + PLOT_WIDTH + 12;
const TOP = 70; // title and legend above
const ROW = 30;
const BAR = 10;
const AXIS = 56; // tick labels and axis title below

const COLOUR = {
  old: '#b3b3b3',
  new: '#4c72b0',
  regression: '#c44e52',
  improvement: '#55a868',
  unjudged: '#8c8c8c',
  grid: '#e3e3e3',
  ink: '#222222',
};

/** Every character with a meaning in XML text or in a double- or single-quoted attribute. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

const n1 = (v: number) => v.toFixed(1);

function msLabel(v: number): string {
  if (v >= 1000) return `${v / 1000} s`;
  return `${v} ms`;
}

/** Decades covering every positive value (1 to 10 when there is none). */
function domain(values: number[]): { lo: number; hi: number } {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  if (positive.length === 0) return { lo: 1, hi: 10 };
  const lo = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  let hi = 10 ** Math.ceil(Math.log10(Math.max(...positive)));
  if (hi <= lo) hi = lo * 10;
  return { lo, hi };
}

/**
 * 1, 2 and 5 times each power of ten in the domain, decimals rounded away (0.1 * 3 is not
 * 0.3). Only the powers of ten are labelled: 1 and 2 sit a third of a decade apart, too
 * close for two labels at this width.
 */
function ticks(lo: number, hi: number): Array<{ value: number; labelled: boolean }> {
  const out: Array<{ value: number; labelled: boolean }> = [];
  for (let decade = lo; decade < hi * 1.0001; decade *= 10) {
    for (const m of [1, 2, 5]) {
      const value = Number((m * decade).toPrecision(6));
      if (value >= lo * 0.9999 && value <= hi * 1.0001) out.push({ value, labelled: m === 1 });
    }
  }
  return out;
}

function marker(m: MetricComparison): { text: string; colour: string } {
  const pct = m.ratio === null ? '' : `${m.ratio >= 1 ? '+' : '-'}${Math.abs((m.ratio - 1) * 100).toFixed(1)}%`;
  switch (m.verdict) {
    case 'regression':
      return { text: `▲ ${pct} REGRESSION`, colour: COLOUR.regression };
    case 'improvement':
      return { text: `▼ ${pct} improvement`, colour: COLOUR.improvement };
    case 'no change':
      return { text: pct, colour: COLOUR.ink };
    case 'not judged':
      // No samples on a side: the query is missing there or failed (the warnings say which).
      if (m.old.n === 0 && m.new.n > 0) return { text: 'no old samples', colour: COLOUR.unjudged };
      if (m.new.n === 0 && m.old.n > 0) return { text: 'no new samples', colour: COLOUR.unjudged };
      return { text: 'not judged', colour: COLOUR.unjudged };
  }
}

function newColour(m: MetricComparison): string {
  if (m.verdict === 'regression') return COLOUR.regression;
  if (m.verdict === 'improvement') return COLOUR.improvement;
  return m.verdict === 'not judged' ? COLOUR.unjudged : COLOUR.new;
}

export function compareChartSvg(report: CompareReport): string {
  const rows = report.metrics.filter((m) => m.group === 'search');
  const { lo, hi } = domain(rows.flatMap((m) => [m.old.median, m.old.p95, m.new.median, m.new.p95].filter((v): v is number => v !== null)));
  const span = Math.log10(hi) - Math.log10(lo);
  const x = (v: number) => PLOT_X + ((Math.log10(Math.min(Math.max(v, lo), hi)) - Math.log10(lo)) / span) * PLOT_WIDTH;
  const height = TOP + Math.max(1, rows.length) * ROW + AXIS;
  const plotBottom = TOP + Math.max(1, rows.length) * ROW;
  const commit = (c: string) => c.replace(/^([0-9a-f]{12})[0-9a-f]{28}/, '$1');
  const out: string[] = [];

  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11" fill="${COLOUR.ink}">`,
  );
  out.push(
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#000000" stroke-width="1.5" stroke-opacity="0.45"/></pattern></defs>',
  );
  out.push(`<rect x="0" y="0" width="${WIDTH}" height="${height}" fill="#ffffff"/>`);
  out.push(
    `<text x="${LABEL_X}" y="20" font-size="14" font-weight="bold">${escapeXml(`Search latency p50, old ${commit(report.old.gitCommit)} vs new ${commit(report.new.gitCommit)}`)}</text>`,
  );

  // Legend: what each bar, colour and mark means.
  const legend: Array<{ fill: string; hatch?: boolean; text: string }> = [
    { fill: COLOUR.old, text: 'old p50' },
    { fill: COLOUR.new, text: 'new p50: no change' },
    { fill: COLOUR.regression, hatch: true, text: '▲ new p50: regression' },
    { fill: COLOUR.improvement, text: '▼ new p50: improvement' },
    { fill: COLOUR.unjudged, text: 'not judged' },
  ];
  let lx = LABEL_X;
  for (const item of legend) {
    out.push(`<rect x="${lx}" y="34" width="14" height="${BAR}" fill="${item.fill}"/>`);
    if (item.hatch) out.push(`<rect x="${lx}" y="34" width="14" height="${BAR}" fill="url(#hatch)"/>`);
    out.push(`<text x="${lx + 19}" y="43">${escapeXml(item.text)}</text>`);
    lx += 19 + item.text.length * 7 + 18;
  }
  out.push(
    `<line x1="${lx}" y1="39" x2="${lx + 14}" y2="39" stroke="${COLOUR.ink}"/><line x1="${lx + 14}" y1="35" x2="${lx + 14}" y2="43" stroke="${COLOUR.ink}"/>`,
  );
  out.push(`<text x="${lx + 19}" y="43">p95</text>`);

  // Grid and axis: log ticks at 1, 2, 5 per decade.
  for (const t of ticks(lo, hi)) {
    const tx = n1(x(t.value));
    out.push(`<line x1="${tx}" y1="${TOP - 6}" x2="${tx}" y2="${plotBottom}" stroke="${COLOUR.grid}"/>`);
    out.push(`<line x1="${tx}" y1="${plotBottom}" x2="${tx}" y2="${plotBottom + (t.labelled ? 5 : 3)}" stroke="${COLOUR.ink}"/>`);
    if (t.labelled) out.push(`<text x="${tx}" y="${plotBottom + 16}" text-anchor="middle">${escapeXml(msLabel(t.value))}</text>`);
  }
  out.push(`<line x1="${PLOT_X}" y1="${plotBottom}" x2="${PLOT_X + PLOT_WIDTH}" y2="${plotBottom}" stroke="${COLOUR.ink}"/>`);
  out.push(`<text x="${PLOT_X + PLOT_WIDTH / 2}" y="${plotBottom + 36}" text-anchor="middle">${escapeXml('p50 latency (log scale); whiskers to p95')}</text>`);

  if (rows.length === 0) out.push(`<text x="${PLOT_X}" y="${TOP + 18}">${escapeXml('no search queries to compare')}</text>`);
  rows.forEach((m, i) => {
    const y = TOP + i * ROW;
    const mk = marker(m);
    out.push('<g>');
    // The full query, for a reader hovering over a truncated label.
    out.push(`<title>${escapeXml(`${m.queryName ?? m.id}: ${m.label}`)}</title>`);
    out.push(`<text x="${LABEL_X}" y="${y + 18}">${escapeXml(truncate(m.label, LABEL_CHARS))}</text>`);
    const bars: Array<{ s: MetricComparison['old']; dy: number; fill: string; hatch: boolean }> = [
      { s: m.old, dy: 4, fill: COLOUR.old, hatch: false },
      { s: m.new, dy: 4 + BAR + 2, fill: newColour(m), hatch: m.verdict === 'regression' },
    ];
    for (const b of bars) {
      if (b.s.median === null || b.s.median <= 0) continue;
      const w = n1(Math.max(1, x(b.s.median) - PLOT_X));
      out.push(`<rect x="${PLOT_X}" y="${y + b.dy}" width="${w}" height="${BAR}" fill="${b.fill}"/>`);
      if (b.hatch) out.push(`<rect x="${PLOT_X}" y="${y + b.dy}" width="${w}" height="${BAR}" fill="url(#hatch)"/>`);
      if (b.s.p95 !== null && b.s.p95 > b.s.median) {
        const cy = y + b.dy + BAR / 2;
        const [x1, x2] = [n1(x(b.s.median)), n1(x(b.s.p95))];
        out.push(
          `<line x1="${x1}" y1="${cy}" x2="${x2}" y2="${cy}" stroke="${COLOUR.ink}"/><line x1="${x2}" y1="${cy - 3}" x2="${x2}" y2="${cy + 3}" stroke="${COLOUR.ink}"/>`,
        );
      }
    }
    out.push(`<text x="${MARKER_X}" y="${y + 18}" fill="${mk.colour}"${m.verdict === 'regression' ? ' font-weight="bold"' : ''}>${escapeXml(mk.text)}</text>`);
    out.push('</g>');
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
