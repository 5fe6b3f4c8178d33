// The symbols section of a shard (or of its symbols file, which then stands for it): the
// definitions universal-ctags found in each document, and the reads a search and a result
// make of them (a document's definitions, those around its matches, the kind of a name at
// its definition).
//
// # The symbols section
//
// All integers are little-endian.
//
//   0   docCount u32      the shard's documents
//   4   symbolCount u32   records
//   8   first[docCount + 1] u32   document d owns records first[d] .. first[d+1]-1
//       records           24 bytes each (SYMBOL_RECORD_SIZE), by document then line
//       names             UTF-8, concatenated; a record's offsets count from here
//
// A record of version 4 points to its name in the symbol index and says where the name is
// in the file (symbol-index.ts has its layout); the names here are the parents' only. A
// record of versions 2 and 3:
//
//   0 nameOff u32   4 nameLen u16   6 kind u8 (meta.symbolKinds)   7 parentKind u8 (255: no
//   parent)   8 line u32   12 endLine u32   16 parentOff u32   20 parentLen u16   22 reserved u16
//
// In both, a record's lines are its u32 words 2 and 3, and its parent's name is at 16 and
// 20. Worked example: a document `a.c` of "int x;\n" defines the variable x on line 1; a
// version 4 shard of it holds docCount 1, symbolCount 1, first [0, 1], and one record
// {nameOff 0 (the index's "x"), start 4, line 1, endLine 1, no parent}, then no names.
//
// The section may be read before the scrub has verified it (section-checks.ts): a
// document's records are checked to lie within the records, and a name within the
// section, so that damage gives a wrong answer at worst, never a crash.

import type { SymbolDef } from '../symbols/ctags.ts';
import { ShardError } from './shard-error.ts';
import { NO_KIND, SYMBOL_RECORD_SIZE } from './shard-format.ts';
import { SymbolIndex } from './symbol-index.ts';

/** A symbols section, read in place. */
export class SymbolRecords {
  /** The sorted symbol names and their definitions (version 4 shards; symbol-index.ts). */
  readonly index: SymbolIndex | undefined;
  /** The shard's path, for errors. */
  private readonly path: string;
  private readonly docCount: number;
  /** The kind names a record's kind numbers index (meta.symbolKinds). */
  private readonly kinds: readonly string[];
  private readonly section: Buffer;
  private readonly count: number;
  /** Where the records start (after the counts and first[]). */
  private readonly recordsAt: number;
  /** The names after the records (versions 2 and 3: every name; version 4: the parents'). */
  private readonly strings: Buffer;
  /** first[] of the section: document d owns records docFirst[d] .. docFirst[d+1]-1. */
  private readonly docFirst: Uint32Array;
  /** The section as u32 words (it is 4-aligned, as docFirst's view needs): a record's lines without a Buffer call each. */
  private readonly words: Uint32Array;
  /** reachOf's running end lines, and which documents' are filled. */
  private reach: { lines: Uint32Array; done: Uint8Array } | undefined;

  /**
   * `indexSection`: the symbol-index section of a version 4 shard, else undefined. Throws
   * ShardError when the section does not fit the documents.
   */
  constructor(path: string, section: Buffer, indexSection: Buffer | undefined, docCount: number, kinds: readonly string[]) {
    this.path = path;
    this.section = section;
    this.docCount = docCount;
    this.kinds = kinds;
    this.recordsAt = 8 + 4 * (docCount + 1);
    if (section.length < this.recordsAt || section.readUInt32LE(0) !== docCount) throw new ShardError(path, 'symbol table does not match the document table');
    this.count = section.readUInt32LE(4);
    const recordsEnd = this.recordsAt + this.count * SYMBOL_RECORD_SIZE;
    if (recordsEnd > section.length) throw new ShardError(path, 'symbol table is cut short');
    this.strings = section.subarray(recordsEnd);
    this.docFirst = new Uint32Array(section.buffer, section.byteOffset + 8, docCount + 1);
    this.words = new Uint32Array(section.buffer, section.byteOffset, section.length >>> 2);
    if (indexSection !== undefined) {
      try {
        this.index = new SymbolIndex(indexSection, section.subarray(this.recordsAt, recordsEnd), SYMBOL_RECORD_SIZE);
      } catch (err) {
        throw new ShardError(path, (err as Error).message);
      }
    }
  }

  /** The document owning symbol record `record`. */
  docOf(record: number): number {
    const first = this.docFirst;
    let lo = 0;
    let hi = this.docCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (first[mid]! <= record) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The first symbol record past document `doc`'s. */
  endOf(doc: number): number {
    return this.recordsOf(doc)[1];
  }

  /**
   * Document `doc`'s symbol records [first, end): checked to lie within the records, since
   * the symbols section may be read before the scrub has verified it (section-checks.ts).
   */
  private recordsOf(doc: number): [number, number] {
    const first = this.docFirst[doc]!;
    const end = this.docFirst[doc + 1]!;
    if (!(first <= end && end <= this.count)) throw new ShardError(this.path, `symbol records of document ${doc} lie outside the symbol table`);
    return [first, end];
  }

  /** The symbol definitions of a document, by line. */
  of(doc: number): SymbolDef[] {
    const out: SymbolDef[] = [];
    for (let [i, end] = this.recordsOf(doc); i < end; i++) out.push(this.decode(i));
    return out;
  }

  /**
   * The document's definitions whose line span overlaps one of `spans` ([first, last]
   * line pairs). Only those are decoded: a large header can hold thousands of symbols,
   * and a result needs the few around its matches.
   */
  overlapping(doc: number, spans: Array<[number, number]>): SymbolDef[] {
    return this.recordsOverlapping(doc, spans.flat(), 2).map((r) => this.decode(r));
  }

  /**
   * The records (ascending) of the document's definitions whose line span overlaps one of
   * the spans: overlapping() without decoding them, for a caller that writes them from
   * their bytes (name, kindId, parent). Span r is [first, last] =
   * [spans[r * stride], spans[r * stride + stride / 2]]: stride 2 for flat pairs, 4 for a
   * line table (search/range-locations.ts LineTable: a range's start line, then its end line two later).
   */
  recordsOverlapping(doc: number, flat: ArrayLike<number>, stride: 2 | 4): number[] {
    const out: number[] = [];
    const [first, end] = this.recordsOf(doc);
    if (flat.length === 0 || first === end) return out;
    // Records go by line (the section's order). Per span, in ascending order of first
    // line: the records before the first whose running greatest end line reaches the
    // span end before it (reachOf, a bisection), and none after the span's last line
    // starts in it. A file's records are not all read for every match: a large driver
    // with a match near its end read its hundreds of definitions per file.
    const half = stride >> 1;
    let sorted = true;
    for (let r = stride; r < flat.length && sorted; r += stride) sorted = flat[r - stride]! <= flat[r]!;
    let spans = flat;
    let step: number = stride;
    let last: number = half;
    if (!sorted) {
      // (Rare: a file's ranges give their lines in order.) As flat pairs, by first line.
      const pairs: Array<[number, number]> = [];
      for (let r = 0; r + half < flat.length; r += stride) pairs.push([flat[r]!, flat[r + half]!]);
      spans = pairs.sort((x, y) => x[0] - y[0]).flat();
      step = 2;
      last = 1;
    }
    const reach = this.reachOf(doc);
    const base = this.recordsAt >>> 2;
    const words = this.words;
    let i = first;
    for (let r = 0; r + last < spans.length; r += step) {
      const a = spans[r]!;
      const b = spans[r + last]!;
      let lo = i;
      let hi = end;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (reach[mid]! < a) lo = mid + 1;
        else hi = mid;
      }
      for (i = lo; i < end; i++) {
        const o = base + i * (SYMBOL_RECORD_SIZE >>> 2);
        if (words[o + 2]! > b) break;
        if (words[o + 3]! >= a) out.push(i);
      }
    }
    return out;
  }

  /**
   * Per record, the greatest end line of its document's records up to it (ascending within
   * a document): filled for a document the first time it is asked for, then kept while
   * the shard is open. 4 bytes a record; the pages of documents never asked for stay
   * untouched (the array is allocated zeroed by the system).
   */
  private reachOf(doc: number): Uint32Array {
    this.reach ??= { lines: new Uint32Array(this.count), done: new Uint8Array(this.docCount) };
    const { lines, done } = this.reach;
    if (done[doc] === 0) {
      const base = this.recordsAt >>> 2;
      let max = 0;
      for (let [i, end] = this.recordsOf(doc); i < end; i++) {
        max = Math.max(max, this.words[base + i * (SYMBOL_RECORD_SIZE >>> 2) + 3]!);
        lines[i] = max;
      }
      done[doc] = 1;
    }
    return lines;
  }

  /** A symbol record's first and last line. */
  line(record: number): number {
    return this.words[(this.recordsAt >>> 2) + record * (SYMBOL_RECORD_SIZE >>> 2) + 2]!;
  }

  endLine(record: number): number {
    return this.words[(this.recordsAt >>> 2) + record * (SYMBOL_RECORD_SIZE >>> 2) + 3]!;
  }

  /** Where a symbol record's name is: bytes [start, end) of `buf` (UTF-8, as decode() reads it). */
  name(record: number): { buf: Buffer; start: number; end: number } {
    const o = this.recordsAt + record * SYMBOL_RECORD_SIZE;
    const nameOff = this.section.readUInt32LE(o);
    const index = this.index;
    if (!index) return within(this.strings, nameOff, this.section.readUInt16LE(o + 4));
    // A name ends at the next "\n" of the index's strings, unless a name holds one.
    if (!index.newlineInName) {
      // By hand: names are short, and indexOf's call into the runtime cost more than them.
      const strings = index.strings;
      let end = nameOff;
      while (end < strings.length && strings[end] !== 10) end++;
      return { buf: strings, start: nameOff, end };
    }
    const n = index.nameAt(nameOff);
    const name = index.name(n);
    return { buf: index.strings, start: name.byteOffset - index.strings.byteOffset, end: name.byteOffset - index.strings.byteOffset + name.length };
  }

  /** A symbol record's kind ('' when unknown). */
  kind(record: number): string {
    return this.kinds[this.kindId(record)] ?? '';
  }

  /** A symbol record's kind as its number in the kinds (meta.symbolKinds). */
  kindId(record: number): number {
    return this.section[this.recordsAt + record * SYMBOL_RECORD_SIZE + (this.index ? 22 : 6)]!;
  }

  /** A symbol record's parent: its name's bytes [start, end) of `buf` and its kind; undefined without one. */
  parent(record: number): { buf: Buffer; start: number; end: number; kind: string } | undefined {
    const o = this.recordsAt + record * SYMBOL_RECORD_SIZE;
    const parentKind = this.section.readUInt8(o + (this.index ? 23 : 7));
    if (parentKind === NO_KIND) return undefined;
    const { buf, start, end } = within(this.strings, this.section.readUInt32LE(o + 16), this.section.readUInt16LE(o + 20));
    return { buf, start, end, kind: this.kinds[parentKind] ?? '' };
  }

  /** A symbol record decoded. */
  private decode(record: number): SymbolDef {
    const name = this.name(record);
    const def: SymbolDef = {
      name: name.buf.toString('utf8', name.start, name.end),
      kind: this.kind(record),
      line: this.line(record),
      endLine: this.endLine(record),
    };
    const parent = this.parent(record);
    if (parent) def.parent = { name: parent.buf.toString('utf8', parent.start, parent.end), kind: parent.kind };
    return def;
  }

  /**
   * The kinds of the document's definitions whose name is exactly one of the flat byte
   * ranges [start, end, ...] (the name at its definition, as a match of the ranking sees
   * it). Found by the name's offset in the content, which version 4 records hold: no line
   * is counted and no symbol decoded. Null for older shards (then lines and
   * overlapping() tell).
   */
  definitionsAt(doc: number, ranges: number[], lines?: number[]): string[] | null {
    const index = this.index;
    if (!index) return null;
    const out: string[] = [];
    if (ranges.length === 0) return out;
    // With the ranges' line table (search/range-locations.ts LineTable: a range's start line first), only
    // the records on the lines the ranges start on are looked at: records go by line.
    let [from, to] = this.recordsOf(doc);
    if (lines !== undefined && lines.length >= 2 * ranges.length) {
      let lo = Infinity;
      let hi = 0;
      for (let r = 0; r < lines.length; r += 4) {
        lo = Math.min(lo, lines[r]!);
        hi = Math.max(hi, lines[r]!);
      }
      from = this.firstRecordFrom(from, to, lo);
      to = this.firstRecordFrom(from, to, hi + 1);
    }
    if (from >= to) return out;
    // The non-empty ranges by start, looked up by bisection: a file has far more symbols
    // than a search has ranges in it (a Map lookup per symbol record cost more than the rest).
    const pairs: Array<[number, number]> = [];
    for (let i = 0; i < ranges.length; i += 2) if (ranges[i + 1]! > ranges[i]!) pairs.push([ranges[i]!, ranges[i + 1]!]);
    if (pairs.length === 0) return out;
    pairs.sort((a, b) => a[0] - b[0]);
    const first = pairs[0]![0];
    const last = pairs[pairs.length - 1]![0];
    const base = this.recordsAt;
    for (let i = from; i < to; i++) {
      const start = index.start(i);
      if (start < first || start > last) continue;
      const end = endAt(pairs, start);
      if (end === undefined) continue;
      const o = base + i * SYMBOL_RECORD_SIZE;
      if (index.name(index.nameAt(this.section.readUInt32LE(o))).length !== end - start) continue;
      out.push(this.kinds[this.section.readUInt8(o + 22)] ?? '');
    }
    return out;
  }

  /** The first of records [from, to) (one document's, by line) on `line` or after it; `to` if none. */
  private firstRecordFrom(from: number, to: number, line: number): number {
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.line(mid) < line) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Bytes [start, start + length) of `buf`, cut to its end: a symbol record's name may be
 * read before the symbols section is verified (section-checks.ts).
 */
function within(buf: Buffer, start: number, length: number): { buf: Buffer; start: number; end: number } {
  const end = Math.min(buf.length, start + length);
  return { buf, start: Math.min(start, end), end };
}

/** The end of the pair starting at `start` (pairs sorted by start), or undefined. */
function endAt(pairs: Array<[number, number]>, start: number): number | undefined {
  let lo = 0;
  let hi = pairs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const s = pairs[mid]![0];
    if (s < start) lo = mid + 1;
    else if (s > start) hi = mid - 1;
    else return pairs[mid]![1];
  }
  return undefined;
}
