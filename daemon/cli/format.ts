// Human-readable numbers for the command line (bytes: bench/format.ts, the one rounding
// of every figure trawl prints).

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** A one-line progress bar for a terminal, redrawn in place. */
export function progressLine(label: string, done: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(ratio * width);
  return `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}%`;
}
