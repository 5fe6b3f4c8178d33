// Reading posting lists (as PostingsBuilder encodes them) in the core: one decoded, or
// several intersected while they are decoded (core/assembly/postings.ts).

import { align } from './arena.ts';
import { core } from './instance.ts';

/**
 * A posting list that is not what PostingsBuilder writes: cut short, a varint too long,
 * ids not strictly ascending, an id past the list's bound, or more ids than bytes. Only a
 * damaged index holds one (the caller names the file).
 */
export class MalformedPostings extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedPostings';
  }
}

/** The bound of a list whose ids may be any u32 (EncodedList.limit's default). */
export const ANY_ID = 0x1_0000_0000;

/** maxId of the core's decoders (core/assembly/postings.ts nextId): the largest id below `limit`. */
function maxIdBelow(limit: number, count: number, what: string): number {
  if (!(limit >= 1 && limit <= ANY_ID)) {
    if (limit === 0 && count === 0) return 0;
    throw new MalformedPostings(`${what}: ${count} ids cannot lie below ${limit}`);
  }
  return (limit - 1) >>> 0;
}

/**
 * Decodes a posting list written by PostingsBuilder. `bytes` starts at the list (may extend
 * past it); `count` is its doc count; every id must be below `limit` (the shard's document
 * count, say: default any u32). Throws MalformedPostings if the bytes end before `count`
 * values, a varint is malformed, the ids are not strictly ascending or one reaches
 * `limit`, or `count` exceeds the bytes (a value takes at least one): a damaged list is
 * refused, never read past its end nor turned into documents that do not exist.
 */
export function decodePostings(bytes: Uint8Array, count: number, limit: number = ANY_ID): Uint32Array {
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`decodePostings: bad count ${count}`);
  if (count === 0) return new Uint32Array(0);
  if (count > bytes.length) throw new MalformedPostings(`decodePostings: ${count} ids cannot fit in ${bytes.length} bytes`);
  const maxId = maxIdBelow(limit, count, 'decodePostings');
  const c = core();
  // A value takes at most 5 bytes, so only that much of `bytes` can belong to the list.
  const srcLen = Math.min(bytes.length, count * 5);
  const outOff = align(srcLen);
  const base = c.scratch(outOff + count * 4);
  c.u8.set(srcLen === bytes.length ? bytes : bytes.subarray(0, srcLen), base);
  const r = c.ex.decodeList(base, srcLen, count, 0, 0, base + outOff, maxId);
  if (r < 0) throw new MalformedPostings('decodePostings: truncated or malformed posting list');
  const at = (base + outOff) / 4;
  return c.u32.slice(at, at + count);
}

/**
 * One encoded posting list: its bytes (as decodePostings reads them) and its length in doc
 * ids; optionally its follow masks (one byte per doc id, PostingsBuilder) with the bits a
 * document's mask must hold to be kept (`want`, 0: none), and the bound its ids lie below
 * (`limit`, as decodePostings's; default any u32).
 */
export interface EncodedList {
  bytes: Uint8Array;
  count: number;
  follow?: Uint8Array;
  want?: number;
  limit?: number;
}

/**
 * The intersection of `n` encoded posting lists (`list(i)`, i ascending: give the rarest
 * first), computed in the core: the first list is decoded there, each next one is merged
 * with the running set while it is decoded (up to the set's last id), and only the result
 * comes out, so no list is copied out and back. The second list is always merged; before
 * each later list `next` is read, `goOn(next, before, after)` says whether it is worth it,
 * given the set's sizes before and after the last merge. An empty set ends it. A list with
 * follow masks and a `want` keeps only the documents whose mask holds every wanted bit.
 * Returns null for n = 0 (no constraint). Throws MalformedPostings on a malformed list (as
 * decodePostings; of a list merged, only the part read is checked), or one whose follow
 * masks are fewer than its ids. `list` and `goOn` must not call into the core.
 */
export function intersectPostings(
  n: number,
  list: (i: number) => EncodedList,
  goOn: (next: number, before: number, after: number) => boolean,
): Uint32Array | null {
  if (n === 0) return null;
  const first = list(0);
  if (first.count === 0) return new Uint32Array(0);
  const c = core();
  // io layout: the set u32[first.count] | the list being merged (its bytes) | its follow
  // masks when it has a `want`
  const setBytes = align(first.count * 4);
  const load = (l: EncodedList): { base: number; len: number; follow: number; want: number; maxId: number } => {
    if (!Number.isInteger(l.count) || l.count < 0 || l.count > l.bytes.length)
      throw new MalformedPostings(`intersectPostings: ${l.count} ids cannot fit in ${l.bytes.length} bytes`);
    const maxId = maxIdBelow(l.limit ?? ANY_ID, l.count, 'intersectPostings');
    // A value takes at most 5 bytes, so only that much of `bytes` can belong to the list.
    const len = Math.min(l.bytes.length, l.count * 5);
    const want = l.follow && l.want ? l.want & 0xff : 0;
    if (want && l.follow!.length < l.count) throw new MalformedPostings(`intersectPostings: ${l.follow!.length} follow masks for ${l.count} ids`);
    const followOff = setBytes + align(len);
    const base = c.scratch(followOff + (want ? l.count : 0), setBytes);
    c.u8.set(len === l.bytes.length ? l.bytes : l.bytes.subarray(0, len), base + setBytes);
    if (want) c.u8.set(l.follow!.subarray(0, l.count), base + followOff);
    return { base, len, follow: base + followOff, want, maxId };
  };
  let { base, len, follow, want, maxId } = load(first);
  let size = c.ex.decodeList(base + setBytes, len, first.count, follow, want, base, maxId);
  if (size < 0) throw new MalformedPostings('intersectPostings: truncated or malformed posting list');
  let before = size;
  for (let i = 1; i < n && size > 0 && (i === 1 || goOn(i, before, size)); i++) {
    const l = list(i);
    if (l.count === 0) return new Uint32Array(0);
    ({ base, len, follow, want, maxId } = load(l));
    const k = c.ex.intersectEncoded(base, size, base + setBytes, len, l.count, follow, want, base, maxId);
    if (k < 0) throw new MalformedPostings('intersectPostings: truncated or malformed posting list');
    before = size;
    size = k;
  }
  return c.u32.slice(base / 4, base / 4 + size);
}
