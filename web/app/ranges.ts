// Match ranges from the API are in file coordinates: 1-based line numbers and 1-based
// columns counted in Unicode code points (docs/http-api.md section 10). The DOM works in
// UTF-16 units, so columns are converted per line here.

import type { Range } from '../../daemon/search/types.ts';

/** The UTF-16 index of 1-based code-point column `column` in `line` (clamped to the line). */
export function utf16Index(line: string, column: number): number {
  let i = 0;
  for (let cp = 1; cp < column && i < line.length; cp++) {
    const c = line.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < line.length ? 2 : 1;
  }
  return i;
}

/**
 * The marked spans of each line, `[from, to)` in UTF-16 units, for the lines
 * `firstLine .. firstLine + lines.length - 1`. A range over several lines marks the rest
 * of its first line, all of the middle ones and the start of its last one.
 */
export function spansByLine(lines: string[], firstLine: number, ranges: Range[]): Map<number, Array<[number, number]>> {
  const out = new Map<number, Array<[number, number]>>();
  const add = (lineNo: number, from: number, to: number) => {
    if (to <= from) return;
    let list = out.get(lineNo);
    if (!list) out.set(lineNo, (list = []));
    list.push([from, to]);
  };
  for (const r of ranges) {
    for (let n = Math.max(r.start.lineNumber, firstLine); n <= Math.min(r.end.lineNumber, firstLine + lines.length - 1); n++) {
      const text = lines[n - firstLine]!;
      const from = n === r.start.lineNumber ? utf16Index(text, r.start.column) : 0;
      const to = n === r.end.lineNumber ? utf16Index(text, r.end.column) : text.length;
      // An empty match (a zero-width regex) still shows where it is.
      add(n, from, Math.max(to, n === r.end.lineNumber && from === to ? Math.min(from + 1, text.length) : to));
    }
  }
  for (const list of out.values()) list.sort((a, b) => a[0] - b[0]);
  return out;
}

/** Text split into alternating plain and marked pieces by sorted, possibly overlapping spans. */
export function pieces(text: string, spans: Array<[number, number]> | undefined): Array<{ text: string; marked: boolean }> {
  if (!spans || spans.length === 0) return [{ text, marked: false }];
  const out: Array<{ text: string; marked: boolean }> = [];
  let at = 0;
  for (const [from, to] of spans) {
    const f = Math.max(from, at);
    if (to <= f) continue;
    if (f > at) out.push({ text: text.slice(at, f), marked: false });
    out.push({ text: text.slice(f, to), marked: true });
    at = to;
  }
  if (at < text.length) out.push({ text: text.slice(at), marked: false });
  return out;
}

/** "3,7-9" from line numbers; the inverse of parseLineList. */
export function formatLineList(lines: number[]): string {
  const sorted = [...new Set(lines)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? String(sorted[i]) : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** Line numbers from "3,7-9" (bad parts ignored; at most 10,000 lines). */
export function parseLineList(text: string | null): Set<number> {
  const out = new Set<number>();
  if (!text) return out;
  for (const part of text.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] === undefined ? a : Number(m[2]);
    for (let n = a; n <= b && out.size < 10_000; n++) out.add(n);
  }
  return out;
}

/**
 * What a file link asks the file view to mark (?hl=): comma-separated parts, each a line
 * ("7"), a run of lines ("7-9") or an exact range "L:C-L:C" (1-based line and code-point
 * column, end exclusive, as the API's match ranges). The lines of a range are marked too.
 */
export interface Highlights {
  lines: Set<number>;
  ranges: Range[];
}

/** Exact ranges kept in a link at most; beyond this a link names the lines only (URL length). */
export const MAX_LINK_RANGES = 100;

const AT = (lineNumber: number, column: number) => ({ byteOffset: 0, lineNumber, column });

/** Parses ?hl= (bad parts ignored; at most 10,000 lines and MAX_LINK_RANGES ranges). */
export function parseHighlights(text: string | null): Highlights {
  const ranges: Range[] = [];
  const lineParts: string[] = [];
  for (const part of (text ?? '').split(',')) {
    const m = /^(\d+):(\d+)-(\d+):(\d+)$/.exec(part.trim());
    if (!m) {
      lineParts.push(part);
      continue;
    }
    const [a, b, c, d] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])];
    if (a < 1 || b < 1 || c < a || (c === a && d < b) || ranges.length >= MAX_LINK_RANGES) continue;
    ranges.push({ start: AT(a, b), end: AT(c, d) });
  }
  const lines = parseLineList(lineParts.join(','));
  for (const r of ranges) for (let n = r.start.lineNumber; n <= r.end.lineNumber && lines.size < 10_000; n++) lines.add(n);
  return { lines, ranges };
}

/** ?hl= for a file's match ranges: exact while there are few enough, else their lines. */
export function formatHighlights(ranges: Range[]): string {
  if (ranges.length <= MAX_LINK_RANGES) {
    return ranges.map((r) => `${r.start.lineNumber}:${r.start.column}-${r.end.lineNumber}:${r.end.column}`).join(',');
  }
  const lines: number[] = [];
  for (const r of ranges) for (let n = r.start.lineNumber; n <= r.end.lineNumber; n++) lines.push(n);
  return formatLineList(lines);
}

/** Lines `from` to `to` (1-based, inclusive): what a fragment "#L12-L20" names. */
export interface LineSpan {
  from: number;
  to: number;
}

/** The range a fragment names: "#L12" or "#L12-L20" (also "#L12-20"). */
export function hashSpan(hash: string): LineSpan | undefined {
  const m = /^#L(\d+)(?:-L?(\d+))?$/.exec(hash);
  if (!m) return undefined;
  const a = Number(m[1]);
  const b = m[2] === undefined ? a : Number(m[2]);
  return { from: Math.min(a, b), to: Math.max(a, b) };
}

export function spanHash(span: LineSpan): string {
  return span.from === span.to ? `#L${span.from}` : `#L${span.from}-L${span.to}`;
}
