// Human-readable numbers for the command line and the figures trawl prints for a person:
// one rounding for every figure, from `trawl index`'s summary line to `trawl bench run`'s
// report and `trawl bench compare`'s table, so that the same bytes never read as "282.3 MB"
// in one place and "282 MB" in another; the progress bars of trawl index and trawl sync;
// and text from elsewhere made safe to print: names, ids, emails, repository names, audit
// events and error messages can hold control characters (a database written before names
// refused them, a code host's repository names, an id taken from a request), which a
// terminal would act on. Every printer shows such text through escapeControl (or the
// `escaped` template tag): a newline as \n, ESC as \x1b, a right-to-left override as \u202e.

import { replaceControlCharacters } from '../auth/control-characters.ts';
import type { BuildProgress, SymbolsProgress } from '../index/indexer.ts';

/** Three significant digits without exponent notation (toPrecision turns 1234 into "1.23e+3"). */
export function sig3(v: number): string {
  if (v === 0) return '0';
  if (Math.abs(v) >= 999.5) return Math.round(v).toString();
  const text = v.toPrecision(3);
  return text.includes('e') ? v.toString() : text;
}

const BYTE_UNITS: Array<[number, string]> = [
  [1e12, 'TB'],
  [1e9, 'GB'],
  [1e6, 'MB'],
  [1e3, 'KB'],
];

/** Decimal units (MB = 10^6 bytes), three significant digits; whole bytes below 1 KB. */
export function formatBytes(n: number): string {
  // 999.96 KB would round to "1000 KB": it is shown as "1.00 MB".
  for (const [size, unit] of BYTE_UNITS) if (Math.abs(n) >= size * 0.9995) return `${sig3(n / size)} ${unit}`;
  return `${Math.round(n)} B`;
}

/** Milliseconds with about three significant digits, seconds from 10 s; "—" when unknown. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 100 ? `${ms.toFixed(1)} ms` : ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function formatCount(n: number): string {
  // By hand for integers: the first toLocaleString of a process loads ICU's locale data, a
  // noticeable part of a command that prints one summary line.
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ',';
    out += digits[i];
  }
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}

/** How long ago, to a glance's precision: "0.4s", "41s", "12m", "5h", "3d" (negative counts as 0). */
export function formatAge(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${(Math.floor(s * 10) / 10).toFixed(1)}s`;
  if (s < 120) return `${Math.floor(s)}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172_800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** A one-line progress bar for a terminal, redrawn in place. */
export function progressLine(label: string, done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(ratio * width);
  return `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%`;
}

/** The bar of a build, redrawn in place: `label [####....]  40% 31,415/78,536 files, 412 MB`. */
export function buildProgressLine(label: string, p: BuildProgress): string {
  return `${progressLine(label, p.files, p.totalFiles)} ${formatCount(p.files)}/${formatCount(p.totalFiles)} files, ${formatBytes(p.bytes)}`;
}

/** The bar of a symbols pass (the content is searchable already). */
export function symbolsProgressLine(label: string, p: SymbolsProgress): string {
  return `${progressLine(label, p.shards, p.totalShards)} content searchable; symbols ${p.shards}/${p.totalShards} shards`;
}

/** Calls `draw` at most every `ms` milliseconds, and always for the last step (done === total). */
export function throttled<T>(draw: (p: T) => void, isLast: (p: T) => boolean, ms = 100): (p: T) => void {
  let last = 0;
  return (p) => {
    const now = Date.now();
    if (now - last < ms && !isLast(p)) return;
    last = now;
    draw(p);
  };
}

/** A table of plain text: the columns padded to their widest cell (the last one not), two spaces apart. */
export function formatTable(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` with every control character (auth/control-characters.ts) shown as an escape: \n, \x1b, \u202e. */
export function escapeControl(text: string): string {
  return replaceControlCharacters(text, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code <= 0xff ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
  });
}

/** A template literal whose every interpolated value is shown through escapeControl: the literal text is the program's, the values are not. */
export function escaped(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += escapeControl(String(values[i])) + strings[i + 1]!;
  return out;
}

/**
 * `value` as JSON (indented by `space`) that prints safely and parses to the same value:
 * JSON.stringify escapes C0 in strings already; the rest of the class (DEL, C1, the
 * bidirectional marks) becomes \uXXXX too. Raw C0 is left alone: outside strings it is
 * the indentation's line breaks.
 */
export function jsonText(value: unknown, space?: number): string {
  return replaceControlCharacters(JSON.stringify(value, null, space), (c) => (c.charCodeAt(0) < 0x20 ? c : `\\u${hex(c.charCodeAt(0), 4)}`));
}

function hex(n: number, digits: number): string {
  return n.toString(16).padStart(digits, '0');
}
