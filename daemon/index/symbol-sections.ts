// A shard's symbol sections (symbols, symbol-ngrams, symbol-postings, symbol-index; their
// layouts in shard-reader.ts and symbol-index.ts) from its documents in document order:
// their definitions by batches of content (symbols/extract.ts: C by the scanner, the rest by
// universal-ctags), then the sections.
// The shard builder collects them inline (small builds); the symbols pass
// (symbols-pass.ts) collects them for a shard built without, after its content was
// committed and made searchable.

import { PostingsBuilder } from '../../core/index.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { extractSymbols } from '../symbols/extract.ts';
import { nameStarts } from '../symbols/name-range.ts';
import { REC_NAME_OFF, encodeSymbolIndex } from './symbol-index.ts';
import { symbolsJunk } from './symbol-junk.ts';
import { NO_KIND, SYMBOL_RECORD_SIZE, SectionKind, ngramTable } from './shard-format.ts';

/**
 * Content handed to one ctags process: large enough to amortise its start (a few ms), small
 * enough to bound memory: a batch's ctags output and its parsed tags cost ~3x the batch
 * while they last (a 32 MB batch of Linux C: +100 MB).
 */
const SYMBOL_BATCH_BYTES = 8 * 1024 * 1024;
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
 * bytes each, the name's offset filled in by finish), not as objects: a shard of Linux has
 * ~500k of them, ~170 MB as SymbolDef objects.
 */
export class SymbolSections {
  private failures = 0;
  /** Definitions per document (documents come in order; one not added has none). */
  private readonly perDocCount: number[] = [];
  /** Every definition's name and where it is in its file, in record order. */
  private readonly recordNames: string[] = [];
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
  /** Documents waiting for extraction (and, in their order among them, those whose definitions are known). */
  private batch: Array<{ doc: number; path: string; content: Uint8Array; known?: SymbolDef[] }> = [];
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
   * Document `doc` (the documents in order, each once). Its bytes are copied (the caller may
   * reuse them) unless the content is stable. A file symbol-junk.ts rules out gets no
   * symbols. `known`: its definitions as a previous build of the same path and blob found
   * them (symbols-pass.ts), taken instead of extracting them again.
   */
  add(doc: number, path: string, content: Uint8Array, known?: SymbolDef[]): void {
    if (!this.enabled || symbolsJunk(path, content) !== undefined) return;
    if (known) this.reused++;
    const bytes = this.stableContent ? content : new Uint8Array(content);
    this.batch.push(known ? { doc, path, content: bytes, known } : { doc, path, content: bytes });
    this.batchBytes += content.length;
    if (this.batchBytes >= SYMBOL_BATCH_BYTES) this.flush();
  }

  /** The sections of `docCount` documents. */
  finish(docCount: number): BuiltSymbols {
    this.flush();
    // The distinct names, sorted, with their definitions (symbol-index.ts); the records
    // point into them; their trigrams, by block of names, for the sym: prefilter.
    const symbolIndex = encodeSymbolIndex(this.recordNames);
    const records = this.records.subarray(0, this.count * SYMBOL_RECORD_SIZE);
    for (let r = 0; r < this.count; r++) records.writeUInt32LE(symbolIndex.nameOffOf[r]!, r * SYMBOL_RECORD_SIZE + REC_NAME_OFF);
    // The symbols section (layout in shard-reader.ts, version 4 records in symbol-index.ts):
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

  private flush(): void {
    if (this.batch.length === 0) return;
    const asked = this.batch.filter((b) => !b.known);
    const r = asked.length > 0 ? extractSymbols(asked) : { symbols: [], failed: 0, timedOut: 0 };
    let next = 0;
    for (const b of this.batch) {
      const defs = b.known ?? r.symbols[next++]!;
      const n = defs.length;
      this.perDocCount[b.doc] = n;
      if (n === 0) continue;
      const names = new Array<string>(n);
      const lines = new Array<number>(n);
      const hints = b.known ? undefined : new Array<number | undefined>(n);
      for (let j = 0; j < n; j++) {
        const def = defs[j]!;
        names[j] = storedName(def.name);
        lines[j] = def.line;
        if (hints) hints[j] = def.at;
      }
      const starts = nameStarts(Buffer.from(b.content.buffer, b.content.byteOffset, b.content.length), lines, names, hints);
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
        this.recordNames.push(names[j]!);
        this.count++;
      }
    }
    this.failures += r.failed + r.timedOut;
    this.batch = [];
    this.batchBytes = 0;
  }

  /** Room for `more` records. */
  private reserve(more: number): void {
    const need = (this.count + more) * SYMBOL_RECORD_SIZE;
    if (need <= this.records.length) return;
    const grown = Buffer.alloc(Math.max(need, this.records.length * 2, 4096 * SYMBOL_RECORD_SIZE));
    this.records.copy(grown, 0, 0, this.count * SYMBOL_RECORD_SIZE);
    this.records = grown;
    this.words = new Uint32Array(grown.buffer, grown.byteOffset, grown.length >>> 2);
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
