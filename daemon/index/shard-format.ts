// Constants of the shard file format, shared by the writer and the reader.
// The format itself (layout, worked example, version history) is documented at the top
// of shard-reader.ts, where it is read.

export const SHARD_MAGIC = 'TRAWLIDX';

// Version history:
//   1  first format: header, table of contents, content, documents, names,
//      content and file-name trigram postings, metadata (msgpack with records).
//   2  symbol definitions (universal-ctags) and trigram postings over symbol names;
//      repository flags (archived, fork, visibility) in the metadata.
//   3  several branches and tags per shard: a document is a (path, blob) pair stored once,
//      the `branches` section lists the documents of each branch (branch-set.ts); the
//      `oids` section holds each document's git blob id, so an incremental run can tell
//      which files changed; skipped files carry their blob id too. Version 2 shards are
//      still read (every document on the shard's one branch, no blob ids).
//   (3, builder trawl-shard-builder/2: documents in static-rank order instead of path order.
//      Not a new version: the layout is unchanged and no reader relies on the order. Older
//      shards keep path order, which is only a worse order for a search that stops early,
//      until their repository's next full build.)
//   4  the symbol-index section (sorted distinct symbol names with their definitions and
//      where each name is spelled in its file: symbol-index.ts); symbol-ngrams and
//      symbol-postings index those names (a posting is a name, not a document).
//      Version 2 and 3 shards are still read (sym: then scans each candidate's symbols).
//   5  the content-follow section: beside each content posting, a byte of the folded bytes
//      that follow the trigram in that document (bit b & 7), so a literal's candidates
//      must hold its trigrams each followed by the literal's next byte. Version 4 shards
//      are still read (candidates are then the plain trigram intersection).
//   6  the content-words section: the documents holding each word found in at least a few
//      documents (content-words.ts), so that a negated literal that is such a word rules
//      a document out without reading it. Version 5 shards are still read (a negated
//      literal is then checked in each candidate's bytes).
//   7  several repositories per shard (a compound shard): meta.members lists each
//      repository with its documents (a contiguous range) and its branches (a contiguous
//      range of the branches section's lists, its default branch first). A shard of one
//      repository has one member. Version 6 and older shards are read as one member
//      holding every document and every branch.
//   8  the content-segments section: for each content posting of a large document, the
//      4 KB segments of the document that hold the trigram (content-segments.ts), so that
//      a literal's candidate is ruled out, or read only where the literal can start.
//      Version 7 and older shards are still read (large candidates are then read whole).
//   9  the doc-groups section: a shard may number its content postings by group (a run of
//      adjacent documents with the same path: a history shard's versions of one file), its
//      follow bytes and segment masks then a group's (the OR of its versions'); empty when
//      the postings are by document, as before. And version deltas: a shard built with them
//      (a history shard) may store a document as a delta against the document before it, a
//      version of the same path (DOC_FLAG_DELTA; content-delta.ts), and deflated
//      (DOC_FLAG_DEFLATE), its stored length in the docs record at offset 20. Version 8 and
//      older shards are still read (postings by document, every document stored as it is).
//  10  compressed sections: the table of contents may mark a section as stored compressed
//      (SECTION_COMPRESSED; compressed-section.ts), decompressed when the shard is opened.
//      A history shard compresses its compressible sections (COMPRESSIBLE_SECTIONS); others
//      compress none. The layout is version 9's. Version 9 and older shards are still read
//      (no section compressed).
export const SHARD_VERSION = 10;
/** Oldest version this reader accepts. */
export const SHARD_MIN_VERSION = 2;

/**
 * The bit of a table of contents entry's kind word that says the section is stored
 * compressed (compressed-section.ts): shards of version 10 on, symbols files of version 3
 * on, and only for the kinds of COMPRESSIBLE_SECTIONS.
 */
export const SECTION_COMPRESSED = 0x8000_0000;

export const HEADER_SIZE = 64;
export const TOC_ENTRY_SIZE = 24;
export const DOC_RECORD_SIZE = 32;
/** Sections start at multiples of 8 so typed-array views over the mapping are aligned. */
export const SECTION_ALIGN = 8;

export enum SectionKind {
  Content = 1,
  Docs = 2,
  Names = 3,
  ContentNgrams = 4,
  ContentPostings = 5,
  NameNgrams = 6,
  NamePostings = 7,
  Meta = 8,
  Symbols = 9,
  SymbolNgrams = 10,
  SymbolPostings = 11,
  Branches = 12,
  Oids = 13,
  SymbolIndex = 14,
  ContentFollow = 15,
  ContentWords = 16,
  ContentSegments = 17,
  DocGroups = 18,
}

export const SECTION_NAMES: Record<number, string> = {
  1: 'content',
  2: 'docs',
  3: 'names',
  4: 'content-ngrams',
  5: 'content-postings',
  6: 'name-ngrams',
  7: 'name-postings',
  8: 'meta',
  9: 'symbols',
  10: 'symbol-ngrams',
  11: 'symbol-postings',
  12: 'branches',
  13: 'oids',
  14: 'symbol-index',
  15: 'content-follow',
  16: 'content-words',
  17: 'content-segments',
  18: 'doc-groups',
};

/**
 * The sections a compressed file stores compressed: those whose bytes repeat from one
 * version of a file to the next in a history (its paths, which versions each commit holds,
 * the definitions), and that are small enough once decompressed to be held in memory while
 * the file is open. The content, the document table, the n-gram tables, the postings and the
 * masks beside them are read in place from the mapping (the content and the document table
 * document by document, as a search reaches them); the blob ids do not repeat.
 */
export const COMPRESSIBLE_SECTIONS: ReadonlySet<SectionKind> = new Set<SectionKind>([
  SectionKind.Names,
  SectionKind.NameNgrams,
  SectionKind.NamePostings,
  SectionKind.Meta,
  SectionKind.Symbols,
  SectionKind.SymbolNgrams,
  SectionKind.SymbolPostings,
  SectionKind.Branches,
  SectionKind.SymbolIndex,
  SectionKind.ContentWords,
]);

/** Sections of a version-2 shard, in file order. */
export const SECTION_ORDER_V2: readonly SectionKind[] = [
  SectionKind.Content,
  SectionKind.Docs,
  SectionKind.Names,
  SectionKind.ContentNgrams,
  SectionKind.ContentPostings,
  SectionKind.NameNgrams,
  SectionKind.NamePostings,
  SectionKind.Symbols,
  SectionKind.SymbolNgrams,
  SectionKind.SymbolPostings,
  SectionKind.Meta,
];

/** Sections of a version-3 shard, in file order: version 2's, then branches and oids before meta. */
export const SECTION_ORDER_V3: readonly SectionKind[] = [...SECTION_ORDER_V2.slice(0, -1), SectionKind.Branches, SectionKind.Oids, SectionKind.Meta];

/** Sections of a version-4 shard, in file order: version 3's, then the symbol index before meta. */
export const SECTION_ORDER_V4: readonly SectionKind[] = [...SECTION_ORDER_V3.slice(0, -1), SectionKind.SymbolIndex, SectionKind.Meta];

/** Sections of a version-5 shard, in file order: version 4's, then the content follow masks before meta. */
export const SECTION_ORDER_V5: readonly SectionKind[] = [...SECTION_ORDER_V4.slice(0, -1), SectionKind.ContentFollow, SectionKind.Meta];

/** Sections of a version 6 or 7 shard, in file order: version 5's, then the content words before meta. */
export const SECTION_ORDER_V7: readonly SectionKind[] = [...SECTION_ORDER_V5.slice(0, -1), SectionKind.ContentWords, SectionKind.Meta];

/** Sections of a version-8 shard, in file order: version 7's, then the content segments before meta. */
export const SECTION_ORDER_V8: readonly SectionKind[] = [...SECTION_ORDER_V7.slice(0, -1), SectionKind.ContentSegments, SectionKind.Meta];

/** Sections of a version 9 or 10 shard, in file order: version 8's, then the document groups, then meta. */
export const SECTION_ORDER: readonly SectionKind[] = [...SECTION_ORDER_V8.slice(0, -1), SectionKind.DocGroups, SectionKind.Meta];

/**
 * A file of sections as shards are: a header, a table of contents, then the sections in
 * its version's order (layout at the top of shard-reader.ts). Shards are one kind; symbols
 * files (below) are another, with their own magic and version.
 */
export interface SectionFileFormat {
  /** What the file is called in errors: "shard", "symbols file". */
  what: string;
  magic: string;
  version: number;
  minVersion: number;
  /** The sections of a file of this version, in file order. */
  order(version: number): readonly SectionKind[];
  /** The first version whose sections may be compressed (SECTION_COMPRESSED). */
  compressedFrom: number;
}

export const SHARD_FORMAT: SectionFileFormat = {
  what: 'shard',
  magic: SHARD_MAGIC,
  version: SHARD_VERSION,
  minVersion: SHARD_MIN_VERSION,
  compressedFrom: 10,
  order: (v) =>
    v === 2
      ? SECTION_ORDER_V2
      : v === 3
        ? SECTION_ORDER_V3
        : v === 4
          ? SECTION_ORDER_V4
          : v === 5
            ? SECTION_ORDER_V5
            : v <= 7
              ? SECTION_ORDER_V7
              : v === 8
                ? SECTION_ORDER_V8
                : SECTION_ORDER,
};

// A symbols file holds the symbol sections of one shard built without them: the symbols
// pass (symbols-pass.ts) writes it after the shard's content is committed and searchable,
// and the manifest names it beside the shard (ManifestShard.symbols). Opened with the shard
// (Shard.open), its sections stand for the shard's own (empty) symbol sections, and its
// meta (SymbolsFileMeta) for the shard's symbol fields. Writing the symbol sections beside a
// shard, a small part of it, not the whole shard again with its symbols (its content
// copied), is what makes the pass cheap.
//
// Version history:
//   1  first format: symbols, symbol-ngrams, symbol-postings, symbol-index (as in a version
//      6 shard), then meta.
//   2  content-words before meta: the pass builds the shard's content words too (a large
//      part of a shard's content build), so that the content is searchable that much sooner;
//      the shard holds an empty content-words section until then (shard-builder.ts
//      ShardJob.later).
//   3  compressed sections, as in a version 10 shard: a symbols file compresses its
//      sections when its shard compresses its own (a history shard's). Version 2's layout
//      otherwise.
export const SYMBOLS_MAGIC = 'TRAWLSYM';
export const SYMBOLS_EXT = '.symbols';

/** Sections of a version 1 symbols file, in file order. */
export const SYMBOLS_SECTION_ORDER_V1: readonly SectionKind[] = [
  SectionKind.Symbols,
  SectionKind.SymbolNgrams,
  SectionKind.SymbolPostings,
  SectionKind.SymbolIndex,
  SectionKind.Meta,
];
/** Sections of a version 2 or 3 symbols file, in file order. */
export const SYMBOLS_SECTION_ORDER: readonly SectionKind[] = [...SYMBOLS_SECTION_ORDER_V1.slice(0, -1), SectionKind.ContentWords, SectionKind.Meta];

export const SYMBOLS_FORMAT: SectionFileFormat = {
  what: 'symbols file',
  magic: SYMBOLS_MAGIC,
  version: 3,
  minVersion: 1,
  compressedFrom: 3,
  order: (v) => (v === 1 ? SYMBOLS_SECTION_ORDER_V1 : SYMBOLS_SECTION_ORDER),
};

/** The meta section of a symbols file: msgpack, as a shard's. */
export interface SymbolsFileMeta {
  /** The shard it belongs to: its content section's checksum and its document count. */
  shardContentHash: number;
  docCount: number;
  symbolKinds: string[];
  symbolFailures: number;
  symbolExtraction: string;
}

/** Bytes of a git blob id in the oids section. */
export const OID_SIZE = 20;

/** Symbol record (symbols section), 24 bytes; layout in symbol-records.ts. */
export const SYMBOL_RECORD_SIZE = 24;
/** parentKind value of a symbol without a parent. */
export const NO_KIND = 0xff;

/** Per-document flag bits (doc record, u16 at offset 26). */
export const DOC_FLAG_CRLF = 1; // the file has at least one "\r\n"
/**
 * The builder checked that the file holds no code point whose case folding reaches ASCII
 * (U+212A KELVIN SIGN, U+017F LONG S), so ASCII case folding equals Unicode folding on it.
 * Unset means "holds one" or "not known" (shards built before the flag existed).
 */
export const DOC_FLAG_ASCII_FOLDS_ONLY = 2;
/**
 * (Version 9.) The document is stored as a delta against the document before it
 * (content-delta.ts): the docs record's contentLen is the document's real length, its u32
 * at offset 20 the length of what is stored in the content section.
 */
export const DOC_FLAG_DELTA = 4;
/**
 * (Version 9.) What is stored of the document (its bytes, or with DOC_FLAG_DELTA its
 * delta) is deflated (raw deflate, RFC 1951); the stored length is at offset 20 as above.
 */
export const DOC_FLAG_DEFLATE = 8;
/**
 * A chain of deltas is at most this long counting the document that starts it: a delta
 * document has at most DELTA_CHAIN_MAX - 1 delta documents before it, back to a document
 * not stored as a delta, so reading a version applies at most DELTA_CHAIN_MAX - 1 deltas.
 * The builder starts a new chain at every DELTA_CHAIN_MAX-th version of a path; a reader
 * refuses a longer chain.
 */
export const DELTA_CHAIN_MAX = 16;

/** Shard file extension; temporary files carry a `.tmp` suffix until renamed into place. */
export const SHARD_EXT = '.trawl';

/** Why a file was recorded as skipped instead of indexed. */
export type SkipReason = 'binary' | 'too-large' | 'too-many-trigrams' | 'unreadable';

export interface SkippedFile {
  path: string;
  size: number;
  reason: SkipReason;
  /** The git blob (40 hex digits), so an incremental run does not read it again. */
  oid?: string;
}

/** Repository-level metadata stored in every shard of the repository. */
export interface ShardRepoMeta {
  /** host/path style name, e.g. github.com/org/repo, or a directory's base name. */
  name: string;
  id: number;
  codeHostType: string;
  /** Where the repository was indexed from (absolute path). */
  source: string;
  kind: 'git' | 'directory';
  /** The default branch (HEAD). The shard's branches are in its branches section. */
  branch: string;
  /** The default branch's commit when the shard was built. */
  commit: string;
  remoteUrl: string;
  archived: boolean;
  fork: boolean;
  /** Local repositories and directories are public: whoever can reach the daemon may read them. */
  visibility: 'public' | 'private';
}

/**
 * A repository of a shard (version 7: ShardMeta.members). Its documents are
 * [first, end), in static-rank order among themselves; its branches and tags are lists
 * [branchFirst, branchEnd) of the branches section, the first its default branch; its
 * lists hold only its own documents.
 */
export interface ShardMember {
  repo: ShardRepoMeta;
  first: number;
  end: number;
  branchFirst: number;
  branchEnd: number;
  /** Its files recorded as skipped, in the order they were given (path order). */
  skipped: SkippedFile[];
}

/** The META section: a msgpack record. */
export interface ShardMeta {
  /** The shard's repository; of a compound shard, its first member's (version 7 readers use `members`). */
  repo: ShardRepoMeta;
  /** Version 7: the repositories of the shard, by document range; absent before (one repository, `repo`). */
  members?: ShardMember[];
  shardIndex: number;
  docCount: number;
  contentBytes: number;
  /** Language names; a document's language is an index into this list. */
  languages: string[];
  /** Files recorded as skipped; of a compound shard, every member's (each member lists its own). */
  skipped: SkippedFile[];
  indexedAt: string;
  maxFileSize: number;
  maxTrigrams: number;
  builder: string;
  /** Kind names; a symbol's kind is an index into this list. */
  symbolKinds: string[];
  /** Files universal-ctags failed on or timed out on (they have no symbols). */
  symbolFailures: number;
  /** False when ctags was not available: sym: cannot match in this shard. */
  symbolsIndexed: boolean;
  /** What its symbols came from: the extraction rules' version and ctags' (symbols/extract.ts symbolExtraction); absent: before the C scanner (ctags for every language). */
  symbolExtraction?: string;
}

/** An n-gram table section: n, 0, ids[n], counts[n], offsets[n] as little-endian u32 (see ngram-table.ts). */
export function ngramTable(p: { ids: Uint32Array; counts: Uint32Array; offsets: Uint32Array }): Uint8Array {
  const n = p.ids.length;
  const out = new Uint32Array(2 + 3 * n);
  out[0] = n;
  out.set(p.ids, 2);
  out.set(p.counts, 2 + n);
  out.set(p.offsets, 2 + 2 * n);
  return new Uint8Array(out.buffer);
}
