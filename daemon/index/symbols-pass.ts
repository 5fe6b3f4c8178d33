// The symbols pass: the symbol sections of a shard built without them (its content
// committed and searchable already), written as a symbols file beside it
// (shard-format.ts), which the next manifest names with the shard. The shard itself is
// not written again. A full build of a large repository runs it after committing the
// content (indexer.ts), so that searching does not wait for the symbols, which cost more
// than the rest of the build together. A document whose path and blob the repository's
// previous index held takes its definitions from there (SymbolsJob.previous).

import { symbolExtraction } from '../symbols/extract.ts';
import { encodeContentWords, WORD_MIN_DOCS } from './content-words.ts';
import { WordsBuilder } from '../../core/index.ts';
import { Shard } from './shard-reader.ts';
import type { ShardFiles } from './manifest.ts';
import { SYMBOLS_FORMAT, SectionKind, type ShardMeta, type SymbolsFileMeta } from './shard-format.ts';
import { ShardWriter } from './shard-writer.ts';
import { SymbolSections } from './symbol-sections.ts';
import { packMeta } from './shard-builder.ts';

export interface SymbolsJob {
  /** The shard built without symbols, by this build (its content is not checked again). */
  from: string;
  /** Where its symbols file goes (written atomically, as every shard). */
  finalPath: string;
  /**
   * Shards of the repository's previous index, with their symbols: a document whose path
   * and blob one of them holds takes its definitions from there instead of from ctags (a
   * full rebuild of a git repository re-reads every file, but most are unchanged).
   */
  previous?: ShardFiles[];
}

export interface SymbolsResult {
  symbolCount: number;
  symbolFailures: number;
  /** Documents whose definitions came from a previous shard. */
  symbolsReused: number;
}

/**
 * Whether a previous shard's definitions may stand for this build's: it has symbols, from
 * the same extraction rules and the same ctags (a shard from before the C scanner holds
 * ctags' C definitions, which the scanner would not all give; another ctags may find others).
 */
export function reusableSymbols(meta: ShardMeta): boolean {
  return meta.symbolsIndexed && meta.symbolExtraction === symbolExtraction();
}

/** Where each (path, blob) of the previous shards is: the shard and its document. Shards that cannot be opened (removed since, damaged) or hold no symbols give nothing. */
function previousDocs(shards: readonly ShardFiles[]): Map<string, { shard: Shard; doc: number }> {
  const found = new Map<string, { shard: Shard; doc: number }>();
  for (const { path, symbols } of shards) {
    let shard: Shard;
    try {
      shard = Shard.open(path, { symbols });
    } catch {
      continue;
    }
    if (!reusableSymbols(shard.meta)) continue;
    // A document without definitions in a shard where ctags failed on some may be one of
    // those failures (a time-out): asked again rather than taken as having none.
    const failures = shard.meta.symbolFailures > 0;
    for (let doc = 0; doc < shard.docCount; doc++) {
      const oid = shard.oid(doc);
      if (oid === undefined || (failures && shard.symbolsOf(doc).length === 0)) continue;
      found.set(`${shard.name(doc)}\0${oid}`, { shard, doc });
    }
  }
  return found;
}

// A build thread passes shard after shard of one run: the previous index is read once.
let cache: { key: string; docs: Map<string, { shard: Shard; doc: number }>; shards: Shard[] } | undefined;

export function addSymbols(job: SymbolsJob): SymbolsResult {
  // Written by this build's content phase moments ago, from the bytes it hashed.
  const shard = Shard.open(job.from, { writtenByCaller: true });
  // The documents are views of the shard's mapping, which outlives the sections' build.
  const symbols = new SymbolSections(true, true);
  let previous: Map<string, { shard: Shard; doc: number }> | undefined;
  if (job.previous && job.previous.length > 0) {
    const key = job.previous.map((p) => `${p.path}\0${p.symbols ?? ''}`).join('\0');
    if (cache?.key !== key) {
      const docs = previousDocs(job.previous);
      cache = { key, docs, shards: [...new Set([...docs.values()].map((p) => p.shard))] };
    }
    previous = cache.docs;
  }
  let writer: ShardWriter | undefined;
  // The shard's content words (built without them: shard-builder.ts ShardJob.later), by the
  // builder's rule, document by document beside the symbols: a C file is copied into the
  // core once for both.
  let words: WordsBuilder | undefined = new WordsBuilder();
  try {
    for (let doc = 0; doc < shard.docCount; doc++) {
      const oid = previous ? shard.oid(doc) : undefined;
      const before = oid !== undefined ? previous?.get(`${shard.name(doc)}\0${oid}`) : undefined;
      const content = shard.contentOf(doc);
      words.add(doc, content);
      symbols.add(doc, shard.name(doc), content, before?.shard.symbolsOf(before.doc));
    }
    // Finished before the name postings take their large regions.
    const contentWords = encodeContentWords(words.finish(WORD_MIN_DOCS), WORD_MIN_DOCS);
    words = undefined;
    const built = symbols.finish(shard.docCount);
    const meta: SymbolsFileMeta = {
      shardContentHash: shard.contentChecksum,
      docCount: shard.docCount,
      symbolKinds: built.kinds,
      symbolFailures: built.failures,
      symbolExtraction: symbolExtraction(),
    };
    // Compressed like its shard (a history shard's: shard-format.ts COMPRESSIBLE_SECTIONS).
    writer = new ShardWriter(job.finalPath, SYMBOLS_FORMAT, shard.compressed);
    writer.finish(new Map([...built.sections, [SectionKind.ContentWords, contentWords], [SectionKind.Meta, packMeta(meta)]]));
    return { symbolCount: built.count, symbolFailures: built.failures, symbolsReused: symbols.reused };
  } catch (err) {
    words?.dispose();
    writer?.abort();
    throw err;
  } finally {
    shard.releasePages();
    if (previous) for (const s of cache!.shards) s.releasePages();
  }
}
