// Sets of Unicode code points as sorted, disjoint inclusive ranges: what a character class
// of a pattern stands for, and its complement.

import type { CodeRange } from './re2-syntax.ts';

export const MAX_RUNE = 0x10ffff;

export function normalizeRanges(rs: readonly CodeRange[]): CodeRange[] {
  const sorted = [...rs].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function complementRanges(rs: readonly CodeRange[]): CodeRange[] {
  const out: CodeRange[] = [];
  let next = 0;
  for (const [lo, hi] of normalizeRanges(rs)) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_RUNE) out.push([next, MAX_RUNE]);
  return out;
}

export function withoutNewline(rs: readonly CodeRange[]): CodeRange[] {
  return complementRanges([...complementRanges(rs), [0x0a, 0x0a]]);
}

export function rangesSize(rs: readonly CodeRange[]): number {
  return rs.reduce((n, [lo, hi]) => n + (hi - lo + 1), 0);
}

export function rangesMembers(rs: readonly CodeRange[]): number[] {
  const out: number[] = [];
  for (const [lo, hi] of rs) for (let c = lo; c <= hi; c++) out.push(c);
  return out;
}
