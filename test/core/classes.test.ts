// The core's class-sequence scan (core/assembly/classes.ts, findClassSequence) against a
// plain-JS scan, on seeded random documents and classes: one-range classes (the range
// test), scattered ones (the nibble lookup), single bytes, sequences of 1 to 32 classes,
// documents of sizes around the 16- and 64-start blocks, bytes >= 0x80 (in no class).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileClassSequence, findClassSequence } from '../../core/index.ts';
import { prng } from '../helpers/corpus.ts';

type Class = Set<number>;

function words(seq: Class[]): number[] {
  const out: number[] = [];
  for (const c of seq) {
    const w = [0, 0, 0, 0];
    for (const b of c) w[b >> 5]! |= 1 << (b & 31);
    out.push(...w.map((x) => x >>> 0));
  }
  return out;
}

/** Leftmost non-overlapping occurrences, byte by byte. */
function oracle(hay: Uint8Array, seq: Class[], max: number): number[] {
  const out: number[] = [];
  const k = seq.length;
  for (let s = 0; s + k <= hay.length && out.length < max; ) {
    let ok = true;
    for (let i = 0; i < k && ok; i++) ok = seq[i]!.has(hay[s + i]!);
    if (ok) {
      out.push(s);
      s += k;
    } else s++;
  }
  return out;
}

const ALPHABET = Buffer.from('0123456789abcdefxyzABCXYZ_-. \n\t');

test('findClassSequence finds what a byte-by-byte scan finds', () => {
  const r = prng(20261125);
  const randomClass = (): Class => {
    switch (r.int(4)) {
      case 0: {
        // One range of the alphabet's neighbourhood.
        const lo = r.pick([0x30, 0x41, 0x61, 0x20]);
        const hi = lo + r.int(26);
        return new Set(Array.from({ length: hi - lo + 1 }, (_, i) => lo + i));
      }
      case 1:
        return new Set([r.pick([...ALPHABET])]);
      default: {
        // Scattered members, several ranges and high nibbles.
        const c = new Set<number>();
        for (let i = 1 + r.int(12); i > 0; i--) c.add(r.pick([...ALPHABET]));
        if (r.chance(0.3)) c.add(r.int(0x80));
        return c;
      }
    }
  };
  for (let round = 0; round < 1500; round++) {
    const k = 1 + (r.chance(0.2) ? r.int(32) : r.int(5));
    const seq = Array.from({ length: k }, randomClass);
    const n = r.pick([0, 1, k - 1, k, 15, 16, 17, 63, 64, 65, 127, 200, 1000 + r.int(3000)]);
    const hay = Buffer.alloc(Math.max(0, n));
    for (let i = 0; i < hay.length; i++) hay[i] = r.chance(0.02) ? 0x80 + r.int(0x80) : r.pick([...ALPHABET]);
    // Plant occurrences, some at the very start and end.
    for (let j = r.int(4); j > 0 && hay.length >= k; j--) {
      const at = r.pick([0, hay.length - k, r.int(hay.length - k + 1)]);
      seq.forEach((c, i) => (hay[at + i] = r.pick([...c])));
    }
    const compiled = compileClassSequence(words(seq));
    for (const max of [1, 3, 1_000_000]) {
      assert.deepEqual(findClassSequence(hay, compiled, max), oracle(hay, seq, max), `round ${round}: k ${k}, n ${hay.length}, max ${max}`);
    }
  }
});

test('a class sequence is 1 to 32 classes', () => {
  assert.throws(() => compileClassSequence([]), RangeError);
  assert.throws(() => compileClassSequence(new Array(33 * 4).fill(1)), RangeError);
  assert.throws(() => compileClassSequence([1, 2, 3]), RangeError);
});
