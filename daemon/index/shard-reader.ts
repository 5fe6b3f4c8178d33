// Reads a shard file, memory-mapped read-only.
//
// # The shard format, version 8 (history in shard-format.ts)
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
//     8   version        u32      7
//     12  headerSize     u32      64
//     16  fileSize       u64      the whole file; a shorter file is truncated
//     24  sectionCount   u32      16 in versions 6 and 7 (15 in version 5, 14 in version 4, 13 in
//                                 version 3, 11 in version 2)
//     28  tocHash        u32      xxHash32 (seed 0) of the table of contents
//     32  reserved       28 bytes zero
//     60  headerHash     u32      xxHash32 of bytes 0..59
//   offset 64  table of contents: sectionCount entries of 24 bytes
//     0   kind u32 (shard-format.ts SectionKind)   4  hash u32
//     8   offset u64                               16 length u64
//   then the sections, in this order:
//     content           the indexed files' bytes, concatenated, no separators
//     docs              32 bytes per document, documents in static-rank order (file-class.ts:
//                       plain files, then documentation, tests, vendored, generated;
//                       shallower first; then path). Shards built before trawl-shard-builder/2 (meta.builder) are in
//                       path order; nothing a reader does depends on the order: a document is
//                       found by number, names through the name trigrams, and listings sort
//                       by path themselves (http/catalog.ts)
//                         0 nameOff u32 (into names)   4 nameLen u32
//                         8 contentOff u32 (into content)  12 contentLen u32
//                         16 contentHash u32 (xxHash32 of the document's bytes)
//                         20 reserved u32   24 language u16 (index into meta.languages)
//                         26 flags u16 (bit 0: contains "\r\n"; bit 1: holds neither
//                            U+212A nor U+017F, so ASCII case folding is exact on it;
//                            shard-format.ts DOC_FLAG_*)   28 reserved u32
//     names             the documents' paths (UTF-8), concatenated
//     content-ngrams    n u32, 0 u32, ids[n] u32, counts[n] u32, offsets[n] u32:
//                       every trigram that occurs, ascending; counts = documents that
//                       contain it; offsets = byte offset of its list in content-postings
//     content-postings  each list: ascending document numbers, LEB128 varint deltas
//                       (core/index.ts documents the exact encoding; decodePostings reads it)
//     name-ngrams       as content-ngrams, over the paths
//     name-postings     as content-postings
//     symbols           definitions found by universal-ctags:
//                         docCount u32, symbolCount u32,
//                         first[docCount + 1] u32 (document d owns records first[d] .. first[d+1]-1),
//                         records, 24 bytes each, by document then line; version 4
//                         (symbol-index.ts has its layout) points to its name in the symbol
//                         index and says where the name is in the file; versions 2 and 3:
//                           0 nameOff u32   4 nameLen u16   6 kind u8 (meta.symbolKinds)
//                           7 parentKind u8 (255: no parent)   8 line u32   12 endLine u32
//                           16 parentOff u32   20 parentLen u16   22 reserved u16,
//                         then the names (UTF-8; offsets count from the end of the records;
//                         version 4: the parents' names only)
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
//     content-follow    (version 5) one byte per content posting, in content-postings'
//                       order (list after list; row i's bytes start at the sum of the
//                       counts before it): bit (b & 7) is set when some occurrence of the
//                       trigram in that document is followed by the folded byte b (the
//                       document's last trigram sets one arbitrary bit). A literal's
//                       candidates must hold each of its trigrams followed by the literal's
//                       next byte: a 4-gram test at one byte per posting (Linux 6.1:
//                       `btrfs_extent_same_range` 26 -> 2 documents to read)
//     content-words     (version 6) the documents holding each word (a run of [A-Za-z0-9_],
//                       3-64 bytes) found in at least 8 of the shard's documents: a
//                       document listed under a literal's bytes holds that literal; layout
//                       and a worked example in content-words.ts, which reads it
//     content-segments  (version 8) for each content posting of a document of at least
//                       64 KB, which 4 KB segments of it hold the trigram: a literal's
//                       large candidate is ruled out when no segment can start it, and
//                       otherwise read only there; empty when the shard has no such
//                       document; layout and a worked example in content-segments.ts,
//                       which reads it
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
// verified against its own contentHash the first time it is read, so a search reads no
// content byte it has not checked. The other sections are verified once per process
// (section-checks.ts says when): the docs, names, meta and branches sections when the file
// is first opened; the rest (n-gram tables, postings, follow and segment masks, symbols,
// content words, oids) by a background scrub that yields to searches. A search may read those
// before the scrub reaches them: their readers bound every read by the section (a posting
// list's ids must be strictly ascending and below the document count, a table row's list
// must lie within the postings, a document's symbol records within the records), so a
// damaged section gives at worst a wrong candidate set (every candidate is still checked
// against its verified content: a wrong set can miss matches, never add a false one) or
// fails the shard cleanly, never a crash or a hang; once the scrub finds the damage, the
// repository is reported broken and left out. An opener without shared checks (a
// command reading one shard) verifies every section at open.
//
// ## Worked example
//
// A directory with one file `a.c` holding "int x;\n" (7 bytes) becomes a shard whose first
// bytes are:
//
//   54 52 41 57 4c 49 44 58   "TRAWLIDX"
//   08 00 00 00               version 8
//   40 00 00 00               header size 64
//   .. .. .. .. 00 00 00 00   file size (low, high)
//   11 00 00 00               17 sections
//   ...                       tocHash, reserved, headerHash
//   01 00 00 00 hh hh hh hh   toc[0]: kind 1 (content), hash
//   d8 01 00 00 00 00 00 00   offset 472 = 64 + 17*24 (already a multiple of 8)
//   07 00 00 00 00 00 00 00   length 7
//   ...
//   offset 472: 69 6e 74 20 78 3b 0a   "int x;\n"
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
// document is under 64 KB). meta.members holds one member:
// the repository, documents [0, 1), branch lists [0, 1).

import { closeSync, readSync } from 'node:fs';
import { Unpackr } from 'msgpackr';
import { ANY_ID, decodePostings, hash32, type EncodedList } from '../../core/index.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { BranchSet, readMembershipFile } from './branch-set.ts';
import { SymbolIndex } from './symbol-index.ts';
import { ContentWords } from './content-words.ts';
import { ContentSegments } from './content-segments.ts';
import { mmap, PAGE, willNeed } from './mmap.ts';
import { openRegularFile, RefusedFile, type RegularFile } from '../bounded-read.ts';
import { checkAtOpen, documentChecks, PASSED, sectionStates, type Section } from './section-checks.ts';
import {
  DOC_FLAG_ASCII_FOLDS_ONLY,
  DOC_RECORD_SIZE,
  HEADER_SIZE,
  NO_KIND,
  OID_SIZE,
  SYMBOL_RECORD_SIZE,
  SECTION_NAMES,
  SHARD_FORMAT,
  SYMBOLS_FORMAT,
  SectionKind,
  TOC_ENTRY_SIZE,
  type SectionFileFormat,
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

/** A shard that cannot be used: wrong version, truncated, corrupt. */
export class ShardError extends Error {
  readonly path: string;
  /** `what`: the kind of file, "shard" or "symbols file" (shard-format.ts SectionFileFormat). */
  constructor(path: string, message: string, what = 'shard') {
    super(`${what} ${path}: ${message}`);
    this.name = 'ShardError';
    this.path = path;
  }
}

const EMPTY = new Uint8Array(0);

/** The trigram table of one kind (content or names) with its posting lists. */
export class NgramTable {
  readonly ids: Uint32Array;
  private readonly counts: Uint32Array;
  private readonly offsets: Uint32Array;
  private readonly postings: Buffer;

  /**
   * What verifying one candidate of this table reads, on average (a document's bytes for
   * content; 0 where verifying is next to free): what a posting list that removes
   * candidates saves (shard-search.ts intersectRarest).
   */
  readonly bytesPerCandidate: number;

  /** The follow mask of each posting (content-follow), in the postings' order; absent before version 5. */
  private readonly follow: Buffer | undefined;
  /** Where each row's masks start in `follow`: the sum of the counts before it (made at first use). */
  private followStarts: Uint32Array | undefined;

  /** The shard's path, for errors. */
  private readonly path: string;
  /** What every posting lies below: the documents (or, for a symbol index's names, its blocks). */
  private readonly limit: number;

  constructor(table: Buffer, postings: Buffer, bytesPerCandidate = 0, follow?: Buffer, path = '', limit = ANY_ID) {
    this.bytesPerCandidate = bytesPerCandidate;
    this.follow = follow;
    this.path = path;
    this.limit = limit;
    // (The section may not be verified yet: its shape is checked here, each row's list where it is read.)
    const n = table.length >= 8 ? table.readUInt32LE(0) : -1;
    if (n < 0 || table.length < 8 + 12 * n) throw new ShardError(path, 'an n-gram table is cut short');
    const all = new Uint32Array(table.buffer, table.byteOffset, 2 + 3 * n);
    // Every lookup bisects the ids (a page read in turn per step from a cold page cache): the
    // table, a small part of the shard, is asked for whole at once (mmap.ts).
    willNeed(table, 0, 8 + 12 * n);
    this.ids = all.subarray(2, 2 + n);
    this.counts = all.subarray(2 + n, 2 + 2 * n);
    this.offsets = all.subarray(2 + 2 * n, 2 + 3 * n);
    this.postings = postings;
  }

  /** Index of the trigram in the table, or -1. */
  find(id: number): number {
    const ids = this.ids;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = ids[mid]!;
      if (v < id) lo = mid + 1;
      else if (v > id) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  /** The documents of table row `i` (find()), ascending. */
  rowDocs(i: number): Uint32Array {
    const l = this.rowList(i);
    return decodePostings(l.bytes, l.count, this.limit);
  }

  /** Number of documents containing the trigram (0 when absent). */
  count(id: number): number {
    const i = this.find(id);
    return i < 0 ? 0 : this.counts[i]!;
  }

  /** The documents containing the trigram, ascending, and the bytes read to get them. */
  postingList(id: number): { docs: Uint32Array; bytes: number } {
    const l = this.encoded(id);
    return { docs: decodePostings(l.bytes, l.count, this.limit), bytes: l.bytes.length };
  }

  /** The trigram's posting list as stored (empty when absent): for intersectPostings. */
  encoded(id: number): EncodedList {
    const i = this.find(id);
    return i < 0 ? { bytes: EMPTY, count: 0 } : this.rowList(i);
  }

  /** Documents in the posting list of table row `i` (find()). */
  rowCount(i: number): number {
    return this.counts[i]!;
  }

  /** Bytes of the posting list of table row `i` (find()). */
  rowBytes(i: number): number {
    return (i + 1 < this.offsets.length ? this.offsets[i + 1]! : this.postings.length) - this.offsets[i]!;
  }

  /**
   * The posting list of table row `i` (find()) as stored; with `want` (the follow bits a
   * document must hold: ngram-query.ts) and a follow section, with the row's masks.
   */
  rowList(i: number, want = 0): EncodedList {
    const start = this.offsets[i]!;
    const bytes = this.rowBytes(i);
    const count = this.counts[i]!;
    // A list lies within the postings and takes a byte per document at least.
    if (bytes < 0 || start + bytes > this.postings.length || count > bytes) throw new ShardError(this.path, `n-gram table row ${i} does not match its posting list`);
    const list: EncodedList = { bytes: this.postings.subarray(start, start + bytes), count, limit: this.limit };
    // A long list's pages in one request (mmap.ts): it is read whole, or up to the running set's end.
    if (bytes > PAGE) willNeed(this.postings, start, start + bytes);
    if (want !== 0 && this.follow !== undefined) {
      const at = this.rowFollowStart(i);
      list.follow = this.follow.subarray(at, at + list.count);
      list.want = want;
      if (list.count > PAGE) willNeed(this.follow, at, at + list.count);
    }
    return list;
  }

  /** Whether the table has follow masks (version 5 content). */
  get hasFollow(): boolean {
    return this.follow !== undefined;
  }

  private rowFollowStart(i: number): number {
    let starts = this.followStarts;
    if (starts === undefined) {
      starts = new Uint32Array(this.counts.length);
      let sum = 0;
      for (let r = 0; r < starts.length; r++) {
        starts[r] = sum;
        sum += this.counts[r]!;
      }
      if (sum !== this.follow!.length) throw new ShardError(this.path, `follow masks (${this.follow!.length} bytes) do not match the postings (${sum})`);
      this.followStarts = starts;
    }
    return starts[i]!;
  }
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
   * The shard is taken as checked, its sections and its documents: the build that wrote it
   * moments ago, from the bytes it hashed, reads it back (symbols-pass.ts; per Linux shard
   * ~80 ms of hashing the content and ~65 ms the posting lists, which the pass does not
   * even read). The header and the table of contents are checked still.
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
  /**
   * Trigrams of symbol names: with a symbol index (version 4) a posting is a name number
   * of the index; without (versions 2 and 3) it is a document.
   */
  readonly symbolNames: NgramTable;
  /** The sorted symbol names and their definitions (version 4 shards; symbol-index.ts). */
  readonly symbolIndex: SymbolIndex | undefined;
  /** The documents holding each common word (version 6 shards; content-words.ts). */
  readonly contentWords: ContentWords | undefined;
  /** Segment masks of the large documents' content postings (version 8, when it has such documents). */
  readonly contentSegments: ContentSegments | undefined;
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
  private readonly symbols: Buffer;
  private readonly symbolCount: number;
  private readonly symbolStrings: Buffer;
  /** first[] of the symbols section: document d owns records symbolFirst[d] .. symbolFirst[d+1]-1. */
  private readonly symbolFirst: Uint32Array;
  /** Where the symbols section's records start (after its counts and first[]). */
  private readonly symbolRecords: number;
  /** The symbols section as u32 words (it is 4-aligned, as symbolFirst's view needs): a record's lines without a Buffer call each. */
  private readonly symbolWords: Uint32Array;
  private readonly languageDocs = new Map<number, Uint32Array>();
  private readonly docs: Buffer;
  private readonly nameBytes: Buffer;
  private readonly contentBytes: Buffer;
  private readonly verified: Uint8Array;
  private readonly oids: Buffer | undefined;

  private constructor(path: string, map: Buffer, options: ShardOpenOptions, symbolsMap: Buffer | undefined) {
    this.path = path;
    this.map = map;
    this.symbolsMap = symbolsMap;
    this.fileSize = map.length;
    this.version = map.length >= 12 ? map.readUInt32LE(8) : 0;
    const sections = readToc(path, map, map.length, SHARD_FORMAT);
    const unusable = checkAtOpen(map, sections, options.verified, options.writtenByCaller === true);
    if (unusable) throw new ShardError(path, unusable);
    // A symbols file's sections stand for the shard's own symbol sections (shard-format.ts).
    const symbolSections = symbolsMap ? readToc(options.symbols!, symbolsMap, symbolsMap.length, SYMBOLS_FORMAT) : undefined;
    const unusableSymbols = symbolSections && checkAtOpen(symbolsMap!, symbolSections, options.symbolsVerified, false);
    if (unusableSymbols) throw new ShardError(options.symbols!, unusableSymbols, SYMBOLS_FORMAT.what);
    this.toc = sections;
    const fromSymbolsFile = (kind: SectionKind): boolean => symbolSections !== undefined && kind !== SectionKind.Meta && symbolSections.has(kind);
    this.sectionBytes = new Map([...sections].map(([kind, s]) => [SECTION_NAMES[kind]!, fromSymbolsFile(kind) ? symbolSections!.get(kind)!.length : s.length]));
    const section = (kind: SectionKind): Buffer => {
      if (fromSymbolsFile(kind)) {
        const s = symbolSections!.get(kind)!;
        return symbolsMap!.subarray(s.offset, s.offset + s.length);
      }
      const s = sections.get(kind)!;
      return map.subarray(s.offset, s.offset + s.length);
    };
    this.docs = section(SectionKind.Docs);
    this.docCount = this.docs.length / DOC_RECORD_SIZE;
    if (!Number.isInteger(this.docCount)) throw new ShardError(path, 'document table has a partial record');
    const docHashes = new Uint8Array(this.docCount * 4);
    for (let d = 0; d < this.docCount; d++) {
      docHashes.set(this.docs.subarray(d * DOC_RECORD_SIZE + 16, d * DOC_RECORD_SIZE + 20), d * 4);
    }
    if (hash32(docHashes) !== sections.get(SectionKind.Content)!.hash) {
      throw new ShardError(path, 'document checksums do not match the content section; re-index the repository');
    }
    let added: SymbolsFileMeta | undefined;
    if (symbolSections) {
      const at = symbolSections.get(SectionKind.Meta)!;
      try {
        added = unpackr.unpack(symbolsMap!.subarray(at.offset, at.offset + at.length)) as SymbolsFileMeta;
      } catch (err) {
        throw new ShardError(options.symbols!, `metadata cannot be decoded: ${(err as Error).message}`, SYMBOLS_FORMAT.what);
      }
      // Another shard's symbols would name other documents' definitions.
      if (added.shardContentHash !== sections.get(SectionKind.Content)!.hash || added.docCount !== this.docCount) {
        throw new ShardError(options.symbols!, `belongs to another shard than ${path}; re-index the repository`, SYMBOLS_FORMAT.what);
      }
    }
    this.nameBytes = section(SectionKind.Names);
    this.contentBytes = section(SectionKind.Content);
    this.content = new NgramTable(
      section(SectionKind.ContentNgrams),
      section(SectionKind.ContentPostings),
      this.contentBytes.length / Math.max(1, this.docCount),
      this.version >= 5 ? section(SectionKind.ContentFollow) : undefined,
      path,
      this.docCount,
    );
    this.names = new NgramTable(section(SectionKind.NameNgrams), section(SectionKind.NamePostings), 0, undefined, path, this.docCount);
    this.symbols = section(SectionKind.Symbols);
    this.symbolRecords = 8 + 4 * (this.docCount + 1);
    if (this.symbols.length < this.symbolRecords || this.symbols.readUInt32LE(0) !== this.docCount) throw new ShardError(path, 'symbol table does not match the document table');
    this.symbolCount = this.symbols.readUInt32LE(4);
    if (this.symbolRecords + this.symbolCount * SYMBOL_RECORD_SIZE > this.symbols.length) throw new ShardError(path, 'symbol table is cut short');
    this.symbolStrings = this.symbols.subarray(this.symbolRecords + this.symbolCount * SYMBOL_RECORD_SIZE);
    this.symbolFirst = new Uint32Array(this.symbols.buffer, this.symbols.byteOffset + 8, this.docCount + 1);
    this.symbolWords = new Uint32Array(this.symbols.buffer, this.symbols.byteOffset, this.symbols.length >>> 2);
    if (this.version >= 4) {
      try {
        const records = this.symbols.subarray(this.symbolRecords, this.symbolRecords + this.symbolCount * SYMBOL_RECORD_SIZE);
        this.symbolIndex = new SymbolIndex(section(SectionKind.SymbolIndex), records, SYMBOL_RECORD_SIZE);
      } catch (err) {
        throw new ShardError(path, (err as Error).message);
      }
    }
    // A posting of the symbol names' trigrams is a block of the symbol index's names (version 4) or a document.
    const index = this.symbolIndex;
    const symbolPostingLimit = index ? Math.ceil(index.nameCount / index.namesPerBlock) : this.docCount;
    this.symbolNames = new NgramTable(section(SectionKind.SymbolNgrams), section(SectionKind.SymbolPostings), 0, undefined, path, symbolPostingLimit);
    if (this.version >= 6) {
      try {
        this.contentWords = new ContentWords(section(SectionKind.ContentWords), this.docCount);
      } catch (err) {
        throw new ShardError(path, (err as Error).message);
      }
    }
    if (this.version >= 8 && section(SectionKind.ContentSegments).length > 0) {
      try {
        this.contentSegments = new ContentSegments(section(SectionKind.ContentSegments), this.docCount, this.content.ids.length, (doc) => this.contentLength(doc));
      } catch (err) {
        throw new ShardError(path, (err as Error).message);
      }
    }
    let meta: ShardMeta;
    try {
      meta = unpackr.unpack(section(SectionKind.Meta)) as ShardMeta;
    } catch (err) {
      throw new ShardError(path, `metadata cannot be decoded: ${(err as Error).message}`);
    }
    if (added) meta = { ...meta, symbolKinds: added.symbolKinds, symbolFailures: added.symbolFailures, symbolsIndexed: true, symbolExtraction: added.symbolExtraction };
    this.meta = meta;
    // Shared between the threads that open the same file (search/pool.ts), so that each
    // document is checked once per process, not once per thread.
    this.verified = documentChecks(options.verified, this.docCount) ?? new Uint8Array(this.docCount);
    this.sharedChecks = options.writtenByCaller ? [] : [[sections, options.verified], [symbolSections, options.symbolsVerified]].flatMap(([toc, checks]) => (toc && checks ? [{ toc: toc as ReadonlyMap<SectionKind, Section>, states: sectionStates(checks as SharedArrayBuffer) }] : []));
    if (options.writtenByCaller) this.verified.fill(1);
    if (this.version >= 3) {
      this.oids = section(SectionKind.Oids);
      if (this.oids.length !== this.docCount * OID_SIZE) throw new ShardError(path, 'blob id table does not match the document table');
    }
    try {
      if (options.membership !== undefined) this.branches = readMembershipFile(options.membership);
      else if (this.version >= 3) this.branches = new BranchSet(section(SectionKind.Branches), path);
      else this.branches = BranchSet.everyDoc([this.meta.repo.branch], this.docCount);
    } catch (err) {
      throw new ShardError(path, (err as Error).message);
    }
    this.members = readMembers(path, meta, this.docCount, this.branches.names.length, options.membership !== undefined);
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

  /** The document owning symbol record `record` (symbols section). */
  symbolDoc(record: number): number {
    const first = this.symbolFirst;
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
  symbolsEnd(doc: number): number {
    return this.recordsOf(doc)[1];
  }

  /**
   * Document `doc`'s symbol records [first, end): checked to lie within the records, since
   * the symbols section may be read before the scrub has verified it (section-checks.ts).
   */
  private recordsOf(doc: number): [number, number] {
    const first = this.symbolFirst[doc]!;
    const end = this.symbolFirst[doc + 1]!;
    if (!(first <= end && end <= this.symbolCount)) throw new ShardError(this.path, `symbol records of document ${doc} lie outside the symbol table`);
    return [first, end];
  }

  /** The symbol definitions of a document, by line. */
  symbolsOf(doc: number): SymbolDef[] {
    return this.symbolsWhere(doc, () => true);
  }

  /**
   * The document's definitions whose line span overlaps one of `spans` ([first, last]
   * line pairs). Only those are decoded: a large header can hold thousands of symbols,
   * and a result needs the few around its matches.
   */
  symbolsOverlapping(doc: number, spans: Array<[number, number]>): SymbolDef[] {
    return this.symbolRecordsOverlapping(doc, spans.flat(), 2).map((r) => this.symbolAt(r));
  }

  /**
   * The records (ascending) of the document's definitions whose line span overlaps one of
   * the spans: symbolsOverlapping without decoding them, for a caller that writes them from
   * their bytes (symbolName, symbolKind, symbolParent). Span r is [first, last] =
   * [spans[r * stride], spans[r * stride + stride / 2]]: stride 2 for flat pairs, 4 for a
   * line table (shape.ts LineTable: a range's start line, then its end line two later).
   */
  symbolRecordsOverlapping(doc: number, flat: ArrayLike<number>, stride: 2 | 4): number[] {
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
    const base = this.symbolRecords >>> 2;
    const words = this.symbolWords;
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
    this.reach ??= { lines: new Uint32Array(this.symbolCount), done: new Uint8Array(this.docCount) };
    const { lines, done } = this.reach;
    if (done[doc] === 0) {
      const base = this.symbolRecords >>> 2;
      let max = 0;
      for (let [i, end] = this.recordsOf(doc); i < end; i++) {
        max = Math.max(max, this.symbolWords[base + i * (SYMBOL_RECORD_SIZE >>> 2) + 3]!);
        lines[i] = max;
      }
      done[doc] = 1;
    }
    return lines;
  }
  private reach: { lines: Uint32Array; done: Uint8Array } | undefined;

  /** A symbol record's first and last line. */
  symbolLine(record: number): number {
    return this.symbolWords[(this.symbolRecords >>> 2) + record * (SYMBOL_RECORD_SIZE >>> 2) + 2]!;
  }

  symbolEndLine(record: number): number {
    return this.symbolWords[(this.symbolRecords >>> 2) + record * (SYMBOL_RECORD_SIZE >>> 2) + 3]!;
  }

  /** Where a symbol record's name is: bytes [start, end) of `buf` (UTF-8, as symbolAt decodes it). */
  symbolName(record: number): { buf: Buffer; start: number; end: number } {
    const o = this.symbolRecords + record * SYMBOL_RECORD_SIZE;
    const nameOff = this.symbols.readUInt32LE(o);
    const index = this.symbolIndex;
    if (!index) return within(this.symbolStrings, nameOff, this.symbols.readUInt16LE(o + 4));
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
  symbolKind(record: number): string {
    return this.meta.symbolKinds[this.symbolKindId(record)] ?? '';
  }

  /** A symbol record's kind as its number in meta.symbolKinds. */
  symbolKindId(record: number): number {
    return this.symbols[this.symbolRecords + record * SYMBOL_RECORD_SIZE + (this.symbolIndex ? 22 : 6)]!;
  }

  /** A symbol record's parent: its name's bytes [start, end) of `buf` and its kind; undefined without one. */
  symbolParent(record: number): { buf: Buffer; start: number; end: number; kind: string } | undefined {
    const o = this.symbolRecords + record * SYMBOL_RECORD_SIZE;
    const parentKind = this.symbols.readUInt8(o + (this.symbolIndex ? 23 : 7));
    if (parentKind === NO_KIND) return undefined;
    const { buf, start, end } = within(this.symbolStrings, this.symbols.readUInt32LE(o + 16), this.symbols.readUInt16LE(o + 20));
    return { buf, start, end, kind: this.meta.symbolKinds[parentKind] ?? '' };
  }

  /** A symbol record decoded. */
  private symbolAt(record: number): SymbolDef {
    const name = this.symbolName(record);
    const def: SymbolDef = { name: name.buf.toString('utf8', name.start, name.end), kind: this.symbolKind(record), line: this.symbolLine(record), endLine: this.symbolEndLine(record) };
    const parent = this.symbolParent(record);
    if (parent) def.parent = { name: parent.buf.toString('utf8', parent.start, parent.end), kind: parent.kind };
    return def;
  }

  /**
   * The kinds of the document's definitions whose name is exactly one of the flat byte
   * ranges [start, end, ...] (the name at its definition, as a match of the ranking sees
   * it). Found by the name's offset in the content, which version 4 records hold: no line
   * is counted and no symbol decoded. Null for older shards (then lines and
   * symbolsOverlapping tell).
   */
  definitionsAt(doc: number, ranges: number[], lines?: number[]): string[] | null {
    const index = this.symbolIndex;
    if (!index) return null;
    const out: string[] = [];
    if (ranges.length === 0) return out;
    // With the ranges' line table (shape.ts LineTable: a range's start line first), only
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
    const base = this.symbolRecords;
    for (let i = from; i < to; i++) {
      const start = index.start(i);
      if (start < first || start > last) continue;
      const end = endAt(pairs, start);
      if (end === undefined) continue;
      const o = base + i * SYMBOL_RECORD_SIZE;
      if (index.name(index.nameAt(this.symbols.readUInt32LE(o))).length !== end - start) continue;
      out.push(this.meta.symbolKinds[this.symbols.readUInt8(o + 22)] ?? '');
    }
    return out;
  }

  /** The first of records [from, to) (one document's, by line) on `line` or after it; `to` if none. */
  private firstRecordFrom(from: number, to: number, line: number): number {
    let lo = from;
    let hi = to;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.symbolLine(mid) < line) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private symbolsWhere(doc: number, keep: (line: number, endLine: number) => boolean): SymbolDef[] {
    const out: SymbolDef[] = [];
    for (let [i, end] = this.recordsOf(doc); i < end; i++) {
      if (keep(this.symbolLine(i), this.symbolEndLine(i))) out.push(this.symbolAt(i));
    }
    return out;
  }

  /**
   * Drops the pages of the file this process has read from its resident set (the page
   * cache keeps them; a later read maps them back in). The mapping itself lives until the
   * Shard is collected, which a worker that reads one shard after another (the symbols
   * pass) may not do for a long time: without this, every shard it read stays counted in
   * its RSS (Linux 6.1's pass: ~0.9 GB of its 1.9 GB peak).
   */
  releasePages(): void {
    mmap.advise(this.map, 0, this.map.length, mmap.MADV_DONTNEED);
    if (this.symbolsMap) mmap.advise(this.symbolsMap, 0, this.symbolsMap.length, mmap.MADV_DONTNEED);
  }

  /**
   * Asks for the document's bytes to be read ahead of its reading (mmap.ts willNeed), unless
   * a thread has read them already (then they are most likely in memory). Returns the bytes
   * asked for.
   */
  readAhead(doc: number): number {
    if (this.verified[doc] !== 0) return 0;
    const o = doc * DOC_RECORD_SIZE;
    const off = this.docs.readUInt32LE(o + 8);
    const len = this.docs.readUInt32LE(o + 12);
    if (off + len > this.contentBytes.length) return 0;
    willNeed(this.contentBytes, off, off + len);
    return len;
  }

  /**
   * The document's bytes: a view into the mapping, checked against its checksum the first
   * time it is read. Throws ShardError when the bytes are corrupt.
   */
  contentOf(doc: number): Buffer {
    const o = doc * DOC_RECORD_SIZE;
    const off = this.docs.readUInt32LE(o + 8);
    const len = this.docs.readUInt32LE(o + 12);
    if (off + len > this.contentBytes.length) throw new ShardError(this.path, `document ${doc} lies outside the content section`);
    const bytes = this.contentBytes.subarray(off, off + len);
    if (this.verified[doc] === 0) {
      // Its pages in one request, not one at a time as hashing touches them (mmap.ts).
      if (len > PAGE) willNeed(this.contentBytes, off, off + len);
      if (hash32(bytes) !== this.docs.readUInt32LE(o + 16)) {
        throw new ShardError(this.path, `content of ${this.name(doc)} is corrupt (checksum mismatch); re-index the repository`);
      }
      this.verified[doc] = 1;
    }
    return bytes;
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
    const ok = typeof m === 'object' && m !== null && typeof m.repo === 'object' && m.repo !== null && typeof m.repo.name === 'string' && Array.isArray(m.skipped);
    if (!ok || m.first !== doc || !(Number.isInteger(m.end) && m.end >= m.first) || m.branchFirst !== branch || !(Number.isInteger(m.branchEnd) && m.branchEnd > m.branchFirst)) {
      throw new ShardError(path, 'repository table is malformed');
    }
    doc = m.end;
    branch = m.branchEnd;
  }
  if (doc !== docCount || branch !== branchCount) throw new ShardError(path, 'repository table does not match the documents and branches');
  return listed;
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

/**
 * Opens a file of sections and hands `use` its descriptor and size (at least a header's),
 * closing it after; a file that cannot be opened, is not a regular file (a device or a
 * FIFO would be mapped or read without end) or is shorter than a header is a ShardError.
 */
function withSectionFile<T>(path: string, format: SectionFileFormat, use: (fd: number, size: number) => T): T {
  let opened: RegularFile;
  try {
    opened = openRegularFile(path);
  } catch (err) {
    throw new ShardError(path, err instanceof RefusedFile ? err.reason : `cannot open: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, format.what);
  }
  const { fd, size } = opened;
  try {
    if (size < HEADER_SIZE) throw new ShardError(path, `truncated: ${size} bytes is shorter than the header`, format.what);
    return use(fd, size);
  } finally {
    closeSync(fd); // a mapping stays valid after the descriptor is closed
  }
}

/** Maps a file of sections read-only (the header's checks come after). */
function mapFile(path: string, format: SectionFileFormat): Buffer {
  return withSectionFile(path, format, (fd, size) => mmap.map(fd, size));
}

/** More sections than any version has: a bound on what checkShardHeader reads. */
const MAX_SECTIONS = 32;

/**
 * Checks a shard (or a symbols file) without mapping it: its header and table of contents
 * (their checksums, the version, the file size against the real one, every section within
 * the file). Reads a few hundred bytes; throws ShardError. What a listing checks, and
 * where the scrub finds the sections (section-scrub.ts); the sections are verified when
 * the shard is opened or by the scrub (section-checks.ts).
 */
export function checkShardHeader(path: string, format: SectionFileFormat = SHARD_FORMAT): Map<SectionKind, Section> {
  return withSectionFile(path, format, (fd, size) => {
    // The table of contents follows the header; its length comes from the header (bounded
    // here: readToc rejects any count but the version's).
    const head = Buffer.alloc(HEADER_SIZE + MAX_SECTIONS * TOC_ENTRY_SIZE);
    const got = readSync(fd, head, 0, head.length, 0);
    return readToc(path, head.subarray(0, got), size, format);
  });
}

/** `head` holds at least the header and the table of contents; `fileLength` is the file's real size. */
function readToc(path: string, map: Buffer, fileLength: number, format: SectionFileFormat): Map<SectionKind, Section> {
  if (map.toString('latin1', 0, 8) !== format.magic) throw new ShardError(path, `not a trawl ${format.what} (bad magic)`, format.what);
  const version = map.readUInt32LE(8);
  if (version < format.minVersion || version > format.version) {
    throw new ShardError(path, `unsupported ${format.what} format version ${version} (this trawl reads versions ${format.minVersion} to ${format.version}); re-index the repository`, format.what);
  }
  const order = format.order(version);
  if (hash32(map.subarray(0, 60)) !== map.readUInt32LE(60)) throw new ShardError(path, 'header is corrupt (checksum mismatch)', format.what);
  const fileSize = readU64(map, 16);
  if (fileLength < fileSize) throw new ShardError(path, `truncated: ${fileLength} of ${fileSize} bytes`, format.what);
  if (fileLength > fileSize) throw new ShardError(path, `has ${fileLength - fileSize} trailing bytes`, format.what);
  const count = map.readUInt32LE(24);
  if (count !== order.length) throw new ShardError(path, `has ${count} sections, expected ${order.length}`, format.what);
  if (map.length < HEADER_SIZE + count * TOC_ENTRY_SIZE) throw new ShardError(path, 'truncated: the table of contents is cut short', format.what);
  const toc = map.subarray(HEADER_SIZE, HEADER_SIZE + count * TOC_ENTRY_SIZE);
  if (hash32(toc) !== map.readUInt32LE(28)) throw new ShardError(path, 'table of contents is corrupt (checksum mismatch)', format.what);
  const sections = new Map<SectionKind, Section>();
  for (let i = 0; i < count; i++) {
    const o = i * TOC_ENTRY_SIZE;
    const kind = toc.readUInt32LE(o) as SectionKind;
    const offset = readU64(toc, o + 8);
    const length = readU64(toc, o + 16);
    if (!SECTION_NAMES[kind] || sections.has(kind)) throw new ShardError(path, `unknown or repeated section kind ${kind}`, format.what);
    if (offset % 8 !== 0 || offset + length > fileSize) throw new ShardError(path, `section ${SECTION_NAMES[kind]} lies outside the file`, format.what);
    sections.set(kind, { offset, length, hash: toc.readUInt32LE(o + 4) });
  }
  return sections;
}

const ZERO_OID = '0'.repeat(2 * OID_SIZE);

function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x1_0000_0000;
}
