// 32-bit numbers stored byte plane by byte plane: every number's lowest byte, then every
// number's second byte, and so on. Numbers of one kind (line numbers, counts) are alike and
// mostly small, so their high planes are runs of zeros and their low ones repeat: zstd
// (zstd-frame.ts) makes 101 KB of the planes of hono's diff hunks where it makes 247 KB
// of the numbers side by side, and 427 KB of its diff lines' ids where 530 KB.

/** `words` as 4 × words.length bytes, plane by plane. */
export function toPlanes(words: Uint32Array): Buffer {
  const n = words.length;
  const out = Buffer.allocUnsafe(n * 4);
  for (let i = 0; i < n; i++) {
    const w = words[i]!;
    out[i] = w & 0xff;
    out[n + i] = (w >>> 8) & 0xff;
    out[2 * n + i] = (w >>> 16) & 0xff;
    out[3 * n + i] = w >>> 24;
  }
  return out;
}

/** The `n` numbers of `planes` (4 × n bytes, as toPlanes wrote them). */
export function fromPlanes(planes: Uint8Array, n: number): Uint32Array {
  if (planes.length !== n * 4) throw new Error(`${n} numbers take ${n * 4} bytes as planes, not ${planes.length}`);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = (planes[i]! | (planes[n + i]! << 8) | (planes[2 * n + i]! << 16) | (planes[3 * n + i]! << 24)) >>> 0;
  return out;
}
