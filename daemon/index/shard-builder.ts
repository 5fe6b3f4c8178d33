// Builds one shard from a list of files: decides what is indexed and what is skipped,
// extracts trigrams through the WebAssembly core and streams the content into a
// ShardWriter. Runs inside an index worker (build-worker.ts); one shard at a time per
// thread, because the core's PostingsBuilder owns large regions of wasm memory.

import { closeSync, openSync, readSync } from 'node:fs';
import { Packr } from 'msgpackr';
import { PostingsBuilder, WordsBuilder, hash32 } from '../../core/index.ts';
import { encodeContentWords, WORD_MIN_DOCS } from './content-words.ts';
import { encodeBranchLists } from './branch-set.ts';
import { compareStaticRank, staticRankKey } from './file-class.ts';
import { detectLanguage } from './language.ts';
import { ctagsAvailable, extractSymbols, type SymbolDef } from '../symbols/ctags.ts';
import { nameStarts } from '../symbols/name-range.ts';
import { REC_NAME_OFF, REC_START, encodeSymbolIndex } from './symbol-index.ts';
import {
  DOC_FLAG_ASCII_FOLDS_ONLY,
  DOC_FLAG_CRLF,
  DOC_RECORD_SIZE,
  NO_KIND,
  OID_SIZE,
  SYMBOL_RECORD_SIZE,
  SectionKind,
  type ShardMeta,
  type ShardRepoMeta,
  type SkippedFile,
} from './shard-format.ts';
import { ShardWriter } from './shard-writer.ts';

export interface ShardFile {
  /** Path inside the repository, '/'-separated. */
  path: string;
  size: number;
  /** Where to read the bytes (plain directories) ... */
  absPath?: string;
  /** ... or the bytes themselves (git blobs read by the main thread). */
  data?: Uint8Array;
  /** Git blob id (40 hex digits). */
  oid?: string;
  /** Indexes into the job's `branches` of the branches holding this version; default [0]. */
  branches?: number[];
}

export interface ShardJob {
  finalPath: string;
  repo: ShardRepoMeta;
  shardIndex: number;
  files: ShardFile[];
  maxFileSize: number;
  maxTrigrams: number;
  indexedAt: string;
  /** Branch and tag names the files' `branches` refer to; [0] is the default branch. */
  branches: string[];
  /** Extract symbol definitions with universal-ctags (default: when it is installed). */
  symbols?: boolean;
}

export interface ShardResult {
  path: string;
  docCount: number;
  contentBytes: number;
  /** Bytes of every file of the job, indexed or skipped. */
  totalBytes: number;
  skipped: SkippedFile[];
  symbolCount: number;
  symbolFailures: number;
}

export type ProgressFn = (files: number, bytes: number) => void;

const PROGRESS_EVERY_FILES = 256;
/** Content handed to one ctags process: large enough to amortise its start, small enough to bound memory. */
const SYMBOL_BATCH_BYTES = 32 * 1024 * 1024;
// 2: documents in static-rank order (file-class.ts) rather than path order.
const BUILDER = 'trawl-shard-builder/2';
/** Longest symbol or parent name stored (nameLen is a u16). */
const MAX_NAME_BYTES = 0xffff;

// Shared structures are not used: each META section is self-describing (records carry
// their own structure definitions inline), so a reader needs nothing but the section.
const packr = new Packr({ useRecords: true });

export function buildShard(job: ShardJob, onProgress?: ProgressFn): ShardResult {
  const writer = new ShardWriter(job.finalPath);
  let contentBuilder: PostingsBuilder | undefined;
  let wordsBuilder: WordsBuilder | undefined;
  try {
    contentBuilder = new PostingsBuilder({ expectedBytes: job.files.reduce((n, f) => n + f.size, 0) });
    wordsBuilder = new WordsBuilder();
    const names: Buffer[] = [];
    const docs: Array<{ nameLen: number; contentOff: number; contentLen: number; hash: number; lang: number; flags: number }> = [];
    const languages: string[] = [];
    const languageIndex = new Map<string, number>();
    const skipped: SkippedFile[] = [];
    const skippedFiles: ShardFile[] = [];
    const docHashes: number[] = [];
    const docOids: Array<string | undefined> = [];
    const branchDocs: number[][] = job.branches.map(() => []);
    let contentBytes = 0;
    let doneFiles = 0;
    let doneBytes = 0;
    const withSymbols = job.symbols !== false && ctagsAvailable();
    const symbols: SymbolDef[][] = [];
    let symbolFailures = 0;
    // Every definition's name and where it is in its file, in record order (documents are
    // flushed in order), for the symbol index.
    const recordNames: string[] = [];
    const recordStarts: number[] = [];
    let batch: Array<{ doc: number; path: string; content: Uint8Array }> = [];
    let batchBytes = 0;
    const flushSymbols = () => {
      if (batch.length === 0) return;
      const r = extractSymbols(batch);
      batch.forEach((b, i) => {
        const defs = r.symbols[i]!;
        symbols[b.doc] = defs;
        const names = defs.map((x) => storedName(x.name));
        const starts = nameStarts(Buffer.from(b.content.buffer, b.content.byteOffset, b.content.length), defs.map((x) => x.line), names);
        for (let j = 0; j < names.length; j++) {
          recordNames.push(names[j]!);
          recordStarts.push(starts[j]!);
        }
      });
      symbolFailures += r.failed + r.timedOut;
      batch = [];
      batchBytes = 0;
    };

    for (const file of staticOrder(job.files)) {
      doneFiles++;
      doneBytes += file.size;
      if (onProgress && doneFiles % PROGRESS_EVERY_FILES === 0) onProgress(doneFiles, doneBytes);
      const skip = (size: number, reason: SkippedFile['reason']): void => {
        skipped.push(file.oid ? { path: file.path, size, reason, oid: file.oid } : { path: file.path, size, reason });
        skippedFiles.push(file);
      };
      if (file.size > job.maxFileSize) {
        skip(file.size, 'too-large');
        continue;
      }
      let content: Uint8Array;
      try {
        content = file.data ?? readInto(file.absPath!, job.maxFileSize);
      } catch {
        skip(file.size, 'unreadable');
        continue;
      }
      // The size may have changed since the directory walk.
      if (content.length > job.maxFileSize) {
        skip(content.length, 'too-large');
        continue;
      }
      const buf = Buffer.from(content.buffer, content.byteOffset, content.length);
      if (buf.indexOf(0) !== -1) {
        skip(content.length, 'binary');
        continue;
      }
      const docId = docs.length;
      if (contentBuilder.addContent(docId, content, job.maxTrigrams) < 0) {
        skip(content.length, 'too-many-trigrams');
        continue;
      }
      wordsBuilder.add(docId, content);
      for (const b of file.branches ?? [0]) branchDocs[b]!.push(docId);
      docOids.push(file.oid);
      const language = detectLanguage(file.path, content.subarray(0, 256));
      let lang = languageIndex.get(language);
      if (lang === undefined) {
        lang = languages.length;
        languages.push(language);
        languageIndex.set(language, lang);
      }
      const name = Buffer.from(file.path, 'utf8');
      names.push(name);
      const hash = hash32(content);
      docHashes.push(hash);
      docs.push({
        nameLen: name.length,
        contentOff: writer.appendContent(content),
        contentLen: content.length,
        hash,
        lang,
        flags: (buf.indexOf('\r\n') !== -1 ? DOC_FLAG_CRLF : 0) | (contentBuilder.lastFoldsToAscii ? 0 : DOC_FLAG_ASCII_FOLDS_ONLY),
      });
      contentBytes += content.length;
      if (withSymbols) {
        // A copy: `content` may be the reused read buffer (and Buffer#slice would not copy).
        batch.push({ doc: docId, path: file.path, content: new Uint8Array(content) });
        batchBytes += content.length;
        if (batchBytes >= SYMBOL_BATCH_BYTES) flushSymbols();
      }
    }
    flushSymbols();
    onProgress?.(doneFiles, doneBytes);

    // The skipped list keeps the order the files were given in (path order), not the documents'.
    const given = new Map(job.files.map((f, i) => [f, i]));
    const skippedAt = new Map(skippedFiles.map((f, i) => [skipped[i]!, given.get(f)!]));
    skipped.sort((a, b) => skippedAt.get(a)! - skippedAt.get(b)!);

    // The words first: their regions are free again before the postings' large ones are taken.
    const contentWords = encodeContentWords(wordsBuilder.finish(WORD_MIN_DOCS), WORD_MIN_DOCS);
    wordsBuilder = undefined;
    const contentPostings = contentBuilder.finish();
    contentBuilder = undefined;

    // File-name trigrams: a second builder, now that the content builder is released.
    const nameBuilder = new PostingsBuilder({ expectedBytes: names.reduce((n, b) => n + b.length, 0) });
    let namePostings;
    try {
      names.forEach((name, i) => {
        // No trigram limit for names: a path is short.
        nameBuilder.addContent(i, name, 0x7fffffff);
      });
      namePostings = nameBuilder.finish();
    } catch (err) {
      nameBuilder.dispose();
      throw err;
    }

    // The distinct names, sorted, with their definitions (symbol-index.ts); the records
    // point into them; their trigrams, by block of names, for the sym: prefilter.
    const symbolIndex = encodeSymbolIndex(recordNames);
    const symbolKinds: string[] = [];
    const symbolSection = encodeSymbols(docs.length, symbols, symbolKinds, symbolIndex.nameOffOf, recordStarts);
    const symbolBuilder = new PostingsBuilder({ expectedBytes: symbolIndex.section.length });
    let symbolPostings;
    try {
      symbolIndex.blocks.forEach((block, b) => symbolBuilder.addContent(b, block, 0x7fffffff));
      symbolPostings = symbolBuilder.finish();
    } catch (err) {
      symbolBuilder.dispose();
      throw err;
    }

    const docTable = Buffer.alloc(docs.length * DOC_RECORD_SIZE);
    let nameOff = 0;
    docs.forEach((d, i) => {
      const o = i * DOC_RECORD_SIZE;
      docTable.writeUInt32LE(nameOff, o);
      docTable.writeUInt32LE(d.nameLen, o + 4);
      docTable.writeUInt32LE(d.contentOff, o + 8);
      docTable.writeUInt32LE(d.contentLen, o + 12);
      docTable.writeUInt32LE(d.hash, o + 16);
      docTable.writeUInt16LE(d.lang, o + 24);
      docTable.writeUInt16LE(d.flags, o + 26);
      nameOff += d.nameLen;
    });

    const oidTable = Buffer.alloc(docs.length * OID_SIZE);
    docOids.forEach((oid, i) => {
      if (oid !== undefined) oidTable.write(oid, i * OID_SIZE, OID_SIZE, 'hex');
    });

    const meta: ShardMeta = {
      repo: job.repo,
      shardIndex: job.shardIndex,
      docCount: docs.length,
      contentBytes,
      languages,
      skipped,
      indexedAt: job.indexedAt,
      maxFileSize: job.maxFileSize,
      maxTrigrams: job.maxTrigrams,
      builder: BUILDER,
      symbolKinds,
      symbolFailures,
      symbolsIndexed: withSymbols,
    };
    const hashes = new Uint32Array(docHashes);
    writer.finish(hash32(new Uint8Array(hashes.buffer)), new Map<SectionKind, Uint8Array>([
      [SectionKind.Docs, docTable],
      [SectionKind.Names, Buffer.concat(names)],
      [SectionKind.ContentNgrams, ngramTable(contentPostings)],
      [SectionKind.ContentPostings, contentPostings.blob],
      [SectionKind.ContentFollow, contentPostings.follow],
      [SectionKind.NameNgrams, ngramTable(namePostings)],
      [SectionKind.NamePostings, namePostings.blob],
      [SectionKind.Symbols, symbolSection],
      [SectionKind.SymbolNgrams, ngramTable(symbolPostings)],
      [SectionKind.SymbolPostings, symbolPostings.blob],
      [SectionKind.Branches, encodeBranchLists({ names: job.branches, lists: branchDocs.map((l) => Uint32Array.from(l)) })],
      [SectionKind.Oids, oidTable],
      [SectionKind.SymbolIndex, symbolIndex.section],
      [SectionKind.ContentWords, contentWords],
      [SectionKind.Meta, packr.pack(meta)],
    ]));
    const symbolCount = symbols.reduce((n, l) => n + (l?.length ?? 0), 0);
    return { path: job.finalPath, docCount: docs.length, contentBytes, totalBytes: doneBytes, skipped, symbolCount, symbolFailures };
  } catch (err) {
    contentBuilder?.dispose();
    wordsBuilder?.dispose();
    writer.abort();
    throw err;
  }
}

/**
 * The files in the order their documents take in the shard: by static rank (file-class.ts),
 * so that a search stopping at its `matches` has examined the likelier files first. A
 * document's number is its place in this order; nothing reads a shard assuming path order
 * (names are found through the name trigrams, listings sort by path themselves).
 */
function staticOrder(files: ShardFile[]): ShardFile[] {
  const keyed = files.map((file) => ({ file, key: staticRankKey(file.path) }));
  keyed.sort((a, b) => compareStaticRank(a.key, b.key));
  return keyed.map((k) => k.file);
}

// One read buffer per thread, reused for every file: every consumer of a file's bytes
// (the core, the hash, the writer) copies them, and not allocating 78k buffers for the
// Linux tree saves a quarter second of garbage collection per shard.
let scratch = Buffer.allocUnsafe(1 << 20);

/**
 * The file's bytes, in the shared scratch buffer (valid until the next call). Reads at most
 * maxFileSize + 1 bytes: enough to tell that a file is too large.
 */
function readInto(path: string, maxFileSize: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    let length = 0;
    for (;;) {
      if (length === scratch.length) {
        if (length > maxFileSize) break;
        const grown = Buffer.allocUnsafe(Math.min(scratch.length * 2, maxFileSize + 1));
        scratch.copy(grown, 0, 0, length);
        scratch = grown;
      }
      const n = readSync(fd, scratch, length, scratch.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return scratch.subarray(0, length);
  } finally {
    closeSync(fd);
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

/** n, 0, ids[n], counts[n], offsets[n] as little-endian u32 (see shard-reader.ts). */
function ngramTable(p: { ids: Uint32Array; counts: Uint32Array; offsets: Uint32Array }): Uint8Array {
  const n = p.ids.length;
  const out = new Uint32Array(2 + 3 * n);
  out[0] = n;
  out.set(p.ids, 2);
  out.set(p.counts, 2 + n);
  out.set(p.offsets, 2 + 2 * n);
  return new Uint8Array(out.buffer);
}
