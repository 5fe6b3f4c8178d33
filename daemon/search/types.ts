// Shared vocabulary of the search stage: the request and response shapes of
// POST /api/search (docs/http-api.md 2.1–2.7 and section 10).

export interface SearchRequest {
  query: string;
  matches: number;
  contextLines?: number;
  whole?: boolean;
  isRegexEnabled?: boolean;
  isCaseSensitivityEnabled?: boolean;
}

export interface Location {
  /** 0-based UTF-8 byte offset from the start of the file (or of the path). */
  byteOffset: number;
  /** 1-based. */
  lineNumber: number;
  /** 1-based, in Unicode code points from the start of the line. */
  column: number;
}

export interface Range {
  start: Location;
  /** Exclusive. */
  end: Location;
}

export interface SymbolInfo {
  symbol: string;
  kind: string;
  parent?: { symbol: string; kind: string };
}

export interface Chunk {
  /** Whole lines, joined by "\n", without the final line terminator. */
  content: string;
  /** In file coordinates. */
  matchRanges: Range[];
  contentStart: Location;
  symbols: SymbolInfo[];
  /**
   * A diff result's hunk (`type:diff`, history/diff-result.ts): its header's numbers. The
   * chunk's content is then the hunk's lines, each signed `+` or `-`, and its ranges and
   * contentStart count in that content (line 1 is the hunk's first line), not in a file.
   */
  hunk?: HunkHeader;
}

/** A unified diff hunk's header, `@@ -oldStart,oldLines +newStart,newLines @@`. */
export interface HunkHeader {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

export interface CommitPerson {
  name: string;
  email: string;
  /** ISO 8601 with the committer's or author's offset. */
  date: string;
}

/** The commit of a diff or commit result. */
export interface CommitInfo {
  id: string;
  parents: string[];
  author: CommitPerson;
  committer: CommitPerson;
  /** The message (a commit result's: without its final newlines). */
  message: string;
}

/** What a diff result's chunks are the diff of: the commit against `parent` (null: a root commit, against the empty tree). */
export interface DiffInfo {
  parent: string | null;
  path: string;
  /** The path before a rename or copy. */
  oldPath?: string;
}

export interface FileResult {
  fileName: { text: string; matchRanges: Range[] };
  webUrl: string;
  repository: string;
  repositoryId: number;
  language: string;
  chunks: Chunk[];
  externalWebUrl?: string;
  branches: string[];
  content?: string;
  /** `content` holds only the file's first settings.http.maxSourceBytes (cut at a character boundary). */
  contentTruncated?: true;
  /** A `history:yes` answer: where in the default branch's history the file held matches (history/history-spans.ts). */
  history?: MatchHistory;
  /**
   * The commit of a `type:diff` result (whose chunks are hunks of its diff: `diff`) or of a
   * `type:commit` result (whose chunks are lines of its message); `branches` is then empty
   * and `webUrl` the commit's page.
   */
  commit?: CommitInfo;
  diff?: DiffInfo;
  /**
   * Only between the search workers and the history's spans (Plan.versions: search/file-json.ts
   * writeVersion), never in an answer: the version's git blob id and its number of matches.
   */
  version?: { blob: string; matches: number };
}

/** The spans during which a file held matches, and the commits at which their number changed, oldest first. */
export interface MatchHistory {
  /** `gone`: the first commit at which it held none again; null while it still does. */
  spans: Array<{ appeared: CommitRef; gone: CommitRef | null }>;
  changes: CommitRef[];
}

export interface CommitRef {
  id: string;
  /** Committer date, ISO 8601. */
  date: string;
}

/**
 * A file of a stream's `chunk` message (POST /api/stream_search): a FileResult and its
 * ranking score (rank.ts). A stream sends its files in shard order, batch by batch, each
 * batch ranked in itself; ordering all of them by rank-order.ts compareRanked (score, then
 * repository, then `fileName.text`) gives the order /api/search gives the same files.
 */
export interface StreamedFile extends FileResult {
  score: number;
}

export interface RepositoryInfo {
  id: number;
  codeHostType: string;
  name: string;
  displayName: string;
  webUrl: string;
}

export type FlushReason = 'FLUSH_REASON_UNKNOWN_UNSPECIFIED' | 'FLUSH_REASON_TIMER_EXPIRED' | 'FLUSH_REASON_FINAL_FLUSH' | 'FLUSH_REASON_MAX_SIZE';

export interface SearchStats {
  actualMatchCount: number;
  totalMatchCount: number;
  /** Nanoseconds. */
  duration: number;
  fileCount: number;
  filesSkipped: number;
  contentBytesLoaded: number;
  indexBytesLoaded: number;
  crashes: number;
  shardFilesConsidered: number;
  filesConsidered: number;
  filesLoaded: number;
  shardsScanned: number;
  shardsSkipped: number;
  shardsSkippedFilter: number;
  ngramMatches: number;
  ngramLookups: number;
  /** Nanoseconds. */
  wait: number;
  /** Nanoseconds. */
  matchTreeConstruction: number;
  /** Nanoseconds. */
  matchTreeSearch: number;
  regexpsConsidered: number;
  flushReason: FlushReason;
}

export interface SearchResponse {
  stats: SearchStats;
  files: FileResult[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
  /**
   * A cluster's shards that no live node could search (every node holding them was down or
   * failed); absent when there is none. Their matches are missing, so isSearchExhaustive is
   * false. (docs/deployment.md, "Failures")
   */
  unavailableShards?: UnavailableShard[];
}

export interface UnavailableShard {
  repositoryId: number;
  repository: string;
  /** The shard's file name in the repository's index. */
  shard: string;
  reason: string;
}

/** The counters a shard search measures; summed into SearchStats. */
export interface ShardCounters {
  contentBytesLoaded: number;
  indexBytesLoaded: number;
  shardFilesConsidered: number;
  filesConsidered: number;
  filesLoaded: number;
  filesSkipped: number;
  ngramMatches: number;
  ngramLookups: number;
  regexpsConsidered: number;
  matchTreeConstruction: number;
  matchTreeSearch: number;
}

export function emptyCounters(): ShardCounters {
  return {
    contentBytesLoaded: 0,
    indexBytesLoaded: 0,
    shardFilesConsidered: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    filesSkipped: 0,
    ngramMatches: 0,
    ngramLookups: 0,
    regexpsConsidered: 0,
    matchTreeConstruction: 0,
    matchTreeSearch: 0,
  };
}

export function emptyStats(): SearchStats {
  return {
    actualMatchCount: 0,
    totalMatchCount: 0,
    duration: 0,
    fileCount: 0,
    filesSkipped: 0,
    contentBytesLoaded: 0,
    indexBytesLoaded: 0,
    crashes: 0,
    shardFilesConsidered: 0,
    filesConsidered: 0,
    filesLoaded: 0,
    shardsScanned: 0,
    shardsSkipped: 0,
    shardsSkippedFilter: 0,
    ngramMatches: 0,
    ngramLookups: 0,
    wait: 0,
    matchTreeConstruction: 0,
    matchTreeSearch: 0,
    regexpsConsidered: 0,
    flushReason: 'FLUSH_REASON_UNKNOWN_UNSPECIFIED',
  };
}
