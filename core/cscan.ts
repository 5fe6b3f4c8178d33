// The C definitions scanner (core/assembly/cscan.ts): its records, and the regions it
// writes them to, kept from file to file.

import { Taken, type Block } from './arena.ts';
import { core, isTrap, type Core } from './instance.ts';

/** The kinds of the C scanner's definitions, by their number in its records (core/assembly/cscan.ts KIND_*). */
export const C_KINDS: readonly string[] = Object.freeze(['macro', 'function', 'struct', 'union', 'enum', 'enumerator', 'member', 'typedef', 'variable']);

/**
 * The C scanner's definitions of one file, as core/assembly/cscan.ts writes them: `defs`
 * holds 8 u32 per definition (kind | 0x100 when the name is in `names`, name offset, name
 * length, line, end line, where the name is in the file, parent as i32 (-1: none), where
 * its line first spells it as a whole word (0xffffffff: the line rule decides)),
 * `parents` 4 u32 per scope (kind | 0x100 when its name is in `names`, name offset, name
 * length, 0), `names` the names that are not the file's bytes.
 */
export interface CScan {
  count: number;
  defs: Uint32Array;
  parents: Uint32Array;
  names: Uint8Array;
}

/** Why a C scan stopped (assembly/cscan.ts STOP_*). */
const C_STOP_NOT_C = 1;
const C_STOP_ROOM = 2;

/**
 * The scanner's regions (assembly/cscan.ts), kept from file to file on this thread (a
 * shard has thousands of C files: allocating them per file cost more than the scanner's
 * tokenizer), grown as files need; `room` is how many definitions, scopes, name bytes, tokens and
 * conditions each holds.
 */
let cRegions: { room: number; defs: Block; parents: Block; names: Block; tokens: Block; conds: Block; state: Block } | undefined;

function cRegionsFor(c: Core, room: number): NonNullable<typeof cRegions> {
  if (cRegions && cRegions.room >= room) return cRegions;
  const a = c.arena;
  if (cRegions) for (const b of [cRegions.defs, cRegions.parents, cRegions.names, cRegions.tokens, cRegions.conds, cRegions.state]) a.free(b);
  cRegions = undefined;
  const [defs, parents, names, tokens, conds, state] = new Taken(a).all([room * 32, room * 16, room, room * 16, room * 4, 64]) as [
    Block,
    Block,
    Block,
    Block,
    Block,
    Block,
  ];
  cRegions = { room, defs, parents, names, tokens, conds, state };
  return cRegions;
}

/**
 * Scans a C file (`header`: a .h file, which may turn out to be C++ or Objective-C;
 * `pathHash`: the path's FNV-1a, for anonymous scopes' names). Undefined when the file is
 * not C, or nests too deep for the scanner's stack: ctags is asked then. The arrays are
 * views of the core's memory, valid until the next scan or any other use of the core.
 */
export function scanC(content: Uint8Array, header: boolean, pathHash: number): CScan | undefined {
  const c = core();
  const n = content.length;
  // Room for a typical file, whose definitions are far sparser than one per 16 bytes; a
  // scan that needs more stops (STOP_ROOM) and runs again with twice as much.
  let room = Math.max(4096, Math.ceil(n / 16));
  for (;;) {
    const r = cRegionsFor(c, room);
    room = r.room;
    // (+ 16: keywords and directive names are read 16 and 8 bytes at a time, the file's
    // end marked by zeros.) Not copied when it is there already (WordsBuilder.add).
    const src = c.scratchWith(content, n, n + 32);
    c.u8.fill(0, src + n, src + n + 16);
    let count: number;
    try {
      count =
        c.ex.cScan(
          src,
          n,
          header ? 1 : 0,
          pathHash >>> 0,
          r.defs.off,
          room,
          r.parents.off,
          room,
          r.names.off,
          room,
          r.tokens.off,
          room,
          r.conds.off,
          room,
          r.state.off,
        ) >>> 0;
    } catch (err) {
      // RangeError: the wasm stack overflowed (aggregates nested thousands deep).
      if (err instanceof RangeError) return undefined;
      if (!isTrap(err)) throw err;
      const why = c.u32[r.state.off / 4 + 4];
      if (why === C_STOP_NOT_C) return undefined;
      if (why === C_STOP_ROOM) {
        room *= 2;
        continue;
      }
      throw err;
    }
    const u32 = c.u32;
    const parentCount = u32[r.state.off / 4 + 1]!;
    const nameBytes = u32[r.state.off / 4 + 2]!;
    return {
      count,
      defs: u32.subarray(r.defs.off / 4, r.defs.off / 4 + count * 8),
      parents: u32.subarray(r.parents.off / 4, r.parents.off / 4 + parentCount * 4),
      names: c.u8.subarray(r.names.off, r.names.off + nameBytes),
    };
  }
}
