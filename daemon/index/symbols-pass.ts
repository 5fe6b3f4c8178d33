// The symbols pass: a shard built without symbols (its content committed and searchable
// already) written again with its symbol sections, as a new file. Every other section is
// copied as the first file holds it, checksums included, so that the documents, their
// numbers and the content's postings are the same bytes; only the symbol sections and the
// meta section (the symbols' kinds, counts, symbolsIndexed) are new. A full build of a
// large repository runs it after committing the content (indexer.ts), so that searching
// does not wait for ctags, which costs more than the rest of the build (Linux 6.1: ~20 s
// of ~34 s).

import { Shard } from './shard-reader.ts';
import { packMeta } from './shard-builder.ts';
import { SectionKind, type ShardMeta } from './shard-format.ts';
import { ShardWriter } from './shard-writer.ts';
import { SymbolSections } from './symbol-sections.ts';

export interface SymbolsJob {
  /** The shard built without symbols. */
  from: string;
  /** Where the shard with symbols goes (written atomically, as every shard). */
  finalPath: string;
}

export interface SymbolsResult {
  symbolCount: number;
  symbolFailures: number;
}

export function addSymbols(job: SymbolsJob): SymbolsResult {
  const shard = Shard.open(job.from);
  const symbols = new SymbolSections(true);
  for (let doc = 0; doc < shard.docCount; doc++) symbols.add(doc, shard.name(doc), shard.contentOf(doc));
  const built = symbols.finish(shard.docCount);
  const raw = shard.rawSections();
  const meta: ShardMeta = { ...shard.meta, symbolKinds: built.kinds, symbolFailures: built.failures, symbolsIndexed: true };
  const rest = new Map<SectionKind, Uint8Array>();
  for (const [kind, s] of raw) if (kind !== SectionKind.Content) rest.set(kind, s.bytes);
  for (const [kind, bytes] of built.sections) rest.set(kind, bytes);
  rest.set(SectionKind.Meta, packMeta(meta));
  const writer = new ShardWriter(job.finalPath);
  try {
    const content = raw.get(SectionKind.Content)!;
    writer.appendContent(content.bytes);
    writer.finish(content.hash, rest);
  } catch (err) {
    writer.abort();
    throw err;
  } finally {
    shard.releasePages();
  }
  return { symbolCount: built.count, symbolFailures: built.failures };
}
