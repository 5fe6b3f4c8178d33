// Reads a shard file, memory-mapped read-only.
//
// # The shard format, version 10 (history in shard-format.ts)
//
// A repository is indexed into one or more shard files (`<repoId>/g<generation>-<n>.trawl`
// in the data dir, listed by the repository's manifest.json), or, when it is small, into a
// compound shard with other small repositories (`packs/p<generation>-<n>.trawl`, named by
// each of their manifests: pack-build.ts). A compound shard has the same layout; its meta
// lists the repositories, each holding a contiguous range of the documents and of the
// branch lists (below: members). All integers are
// little-endian; "u64" values are stored as two u32 (low, high). Every section starts at a
// multiple of 8 bytes so that typed-array views over the mapping are aligned.
//
//   offset 0   header, 64 bytes
//     0   magic          8 bytes  "TRAWLIDX"
//     8   version        u32      10
//     12  headerSize     u32      64
//     16  fileSize       u64      the whole file; a shorter file is truncated
//     24  sectionCount   u32      18 in versions 9 and 10 (17 in version 8, 16 in versions 6
//                                 and 7, 15 in version 5, 14 in version 4, 13 in version 3, 11
//                                 in version 2)
//     28  tocHash        u32      xxHash32 (seed 0) of the table of contents
//     32  reserved       28 bytes zero
//     60  headerHash     u32      xxHash32 of bytes 0..59
//   offset 64  table of contents: sectionCount entries of 24 bytes
//     0   kind u32 (shard-format.ts SectionKind; version 10: its top bit SECTION_COMPRESSED set
//         when the section is stored compressed, compressed-section.ts)   4  hash u32
//     8   offset u64                               16 length u64 (of the stored bytes)
//   then the sections, in this order:
//     content           the indexed files' bytes, concatenated, no separators; (version 9)
//                       in a shard built with version deltas (the history index's), what
//                       is stored of a document may be a delta against the document before
//                       it, and deflated (flag bits 2 and 3 below; Version deltas, below)
//     docs              32 bytes per document, documents in static-rank order (file-class.ts:
//                       plain files, then documentation, tests, vendored, generated;
//                       shallower first; then path; a path's versions adjacent, in the
//                       order the builder was given them). Shards built before trawl-shard-builder/2 (meta.builder) are in
//                       path order; nothing a reader does depends on the order: a document is
//                       found by number, names through the name trigrams, and listings sort
//                       by path themselves (http/catalog.ts)
//                         0 nameOff u32 (into names)   4 nameLen u32
//                         8 contentOff u32 (into content)  12 contentLen u32
//                         16 contentHash u32 (xxHash32 of the document's bytes)
//                         20 storedLen u32 (version 9: with bit 2 or 3 of flags, the
//                            bytes stored at contentOff; else 0, the document stored as
//                            it is, contentLen bytes)
//                         24 language u16 (index into meta.languages)
//                         26 flags u16 (bit 0: contains "\r\n"; bit 1: holds neither
//                            U+212A nor U+017F, so ASCII case folding is exact on it;
//                            bit 2 (version 9): stored as a delta against the document
//                            before it; bit 3 (version 9): what is stored is deflated;
//                            shard-format.ts DOC_FLAG_*)   28 reserved u32
//     names             the documents' paths (UTF-8), concatenated
//     content-ngrams    every trigram that occurs, ascending, with the number of documents
//                       (groups, when doc-groups is not empty) holding it and where its list
//                       is in content-postings; layout in ngram-table.ts, which reads it
//     content-postings  each list: ascending document numbers (group numbers, when doc-groups
//                       is not empty), LEB128 varint deltas (core/index.ts documents the exact
//                       encoding; decodePostings reads it)
//     name-ngrams       as content-ngrams, over the paths
//     name-postings     as content-postings, always by document
//     symbols           definitions found by universal-ctags: per document, its records by
//                       line (name, kind, lines, parent); layout and a worked example in
//                       symbol-records.ts, which reads it
//     symbol-ngrams     as content-ngrams, over the symbol index's names (a posting is a
//                       name number; version 2 and 3: a document, over each document's
//                       symbol names joined by "\n")
//     symbol-postings   as content-postings
//     branches          which documents each branch or tag holds: one posting list per
//                       branch (encoding documented in branch-set.ts); each repository's
//                       lists are a range of them, its default branch first (names[0] in a
//                       shard of one repository). A document on no branch is dead (replaced
//                       by a later version); an incremental run may override this section
//                       with a membership file named by the manifest (never for a compound
//                       shard: its repositories are rebuilt whole).
//     oids              20 bytes per document: its git blob id (zeros for a directory's files)
//     symbol-index      (version 4) the distinct symbol names, sorted, each with its
//                       definitions (record, where the name is in the file); layout and a
//                       worked example in symbol-index.ts, which reads it
//     content-follow    (version 5) one byte per content posting: which folded bytes
//                       follow the trigram in that document (in a group: in any of its
//                       documents; a 4-gram test at one byte per posting); layout in
//                       ngram-table.ts, which reads it
//     content-words     (version 6) the documents holding each word (a run of [A-Za-z0-9_],
//                       3-64 bytes) found in at least 8 of the shard's documents: a
//                       document listed under a literal's bytes holds that literal; layout
//                       and a worked example in content-words.ts, which reads it
//     content-segments  (version 8) for each content posting of a document of at least
//                       64 KB, which 4 KB segments of it hold the trigram: a literal's
//                       large candidate is ruled out when no segment can start it, and
//                       otherwise read only there; empty when the shard has no such
//                       document; layout and a worked example in content-segments.ts,
//                       which reads it. Grouped postings: for each posting of a group
//                       whose largest document has at least 64 KB, the OR of its
//                       documents' masks (none when one of them folds to another length)
//     doc-groups        (version 9) empty: the content postings, follow bytes and segment
//                       masks are by document. Else the groups they are by: each group's
//                       first document, ascending from 0, then the document count (u32
//                       each); a group is a run of adjacent documents with the same path (a
//                       history shard's versions of one file), its trigrams the union of its
//                       documents'. A candidate group stands for all its documents, each
//                       decided on its own bytes; layout and a worked example in
//                       doc-groups.ts, which reads it
//     meta              msgpack (records enabled, self-describing): ShardMeta in
//                       shard-format.ts: repository and its flags, shard index,
//                       languages, symbol kinds, skipped files with reasons, options;
//                       (version 7) members: per repository its record, its documents
//                       [first, end) and its branch lists [branchFirst, branchEnd), the
//                       ranges following one another from 0 (a shard of one repository has
//                       one member; older shards are read as one holding everything)
//
// Trigrams are taken over "folded" bytes (core/index.ts foldBytes: ASCII upper case to
// lower case, and the two non-ASCII code points that fold to ASCII), so one index serves
// case-sensitive and case-insensitive queries; a trigram id is b0<<16 | b1<<8 | b2.
//
// Checksums: every section has an xxHash32 in the table of contents. The header and the
// table are verified at every open. The content section's hash is the xxHash32 of the
// documents' contentHash values (u32 little-endian, in document order); each document is
// verified against its own contentHash the first time it is read (a document stored as a
// delta or deflated: its bytes once rebuilt), so a search reads no content byte it has not
// checked. The other sections are verified once per process (section-checks.ts says
// when): the docs, names, meta and branches sections when the file is first opened, and so
// is a compressed section (decompressed then); the rest (n-gram tables, postings, follow
// and segment masks, symbols, content words, oids) by a background scrub that yields to
// searches. A search may read those before the scrub reaches them: their readers bound
// every read by the section (a posting list's ids must be strictly ascending and below the
// document count, a table row's list must lie within the postings, a document's symbol
// records within the records), so a damaged section gives at worst a wrong candidate set
// (every candidate is still checked against its verified content: a wrong set can miss
// matches, never add a false one) or fails the shard cleanly, never a crash or a hang; once
// the scrub finds the damage, the repository is reported broken and left out. An opener
// without shared checks (a command reading one shard) verifies every section at open.
//
// ## Worked example
//
// A directory with one file `a.c` holding "int x;\n" (7 bytes) becomes a shard whose first
// bytes are:
//
//   54 52 41 57 4c 49 44 58   "TRAWLIDX"
//   0a 00 00 00               version 10
//   40 00 00 00               header size 64
//   .. .. .. .. 00 00 00 00   file size (low, high)
//   12 00 00 00               18 sections
//   ...                       tocHash, reserved, headerHash
//   01 00 00 00 hh hh hh hh   toc[0]: kind 1 (content), hash
//   f0 01 00 00 00 00 00 00   offset 496 = 64 + 18*24 (already a multiple of 8)
//   07 00 00 00 00 00 00 00   length 7
//   ...
//   offset 496: 69 6e 74 20 78 3b 0a   "int x;\n"
//
// The docs section holds one record {nameOff 0, nameLen 3, contentOff 0, contentLen 7, ...};
// names holds "a.c"; content-ngrams lists the 5 trigrams "int" "nt " "t x" " x;" "x;\n"
// (ids 0x696e74, 0x6e7420, ...), each with count 1; each of their lists in
// content-postings is the single byte 00 (document 0). content-follow holds one byte per
// trigram in ascending id order: " x;" 04 ("\n" is 0x0a, bit 2), "int" 01 (" " 0x20, bit 0),
// "nt " 01 ("x" 0x78), "t x" 08 (";" 0x3b, bit 3), "x;\n" 01 (the end: the builder reads a
// zero there). ctags finds the variable x: the
// symbols section holds one record {name "x", kind "variable", line 1, endLine 1}. The
// branches section names one branch, HEAD, whose list is the byte 00; oids is 20 zeros. The
// symbol index holds one name "x" with one definition (record 0, start 4). content-words
// lists no word: "int" is in one document, fewer than 8; content-segments is empty (the
// document is under 64 KB); doc-groups is empty (postings by document). meta.members holds one member:
// the repository, documents [0, 1), branch lists [0, 1).
//
// ## Version deltas (version 9)
//
// The history index builds its shards with version deltas (shard-builder.ts
// ShardJob.versionDeltas; version-deltas.ts decides): a path's versions are adjacent
// documents, oldest first. A version whose document before it is a version of the same
// path is stored as a delta against it (flag bit 2; the delta encoding and a worked
// example are in content-delta.ts, which reads it), unless its chain would hold more than
// DELTA_CHAIN_MAX - 1 = 15 deltas or the delta is not shorter; what is stored (the bytes or
// the delta) is deflated (raw deflate, RFC 1951; flag bit 3) when it is at least 1 KB and
// deflating makes it shorter. contentLen and contentHash stay the document's own;
// storedLen is what the content section holds of it. A reader follows a delta's chain back
// to the document not stored as a delta that starts it (at most 15 documents back: a
// longer chain, or a delta at document 0, is corrupt), inflates and applies the deltas
// forward, and checks each version rebuilt against its contentHash (stored-versions.ts).
// Example: three versions of `a.c`, "int a;\n" (7 bytes), "int a;\nint b;\n" (14) and
// "int a;\nint b;\nint c;\n" (21), are documents 0, 1, 2 with contentLen 7, 14, 21:
//
//   document 0  contentOff 0   storedLen 0   flags 0  content: 69 6e 74 20 61 3b 0a ("int a;\n")
//   document 1  contentOff 7   storedLen 10  flags 4  content: 0f 00 (copy 7 bytes from 0)
//                                                     0e 69 6e 74 20 62 3b 0a (literal "int b;\n")
//   document 2  contentOff 17  storedLen 10  flags 4  content: 1d 00 (copy 14 bytes from 0)
//                                                     0e 69 6e 74 20 63 3b 0a (literal "int c;\n")
//
// The content section is 27 bytes for 42. None is deflated: each is under 1 KB.

import { Unpackr } from 'msgpackr';
import { hash32 } from '../../core/index.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { BranchSet, readMembershipFile } from './branch-set.ts';
import type { SymbolIndex } from './symbol-index.ts';
import { SymbolRecords } from './symbol-records.ts';
import { ContentWords } from './content-words.ts';
import { ContentSegments } from './content-segments.ts';
import { DocGroups } from './doc-groups.ts';
import { NgramTable } from './ngram-table.ts';
import { mmap, willNeed } from './mmap.ts';
import { AT_OPEN, CATALOG, checkAtOpen, documentChecks, newChecks, PASSED, sectionStates, type Section } from './section-checks.ts';
import { ShardError } from './shard-error.ts';
import { decompressSection } from './compressed-section.ts';
import { mapFile, readToc } from './section-file.ts';
import { StoredVersions } from './stored-versions.ts';
import {
  DOC_FLAG_ASCII_FOLDS_ONLY,
  DOC_RECORD_SIZE,
  OID_SIZE,
  SECTION_NAMES,
  SHARD_FORMAT,
  SYMBOLS_FORMAT,
  SectionKind,
  type ShardMember,
  type ShardMeta,
  type SymbolsFileMeta,
} from './shard-format.ts';

/** Repository flags a search filters on. */
export interface RepoFacts {
  name: string;
  archived: boolean;
  fork: boolean;
  visibility: 'public' | 'private';
}

/** What a shard knows about a repository of it, for the match tree to decide filters before reading a document (search/match-tree.ts). */
export interface ShardFacts {
  repoName: string;
  /** The repository's branches and tags in the shard; [0] is the default branch. */
  branches: readonly string[];
  archived: boolean;
  fork: boolean;
  visibility: 'public' | 'private';
  languages: readonly string[];
}

const unpackr = new Unpackr({ useRecords: true });

/** The files a manifest names with a shard (manifest.ts ManifestShard), and what threads share of it. */
export interface ShardOpenOptions {
  /** A membership file that replaces the shard's own branch lists (an incremental run's: branch-set.ts). */
  membership?: string;
  /** A symbols file whose symbol sections replace the shard's (the symbols pass's: shard-format.ts). */
  symbols?: string;
  /**
   * The file's checks shared with the other threads that read it (section-checks.ts: its
   * sections' states, then a byte per document; ignored when not made for the shard's
   * document count): its sections are then checked once per process, and the large ones
   * by the scrub, not here. Without, every section is checked at open.
   */
  verified?: SharedArrayBuffer;
  /** The symbols file's checks, as `verified` (section-checks.ts). */
  symbolsVerified?: SharedArrayBuffer;
  /**
   * Only the sections that list the documents are checked (section-checks.ts CATALOG: the
   * document table, paths, metadata, branch lists, groups and blob ids), with checks of the
   * shard's own (`verified` is ignored): for a reader of that list alone, an incremental
   * run's plan (delta.ts), which would otherwise hash every posting list of the repository
   * on each push. Such a shard says its sections are not all checked (sectionsChecked) and
   * is not for searching.
   */
  catalogOnly?: boolean;
  /**
   * The shard is taken as checked, its sections and its documents: the build that wrote it
   * moments ago, from the bytes it hashed, reads it back (symbols-pass.ts: hashing the
   * content again, and the posting lists, which the pass does not even read, would only
   * repeat the build's work). The header and the table of contents are checked still.
   */
  writtenByCaller?: boolean;
}

export class Shard {
  readonly path: string;
  readonly meta: ShardMeta;
  readonly docCount: number;
  readonly fileSize: number;
  readonly content: NgramTable;
  readonly names: NgramTable;
  /** The symbol definitions of the documents (symbol-records.ts); the symbol* methods below read them. */
  readonly symbols: SymbolRecords;
  /**
   * Trigrams of symbol names: with a symbol index (version 4) a posting is a block of the
   * index's names; without (versions 2 and 3) it is a document.
   */
  readonly symbolNames: NgramTable;
  /** The documents holding each common word (version 6 shards; content-words.ts). */
  readonly contentWords: ContentWords | undefined;
  /** Segment masks of the large documents' content postings (version 8, when it has such documents); of a grouped shard, of its large groups. */
  readonly contentSegments: ContentSegments | undefined;
  /**
   * The groups its content postings are numbered by (version 9, doc-groups.ts); undefined:
   * by document. What `content` finds is then groups: unitDocs turns them into documents.
   */
  readonly groups: DocGroups | undefined;
  readonly version: number;
  /**
   * The branches and tags holding each document: the shard's own section, or the
   * membership file an incremental run wrote for it (branch-set.ts).
   */
  readonly branches: BranchSet;
  /**
   * The repositories of the shard, by document range (shard-format.ts ShardMember): a
   * compound shard's several, else one holding every document and branch.
   */
  readonly members: readonly ShardMember[];
  /** Bytes of each section by name (SECTION_NAMES), for size reports. */
  readonly sectionBytes: ReadonlyMap<string, number>;
  /** The whole mapping; the sections below are views into it. */
  private readonly map: Buffer;
  /** The symbols file's mapping, when the manifest names one: the symbol sections are views into it. */
  private readonly symbolsMap: Buffer | undefined;
  /** The table of contents: each section's place and checksum. */
  private readonly toc: Map<SectionKind, Section>;
  /** Whether the shard stores sections compressed (compressed-section.ts): a history shard, whose symbols file is compressed too. */
  readonly compressed: boolean;
  private readonly languageDocs = new Map<number, Uint32Array>();
  /** Each group's largest document, in bytes (made at first use: the segment windows ask per candidate group, per list read). */
  private groupLengths: Uint32Array | undefined;
  private readonly docs: Buffer;
  private readonly nameBytes: Buffer;
  private readonly contentBytes: Buffer;
  private readonly verified: Uint8Array;
  /** The documents as the content section stores them (stored-versions.ts). */
  private readonly stored: StoredVersions;
  private readonly oids: Buffer | undefined;

  /**
   * Reads the tables of contents, the documents and the metadata, then the section
   * readers; each step throws ShardError when what it reads cannot be used.
   */
  private constructor(path: string, map: Buffer, options: ShardOpenOptions, symbolsMap: Buffer | undefined) {
    this.path = path;
    this.map = map;
    this.symbolsMap = symbolsMap;
    this.fileSize = map.length;
    this.version = map.length >= 12 ? map.readUInt32LE(8) : 0;
    const files = readSections(path, map, options, symbolsMap);
    const section = files.section;
    this.toc = files.shard;
    this.compressed = [...files.shard.values()].some((s) => s.compressed === true);
    this.sectionBytes = files.bytes;
    this.docs = section(SectionKind.Docs);
    this.docCount = documentCount(path, this.docs, this.contentChecksum);
    const added =
      files.symbolsMeta && readSymbolsMeta(options.symbols!, files.symbolsMeta, { path, docCount: this.docCount, contentChecksum: this.contentChecksum });
    this.meta = readMeta(path, section(SectionKind.Meta), added);
    this.nameBytes = section(SectionKind.Names);
    this.contentBytes = section(SectionKind.Content);
    const follow = this.version >= 5 ? section(SectionKind.ContentFollow) : undefined;
    const limit = this.docCount;
    if (this.version >= 9 && section(SectionKind.DocGroups).length > 0) this.groups = named(path, () => new DocGroups(section(SectionKind.DocGroups), limit));
    // A grouped shard's content postings are groups: a candidate reads all its documents.
    const units = this.groups?.count ?? limit;
    this.content = new NgramTable(section(SectionKind.ContentNgrams), section(SectionKind.ContentPostings), {
      path,
      limit: units,
      // (What a candidate costs to read is its real bytes, which a shard of version deltas
      // stores fewer of; a group's candidate reads all of its documents.)
      bytesPerCandidate: (this.version >= 9 ? this.meta.contentBytes : this.contentBytes.length) / Math.max(1, units),
      follow,
    });
    this.names = new NgramTable(section(SectionKind.NameNgrams), section(SectionKind.NamePostings), { path, limit });
    this.symbols = new SymbolRecords(
      path,
      section(SectionKind.Symbols),
      this.version >= 4 ? section(SectionKind.SymbolIndex) : undefined,
      this.docCount,
      this.meta.symbolKinds,
    );
    // A posting of the symbol names' trigrams is a block of the symbol index's names (version 4) or a document.
    const index = this.symbols.index;
    this.symbolNames = new NgramTable(section(SectionKind.SymbolNgrams), section(SectionKind.SymbolPostings), {
      path,
      limit: index ? Math.ceil(index.nameCount / index.namesPerBlock) : limit,
    });
    if (this.version >= 6) this.contentWords = named(path, () => new ContentWords(section(SectionKind.ContentWords), limit));
    if (this.version >= 8 && section(SectionKind.ContentSegments).length > 0) {
      this.contentSegments = named(
        path,
        () => new ContentSegments(section(SectionKind.ContentSegments), units, this.content.ids.length, (unit) => this.unitLength(unit)),
      );
    }
    // Shared between the threads that open the same file (search/pool.ts), so that each
    // document is checked once per process, not once per thread.
    this.verified = documentChecks(files.checks, this.docCount) ?? new Uint8Array(this.docCount);
    this.sharedChecks = options.writtenByCaller
      ? []
      : [
          [files.shard, files.checks],
          [files.symbols, options.symbolsVerified],
        ].flatMap(([toc, checks]) =>
          toc && checks ? [{ toc: toc as ReadonlyMap<SectionKind, Section>, states: sectionStates(checks as SharedArrayBuffer) }] : [],
        );
    if (options.writtenByCaller) this.verified.fill(1);
    this.stored = new StoredVersions({
      path,
      version: this.version,
      docs: this.docs,
      content: this.contentBytes,
      verified: this.verified,
      name: (doc) => this.name(doc),
    });
    if (this.version >= 3) {
      this.oids = section(SectionKind.Oids);
      if (this.oids.length !== this.docCount * OID_SIZE) throw new ShardError(path, 'blob id table does not match the document table');
    }
    const membership = options.membership;
    this.branches = named(path, () =>
      membership !== undefined
        ? readMembershipFile(membership)
        : this.version >= 3
          ? new BranchSet(section(SectionKind.Branches), path)
          : BranchSet.everyDoc([this.meta.repo.branch], this.docCount),
    );
    this.members = readMembers(path, this.meta, this.docCount, this.branches.names.length, membership !== undefined);
  }

  /** The sections left to the scrub, with the states other threads see (none: every section was checked at open). */
  private readonly sharedChecks: Array<{ toc: ReadonlyMap<SectionKind, Section>; states: Uint8Array }>;
  private allChecked = false;

  /**
   * Whether every section of the shard (and its symbols file) but the content has passed its
   * checksum: at open, or since, by the scrub (section-checks.ts). Until then a reader may
   * meet damage it cannot tell from data: what an answer must not trust (a negation decided
   * from the index alone) is decided from the checked content instead.
   */
  sectionsChecked(): boolean {
    if (this.allChecked) return true;
    for (const { toc, states } of this.sharedChecks) {
      for (const kind of toc.keys()) if (kind !== SectionKind.Content && states[kind] !== PASSED) return false;
    }
    this.allChecked = true;
    return true;
  }

  /**
   * Opens and checks a shard (and the files the manifest names with it: ShardOpenOptions);
   * throws ShardError with a readable reason.
   */
  static open(path: string, options: ShardOpenOptions = {}): Shard {
    const map = mapFile(path, SHARD_FORMAT);
    const symbolsMap = options.symbols !== undefined ? mapFile(options.symbols, SYMBOLS_FORMAT) : undefined;
    return new Shard(path, map, options, symbolsMap);
  }

  /** The content section's checksum (the xxHash32 of its documents' checksums): what a symbols file names its shard by. */
  get contentChecksum(): number {
    return this.toc.get(SectionKind.Content)!.hash;
  }

  name(doc: number): string {
    const o = doc * DOC_RECORD_SIZE;
    const off = this.docs.readUInt32LE(o);
    return this.nameBytes.toString('utf8', off, off + this.docs.readUInt32LE(o + 4));
  }

  nameBuffer(doc: number): Buffer {
    const o = doc * DOC_RECORD_SIZE;
    const off = this.docs.readUInt32LE(o);
    return this.nameBytes.subarray(off, off + this.docs.readUInt32LE(o + 4));
  }

  /** The document's git blob id (40 hex digits), or undefined (directories, version 2 shards). */
  oid(doc: number): string | undefined {
    if (!this.oids) return undefined;
    const hex = this.oids.toString('hex', doc * OID_SIZE, (doc + 1) * OID_SIZE);
    return hex === ZERO_OID ? undefined : hex;
  }

  contentLength(doc: number): number {
    return this.docs.readUInt32LE(doc * DOC_RECORD_SIZE + 12);
  }

  // A content posting (a "unit") is a document, or in a grouped shard a group of them.

  /** The documents of ascending content postings `units`, ascending. */
  unitDocs(units: Uint32Array): Uint32Array {
    return this.groups === undefined ? units : this.groups.docs(units);
  }

  /** The content posting standing for document `doc`. */
  unitOf(doc: number): number {
    return this.groups === undefined ? doc : this.groups.of(doc);
  }

  /** The documents content posting `unit` stands for. */
  unitSize(unit: number): number {
    return this.groups === undefined ? 1 : this.groups.size(unit);
  }

  /** The bytes of content posting `unit`'s largest document (its segment masks are that wide). */
  unitLength(unit: number): number {
    const groups = this.groups;
    if (groups === undefined) return this.contentLength(unit);
    if (this.groupLengths === undefined) {
      const lengths = new Uint32Array(groups.count);
      for (let g = 0; g < groups.count; g++) lengths[g] = groups.maxOf(g, (d) => this.contentLength(d));
      this.groupLengths = lengths;
    }
    return this.groupLengths[unit]!;
  }

  language(doc: number): string {
    return this.meta.languages[this.languageIndex(doc)] ?? '';
  }

  /** Index of the document's language in meta.languages. */
  languageIndex(doc: number): number {
    return this.docs.readUInt16LE(doc * DOC_RECORD_SIZE + 24);
  }

  /** Whether the builder found that the document holds no code point whose case folding reaches ASCII (false also when not known). */
  asciiFoldsOnly(doc: number): boolean {
    return (this.docs.readUInt16LE(doc * DOC_RECORD_SIZE + 26) & DOC_FLAG_ASCII_FOLDS_ONLY) !== 0;
  }

  /** The documents in a language (an index into meta.languages), ascending; computed once. */
  docsWithLanguage(lang: number): Uint32Array {
    let docs = this.languageDocs.get(lang);
    if (!docs) {
      const out: number[] = [];
      for (let d = 0; d < this.docCount; d++) if (this.languageIndex(d) === lang) out.push(d);
      docs = Uint32Array.from(out);
      this.languageDocs.set(lang, docs);
    }
    return docs;
  }

  /**
   * What the match tree may decide about member `member` of this shard without reading a
   * document. The repository's current flags (from its manifest) override the ones stored
   * at build time.
   */
  facts(member: number, repo?: RepoFacts): ShardFacts {
    const m = this.members[member]!;
    const r = repo ?? m.repo;
    const names = this.branches.names;
    const branches = m.branchFirst === 0 && m.branchEnd === names.length ? names : names.slice(m.branchFirst, m.branchEnd);
    return { repoName: r.name, branches, archived: r.archived, fork: r.fork, visibility: r.visibility, languages: this.meta.languages };
  }

  /** The member holding document `doc` (members hold ascending ranges). */
  memberOf(doc: number): number {
    const members = this.members;
    let lo = 0;
    let hi = members.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (members[mid]!.first <= doc) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  // The reads of the symbol records, as the searches and the results make them: each is
  // SymbolRecords' read of the same name (symbol-records.ts says what it returns).

  /** The sorted symbol names and their definitions (version 4 shards; symbol-index.ts). */
  get symbolIndex(): SymbolIndex | undefined {
    return this.symbols.index;
  }

  /** The document owning symbol record `record`. */
  symbolDoc(record: number): number {
    return this.symbols.docOf(record);
  }

  /** The first symbol record past document `doc`'s. */
  symbolsEnd(doc: number): number {
    return this.symbols.endOf(doc);
  }

  /** The symbol definitions of a document, by line. */
  symbolsOf(doc: number): SymbolDef[] {
    return this.symbols.of(doc);
  }

  /** The document's definitions whose line span overlaps one of `spans` ([first, last] line pairs). */
  symbolsOverlapping(doc: number, spans: Array<[number, number]>): SymbolDef[] {
    return this.symbols.overlapping(doc, spans);
  }

  /** The records of the document's definitions whose line span overlaps one of the spans (SymbolRecords.recordsOverlapping). */
  symbolRecordsOverlapping(doc: number, flat: ArrayLike<number>, stride: 2 | 4): number[] {
    return this.symbols.recordsOverlapping(doc, flat, stride);
  }

  symbolLine(record: number): number {
    return this.symbols.line(record);
  }

  symbolEndLine(record: number): number {
    return this.symbols.endLine(record);
  }

  symbolName(record: number): { buf: Buffer; start: number; end: number } {
    return this.symbols.name(record);
  }

  symbolKindId(record: number): number {
    return this.symbols.kindId(record);
  }

  symbolParent(record: number): { buf: Buffer; start: number; end: number; kind: string } | undefined {
    return this.symbols.parent(record);
  }

  /** The kinds of the document's definitions whose name is exactly one of the ranges (SymbolRecords.definitionsAt). */
  definitionsAt(doc: number, ranges: number[], lines?: number[]): string[] | null {
    return this.symbols.definitionsAt(doc, ranges, lines);
  }

  /**
   * Drops the pages of the file this process has read from its resident set (the page
   * cache keeps them; a later read maps them back in). The mapping itself lives until the
   * Shard is collected, which a worker that reads one shard after another (the symbols
   * pass) may not do for a long time: without this, every shard it read stays counted in
   * its RSS, which then grows with the repository instead of with one shard.
   */
  releasePages(): void {
    mmap.advise(this.map, 0, this.map.length, mmap.MADV_DONTNEED);
    if (this.symbolsMap) mmap.advise(this.symbolsMap, 0, this.symbolsMap.length, mmap.MADV_DONTNEED);
  }

  /**
   * Asks for the document's bytes to be read ahead of its reading (mmap.ts willNeed), unless
   * a thread has read them already (then they are most likely in memory): what is stored of
   * it, and of a delta its chain's (stored-versions.ts). Returns the bytes asked for.
   */
  readAhead(doc: number): number {
    if (this.verified[doc] !== 0) return 0;
    const range = this.stored.storedRange(doc);
    if (range === undefined) return 0;
    willNeed(this.contentBytes, range.start, range.end);
    return range.end - range.start;
  }

  /**
   * The document's bytes, checked against its checksum the first time it is read: a view
   * into the mapping, or of a document stored deflated or as a delta (version 9), its bytes
   * rebuilt (stored-versions.ts). Throws ShardError when the bytes are corrupt.
   */
  contentOf(doc: number): Buffer {
    return this.stored.contentOf(doc);
  }
}

/**
 * The shard's members (version 7), checked: ranges of documents and of branch lists that
 * follow one another from 0 to the end, each member with a default branch. Older shards
 * hold one repository: one member with every document and branch. A membership file
 * (an incremental run's) replaces the lists of a one-member shard only.
 */
function readMembers(path: string, meta: ShardMeta, docCount: number, branchCount: number, membership: boolean): ShardMember[] {
  const listed = meta.members;
  if (listed === undefined) return [{ repo: meta.repo, first: 0, end: docCount, branchFirst: 0, branchEnd: branchCount, skipped: meta.skipped }];
  if (!Array.isArray(listed) || listed.length === 0) throw new ShardError(path, 'lists no repository');
  if (membership) {
    if (listed.length !== 1) throw new ShardError(path, 'a compound shard cannot take a membership file');
    return [{ ...listed[0]!, branchEnd: branchCount }];
  }
  let doc = 0;
  let branch = 0;
  for (const m of listed) {
    const ok =
      typeof m === 'object' && m !== null && typeof m.repo === 'object' && m.repo !== null && typeof m.repo.name === 'string' && Array.isArray(m.skipped);
    if (
      !ok ||
      m.first !== doc ||
      !(Number.isInteger(m.end) && m.end >= m.first) ||
      m.branchFirst !== branch ||
      !(Number.isInteger(m.branchEnd) && m.branchEnd > m.branchFirst)
    ) {
      throw new ShardError(path, 'repository table is malformed');
    }
    doc = m.end;
    branch = m.branchEnd;
  }
  if (doc !== docCount || branch !== branchCount) throw new ShardError(path, 'repository table does not match the documents and branches');
  return listed;
}

/** A shard's tables of contents, checked, and its sections: the symbol sections from its symbols file when it has one. */
interface ShardSections {
  shard: Map<SectionKind, Section>;
  symbols: Map<SectionKind, Section> | undefined;
  section(kind: SectionKind): Buffer;
  /** The symbols file's metadata section. */
  symbolsMeta: Buffer | undefined;
  /** Bytes of each section by name (Shard.sectionBytes). */
  bytes: Map<string, number>;
  /** The shard file's checks: ShardOpenOptions.verified, or a catalog-only open's own. */
  checks: SharedArrayBuffer | undefined;
}

/** Reads and checks the tables of contents of the shard and its symbols file, and the sections checked at open (section-checks.ts). */
function readSections(path: string, map: Buffer, options: ShardOpenOptions, symbolsMap: Buffer | undefined): ShardSections {
  const shard = readToc(path, map, map.length, SHARD_FORMAT);
  const checks = options.catalogOnly ? newChecks(0) : options.verified;
  const unusable = checkAtOpen(map, shard, checks, options.writtenByCaller === true, options.catalogOnly ? CATALOG : AT_OPEN);
  if (unusable) throw new ShardError(path, unusable);
  // A symbols file's sections stand for the shard's own symbol sections (shard-format.ts).
  const symbols = symbolsMap ? readToc(options.symbols!, symbolsMap, symbolsMap.length, SYMBOLS_FORMAT) : undefined;
  const unusableSymbols = symbols && checkAtOpen(symbolsMap!, symbols, options.symbolsVerified, false);
  if (unusableSymbols) throw new ShardError(options.symbols!, unusableSymbols, SYMBOLS_FORMAT.what);
  const fromSymbolsFile = (kind: SectionKind): boolean => symbols !== undefined && kind !== SectionKind.Meta && symbols.has(kind);
  // A compressed section is decompressed once, into memory of its own (compressed-section.ts).
  const decompressed = new Map<Section, Buffer>();
  const view = (file: Buffer, s: Section, filePath: string, what: string): Buffer => {
    const stored = file.subarray(s.offset, s.offset + s.length);
    if (!s.compressed) return stored;
    let bytes = decompressed.get(s);
    if (bytes === undefined) {
      try {
        bytes = decompressSection(stored);
      } catch (err) {
        throw new ShardError(filePath, (err as Error).message, what);
      }
      decompressed.set(s, bytes);
    }
    return bytes;
  };
  const section = (kind: SectionKind): Buffer =>
    fromSymbolsFile(kind)
      ? view(symbolsMap!, symbols!.get(kind)!, options.symbols!, SYMBOLS_FORMAT.what)
      : view(map, shard.get(kind)!, path, SHARD_FORMAT.what);
  const bytes = new Map([...shard].map(([kind, s]) => [SECTION_NAMES[kind]!, fromSymbolsFile(kind) ? symbols!.get(kind)!.length : s.length]));
  const symbolsMeta = symbols && view(symbolsMap!, symbols.get(SectionKind.Meta)!, options.symbols!, SYMBOLS_FORMAT.what);
  return { shard, symbols, section, symbolsMeta, bytes, checks };
}

/** The number of documents of the docs section, checked against the content section's checksum (its documents' checksums hashed). */
function documentCount(path: string, docs: Buffer, contentChecksum: number): number {
  const count = docs.length / DOC_RECORD_SIZE;
  if (!Number.isInteger(count)) throw new ShardError(path, 'document table has a partial record');
  const docHashes = new Uint8Array(count * 4);
  for (let d = 0; d < count; d++) {
    docHashes.set(docs.subarray(d * DOC_RECORD_SIZE + 16, d * DOC_RECORD_SIZE + 20), d * 4);
  }
  if (hash32(docHashes) !== contentChecksum) {
    throw new ShardError(path, 'document checksums do not match the content section; re-index the repository');
  }
  return count;
}

/** A symbols file's metadata (`path`; `bytes`, its meta section), checked to be of `shard`. */
function readSymbolsMeta(path: string, bytes: Buffer, shard: { path: string; docCount: number; contentChecksum: number }): SymbolsFileMeta {
  let added: SymbolsFileMeta;
  try {
    added = unpackr.unpack(bytes) as SymbolsFileMeta;
  } catch (err) {
    throw new ShardError(path, `metadata cannot be decoded: ${(err as Error).message}`, SYMBOLS_FORMAT.what);
  }
  // Another shard's symbols would name other documents' definitions.
  if (added.shardContentHash !== shard.contentChecksum || added.docCount !== shard.docCount) {
    throw new ShardError(path, `belongs to another shard than ${shard.path}; re-index the repository`, SYMBOLS_FORMAT.what);
  }
  return added;
}

/** The shard's metadata; with a symbols file's (`added`), what that file says of the symbols. */
function readMeta(path: string, bytes: Buffer, added: SymbolsFileMeta | undefined): ShardMeta {
  let meta: ShardMeta;
  try {
    meta = unpackr.unpack(bytes) as ShardMeta;
  } catch (err) {
    throw new ShardError(path, `metadata cannot be decoded: ${(err as Error).message}`);
  }
  if (added)
    meta = { ...meta, symbolKinds: added.symbolKinds, symbolFailures: added.symbolFailures, symbolsIndexed: true, symbolExtraction: added.symbolExtraction };
  return meta;
}

/** `read()`, its failure (a section reader's plain Error) named as the shard's. */
function named<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new ShardError(path, (err as Error).message);
  }
}

const ZERO_OID = '0'.repeat(2 * OID_SIZE);
