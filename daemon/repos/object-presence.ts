// Whether a repository's own object directory holds objects, checked without git: a
// loose object's file, or the object's name in one of its packs' indexes. Used where one
// git process answered for several repositories at once (cat-file.ts): git finds an
// object in whichever of them holds it, and an answer for one repository must not rest on
// another's objects. "Not sure" is an answer too (false): the caller then asks git about
// that repository alone.
//
// A pack index, version 2, as git documents it (gitformat-pack(5)): the magic bytes
// \377tOc, the version (4 bytes, big-endian), a fan-out table of 256 big-endian counts
// (entry k: how many names begin with a byte <= k), then the names, sorted, each as long
// as the repository's hash (20 bytes for SHA-1, 32 for SHA-256); what follows (checksums,
// offsets) is not read here.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const IDX_MAGIC = 0xff744f63;
const FANOUT_AT = 8;
const NAMES_AT = FANOUT_AT + 256 * 4;

/**
 * True when every object is in `objects` itself; false when one is not, or when that
 * cannot be told (the directory borrows from alternates of its own, a pack index of
 * another version).
 */
export function holdsObjects(objects: string, oids: readonly string[]): boolean {
  if (statSync(join(objects, 'info', 'alternates'), { throwIfNoEntry: false }) !== undefined) return false;
  let indexes: Buffer[] | undefined;
  for (const oid of oids) {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid)) return false;
    if (statSync(join(objects, oid.slice(0, 2), oid.slice(2)), { throwIfNoEntry: false })?.isFile() === true) continue;
    indexes ??= packIndexes(objects);
    if (indexes === undefined) return false;
    const name = Buffer.from(oid, 'hex');
    if (!indexes.some((idx) => indexHolds(idx, name))) return false;
  }
  return true;
}

/**
 * Pack indexes read for one answer at most: a small repository's are a few kilobytes; one
 * with a long history is asked alone rather than have its indexes read on this thread.
 */
const MAX_INDEX_BYTES = 4 << 20;

/** The pack indexes of the directory; undefined when one is not of version 2, or they are too large to read here. */
function packIndexes(objects: string): Buffer[] | undefined {
  const dir = join(objects, 'pack');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.idx'));
  } catch {
    return [];
  }
  const out: Buffer[] = [];
  let bytes = 0;
  for (const n of names) {
    let idx: Buffer;
    try {
      bytes += statSync(join(dir, n)).size;
      if (bytes > MAX_INDEX_BYTES) return undefined;
      idx = readFileSync(join(dir, n));
    } catch {
      return undefined;
    }
    if (idx.length < NAMES_AT || idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2) return undefined;
    out.push(idx);
  }
  return out;
}

/** Whether the index lists the name: a binary search among the names beginning with its first byte. */
export function indexHolds(idx: Buffer, name: Buffer): boolean {
  const len = name.length;
  const first = name[0]!;
  let lo = first === 0 ? 0 : idx.readUInt32BE(FANOUT_AT + (first - 1) * 4);
  let hi = idx.readUInt32BE(FANOUT_AT + first * 4);
  const count = idx.readUInt32BE(FANOUT_AT + 255 * 4);
  if (hi > count || NAMES_AT + count * len > idx.length) return false;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = NAMES_AT + mid * len;
    const c = idx.compare(name, 0, len, at, at + len);
    if (c === 0) return true;
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return false;
}
