// Byte-class sequences (what a regex with no usable literal still requires of a match),
// compiled here and searched for in the core (core/assembly/classes.ts).

import { align } from './arena.ts';
import { core } from './instance.ts';

/** A sequence of byte classes compiled for findClassSequence (its program: core/assembly/classes.ts). */
export interface ClassSequence {
  readonly program: Uint8Array;
  /** Classes in the sequence (1-32). */
  readonly length: number;
  /** The offsets of the three classes the scan filters on (compileClassSequence picks them). */
  readonly pa: number;
  readonly pb: number;
  readonly pc: number;
}

/** A class's members: 4 u32 words per class, bit b of word b >> 5 set when byte b (< 0x80) is in it. */
const inClass = (words: ArrayLike<number>, i: number, b: number): boolean => ((words[4 * i + (b >> 5)]! >>> (b & 31)) & 1) === 1;

/** The class's bytes when they are one range [first, last], else null. */
function oneRange(words: ArrayLike<number>, i: number): [number, number] | null {
  let first = -1;
  let last = -1;
  for (let b = 0; b < 0x80; b++) {
    if (!inClass(words, i, b)) continue;
    if (first >= 0 && last !== b - 1) return null;
    if (first < 0) first = b;
    last = b;
  }
  return first < 0 ? null : [first, last];
}

/** The nibble tables of one class: b is in it when lo[b & 15] & hi[b >> 4] != 0 (exact for ASCII sets). */
function shufti(words: ArrayLike<number>, i: number): [Uint8Array, Uint8Array] {
  const lo = new Uint8Array(16);
  const hi = new Uint8Array(16);
  const bits = new Map<number, number>(); // a set of low nibbles -> its bit
  for (let h = 0; h < 8; h++) {
    let nibbles = 0;
    for (let l = 0; l < 16; l++) if (inClass(words, i, (h << 4) | l)) nibbles |= 1 << l;
    if (nibbles === 0) continue;
    let bit = bits.get(nibbles);
    if (bit === undefined) bits.set(nibbles, (bit = 1 << bits.size)); // at most 8 high nibbles: 8 bits
    hi[h] = bit;
    for (let l = 0; l < 16; l++) if ((nibbles >> l) & 1) lo[l]! |= bit;
  }
  return [lo, hi];
}

/**
 * Compiles a sequence of classes of ASCII bytes, 4 u32 words each (bit b of word b >> 5:
 * byte b is in the class; bits of bytes >= 0x80 are ignored). 1 to 32 classes.
 */
export function compileClassSequence(words: ArrayLike<number>): ClassSequence {
  const k = words.length / 4;
  if (!Number.isInteger(k) || k < 1 || k > 32) throw new RangeError(`trawl core: a class sequence has 1 to 32 classes, not ${words.length / 4}`);
  const size: number[] = [];
  for (let i = 0; i < k; i++) {
    let n = 0;
    for (let b = 0; b < 0x80; b++) if (inClass(words, i, b)) n++;
    size.push(n);
  }
  // A: the rarest class. B: the farthest from it of those that rule out at least half the
  // bytes (neighbours are correlated: `0x` then hex digits passes every "0x" when B is the
  // 'x', few when B is the last digit). C: the rarest of the rest.
  let pa = 0;
  for (let i = 1; i < k; i++) if (size[i]! < size[pa]!) pa = i;
  let pb = pa;
  for (let i = 0; i < k; i++) {
    if (i === pa || size[i]! > 64) continue;
    if (pb === pa || Math.abs(i - pa) > Math.abs(pb - pa) || (Math.abs(i - pa) === Math.abs(pb - pa) && size[i]! < size[pb]!)) pb = i;
  }
  let pc = pa;
  for (let i = 0; i < k; i++) if (i !== pa && i !== pb && (pc === pa || size[i]! < size[pc]!)) pc = i;
  if (pb === pa) pb = pc; // no class rules out half: the two rarest
  const program = new Uint8Array(128 + 256 * 4);
  [pa, pb, pc].forEach((at, i) => {
    const range = oneRange(words, at);
    if (range) {
      program.fill(range[0], 32 * i, 32 * i + 16);
      program.fill(range[1] - range[0] + 1, 32 * i + 16, 32 * i + 32);
      program[96 + i] = 1;
      return;
    }
    const [lo, hi] = shufti(words, at);
    program.set(lo, 32 * i);
    program.set(hi, 32 * i + 16);
  });
  const table = new Uint32Array(program.buffer, 128, 256);
  for (let i = 0; i < k; i++) for (let b = 0; b < 0x80; b++) if (inClass(words, i, b)) table[b]! |= 1 << i;
  return { program, length: k, pa, pb, pc };
}

/**
 * Starts of the leftmost non-overlapping occurrences of the class sequence in `hay`, at
 * most `max` (after one at i the scan resumes at i + its length). The document is copied
 * as findLiteral copies it (nothing when it is resident).
 */
export function findClassSequence(hay: Uint8Array, seq: ClassSequence, max: number): number[] {
  const n = hay.length;
  const k = seq.length;
  if (k > n || !(max >= 1)) return [];
  const c = core();
  const cap = Math.min(Math.floor(max), Math.floor(n / k));
  // io layout: hay[n] + 16 readable padding bytes | program | out u32[cap]
  const progOff = align(n + 16);
  const outOff = progOff + align(seq.program.length);
  const base = c.scratchWith(hay, n, outOff + cap * 4);
  c.u8.set(seq.program, base + progOff);
  const found = c.ex.findClassSequence(base, n, base + progOff, k, seq.pa, seq.pb, seq.pc, base + outOff, cap) >>> 0;
  const at = (base + outOff) / 4;
  const out: number[] = new Array(found);
  for (let i = 0; i < found; i++) out[i] = c.u32[at + i]!;
  return out;
}
