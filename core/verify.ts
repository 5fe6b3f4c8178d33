// Literal search in a document's bytes, in the core (core/assembly/verify.ts): where a
// needle occurs, or whether it does.

import { align } from './arena.ts';
import { BYTE_FREQUENCY } from './byte-frequency.ts';
import { core } from './instance.ts';

/** findLiteral's first window when one match is wanted (it doubles from there). */
const FIRST_WINDOW = 8 << 10;

/**
 * Whether `needle` occurs in `hay` at all (caseInsensitive: ASCII only, as findLiteral).
 * A long document is scanned from its middle to its end first, then from its start, each
 * part in growing windows copied in as they are scanned: where a term occurs at all, it
 * tends to occur again in the second half (a file that calls mutex_lock calls
 * mutex_unlock sooner from its middle than from its start, where headers and declarations
 * come first), and the bytes copied are the cost. The document's
 * resident prefix (Core.scratchWith) is left as it was: the second half's windows are laid
 * at their own offsets, beyond it.
 */
export function containsLiteral(hay: Uint8Array, needle: Uint8Array, caseInsensitive: boolean): boolean {
  const n = hay.length;
  const m = needle.length;
  if (m === 0 || m > n) return false;
  if (n <= 2 * FIRST_WINDOW) return findLiteral(hay, needle, caseInsensitive, 1).length > 0;
  const c = core();
  // io layout as findLiteral's: hay[n] + 16 readable padding bytes | needle[m] | out u32[1]
  const needleOff = align(n + 16);
  const outOff = needleOff + align(m);
  const size = outOff + 4;
  const ci = caseInsensitive ? 1 : 0;
  const [pa, pb] = probeOffsets(needle, caseInsensitive);
  let base = c.scratchWith(hay, n, size, 0);
  c.u8.set(needle, base + needleOff);
  const mid = n >>> 1;
  // Starts in [mid, n - m]: windows of starts [from, from + window), bytes [from, to).
  for (let from = mid, window = FIRST_WINDOW; from <= n - m; from += window, window *= 2) {
    const to = Math.min(n, from + window + m - 1);
    base = c.scratchWith(hay, n, size, 0);
    c.u8.set(hay.subarray(from, to), base + from);
    if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) return true;
  }
  // Starts in [0, mid): the windows extend the resident prefix.
  for (let from = 0, window = FIRST_WINDOW; from < mid; from += window, window *= 2) {
    const to = Math.min(n, Math.min(from + window, mid) + m - 1);
    base = c.scratchWith(hay, n, size, to);
    if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) return true;
  }
  return false;
}

/**
 * The offsets the literal search probes (findLiteral in core/assembly/verify.ts): the
 * needle's rarest byte in source code and its next rarest at another offset (a letter
 * counts both its cases when the search ignores case), in ascending order; 0 and 0 for one
 * byte. Rare probes make false candidates rare, and those are what a scan spends its time on.
 */
export function probeOffsets(needle: Uint8Array, caseInsensitive: boolean): [number, number] {
  const m = needle.length;
  if (m <= 1) return [0, 0];
  const frequency = (b: number): number => {
    if (!caseInsensitive) return BYTE_FREQUENCY[b]!;
    const lower = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
    return lower >= 0x61 && lower <= 0x7a ? BYTE_FREQUENCY[lower]! + BYTE_FREQUENCY[lower - 0x20]! : BYTE_FREQUENCY[b]!;
  };
  let a = 0;
  let b = -1;
  let fa = frequency(needle[0]!);
  let fb = Infinity;
  for (let i = 1; i < m; i++) {
    const f = frequency(needle[i]!);
    if (f < fa) {
      b = a;
      fb = fa;
      a = i;
      fa = f;
    } else if (f < fb) {
      b = i;
      fb = f;
    }
  }
  return a < b ? [a, b] : [b, a];
}

/** Start byte offsets of the leftmost non-overlapping occurrences of `needle` in `hay`, at most `max` of them (after a match at i, search resumes at i + needle.length). caseInsensitive: ASCII only (A-Z == a-z), other bytes compared exactly. Empty needle: return empty array. The hay is copied into the wasm arena (reuse one region) unless it is there from the previous call (the same object): a second needle in one document copies nothing. With max 1 it is copied and scanned in growing windows up to the first match. */
export function findLiteral(hay: Uint8Array, needle: Uint8Array, caseInsensitive: boolean, max: number): number[] {
  const n = hay.length;
  const m = needle.length;
  if (m === 0 || m > n || !(max >= 1)) return [];
  const c = core();
  // Non-overlapping matches: at most n / m of them.
  const cap = Math.min(Math.floor(max), Math.floor(n / m));
  // io layout: hay[n] + 16 readable padding bytes | needle[m] | out u32[cap]
  const needleOff = align(n + 16);
  const outOff = needleOff + align(m);
  const size = outOff + cap * 4;
  const ci = caseInsensitive ? 1 : 0;
  const [pa, pb] = probeOffsets(needle, caseInsensitive);
  if (cap === 1 && n > 2 * FIRST_WINDOW) {
    // One match wanted: the document is copied and scanned in growing windows, since the
    // first occurrence is often well before the end and memory traffic is the cost.
    let base = c.scratchWith(hay, n, size, 0);
    c.u8.set(needle, base + needleOff);
    let from = 0;
    for (let window = FIRST_WINDOW; from <= n - m; window *= 2) {
      // Starts in [from, from + window) lie wholly in [from, to).
      const to = Math.min(n, from + window + m - 1);
      base = c.scratchWith(hay, n, size, to);
      if (c.ex.findLiteral(base + from, to - from, base + needleOff, m, ci, base + outOff, 1, pa, pb) === 1) {
        return [c.u32[(base + outOff) / 4]! + from];
      }
      from += window;
    }
    return [];
  }
  const base = c.scratchWith(hay, n, size);
  c.u8.set(needle, base + needleOff);
  const k = c.ex.findLiteral(base, n, base + needleOff, m, ci, base + outOff, cap, pa, pb) >>> 0;
  // A plain array: a typed array per call would be a backing store per document searched
  // for the garbage collector to sweep.
  const at = (base + outOff) / 4;
  const out: number[] = new Array(k);
  for (let i = 0; i < k; i++) out[i] = c.u32[at + i]!;
  return out;
}
