// Which parts of an index file have passed their checksums in this process: shared by every
// thread that reads the file, so that each is checked once per process, not once per thread.
//
// A file's checks are one SharedArrayBuffer (made by the searcher, searcher.ts, for each
// shard file and symbols file a search may open, and given to every search worker with the
// file: protocol.ts 'verified'):
//
//   bytes [0, SECTION_SLOTS)   one state per section kind (shard-format.ts SectionKind):
//                              UNCHECKED, PASSED or FAILED (a section the file lacks stays
//                              UNCHECKED)
//   bytes [SECTION_SLOTS, ...) a shard file's: one byte per document, non-zero once the
//                              document's content passed its own checksum (Shard.contentOf)
//
// When each part is checked:
//   - the header and the table of contents: every time the file is opened (a few hundred
//     bytes; shard-reader.ts readToc);
//   - the sections a search needs whole to interpret the file safely (AT_OPEN: the document
//     table, the paths, the metadata, the branch lists, the document groups): when the file is first opened in
//     the process (checkAtOpen). They are small next to the rest of the file;
//   - every other section (the n-gram tables and posting lists, the follow and segment
//     masks, the symbol records and index, the content words, the blob ids): by the scrub, a background
//     thread that reads one file at a time and yields to searches (section-scrub.ts). Until
//     then a search reads them unchecked: every reader of those sections bounds what it
//     reads by the section (a posting list decoder stops at its list's end and refuses an id
//     the shard does not have, a symbol record range lies within the records), so damage
//     there gives at worst a wrong candidate set, and candidates are checked against the
//     content, which keeps its per-document checksum. A failed check (found at open, or by
//     the scrub) marks the section FAILED: every open of the file fails from then on, and the
//     repository is reported broken (index-health.ts) as for any shard that fails its checks;
//   - the content: each document the first time it is read (its checksum is in the document
//     table).
// A file this process wrote (noteWritten: the index run hashed its sections as it wrote
// them) counts as checked, its sections and its documents.
//
// Without shared checks (a command that opens one shard: the symbols pass, a listing),
// Shard.open checks every section but the content at once, as it always did. An incremental
// run's plan, which reads only the list of documents, opens the previous shards with checks
// of their own and has the CATALOG sections checked (ShardOpenOptions.catalogOnly).

import { hash32, MalformedPostings } from '../../core/index.ts';
import { willNeed } from './mmap.ts';
import { SECTION_NAMES, SectionKind } from './shard-format.ts';

/**
 * Bytes of a section that are not what its format says, found by a reader that bounds what
 * it reads (the section may not be verified yet). The reader's caller names the file.
 */
export class SectionDamage extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SectionDamage';
  }
}

/** Whether `err` says that an index file is damaged (a reader's finding), rather than that a search failed otherwise. */
export function isDamage(err: unknown): err is Error {
  return err instanceof SectionDamage || err instanceof MalformedPostings;
}

/** More than any section kind's number. */
export const SECTION_SLOTS = 32;

export const UNCHECKED = 0;
export const PASSED = 1;
export const FAILED = 2;

/** Sections checked when the file is first opened (see above). */
export const AT_OPEN: ReadonlySet<SectionKind> = new Set([SectionKind.Docs, SectionKind.Names, SectionKind.Meta, SectionKind.Branches, SectionKind.DocGroups]);

/**
 * The sections a reader of the documents' list alone needs (AT_OPEN's and the blob ids):
 * what an incremental run's plan reads of the previous shards (delta.ts), checked at open
 * without hashing the large sections it never reads.
 */
export const CATALOG: ReadonlySet<SectionKind> = new Set([...AT_OPEN, SectionKind.Oids]);

/** A section's place and checksum, from the table of contents. */
export interface Section {
  offset: number;
  /** Stored bytes (compressed: the compressed bytes, compressed-section.ts). */
  length: number;
  hash: number;
  /** Stored compressed: decompressed, and so checked, when the file is opened. */
  compressed?: boolean;
}

/** New checks for a file of `docs` documents (0 for a symbols file), nothing checked yet. */
export function newChecks(docs: number): SharedArrayBuffer {
  return new SharedArrayBuffer(SECTION_SLOTS + docs);
}

/** The section states of checks. */
export function sectionStates(checks: SharedArrayBuffer): Uint8Array {
  return new Uint8Array(checks, 0, SECTION_SLOTS);
}

/** The per-document bytes of a shard file's checks, or undefined when they are not for `docCount` documents. */
export function documentChecks(checks: SharedArrayBuffer | undefined, docCount: number): Uint8Array | undefined {
  return checks !== undefined && checks.byteLength === SECTION_SLOTS + docCount ? new Uint8Array(checks, SECTION_SLOTS) : undefined;
}

/** Records every section and document of the file as checked (it was written by this process). */
export function markAllPassed(checks: SharedArrayBuffer): void {
  new Uint8Array(checks).fill(PASSED);
}

/** Why a section is corrupt: the text of the error the file's reader throws. */
export function corruptSection(kind: SectionKind): string {
  return `section ${SECTION_NAMES[kind]} is corrupt (checksum mismatch); re-index the repository`;
}

/**
 * Checks a file's sections when it is opened (see above) and returns why it cannot be used,
 * or undefined: with `checks`, the `atOpen` sections not yet checked in this process (and a
 * section found corrupt before fails it); without, every section but the content.
 * `written`: the caller wrote the file and hashed its sections then: nothing is read.
 */
export function checkAtOpen(
  map: Buffer,
  sections: ReadonlyMap<SectionKind, Section>,
  checks: SharedArrayBuffer | undefined,
  written: boolean,
  atOpen: ReadonlySet<SectionKind> = AT_OPEN,
): string | undefined {
  if (written) {
    if (checks) markAllPassed(checks);
    return undefined;
  }
  const states = checks ? sectionStates(checks) : undefined;
  // The sections about to be hashed, asked for at once (mmap.ts): from a cold page cache
  // they are read in a few concurrent requests, not page after page.
  for (const [kind, s] of sections) {
    if (kind !== SectionKind.Content && (!states || ((atOpen.has(kind) || s.compressed) && Atomics.load(states, kind) === UNCHECKED)))
      willNeed(map, s.offset, s.offset + s.length);
  }
  for (const [kind, s] of sections) {
    if (kind === SectionKind.Content) continue;
    const state = states ? Atomics.load(states, kind) : UNCHECKED;
    if (state === FAILED) return corruptSection(kind);
    // A compressed section is read whole at open (decompressed): checked then, as AT_OPEN's are.
    if (state === PASSED || (states && !atOpen.has(kind) && !s.compressed)) continue;
    if (hash32(map.subarray(s.offset, s.offset + s.length)) !== s.hash) {
      if (states) Atomics.store(states, kind, FAILED);
      return corruptSection(kind);
    }
    if (states) Atomics.store(states, kind, PASSED);
  }
  return undefined;
}

/**
 * Files this process wrote, their sections hashed as they were written (indexer.ts notes
 * them when it commits a manifest naming them): the searcher takes them as checked
 * (takeWritten). Bounded: the oldest are forgotten past WRITTEN_KEPT (they are then
 * scrubbed like any other).
 */
const written = new Set<string>();
const WRITTEN_KEPT = 10_000;

export function noteWritten(path: string): void {
  written.delete(path);
  written.add(path);
  if (written.size > WRITTEN_KEPT) written.delete(written.values().next().value!);
}

/** Whether this process wrote the file (noteWritten); forgets it. */
export function takeWritten(path: string): boolean {
  return written.delete(path);
}
