// Sorted sets of document ids, intersected and united in the core (core/assembly/intersect.ts),
// and one member looked up here (a bisection: no copy into the core for one value).

import { align } from './arena.ts';
import { core } from './instance.ts';

/** Sorted-set intersection of strictly ascending u32 arrays (galloping / exponential search when sizes are skewed). */
export function intersectSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0 || b.length === 0) return new Uint32Array(0);
  const c = core();
  const bOff = align(a.length * 4);
  const outOff = bOff + align(b.length * 4);
  const base = c.scratch(outOff + Math.min(a.length, b.length) * 4);
  c.u32.set(a, base / 4);
  c.u32.set(b, (base + bOff) / 4);
  const k = c.ex.intersect(base, a.length, base + bOff, b.length, base + outOff) >>> 0;
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + k);
}

/** Sorted-set union of strictly ascending u32 arrays (galloping with bulk copies when sizes are skewed). */
export function unionSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0) return b.slice();
  if (b.length === 0) return a.slice();
  const c = core();
  const bOff = align(a.length * 4);
  const outOff = bOff + align(b.length * 4);
  const base = c.scratch(outOff + (a.length + b.length) * 4);
  c.u32.set(a, base / 4);
  c.u32.set(b, (base + bOff) / 4);
  const k = c.ex.union(base, a.length, base + bOff, b.length, base + outOff) >>> 0;
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + k);
}

/** Where the ascending u32 array `sorted` holds `value` (bisection), or -1. */
export function indexOfSorted(sorted: Uint32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = sorted[mid]!;
    if (v < value) lo = mid + 1;
    else if (v > value) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/** Whether the ascending u32 array `sorted` holds `value`. */
export function holdsSorted(sorted: Uint32Array, value: number): boolean {
  return indexOfSorted(sorted, value) >= 0;
}
