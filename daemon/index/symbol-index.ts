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
//   12  reserved, 0
//   16  nameOff[N + 1]   name n is strings[nameOff[n] .. nameOff[n+1] - 1) (a "\n" follows each)
//       defFirst[N + 1]  name n's definitions are defs[defFirst[n] .. defFirst[n+1])
//       defRecord[D]     the definition's record in the symbols section (its document,
//                        line, kind, parent); ascending within a name
//       defStart[D]      byte offset of the name in its document's content, where a sym:
//                        match is highlighted (symbols/name-range.ts symbolNameRange);
//                        0xffffffff when the definition's line does not spell the name
//       strings          the names (UTF-8, as the symbols section stores them), each
//                        followed by "\n", sorted by foldKey (below), then by their bytes
//
// The symbol-ngrams and symbol-postings sections of a version 4 shard index these names:
// a posting is a name number n (in version 2 and 3 it was a document, over each
// document's names joined by "\n").
//
// foldKey: the name's bytes with ASCII A-Z as a-z and the two non-ASCII letters whose case
// folding reaches ASCII (U+212A KELVIN SIGN as "k", U+017F LONG S as "s"), like the
// trigram index's folding (core/index.ts foldBytes). The names a case-insensitive or
// case-sensitive pattern `^prefix` (ASCII prefix) can match are then one contiguous run.
//
// Worked example: a.c defines `Foo` (line 1) and `foo` (line 3), b.c defines `foo` (line 2).
// The records are 0 Foo@a.c:1, 1 foo@a.c:3, 2 foo@b.c:2. N = 2, D = 3; the strings are
// "Foo\nfoo\n" (both fold to "foo"; "Foo" < "foo" by bytes); nameOff = [0, 4, 8];
// defFirst = [0, 1, 3]; defRecord = [0, 1, 2]; defStart = the offsets of the names in
// a.c (twice) and b.c.

const HEADER = 16;
const FLAG_NEWLINE_IN_NAME = 1;

/** One definition as the builder knows it: its record number, name and name start. */
export interface IndexedDef {
  record: number;
  name: Buffer;
  start: number;
}

/** The section's bytes and the sorted names (for the trigram table over them). */
export function encodeSymbolIndex(defs: readonly IndexedDef[]): { section: Uint8Array; names: Buffer[] } {
  const byName = new Map<string, number[]>();
  for (let i = 0; i < defs.length; i++) {
    const key = defs[i]!.name.toString('latin1');
    const list = byName.get(key);
    if (list) list.push(i);
    else byName.set(key, [i]);
  }
  const entries = [...byName.keys()].map((raw) => ({ raw, key: foldKey(Buffer.from(raw, 'latin1')) }));
  // Binary strings compare as their bytes do.
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.raw < b.raw ? -1 : a.raw > b.raw ? 1 : 0));
  const n = entries.length;
  const d = defs.length;
  const names = entries.map((e) => Buffer.from(e.raw, 'latin1'));
  const stringBytes = names.reduce((s, b) => s + b.length + 1, 0);
  const out = Buffer.alloc(HEADER + 4 * (2 * (n + 1) + 2 * d) + stringBytes);
  const u32 = new Uint32Array(out.buffer, out.byteOffset, (out.length - stringBytes) / 4);
  const nameOff = u32.subarray(4, 4 + n + 1);
  const defFirst = u32.subarray(4 + n + 1, 4 + 2 * (n + 1));
  const defRecord = u32.subarray(4 + 2 * (n + 1), 4 + 2 * (n + 1) + d);
  const defStart = u32.subarray(4 + 2 * (n + 1) + d);
  let flags = 0;
  let s = 0;
  let k = 0;
  const strings = out.subarray(out.length - stringBytes);
  entries.forEach((e, i) => {
    nameOff[i] = s;
    defFirst[i] = k;
    const name = names[i]!;
    if (name.includes(10)) flags |= FLAG_NEWLINE_IN_NAME;
    name.copy(strings, s);
    strings[s + name.length] = 10;
    s += name.length + 1;
    for (const di of byName.get(e.raw)!) {
      defRecord[k] = defs[di]!.record;
      defStart[k] = defs[di]!.start;
      k++;
    }
  });
  nameOff[n] = s;
  defFirst[n] = k;
  u32[0] = n;
  u32[1] = d;
  u32[2] = flags;
  return { section: out, names };
}

/** foldKey of the layout above, as a binary string (one char per byte). */
export function foldKey(name: Uint8Array): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const b = name[i]!;
    if (b >= 0x41 && b <= 0x5a) out += String.fromCharCode(b + 0x20);
    else if (b === 0xe2 && name[i + 1] === 0x84 && name[i + 2] === 0xaa) {
      out += 'k';
      i += 2;
    } else if (b === 0xc5 && name[i + 1] === 0xbf) {
      out += 's';
      i += 1;
    } else out += String.fromCharCode(b);
  }
  return out;
}

/** Reads the symbol-index section (a view into the shard's mapping). */
export class SymbolIndex {
  readonly nameCount: number;
  readonly defCount: number;
  /** Some name contains "\n": a `^` may match inside it. */
  readonly newlineInName: boolean;
  /** The names, each followed by "\n": one buffer to scan for a literal. */
  readonly strings: Buffer;
  private readonly nameOff: Uint32Array;
  private readonly defFirst: Uint32Array;
  private readonly defRecord: Uint32Array;
  private readonly defStart: Uint32Array;

  /** `section` must start at a multiple of 4 bytes (sections start at multiples of 8). */
  constructor(section: Buffer, expectedDefs: number) {
    if (section.length < HEADER) throw new Error('symbol index is truncated');
    const n = section.readUInt32LE(0);
    const d = section.readUInt32LE(4);
    const arrays = 4 * (2 * (n + 1) + 2 * d);
    if (d !== expectedDefs) throw new Error('symbol index does not match the symbol table');
    if (HEADER + arrays > section.length) throw new Error('symbol index is truncated');
    const u32 = new Uint32Array(section.buffer, section.byteOffset, (HEADER + arrays) / 4);
    this.nameCount = n;
    this.defCount = d;
    this.newlineInName = (section.readUInt32LE(8) & FLAG_NEWLINE_IN_NAME) !== 0;
    this.nameOff = u32.subarray(4, 4 + n + 1);
    this.defFirst = u32.subarray(4 + n + 1, 4 + 2 * (n + 1));
    this.defRecord = u32.subarray(4 + 2 * (n + 1), 4 + 2 * (n + 1) + d);
    this.defStart = u32.subarray(4 + 2 * (n + 1) + d);
    this.strings = section.subarray(HEADER + arrays);
    if (this.nameOff[n] !== this.strings.length || this.defFirst[n] !== d) throw new Error('symbol index is inconsistent');
  }

  /** Name n's bytes (a view, without its "\n"). */
  name(n: number): Buffer {
    return this.strings.subarray(this.nameOff[n]!, this.nameOff[n + 1]! - 1);
  }

  /** The name whose bytes (or separator) hold `offset` in `strings`. */
  nameAt(offset: number): number {
    let lo = 0;
    let hi = this.nameCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.nameOff[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The names whose foldKey starts with `prefix` (already folded): [from, to). */
  prefixRange(prefix: string): [number, number] {
    const key = (n: number) => foldKey(this.name(n)).slice(0, prefix.length);
    return [this.firstWhere((n) => key(n) >= prefix), this.firstWhere((n) => key(n) > prefix)];
  }

  /** Definitions of name n: [first, end) into defRecord/defStart. */
  defsOf(n: number): [number, number] {
    return [this.defFirst[n]!, this.defFirst[n + 1]!];
  }

  record(def: number): number {
    return this.defRecord[def]!;
  }

  /** Where the definition's name is in its document, or NO_NAME_START (symbols/name-range.ts). */
  start(def: number): number {
    return this.defStart[def]!;
  }

  /** First name n for which `pred` holds (pred is false, then true, over the names). */
  private firstWhere(pred: (n: number) => boolean): number {
    let lo = 0;
    let hi = this.nameCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pred(mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
