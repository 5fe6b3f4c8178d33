// A shard's symbol sections (symbols, symbol-ngrams, symbol-postings, symbol-index; their
// layouts in shard-reader.ts and symbol-index.ts) from its documents in document order:
// universal-ctags over batches of their content (symbols/ctags.ts), then the sections.
// The shard builder collects them inline (small builds); the symbols pass
// (symbols-pass.ts) collects them for a shard built without, after its content was
// committed and made searchable.

import { PostingsBuilder } from '../../core/index.ts';
import { extractSymbols, type SymbolDef } from '../symbols/ctags.ts';
import { nameStarts } from '../symbols/name-range.ts';
import { REC_NAME_OFF, REC_START, encodeSymbolIndex } from './symbol-index.ts';
import { NO_KIND, SYMBOL_RECORD_SIZE, SectionKind, ngramTable } from './shard-format.ts';

/** Content handed to one ctags process: large enough to amortise its start, small enough to bound memory. */
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

export class SymbolSections {
  private readonly perDoc: SymbolDef[][] = [];
  private failures = 0;
  /** Every definition's name and where it is in its file, in record order (documents come in order). */
  private readonly recordNames: string[] = [];
  private readonly recordStarts: number[] = [];
  private batch: Array<{ doc: number; path: string; content: Uint8Array }> = [];
  private batchBytes = 0;

  /** `enabled` false: the sections of a shard without symbols (empty; meta says symbolsIndexed false). */
  constructor(readonly enabled: boolean) {}

  /** Document `doc` (the documents in order, each once). Its bytes are copied: the caller may reuse them. */
  add(doc: number, path: string, content: Uint8Array): void {
    if (!this.enabled) return;
    this.batch.push({ doc, path, content: new Uint8Array(content) });
    this.batchBytes += content.length;
    if (this.batchBytes >= SYMBOL_BATCH_BYTES) this.flush();
  }

  /** The sections of `docCount` documents. */
  finish(docCount: number): BuiltSymbols {
    this.flush();
    // The distinct names, sorted, with their definitions (symbol-index.ts); the records
    // point into them; their trigrams, by block of names, for the sym: prefilter.
    const symbolIndex = encodeSymbolIndex(this.recordNames);
    const kinds: string[] = [];
    const symbols = encodeSymbols(docCount, this.perDoc, kinds, symbolIndex.nameOffOf, this.recordStarts);
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
      kinds,
      count: this.recordNames.length,
      failures: this.failures,
    };
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    const r = extractSymbols(this.batch);
    this.batch.forEach((b, i) => {
      const defs = r.symbols[i]!;
      this.perDoc[b.doc] = defs;
      const names = defs.map((x) => storedName(x.name));
      const starts = nameStarts(Buffer.from(b.content.buffer, b.content.byteOffset, b.content.length), defs.map((x) => x.line), names);
      for (let j = 0; j < names.length; j++) {
        this.recordNames.push(names[j]!);
        this.recordStarts.push(starts[j]!);
      }
    });
    this.failures += r.failed + r.timedOut;
    this.batch = [];
    this.batchBytes = 0;
  }
}

/**
 * The symbols section (layout in shard-reader.ts, version 4 records in symbol-index.ts):
 * counts, each document's first symbol, 24-byte records, then the parents' names. A
 * record's name is at nameOffOf[record] in the symbol index.
 */
function encodeSymbols(docCount: number, perDoc: SymbolDef[][], kinds: string[], nameOffOf: Uint32Array, starts: readonly number[]): Uint8Array {
  const kindIndex = new Map<string, number>();
  const kindOf = (k: string): number => {
    let i = kindIndex.get(k);
    if (i === undefined) {
      i = kinds.length < NO_KIND ? kinds.length : NO_KIND - 1; // more than 254 kinds: the last one is shared
      if (kinds.length < NO_KIND) kinds.push(k);
      kindIndex.set(k, i);
    }
    return i;
  };
  const count = perDoc.reduce((n, l) => n + (l?.length ?? 0), 0);
  const strings: Buffer[] = [];
  let stringBytes = 0;
  const head = Buffer.alloc(8 + 4 * (docCount + 1));
  head.writeUInt32LE(docCount, 0);
  head.writeUInt32LE(count, 4);
  const records = Buffer.alloc(count * SYMBOL_RECORD_SIZE);
  let r = 0;
  const addString = (text: string): [number, number] => {
    const b = Buffer.from(text, 'utf8').subarray(0, MAX_NAME_BYTES);
    strings.push(b);
    stringBytes += b.length;
    return [stringBytes - b.length, b.length];
  };
  for (let d = 0; d < docCount; d++) {
    head.writeUInt32LE(r, 8 + 4 * d);
    for (const s of perDoc[d] ?? []) {
      const o = r * SYMBOL_RECORD_SIZE;
      records.writeUInt32LE(nameOffOf[r]!, o + REC_NAME_OFF);
      records.writeUInt32LE(starts[r]!, o + REC_START);
      records.writeUInt8(kindOf(s.kind), o + 22);
      records.writeUInt8(s.parent ? kindOf(s.parent.kind) : NO_KIND, o + 23);
      records.writeUInt32LE(s.line, o + 8);
      records.writeUInt32LE(Math.max(s.line, s.endLine), o + 12);
      const [parentOff, parentLen] = s.parent ? addString(s.parent.name) : [0, 0];
      records.writeUInt32LE(parentOff, o + 16);
      records.writeUInt16LE(parentLen, o + 20);
      r++;
    }
  }
  head.writeUInt32LE(r, 8 + 4 * docCount);
  return Buffer.concat([head, records, ...strings]);
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
