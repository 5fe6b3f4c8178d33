// Human-readable numbers for the command line (bytes: bench/format.ts, the one rounding
// of every figure trawl prints).

export function formatCount(n: number): string {
  // By hand for integers: the first toLocaleString of a process loads ICU's locale data,
  // ~15 ms of a command that prints one summary line.
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ',';
    out += digits[i];
  }
  return n < 0 || Object.is(n, -0) ? `-${out}` : out;
}

/** A one-line progress bar for a terminal, redrawn in place. */
export function progressLine(label: string, done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(ratio * width);
  return `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%`;
}
