// What a search is asked with and what it answers, whoever runs it: the searcher over this
// data dir (searcher.ts), or a cluster's fan-out over the nodes (cluster/fan-out.ts).

import type { ShapedFile, ShapeOptions } from './file-json.ts';
import type { OnChunk } from './stream-sink.ts';
import type { PlannedSearch } from './plan-cache.ts';
import type { RepositoryInfo, SearchRequest, SearchResponse, SearchStats, UnavailableShard } from './types.ts';

export type { UnavailableShard } from './types.ts';

export interface SearchOptions {
  /** The query as planned by planSearch(req) for this very request; planned here when absent. */
  planned?: PlannedSearch;
  /**
   * Who asks (http/caller.ts): the search workers share their time between callers, so
   * one caller's costly searches do not hold back another's. Default '' (nobody in particular).
   */
  caller?: string;
  /** Bypass the index: verify every document with the reference matcher (the oracle). */
  brute?: boolean;
  /**
   * The time budget in ms: then shards not yet started are skipped and running ones stop
   * at their next check; the answer holds what was found and is not exhaustive.
   */
  timeoutMs?: number;
  /**
   * Aborting stops the search like the time budget (a client that went away); aborting
   * with a ServiceError as the reason fails the search with it at once (see search()).
   */
  signal?: AbortSignal;
  /**
   * Only repositories this accepts are searched (the caller's visibility); the others'
   * shards are left out before any work, as if they were not indexed.
   */
  repoFilter?: (repo: { repoId: number; visibility: 'public' | 'private' }) => boolean;
  /**
   * Only these documents are examined, by shard: keyed `<repoId>/<shard file>` (the file
   * as the repository's manifest names it), each list ascending; a shard not named is not
   * searched. For a caller that already knows
   * which documents hold matches (a history's word counts): no posting list is read, and
   * every document named is still examined whole.
   */
  docs?: ReadonlyMap<string, readonly number[]>;
  /**
   * Find the candidates in this thread first, when the search reads at most a few shards
   * (searcher.ts CANDIDATES_HERE_SHARDS): as if given as `docs`, a few are then examined here,
   * more by the workers without reading the posting lists again. For a search known to be
   * narrow, such as a history's at one commit; default false.
   */
  candidatesHere?: boolean;
  /**
   * Streaming: receives the results in batches as shards finish, in shard order (each
   * batch ranked in itself); returning false stops the search. A promise holds the search
   * until it settles (a slow client slows the search instead of piling up results): the
   * stream's sink (stream-sink.ts). The returned response then has no files, and its stats
   * cover the whole search.
   */
  onChunk?: OnChunk;
}

/** A search's answer with its files in their wire form (file-json.ts); `search()` parses them. */
export interface WireResponse {
  stats: SearchStats;
  files: ShapedFile[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
  /** In a cluster: shards no live node could answer (types.ts SearchResponse). */
  unavailableShards?: UnavailableShard[];
}

/** What runs searches for the API: the Searcher over this data dir, or a cluster's fan-out (cluster/fan-out.ts). */
export interface SearchService {
  search(req: Required<SearchRequest>, options?: SearchOptions): Promise<SearchResponse>;
  searchWire(req: Required<SearchRequest>, options?: SearchOptions): Promise<WireResponse>;
  shapeOptions(req: Required<SearchRequest>): ShapeOptions;
}
