// The symbol name index (shard format version 4): the shard's distinct symbol names,
// sorted, each with its definitions, so that `sym:` finds names by binary search, by the
// trigrams of the names, or by one scan of the names, and never by reading a document.
//
// # The symbol-index section
//
// All integers are little-endian u32; the arrays start at multiples of 4 bytes.
//
//   0   nameCount N
//   4   defCount D (the symbols section's record count)
//   8   flags: bit 0 = some name contains "\n" (then `^` can match inside a name, and the
//       prefix search is not used: search/symbol-search.ts)
//   12  namesPerBlock B: the trigram postings' unit (below)
//   16  nameOff[N + 1]   name n is strings[nameOff[n] .. nameOff[n+1] - 1) (a "\n" follows each)
//       defRecord[D]     the symbols section's records, ordered by their name (its number
//                        here), then by record number: a name's definitions are one run,
//                        found by binary search on the records' nameOff
//       strings          the names (UTF-8, as the symbols section gives them back), each
//                        followed by "\n", sorted by foldKey (below), then by their bytes
//
// In a version 4 shard a symbol record (24 bytes, symbols section) points into these
// strings instead of holding its name, and says where the name is in the file:
//   0 nameOff u32 (into the strings above; the name ends at the next "\n")
//   4 start u32 (byte offset of the name in the document's content, where a sym: match is
//     highlighted, symbols/name-range.ts symbolNameRange; 0xffffffff: the line does not
//     spell the name)   8 line u32   12 endLine u32   16 parentOff u32   20 parentLen u16
//   22 kind u8   23 parentKind u8 (255: no parent); parent names stay in the symbols section.
//
// The symbol-ngrams and symbol-postings sections of a version 4 shard index the names in
// blocks of B consecutive names: a posting is a block b, whose text is strings[nameOff[bB]
// .. nameOff[min(N, (b+1)B)]) (in version 2 and 3 a posting was a document, over each
// document's names joined by "\n"). Blocks keep the postings as small as the per-document
// ones were; a search checks the B names of each candidate block.
//
// foldKey: the name's bytes with ASCII A-Z as a-z and the two non-ASCII letters whose case
// folding reaches ASCII (U+212A KELVIN SIGN as "k", U+017F LONG S as "s"), like the
// trigram index's folding (core/index.ts foldBytes). The names a pattern `^prefix` (ASCII
// prefix, either case mode) can match are then one contiguous run.
//
// Worked example: a.c defines `Foo` (line 1) and `foo` (line 3), b.c defines `foo` (line 2):
// records 0 Foo@a.c:1, 1 foo@a.c:3, 2 foo@b.c:2. N = 2, D = 3; the strings are
// "Foo\nfoo\n" (both fold to "foo"; "Foo" < "foo" by bytes); nameOff = [0, 4, 8];
// defRecord = [0, 1, 2]; the records' nameOff are 0, 4, 4.

import { encodeNameIndex } from '../../core/index.ts';
import { SectionDamage } from './section-checks.ts';

const HEADER = 16;
const FLAG_NEWLINE_IN_NAME = 1;
/** Names per trigram block: postings stay small; a candidate block costs B name checks. */
export const NAMES_PER_BLOCK = 32;

/** Offsets in a version 4 symbol record (layout above). */
export const REC_NAME_OFF = 0;
export const REC_START = 4;

/** The records' names as UTF-8 bytes: record i's name is bytes[start[i], start[i] + length[i]). */
export interface RecordNames {
  bytes: Uint8Array;
  start: Uint32Array;
  length: Uint32Array;
}

/** The section's bytes, its name blocks (for the trigram table), and where each record's name is in the strings. */
export interface EncodedSymbolIndex {
  section: Uint8Array;
  blocks: Buffer[];
  nameOffOf: Uint32Array;
}

/**
 * The symbol-index section of records whose names are `names`. A shard of a large C tree
 * has hundreds of thousands of definitions, most of distinct names: the core tells them
 * apart by a hash table and sorts them by a multikey quicksort over their folded bytes
 * (core/assembly/names.ts), in typed arrays, several times faster than strings with a Map
 * and a comparator.
 */
export function encodeSymbolIndex(names: RecordNames): EncodedSymbolIndex {
  const { section, nameCount: n, newline, nameOffOf } = encodeNameIndex(names.bytes, names.start, names.length, HEADER);
  const u32 = new Uint32Array(section.buffer, section.byteOffset, HEADER / 4 + n + 1);
  u32[0] = n;
  u32[1] = names.start.length;
  u32[2] = newline ? FLAG_NEWLINE_IN_NAME : 0;
  u32[3] = NAMES_PER_BLOCK;
  const nameOff = u32.subarray(HEADER / 4);
  const strings = Buffer.from(section.buffer, section.byteOffset + HEADER + 4 * (n + 1 + names.start.length));
  const blocks: Buffer[] = [];
  for (let b = 0; b * NAMES_PER_BLOCK < n; b++) blocks.push(strings.subarray(nameOff[b * NAMES_PER_BLOCK]!, nameOff[Math.min(n, (b + 1) * NAMES_PER_BLOCK)]!));
  return { section, blocks, nameOffOf };
}

/**
 * The folded byte that starts at name[i] and how many bytes it takes, as
 * (length << 8) | byte: the folding rule of the layout above, for the readers. The encoder
 * folds in the core (core/assembly/names.ts foldAt); the encoder's test sorts by this one,
 * so the two cannot drift apart unseen.
 */
function foldAt(bytes: Uint8Array, i: number, end: number): number {
  const b = bytes[i]!;
  if (b >= 0x41 && b <= 0x5a) return 0x100 | (b + 0x20);
  if (b === 0xe2 && i + 2 < end && bytes[i + 1] === 0x84 && bytes[i + 2] === 0xaa) return 0x300 | 0x6b; // K -> k
  if (b === 0xc5 && i + 1 < end && bytes[i + 1] === 0xbf) return 0x200 | 0x73; // ſ -> s
  return 0x100 | b;
}

/** foldKey of the layout above, as a binary string (one char per byte). */
export function foldKey(name: Uint8Array): string {
  let out = '';
  for (let i = 0; i < name.length; ) {
    const f = foldAt(name, i, name.length);
    out += String.fromCharCode(f & 0xff);
    i += f >> 8;
  }
  return out;
}

/**
 * The sign of foldKey(bytes[from, end)), cut to prefix.length, compared with `prefix` (a
 * foldKey's bytes): what prefixRange's searches compare, without building the key.
 */
function compareFoldedPrefix(bytes: Uint8Array, from: number, end: number, prefix: Uint8Array): number {
  let i = from;
  for (let j = 0; j < prefix.length; j++) {
    if (i >= end) return -1;
    const f = foldAt(bytes, i, end);
    const d = (f & 0xff) - prefix[j]!;
    if (d !== 0) return d;
    i += f >> 8;
  }
  return 0;
}

/** Reads the symbol-index section (a view into the shard's mapping). */
export class SymbolIndex {
  readonly nameCount: number;
  readonly defCount: number;
  /** Some name contains "\n": a `^` may match inside it. */
  readonly newlineInName: boolean;
  readonly namesPerBlock: number;
  /** The names, each followed by "\n": one buffer to scan for a literal. */
  readonly strings: Buffer;
  private readonly nameOff: Uint32Array;
  private readonly defRecord: Uint32Array;
  private readonly records: Buffer;
  private readonly recordSize: number;
  /** The records as u32 words (little-endian, as every typed view over a shard reads them): start() without a Buffer call. */
  private readonly words: Uint32Array;

  /**
   * `section` and `records` must start at multiples of 4 bytes (sections start at multiples
   * of 8, the records at a multiple of 4 in theirs); `records` are the symbols section's
   * records, of `recordSize` bytes (a multiple of 4).
   */
  constructor(section: Buffer, records: Buffer, recordSize: number) {
    if (section.length < HEADER) throw new Error('symbol index is truncated');
    const n = section.readUInt32LE(0);
    const d = section.readUInt32LE(4);
    const arrays = 4 * (n + 1 + d);
    if (d * recordSize !== records.length) throw new Error('symbol index does not match the symbol table');
    if (HEADER + arrays > section.length) throw new Error('symbol index is truncated');
    const u32 = new Uint32Array(section.buffer, section.byteOffset, (HEADER + arrays) / 4);
    this.nameCount = n;
    this.defCount = d;
    this.newlineInName = (u32[2]! & FLAG_NEWLINE_IN_NAME) !== 0;
    this.namesPerBlock = u32[3]!;
    this.nameOff = u32.subarray(4, 4 + n + 1);
    this.defRecord = u32.subarray(4 + n + 1);
    this.strings = section.subarray(HEADER + arrays);
    this.records = records;
    this.recordSize = recordSize;
    this.words = new Uint32Array(records.buffer, records.byteOffset, records.length >>> 2);
    if (this.nameOff[n] !== this.strings.length || this.namesPerBlock < 1) throw new Error('symbol index is inconsistent');
  }

  /** Name n's bytes (a view, without its "\n"). */
  name(n: number): Buffer {
    return this.strings.subarray(this.nameOff[n]!, this.nameOff[n + 1]! - 1);
  }

  /** The name whose bytes (or separator) hold `offset` in `strings`. */
  nameAt(offset: number): number {
    return this.lastWhere(this.nameCount, (n) => this.nameOff[n]! <= offset);
  }

  /** The names whose foldKey starts with `prefix` (already folded): [from, to). */
  prefixRange(prefix: string): [number, number] {
    const p = Buffer.from(prefix, 'latin1');
    const strings = this.strings;
    const off = this.nameOff;
    // Name n is strings[off[n], off[n + 1] - 1) (no view made per step).
    const cmp = (n: number) => compareFoldedPrefix(strings, off[n]!, off[n + 1]! - 1, p);
    return [this.firstWhere(this.nameCount, (n) => cmp(n) >= 0), this.firstWhere(this.nameCount, (n) => cmp(n) > 0)];
  }

  /** The names of trigram block b: [from, to). */
  blockNames(b: number): [number, number] {
    return [b * this.namesPerBlock, Math.min(this.nameCount, (b + 1) * this.namesPerBlock)];
  }

  /**
   * The records defining name n, ascending. Throws SectionDamage when one of them is not a
   * record of the symbol table (the section may be read before its checksum is verified:
   * section-checks.ts).
   */
  defsOf(n: number): Uint32Array {
    const off = this.nameOff[n]!;
    const defCount = this.defCount;
    const record = (k: number): number => {
      const r = this.defRecord[k]!;
      if (!(r < defCount)) throw new SectionDamage(`symbol index: definition ${k} names record ${r} of ${defCount}`);
      return r;
    };
    const nameOfDef = (k: number) => this.records.readUInt32LE(record(k) * this.recordSize + REC_NAME_OFF);
    const from = this.firstWhere(this.defCount, (k) => nameOfDef(k) >= off);
    const to = this.firstWhere(this.defCount, (k) => nameOfDef(k) > off);
    for (let k = from; k < to; k++) record(k);
    return this.defRecord.subarray(from, to);
  }

  /** Where record r's name is in its document, or NO_NAME_START (symbols/name-range.ts). */
  start(record: number): number {
    return this.words[(record * this.recordSize + REC_START) >>> 2]!;
  }

  /** First i in [0, count) for which `pred` holds (pred is false, then true), else count. */
  private firstWhere(count: number, pred: (i: number) => boolean): number {
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pred(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  /** Last i in [0, count) for which `pred` holds (pred is true, then false), else 0. */
  private lastWhere(count: number, pred: (i: number) => boolean): number {
    return Math.max(0, this.firstWhere(count, (i) => !pred(i)) - 1);
  }
}
