// Human-readable figures: one rounding for every number trawl prints for a person, from
// `trawl index`'s summary line to `trawl bench run`'s report and `trawl bench compare`'s
// table, so that the same bytes never read as "282.3 MB" in one place and "282 MB" in another.

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

/** Decimal units (MB = 10^6 bytes, as bench/README.md says), three significant digits; whole bytes below 1 KB. */
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
