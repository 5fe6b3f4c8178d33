// Git's order of names and paths: their UTF-8 bytes.

/** A UTF-16 code unit at or above the surrogates. */
const HIGH_UNIT = /[\uD800-\uFFFF]/;

/**
 * Orders strings by their UTF-8 bytes, as git orders names. Below the surrogates (U+D800),
 * UTF-16 code units are code points, whose order is their UTF-8 bytes' order: only strings
 * holding a unit at or above them are compared as bytes.
 */
export function compareBytes(a: string, b: string): number {
  if (HIGH_UNIT.test(a) || HIGH_UNIT.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : a > b ? 1 : 0;
}
