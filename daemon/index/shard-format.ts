// Constants of the shard file format, shared by the writer and the reader.
// The format itself (layout, worked example, version history) is documented at the top
// of shard-reader.ts, where it is read.

export const SHARD_MAGIC = 'TRAWLIDX';

// Version history:
//   1  first format: header, table of contents, content, documents, names,
//      content and file-name trigram postings, metadata (msgpack with records).
export const SHARD_VERSION = 1;

export const HEADER_SIZE = 64;
export const TOC_ENTRY_SIZE = 24;
export const DOC_RECORD_SIZE = 32;
/** Sections start at multiples of 8 so typed-array views over the mapping are aligned. */
export const SECTION_ALIGN = 8;

export const enum SectionKind {
  Content = 1,
  Docs = 2,
  Names = 3,
  ContentNgrams = 4,
  ContentPostings = 5,
  NameNgrams = 6,
  NamePostings = 7,
  Meta = 8,
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
};

/** Sections every version-1 shard has, in file order. */
export const SECTION_ORDER: readonly SectionKind[] = [
  SectionKind.Content,
  SectionKind.Docs,
  SectionKind.Names,
  SectionKind.ContentNgrams,
  SectionKind.ContentPostings,
  SectionKind.NameNgrams,
  SectionKind.NamePostings,
  SectionKind.Meta,
];

/** Per-document flag bits (doc record, u16 at offset 26). */
export const DOC_FLAG_CRLF = 1; // the file has at least one "\r\n"

/** Shard file extension; temporary files carry a `.tmp` suffix until renamed into place. */
export const SHARD_EXT = '.trawl';

/** Why a file was recorded as skipped instead of indexed. */
export type SkipReason = 'binary' | 'too-large' | 'too-many-trigrams' | 'unreadable';

export interface SkippedFile {
  path: string;
  size: number;
  reason: SkipReason;
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
  branch: string;
  commit: string;
  remoteUrl: string;
}

/** The META section: a msgpack record. */
export interface ShardMeta {
  repo: ShardRepoMeta;
  shardIndex: number;
  docCount: number;
  contentBytes: number;
  /** Language names; a document's language is an index into this list. */
  languages: string[];
  skipped: SkippedFile[];
  indexedAt: string;
  maxFileSize: number;
  maxTrigrams: number;
  builder: string;
}
