// A shard's symbol sections (symbols, symbol-ngrams, symbol-postings, symbol-index; their
// layouts in symbol-records.ts, ngram-table.ts and symbol-index.ts) from its documents in
// document order: their definitions (symbols/extract.ts: C, device tree and Kconfig files
// by our scanners as they come, the rest by universal-ctags in batches of content), then
// the sections.
// The shard builder collects them inline (small builds); the symbols pass
// (symbols-pass.ts) collects them for a shard built without, after its content was
// committed and made searchable.

import { C_KINDS, PostingsBuilder, type CScan } from '../../core/index.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { extractSymbols, scanned } from '../symbols/extract.ts';
import { scanDefs } from '../symbols/c-definitions.ts';
import { sortSymbolDefs } from '../symbols/ctags.ts';
import { nameStarts, NO_NAME_START } from '../symbols/name-range.ts';
import { encodeSymbolIndex } from './symbol-index.ts';
import { symbolsJunk } from './symbol-junk.ts';
import { NO_KIND, SYMBOL_RECORD_SIZE, SectionKind, ngramTable } from './shard-format.ts';
import { bufferView } from '../runtime/buffer-view.ts';

/**
 * Content handed to one ctags process: large enough to amortise its start, small enough to
 * bound memory: a batch's ctags output and its parsed tags cost a few times the batch while
 * they last. Only what ctags reads counts: starting a process copies its parent's page
 * tables (a large build process's take long), so batches that held the scanners' files too
 * started many times more ctags processes for a tree of C.
 */
const SYMBOL_BATCH_BYTES = 32 * 1024 * 1024;
/** Longest symbol or parent name stored (nameLen is a u16). */
const MAX_NAME_BYTES = 0xffff;

/** The four sections, the kinds their records number (meta.symbolKinds), and the counts. */
export interface BuiltSymbols {
  sections: Map<SectionKind, Uint8Array>;
  kinds: string[];
  count: number;
  /** Files ctags failed or timed out on: indexed, without symbols. */
  failures: number;
}

/**
 * Definitions are kept as the section's records from the moment their batch is parsed (24
 * bytes each, the name's offset filled in by finish), not as objects: a shard of a large C
 * tree has hundreds of thousands of them, which as SymbolDef objects take many times the
 * records' memory.
 */
export class SymbolSections {
  private failures = 0;
  /** Definitions per document (one not added has none). */
  private readonly perDocCount: number[] = [];
  /**
   * Each document's first record. A document's records are one run, but the runs come in
   * the order the definitions do (a file for ctags waits for its batch, the scanners' files
   * do not); finish() puts them in document order when they are not.
   */
  private readonly firstRecord: number[] = [];
  private lastDoc = -1;
  private inDocOrder = true;
  /**
   * Every definition's name as UTF-8, in one buffer: until finish() a record's first word
   * is where its name starts there, `nameLength` its length. Strings kept to the end would
   * outlive every young-generation collection (hundreds of thousands per shard of a large tree).
   */
  private names = Buffer.alloc(0);
  private namesUsed = 0;
  private nameLength = new Uint32Array(0);
  private records = Buffer.alloc(0);
  /** `records` as u32 words (records are 24 bytes, `records` starts at offset 0 of its memory). */
  private words = new Uint32Array(0);
  private count = 0;
  /** The parents' names, in record order; a record holds its parent's offset and length. */
  private readonly strings: Buffer[] = [];
  private stringBytes = 0;
  private readonly parentNames = new Map<string, [number, number]>();
  private readonly kinds: string[] = [];
  private readonly kindIndex = new Map<string, number>();
  /** Documents waiting for ctags. */
  private batch: Array<{ doc: number; path: string; content: Uint8Array }> = [];
  /** Documents whose definitions were taken as known. */
  reused = 0;
  private batchBytes = 0;

  /**
   * `enabled` false: the sections of a shard without symbols (empty; meta says symbolsIndexed
   * false). `stableContent`: the bytes given to add() stay as they are until finish() (views
   * of a shard's mapping, symbols-pass.ts), so they are not copied.
   */
  constructor(
    readonly enabled: boolean,
    private readonly stableContent = false,
  ) {}

  /**
   * Document `doc` (each once). A file for ctags is copied (the caller may reuse its bytes)
   * unless the content is stable. A file symbol-junk.ts rules out gets no symbols. `known`:
   * its definitions as a previous build of the same path and blob found them
   * (symbols-pass.ts), taken instead of extracting them again.
   */
  add(doc: number, path: string, content: Uint8Array, known?: SymbolDef[]): void {
    if (!this.enabled || symbolsJunk(path, content) !== undefined) return;
    if (known) {
      this.reused++;
      this.addDefs(doc, content, known, false);
      return;
    }
    // A file for our scanners is read now; the rest waits for ctags, which starts once per batch.
    const found = scanned(path, content);
    if (found) {
      if ('defs' in found) this.addDefs(doc, content, found.defs, true);
      else this.addScan(doc, content, found.scan);
      return;
    }
    this.batch.push({ doc, path, content: this.stableContent ? content : new Uint8Array(content) });
    this.batchBytes += content.length;
    if (this.batchBytes >= SYMBOL_BATCH_BYTES) this.flush();
  }

  /** The sections of `docCount` documents. */
  finish(docCount: number): BuiltSymbols {
    this.flush();
    if (!this.inDocOrder) this.putInDocOrder(docCount);
    // The distinct names, sorted, with their definitions (symbol-index.ts); the records
    // point into them; their trigrams, by block of names, for the sym: prefilter.
    const wordsPer = SYMBOL_RECORD_SIZE >>> 2;
    const nameStart = new Uint32Array(this.count);
    for (let r = 0; r < this.count; r++) nameStart[r] = this.words[r * wordsPer]!;
    const symbolIndex = encodeSymbolIndex({ bytes: this.names.subarray(0, this.namesUsed), start: nameStart, length: this.nameLength.subarray(0, this.count) });
    for (let r = 0; r < this.count; r++) this.words[r * wordsPer] = symbolIndex.nameOffOf[r]!;
    const records = this.records.subarray(0, this.count * SYMBOL_RECORD_SIZE);
    // The symbols section (layout in symbol-records.ts, version 4 records in symbol-index.ts):
    // counts, each document's first symbol, the records, then the parents' names.
    const head = Buffer.alloc(8 + 4 * (docCount + 1));
    head.writeUInt32LE(docCount, 0);
    head.writeUInt32LE(this.count, 4);
    let first = 0;
    for (let d = 0; d <= docCount; d++) {
      head.writeUInt32LE(first, 8 + 4 * d);
      first += this.perDocCount[d] ?? 0;
    }
    const symbols = Buffer.concat([head, records, ...this.strings]);
    const builder = new PostingsBuilder({ expectedBytes: symbolIndex.section.length });
    let postings;
    try {
      symbolIndex.blocks.forEach((block, b) => builder.addContent(b, block, 0x7fffffff));
      postings = builder.finish();
    } catch (err) {
      builder.dispose();
      throw err;
    }
    return {
      sections: new Map<SectionKind, Uint8Array>([
        [SectionKind.Symbols, symbols],
        [SectionKind.SymbolNgrams, ngramTable(postings)],
        [SectionKind.SymbolPostings, postings.blob],
        [SectionKind.SymbolIndex, symbolIndex.section],
      ]),
      kinds: this.kinds,
      count: this.count,
      failures: this.failures,
    };
  }

  /** The batch's definitions, by the extraction rule (extract.ts: here, one ctags process). */
  private flush(): void {
    if (this.batch.length === 0) return;
    const r = extractSymbols(this.batch);
    this.batch.forEach((b, i) => this.addDefs(b.doc, b.content, r.symbols[i]!, true));
    this.failures += r.failed + r.timedOut;
    this.batch = [];
    this.batchBytes = 0;
  }

  /**
   * Document `doc`'s definitions as records, after the last ones. `located`: they come
   * from extraction, with where the parser read each name (SymbolDef.at) when it knows.
   */
  private addDefs(doc: number, content: Uint8Array, defs: readonly SymbolDef[], located: boolean): void {
    const n = defs.length;
    this.perDocCount[doc] = n;
    if (n === 0) return;
    this.firstRecord[doc] = this.count;
    if (doc < this.lastDoc) this.inDocOrder = false;
    this.lastDoc = doc;
    const names = new Array<string>(n);
    const lines = new Array<number>(n);
    const hints = located ? new Array<number | undefined>(n) : undefined;
    for (let j = 0; j < n; j++) {
      const def = defs[j]!;
      names[j] = storedName(def.name);
      lines[j] = def.line;
      if (hints) hints[j] = def.at;
    }
    const starts = nameStarts(bufferView(content), lines, names, hints);
    this.reserve(n);
    // The record's words (layout in symbol-index.ts; little-endian, as every typed view
    // over a shard reads them): the name's offset (finish), start, line, endLine,
    // parentOff, then parentLen u16 | kind u8 | parentKind u8.
    const words = this.words;
    let parent: { name: string; kind: string } | undefined;
    let parentRef = 0;
    let parentWord = 0;
    for (let j = 0; j < n; j++) {
      const def = defs[j]!;
      const w = (this.count * SYMBOL_RECORD_SIZE) >>> 2;
      words[w + 1] = starts[j]!;
      words[w + 2] = def.line;
      words[w + 3] = Math.max(def.line, def.endLine);
      const kind = this.kindOf(def.kind);
      const p = def.parent;
      if (p === undefined) {
        words[w + 4] = 0;
        words[w + 5] = ((kind << 16) | (NO_KIND << 24)) >>> 0;
      } else {
        // The definitions of one parent come in a row and share its object.
        if (p !== parent) {
          parent = p;
          const [off, len] = this.parentName(p.name);
          parentRef = off;
          parentWord = len | (this.kindOf(p.kind) << 24);
        }
        words[w + 4] = parentRef;
        words[w + 5] = (parentWord | (kind << 16)) >>> 0;
      }
      words[w] = this.namesUsed;
      this.nameLength[this.count] = this.addName(names[j]!);
      this.count++;
    }
  }

  /**
   * Document `doc`'s definitions from the core's C scan, as records straight from the
   * scan's (addDefs' rules without an object per definition: a large shard has hundreds of thousands).
   * A file with a name that is not ASCII, or longer than a record holds, goes through the
   * objects (its names' order and stored form are the strings', symbols/ctags.ts
   * sortSymbolDefs and storedName).
   */
  private addScan(doc: number, content: Uint8Array, scan: CScan): void {
    const { defs: d, parents: p, names: scanNames, count } = scan;
    // Each definition's name: where its bytes are, and whether all of them are ASCII.
    const text = content;
    for (let i = 0; i < count; i++) {
      const w = i * 8;
      if (d[w + 2]! > MAX_NAME_BYTES || !asciiBytes(d[w]! & 0x100 ? scanNames : text, d[w + 1]!, d[w + 2]!)) {
        this.addDefs(doc, content, sortSymbolDefs(scanDefs(scan, content)), true);
        return;
      }
    }
    const order = sortedScan(scan, content);
    const n = order.length;
    this.perDocCount[doc] = n;
    if (n === 0) return;
    this.firstRecord[doc] = this.count;
    if (doc < this.lastDoc) this.inDocOrder = false;
    this.lastDoc = doc;
    this.reserve(n);
    const bytes = bufferView(content);
    // The kinds' numbers in this shard, and each scope's parent reference, made once.
    const kindOf = this.cKinds;
    const parentRef = new Int32Array(p.length / 4).fill(-1);
    const parentWord = new Uint32Array(p.length / 4);
    const words = this.words;
    let lines: number[] | undefined;
    let rest: number[] | undefined;
    for (let j = 0; j < n; j++) {
      const w = order[j]! * 8;
      const r = this.count;
      const rw = (r * SYMBOL_RECORD_SIZE) >>> 2;
      const inNames = (d[w]! & 0x100) !== 0;
      const off = d[w + 1]!;
      const len = d[w + 2]!;
      const line = d[w + 3]!;
      // Where the name is on its line (name-range.ts nameStarts, given where it was read:
      // the scanner found it, cscan.ts wholeWordStart), else by the line rule below.
      const start = d[w + 7]!;
      if (start === NO_NAME_START) {
        (rest ??= []).push(r);
        (lines ??= []).push(line);
      }
      words[rw + 1] = start;
      words[rw + 2] = line;
      words[rw + 3] = Math.max(line, d[w + 4]!);
      let kind = kindOf[d[w]! & 0xff]!;
      if (kind < 0) kind = kindOf[d[w]! & 0xff] = this.kindOf(C_KINDS[d[w]! & 0xff]!);
      const parent = d[w + 6]! | 0;
      if (parent < 0) {
        words[rw + 4] = 0;
        words[rw + 5] = ((kind << 16) | (NO_KIND << 24)) >>> 0;
      } else {
        if (parentRef[parent]! < 0) {
          const q = parent * 4;
          const src = p[q]! & 0x100 ? scanNames : text;
          const [ref, refLen] = this.parentName(bufferView(src).toString('latin1', p[q + 1]!, p[q + 1]! + p[q + 2]!));
          let pk = kindOf[p[q]! & 0xff]!;
          if (pk < 0) pk = kindOf[p[q]! & 0xff] = this.kindOf(C_KINDS[p[q]! & 0xff]!);
          parentRef[parent] = ref;
          parentWord[parent] = refLen | (pk << 24);
        }
        words[rw + 4] = parentRef[parent]!;
        words[rw + 5] = (parentWord[parent]! | (kind << 16)) >>> 0;
      }
      words[rw] = this.namesUsed;
      this.nameLength[r] = this.addNameBytes(inNames ? scanNames : text, off, len);
      this.count++;
    }
    // Names not found where they were read (none from the scanner but for odd bytes around
    // them): by the line rule, as nameStarts gives it.
    if (rest) {
      const names = rest.map((r) =>
        this.names.toString('latin1', words[(r * SYMBOL_RECORD_SIZE) >>> 2]!, words[(r * SYMBOL_RECORD_SIZE) >>> 2]! + this.nameLength[r]!),
      );
      const starts = nameStarts(bytes, lines!, names);
      rest.forEach((r, k) => (words[((r * SYMBOL_RECORD_SIZE) >>> 2) + 1] = starts[k]!));
    }
  }

  /** Each C kind's number in this shard (-1 until used), by its number in the scan (core/index.ts C_KINDS). */
  private readonly cKinds = new Int16Array(C_KINDS.length).fill(-1);

  /** Appends the name bytes[off, off + len) (ASCII: what addName writes for its string); its length. */
  private addNameBytes(bytes: Uint8Array, off: number, len: number): number {
    if (this.namesUsed + len > this.names.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.namesUsed + len, this.names.length * 2, 1 << 20)); // read up to namesUsed only
      this.names.copy(grown, 0, 0, this.namesUsed);
      this.names = grown;
    }
    const names = this.names;
    const at = this.namesUsed;
    for (let k = 0; k < len; k++) names[at + k] = bytes[off + k]!;
    this.namesUsed += len;
    return len;
  }

  /**
   * The records (and their names) by document, as the symbols section's layout needs; then
   * the kinds and the parents' names numbered in order of first use among them, as if the
   * documents had come in order: a shard's bytes do not depend on which of its files waited
   * for ctags or were reused (symbols-pass.ts).
   */
  private putInDocOrder(docCount: number): void {
    const wordsPer = SYMBOL_RECORD_SIZE >>> 2;
    const records = Buffer.allocUnsafe(this.records.length); // records past `count` are never read
    const words = new Uint32Array(records.buffer, records.byteOffset, records.length >>> 2);
    const nameLength = new Uint32Array(this.nameLength.length);
    let k = 0;
    for (let d = 0; d < docCount; d++) {
      const n = this.perDocCount[d] ?? 0;
      if (n === 0) continue;
      const from = this.firstRecord[d]!;
      words.set(this.words.subarray(from * wordsPer, (from + n) * wordsPer), k * wordsPer);
      nameLength.set(this.nameLength.subarray(from, from + n), k);
      k += n;
    }
    const kindMap = new Int16Array(NO_KIND + 1).fill(-1);
    kindMap[NO_KIND] = NO_KIND;
    const kinds: string[] = [];
    const kindOf = (old: number): number => {
      if (kindMap[old]! < 0) {
        kindMap[old] = kinds.length;
        kinds.push(this.kinds[old]!);
      }
      return kindMap[old]!;
    };
    const parentAt = new Map<number, number>();
    const strings: Buffer[] = [];
    let stringBytes = 0;
    const joined = Buffer.concat(this.strings);
    for (let w = 0; w < this.count * wordsPer; w += wordsPer) {
      const last = words[w + 5]!;
      const kind = kindOf((last >>> 16) & 0xff);
      const parentKind = last >>> 24;
      if (parentKind === NO_KIND) {
        words[w + 5] = ((kind << 16) | (NO_KIND << 24)) >>> 0;
        continue;
      }
      const len = last & 0xffff;
      const old = words[w + 4]!;
      let off = parentAt.get(old);
      if (off === undefined) {
        off = stringBytes;
        parentAt.set(old, off);
        strings.push(joined.subarray(old, old + len));
        stringBytes += len;
      }
      words[w + 4] = off;
      words[w + 5] = (len | (kind << 16) | (kindOf(parentKind) << 24)) >>> 0;
    }
    this.records = records;
    this.words = words;
    this.nameLength = nameLength;
    this.kinds.splice(0, this.kinds.length, ...kinds);
    this.kindIndex.clear();
    kinds.forEach((name, i) => this.kindIndex.set(name, i));
    this.strings.splice(0, this.strings.length, ...strings);
    this.stringBytes = stringBytes;
    this.parentNames.clear();
    this.inDocOrder = true;
  }

  /** Room for `more` records. */
  private reserve(more: number): void {
    const need = (this.count + more) * SYMBOL_RECORD_SIZE;
    if (need <= this.records.length) return;
    // Not zeroed (a record's six words are all written when it is added); large enough not
    // to come from Node's pool, so it starts at offset 0 of its memory.
    const grown = Buffer.allocUnsafe(Math.max(need, this.records.length * 2, 4096 * SYMBOL_RECORD_SIZE));
    this.records.copy(grown, 0, 0, this.count * SYMBOL_RECORD_SIZE);
    this.records = grown;
    this.words = new Uint32Array(grown.buffer, grown.byteOffset, grown.length >>> 2);
    const lengths = new Uint32Array(grown.length / SYMBOL_RECORD_SIZE);
    lengths.set(this.nameLength.subarray(0, this.count));
    this.nameLength = lengths;
  }

  /** Appends a name's UTF-8 bytes to `names`; their length. */
  private addName(name: string): number {
    const most = name.length * 3;
    if (this.namesUsed + most > this.names.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.namesUsed + most, this.names.length * 2, 1 << 20)); // read up to namesUsed only
      this.names.copy(grown, 0, 0, this.namesUsed);
      this.names = grown;
    }
    const names = this.names;
    const from = this.namesUsed;
    // ASCII by a loop (names are short: a call per name would cost more), the rest by the
    // encoder.
    let length = name.length;
    for (let k = 0; k < name.length; k++) {
      const c = name.charCodeAt(k);
      if (c >= 0x80) {
        length = names.write(name, from, 'utf8');
        break;
      }
      names[from + k] = c;
    }
    this.namesUsed += length;
    return length;
  }

  /** A kind's number, in order of first use (more than 254 kinds: the last one is shared). */
  private kindOf(k: string): number {
    let i = this.kindIndex.get(k);
    if (i === undefined) {
      i = this.kinds.length < NO_KIND ? this.kinds.length : NO_KIND - 1;
      if (this.kinds.length < NO_KIND) this.kinds.push(k);
      this.kindIndex.set(k, i);
    }
    return i;
  }

  /** Where a parent's name is among the parents' names: stored once, shared by every record naming it. */
  private parentName(text: string): [number, number] {
    const seen = this.parentNames.get(text);
    if (seen) return seen;
    const b = Buffer.from(text, 'utf8').subarray(0, MAX_NAME_BYTES);
    this.strings.push(b);
    this.stringBytes += b.length;
    const ref: [number, number] = [this.stringBytes - b.length, b.length];
    this.parentNames.set(text, ref);
    return ref;
  }
}

/**
 * A definition's name as stored: at most 0xffff bytes (cut, then decoded as UTF-8 as a
 * version 3 reader gave it back), which is what sym: matches.
 */
function storedName(name: string): string {
  // At most 3 bytes per UTF-16 unit: a short name is within the limit.
  if (name.length * 3 <= MAX_NAME_BYTES) return name;
  const b = Buffer.from(name, 'utf8');
  return b.length <= MAX_NAME_BYTES ? name : b.subarray(0, MAX_NAME_BYTES).toString('utf8');
}

/** Whether bytes[off, off + len) are all ASCII. */
function asciiBytes(bytes: Uint8Array, off: number, len: number): boolean {
  for (let k = off; k < off + len; k++) if (bytes[k]! >= 0x80) return false;
  return true;
}

/** The alphabetical rank of each C kind's name (ctags.ts compareDefs orders kinds by their names). */
const C_KIND_RANK = Uint8Array.from(C_KINDS, (k) => [...C_KINDS].sort().indexOf(k));

/**
 * A scan's definitions in the order sortSymbolDefs gives their objects: by line, then name
 * (ASCII here: by bytes), then kind's name, and without repeats of (line, name, kind), the
 * first kept (a stable sort). The scanner gives most files in order.
 */
function sortedScan(scan: CScan, content: Uint8Array): Uint32Array {
  const { defs: d, names: scanNames, count } = scan;
  const compare = (i: number, j: number): number => {
    const a = i * 8;
    const b = j * 8;
    if (d[a + 3] !== d[b + 3]) return d[a + 3]! - d[b + 3]!;
    const pa = d[a]! & 0x100 ? scanNames : content;
    const pb = d[b]! & 0x100 ? scanNames : content;
    const la = d[a + 2]!;
    const lb = d[b + 2]!;
    const oa = d[a + 1]!;
    const ob = d[b + 1]!;
    const m = Math.min(la, lb);
    for (let k = 0; k < m; k++) {
      const x = pa[oa + k]!;
      const y = pb[ob + k]!;
      if (x !== y) return x - y;
    }
    if (la !== lb) return la - lb;
    return C_KIND_RANK[d[a]! & 0xff]! - C_KIND_RANK[d[b]! & 0xff]!;
  };
  const order = new Uint32Array(count);
  let sorted = true;
  for (let i = 0; i < count; i++) {
    order[i] = i;
    if (i > 0 && sorted && compare(i - 1, i) >= 0) sorted = false;
  }
  if (sorted) return order;
  const list = Array.from(order).sort(compare);
  let w = 0;
  for (let r = 0; r < list.length; r++) if (r === 0 || compare(list[w - 1]!, list[r]!) !== 0) list[w++] = list[r]!;
  return Uint32Array.from(list.slice(0, w));
}
