// xxHash32 in the core (core/assembly/hash.ts): of bytes at once, or given piece by piece.

import { core } from './instance.ts';

/** Streaming chunk for hashing (a multiple of 16, the xxHash32 stripe). */
const CHUNK = 1 << 20;

/** xxHash32 of data with seed (default 0): standard xxHash32 so values match published test vectors. Large inputs are streamed through the io region in chunks. */
export function hash32(data: Uint8Array, seed: number = 0): number {
  const n = data.length;
  if (n > CHUNK) return new Hash32Stream(seed).update(data).digest();
  const c = core();
  const base = c.scratch(n);
  c.u8.set(data, base);
  return c.ex.xxh32(base, n, seed >>> 0) >>> 0;
}

/**
 * xxHash32 (as hash32) of bytes given piece by piece, the pieces of any length: what a
 * reader that hashes a file in slices between other work needs (daemon/index/scrub-thread.ts).
 * Its state is kept here between pieces, so other hashes may run in between.
 */
export class Hash32Stream {
  readonly #seed: number;
  /** The four accumulators (xxh32Save), the stripe not yet whole, and bytes taken. */
  readonly #state = new Uint32Array(4);
  readonly #tail = new Uint8Array(16);
  #tailLen = 0;
  #total = 0;

  constructor(seed = 0) {
    this.#seed = seed >>> 0;
    const c = core();
    c.ex.xxh32Begin(this.#seed);
    const base = c.scratch(16);
    c.ex.xxh32Save(base);
    this.#state.set(c.u32.subarray(base / 4, base / 4 + 4));
  }

  /** Takes the next bytes. */
  update(data: Uint8Array): this {
    this.#total += data.length;
    let from = 0;
    if (this.#tailLen > 0) {
      from = Math.min(data.length, 16 - this.#tailLen);
      this.#tail.set(data.subarray(0, from), this.#tailLen);
      this.#tailLen += from;
      if (this.#tailLen < 16) return this;
    }
    const whole = (data.length - from) & ~15;
    if (this.#tailLen === 16 || whole > 0) {
      const c = core();
      const size = Math.min(CHUNK, 16 + whole);
      const base = c.scratch(size + 16);
      const at = base + size; // the state, after the bytes
      c.u32.set(this.#state, at / 4);
      c.ex.xxh32Restore(at);
      if (this.#tailLen === 16) {
        c.u8.set(this.#tail, base);
        c.ex.xxh32Update(base, 16);
        this.#tailLen = 0;
      }
      for (let i = 0; i < whole; i += size) {
        const len = Math.min(size, whole - i); // size is a multiple of 16 (CHUNK is)
        c.u8.set(data.subarray(from + i, from + i + len), base);
        c.ex.xxh32Update(base, len);
      }
      c.ex.xxh32Save(at);
      this.#state.set(c.u32.subarray(at / 4, at / 4 + 4));
      from += whole;
    }
    this.#tail.set(data.subarray(from), this.#tailLen);
    this.#tailLen += data.length - from;
    return this;
  }

  /** The hash of every byte taken. */
  digest(): number {
    const c = core();
    const base = c.scratch(32);
    c.u8.set(this.#tail.subarray(0, this.#tailLen), base);
    c.u32.set(this.#state, (base + 16) / 4);
    c.ex.xxh32Restore(base + 16);
    return c.ex.xxh32End(base, this.#tailLen, this.#total >>> 0, this.#total >= 16 ? 1 : 0, this.#seed) >>> 0;
  }
}
