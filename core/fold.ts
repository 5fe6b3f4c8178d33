// Index folding and trigram ids: what the index is built over, and what the query side
// must compute the same way (daemon/query).

import { align } from './arena.ts';
import { core } from './instance.ts';

/** Index folding: ASCII 'A'-'Z' -> 'a'-'z'; the UTF-8 sequence E2 84 AA (U+212A KELVIN SIGN) -> 'k'; C5 BF (U+017F LATIN SMALL LETTER LONG S) -> 's'; every other byte unchanged. Reason: these are the only non-ASCII code points whose Unicode simple case folding reaches ASCII, so folding them makes a trigram index over folded text sound for both case-sensitive and Unicode case-insensitive queries. */
export function foldBytes(src: Uint8Array): Uint8Array {
  const c = core();
  const n = src.length;
  // io layout: src[n] | folded[n + 16]
  const dstOff = align(n);
  const base = c.scratch(dstOff + n + 16);
  c.u8.set(src, base);
  const len = c.ex.fold(base, n, base + dstOff) >>> 0;
  return c.u8.slice(base + dstOff, base + dstOff + len);
}

/** Trigram id of three folded bytes: (b0 << 16) | (b1 << 8) | b2. (Each argument is taken mod 256.) */
export function trigramId(b0: number, b1: number, b2: number): number {
  return ((b0 & 0xff) << 16) | ((b1 & 0xff) << 8) | (b2 & 0xff);
}
