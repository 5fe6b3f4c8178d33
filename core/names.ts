// The symbol name index of a shard, built in the core (core/assembly/names.ts).

import { Taken, type Block } from './arena.ts';
import { core } from './instance.ts';

/**
 * The symbol name index of records whose names are `bytes[start[i], start[i] + length[i])`
 * (core/assembly/names.ts; the section's layout and order in
 * daemon/index/symbol-index.ts): the section, with its first `header` bytes left for the
 * caller (zero), then nameOff, defRecord and the sorted names; how many names; whether a
 * name holds "\n"; and each record's name offset in the names.
 */
export function encodeNameIndex(
  bytes: Uint8Array,
  start: Uint32Array,
  length: Uint32Array,
  header: number,
): { section: Uint8Array; nameCount: number; newline: boolean; nameOffOf: Uint32Array } {
  const c = core();
  const a = c.arena;
  const d = start.length;
  const taken = new Taken(a);
  const take = (size: number): Block => taken.take(size);
  try {
    // (+ 8: names are compared 8 bytes at a time.)
    const names = take(bytes.length + 8);
    const starts = take(d * 4);
    const lengths = take(d * 4);
    let slots = 16;
    while (slots < 2 * d) slots *= 2;
    const table = take(slots * 4);
    const nameOf = take(d * 4);
    const rawStart = take(d * 4);
    const rawLength = take(d * 4);
    const state = take(16);
    c.u8.set(bytes, names.off);
    c.u32.set(start, starts.off / 4);
    c.u32.set(length, lengths.off / 4);
    c.u8.fill(0, table.off, table.off + slots * 4);
    c.ex.namesDedup(names.off, starts.off, lengths.off, d, table.off, slots - 1, nameOf.off, rawStart.off, rawLength.off, state.off);
    const n = c.u32[state.off / 4]!;
    const total = c.u32[state.off / 4 + 1]!;
    const multiByteFold = c.u32[state.off / 4 + 2]! !== 0;
    // The folded keys are the names' own bytes (read through the ASCII fold) unless a name
    // holds one of the two letters that fold to ASCII from several bytes.
    let key = { bytes: names.off, start: rawStart.off, length: rawLength.off };
    if (multiByteFold) {
      const foldBytes = take(total + 8);
      const foldStart = take(n * 4);
      const foldLength = take(n * 4);
      c.ex.namesFold(names.off, rawStart.off, rawLength.off, n, foldBytes.off, foldStart.off, foldLength.off);
      key = { bytes: foldBytes.off, start: foldStart.off, length: foldLength.off };
    }
    const order = take(n * 4);
    const stack = take((Math.floor(n / 2) + 2) * 12);
    c.ex.namesSort(key.bytes, key.start, key.length, names.off, rawStart.off, rawLength.off, n, order.off, stack.off);
    const rank = take(n * 4);
    const next = take((n + 1) * 4);
    c.u8.fill(0, next.off, next.off + (n + 1) * 4);
    const size = header + 4 * (n + 1 + d) + total + n;
    const out = take(size);
    const nameOffOf = take(d * 4);
    c.u8.fill(0, out.off, out.off + header);
    const newline =
      c.ex.namesWrite(names.off, rawStart.off, rawLength.off, order.off, n, nameOf.off, d, rank.off, next.off, out.off + header, nameOffOf.off) !== 0;
    return { section: c.u8.slice(out.off, out.off + size), nameCount: n, newline, nameOffOf: c.u32.slice(nameOffOf.off / 4, nameOffOf.off / 4 + d) };
  } finally {
    taken.free();
  }
}
