// A blob stored as a loose object, read without git: the file objects/<2 hex>/<38 hex> is
// zlib-deflated "blob <size>\0<bytes>" (gitformat-loose(5)). A repository's newest objects
// are loose, and a small repository made by a few commits may hold nothing else; reading
// them here spares a git process and its look-ups through other repositories' object
// directories (job-blobs.ts). Anything unexpected (no such file, another type or size, a
// stream that does not inflate) is left to git, which reads it or says what is wrong.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

/** The blob's bytes when `objects` holds it loose with the size expected; undefined otherwise. */
export function readLooseBlob(objects: string, oid: string, size: number): Uint8Array | undefined {
  if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
  let deflated: Buffer;
  try {
    deflated = readFileSync(join(objects, oid.slice(0, 2), oid.slice(2)));
  } catch {
    return undefined;
  }
  let whole: Buffer;
  try {
    whole = inflateSync(deflated, { maxOutputLength: size + 64 });
  } catch {
    return undefined;
  }
  const head = `blob ${size}\0`;
  if (whole.length !== head.length + size || whole.toString('latin1', 0, head.length) !== head) return undefined;
  return whole.subarray(head.length);
}
