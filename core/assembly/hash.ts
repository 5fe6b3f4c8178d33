// xxHash32 (Yann Collet's XXH32 algorithm, standard output), one-shot and streaming.
// Streaming state lives in module globals: one wasm instance per thread, and the glue
// runs a whole begin/update/end sequence synchronously.

const P1: u32 = 0x9E3779B1;
const P2: u32 = 0x85EBCA77;
const P3: u32 = 0xC2B2AE3D;
const P4: u32 = 0x27D4EB2F;
const P5: u32 = 0x165667B1;

let v1: u32 = 0;
let v2: u32 = 0;
let v3: u32 = 0;
let v4: u32 = 0;

// @ts-ignore: decorator
@inline
function round(acc: u32, lane: u32): u32 {
  return rotl<u32>(acc + lane * P2, 13) * P1;
}

/** Starts a streaming hash. */
export function xxh32Begin(seed: u32): void {
  v1 = seed + P1 + P2;
  v2 = seed + P2;
  v3 = seed;
  v4 = seed - P1;
}

/** Writes the streaming state (four u32 accumulators) to p: a stream of another hash may run meanwhile. */
export function xxh32Save(p: usize): void {
  store<u32>(p, v1);
  store<u32>(p, v2, 4);
  store<u32>(p, v3, 8);
  store<u32>(p, v4, 12);
}

/** Takes up a stream whose state xxh32Save wrote at p. */
export function xxh32Restore(p: usize): void {
  v1 = load<u32>(p);
  v2 = load<u32>(p, 4);
  v3 = load<u32>(p, 8);
  v4 = load<u32>(p, 12);
}

/** Consumes len bytes at p; len must be a multiple of 16 (whole stripes). */
export function xxh32Update(p: usize, len: u32): void {
  let a = v1, b = v2, c = v3, d = v4;
  const end = p + len;
  while (p < end) {
    a = round(a, load<u32>(p));
    b = round(b, load<u32>(p, 4));
    c = round(c, load<u32>(p, 8));
    d = round(d, load<u32>(p, 12));
    p += 16;
  }
  v1 = a; v2 = b; v3 = c; v4 = d;
}

/**
 * Finishes: tail[0, tailLen) (< 16 bytes) are the input bytes after the last whole stripe;
 * totalLow is the total input length mod 2^32; large != 0 when the total length is >= 16
 * (that is, when stripes were consumed and the accumulators are used).
 */
export function xxh32End(tail: usize, tailLen: u32, totalLow: u32, large: i32, seed: u32): u32 {
  let h: u32 = large
    ? rotl<u32>(v1, 1) + rotl<u32>(v2, 7) + rotl<u32>(v3, 12) + rotl<u32>(v4, 18)
    : seed + P5;
  h += totalLow;
  let i: u32 = 0;
  while (i + 4 <= tailLen) {
    h = rotl<u32>(h + load<u32>(tail + i) * P3, 17) * P4;
    i += 4;
  }
  while (i < tailLen) {
    h = rotl<u32>(h + <u32>load<u8>(tail + i) * P5, 11) * P1;
    i++;
  }
  h ^= h >> 15;
  h *= P2;
  h ^= h >> 13;
  h *= P3;
  h ^= h >> 16;
  return h;
}

/** One-shot xxHash32 of p[0, len). */
export function xxh32(p: usize, len: u32, seed: u32): u32 {
  xxh32Begin(seed);
  const body = len & ~15;
  xxh32Update(p, body);
  return xxh32End(p + body, len - body, len, <i32>(len >= 16), seed);
}
