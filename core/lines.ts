// Line numbers of byte offsets, in the core (core/assembly/lines.ts).

import { align } from './arena.ts';
import { core } from './instance.ts';

/**
 * Line numbers and line starts of ascending byte offsets into `hay`: out[2i] is offset i's
 * 1-based line (1 + the "\n" bytes before it), out[2i + 1] the offset its line starts at.
 * Only the bytes up to the last offset are copied into the wasm arena.
 */
export function locateLines(hay: Uint8Array, offsets: ArrayLike<number>): number[] {
  const k = offsets.length;
  if (k === 0) return [];
  let n = 0;
  for (let i = 0; i < k; i++) if (offsets[i]! > n) n = offsets[i]!;
  n = Math.min(n, hay.length);
  const c = core();
  // io layout: hay[n] + 16 readable padding bytes | offsets u32[k] | out u32[2k]
  const offsOff = align(n + 16);
  const outOff = offsOff + align(k * 4);
  const base = c.scratchWith(hay, n, outOff + k * 8);
  c.u32.set(offsets, (base + offsOff) / 4);
  c.ex.locateLines(base, n, base + offsOff, k, base + outOff);
  // A plain array, as findLiteral's: a search locates the lines of every hit.
  const at = (base + outOff) / 4;
  const out: number[] = new Array(2 * k);
  for (let i = 0; i < 2 * k; i++) out[i] = c.u32[at + i]!;
  return out;
}
