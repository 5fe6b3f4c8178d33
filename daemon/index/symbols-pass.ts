// The symbols pass: a shard built without symbols (its content committed and searchable
// already) written again with its symbol sections, as a new file. Every other section is
// copied as the first file holds it, checksums included, so that the documents, their
// numbers and the content's postings are the same bytes; only the symbol sections and the
// meta section (the symbols' kinds, counts, symbolsIndexed) are new. A full build of a
// large repository runs it after committing the content (indexer.ts), so that searching
// does not wait for the symbols, which cost more than the rest of the build (Linux 6.1:
// ~11.5 s of ~18.8 s). The sections before the symbols ones are not rewritten: the new file
// starts as a kernel copy of the old (ShardWriter.continuing). A document whose path and blob the repository's previous index held takes its
// definitions from there (SymbolsJob.previous).

import { symbolExtraction } from '../symbols/extract.ts';
import { Shard } from './shard-reader.ts';
import { packMeta } from './shard-builder.ts';
import { SECTION_ORDER, SHARD_VERSION, SectionKind, type ShardMeta } from './shard-format.ts';
import { ShardWriter, type SectionEntry } from './shard-writer.ts';
import { SymbolSections } from './symbol-sections.ts';

export interface SymbolsJob {
  /** The shard built without symbols. */
  from: string;
  /** Where the shard with symbols goes (written atomically, as every shard). */
  finalPath: string;
  /**
   * Shards of the repository's previous index, with their symbols: a document whose path
   * and blob one of them holds takes its definitions from there instead of from ctags (a
   * full rebuild of a git repository re-reads every file, but most are unchanged).
   */
  previous?: string[];
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
function previousDocs(paths: readonly string[]): Map<string, { shard: Shard; doc: number }> {
  const found = new Map<string, { shard: Shard; doc: number }>();
  for (const path of paths) {
    let shard: Shard;
    try {
      shard = Shard.open(path);
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
  const shard = Shard.open(job.from);
  // The documents are views of the shard's mapping, which outlives the sections' build.
  const symbols = new SymbolSections(true, true);
  let previous: Map<string, { shard: Shard; doc: number }> | undefined;
  if (job.previous && job.previous.length > 0) {
    const key = job.previous.join('\0');
    if (cache?.key !== key) {
      const docs = previousDocs(job.previous);
      cache = { key, docs, shards: [...new Set([...docs.values()].map((p) => p.shard))] };
    }
    previous = cache.docs;
  }
  for (let doc = 0; doc < shard.docCount; doc++) {
    const oid = previous ? shard.oid(doc) : undefined;
    const before = oid !== undefined ? previous?.get(`${shard.name(doc)}\0${oid}`) : undefined;
    symbols.add(doc, shard.name(doc), shard.contentOf(doc), before?.shard.symbolsOf(before.doc));
  }
  const built = symbols.finish(shard.docCount);
  const raw = shard.rawSections();
  const meta: ShardMeta = { ...shard.meta, symbolKinds: built.kinds, symbolFailures: built.failures, symbolsIndexed: true, symbolExtraction: symbolExtraction() };
  const rest = new Map<SectionKind, Uint8Array>();
  for (const [kind, s] of raw) if (kind !== SectionKind.Content) rest.set(kind, s.bytes);
  for (const [kind, bytes] of built.sections) rest.set(kind, bytes);
  rest.set(SectionKind.Meta, packMeta(meta));
  // The sections before the symbols ones are kept as the kernel copies them (most of the
  // file: the content and its postings); the others are written after them. A file of
  // another version (another table size) is written in full.
  const keep: SectionEntry[] = [];
  if (shard.version === SHARD_VERSION) {
    for (const kind of SECTION_ORDER) {
      if (kind === SectionKind.Symbols) break;
      const s = raw.get(kind)!;
      keep.push({ kind, hash: s.hash, offset: s.offset, length: s.bytes.length });
    }
  }
  const knownHashes = new Map([...raw].filter(([kind]) => !built.sections.has(kind) && kind !== SectionKind.Meta).map(([kind, s]) => [kind, s.hash]));
  let writer: ShardWriter | undefined;
  try {
    const content = raw.get(SectionKind.Content)!;
    if (keep.length > 0) writer = ShardWriter.continuing(job.finalPath, job.from, keep);
    else {
      writer = new ShardWriter(job.finalPath);
      writer.appendContent(content.bytes);
    }
    writer.finish(content.hash, rest, knownHashes);
  } catch (err) {
    writer?.abort();
    throw err;
  } finally {
    shard.releasePages();
    if (previous) for (const s of cache!.shards) s.releasePages();
  }
  return { symbolCount: built.count, symbolFailures: built.failures, symbolsReused: symbols.reused };
}
