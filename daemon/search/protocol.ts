// Messages between the search pool (main thread) and the search workers.
//
// A search is posted once to every worker, not once per shard: its shards are a list the
// workers claim from, one at a time, through a small shared control block, so a worker
// goes from one shard to the next without a round trip through the main thread (a task
// sent and answered per shard cost a rare literal's search more than the shards' own
// work did). A stream's shards are posted back as
// each is done, so results flow while the rest run; a blocking search's come back in one
// message per worker (SearchTask.batch). A reply holds the shard's files, scored and
// shaped into their wire form by the worker (file-json.ts).
//
// The control block (an Int32Array over a SharedArrayBuffer, CONTROL_* below):
//   [NEXT]     the next shard to claim; a worker claims shard i by moving NEXT from i to
//              i + 1 with a compare-and-swap, never past GRANTED
//   [GRANTED]  shards [0, GRANTED) may be claimed: a blocking search grants all of them at
//              once, a stream grants a few more as its client drains (backpressure)
//   [FOUND]    match ranges found by the shards answered so far, and
//   [LOADED]   KiB of content they loaded (each shard's rounded up); once the two are past
//              the task's cut (pastCut) no shard is claimed. Shards are claimed in order
//              and pastCut only turns true as the counts grow, so every shard not yet
//              claimed then lies past the point where the searcher, adding the shards'
//              counts in shard order, stops taking them: skipping it changes nothing
//   [DEFS_ONLY] set by the searcher once it has every shard up to its cut in hand: the
//              shards still running then look only at the documents defining a name of the
//              query (definitionsPastCut below); a shard claimed past the cut does from its
//              start
//   [CLAIMS+i] the id of the worker that claimed shard i (0: none yet), so that the shards
//              of a worker that dies are failed and the others go on
// The cancel flag (its own SharedArrayBuffer, non-zero: stop) is read before every document.
//
// Each worker also shares an attention counter with the pool (an Int32Array of one, given
// when the worker starts): the pool adds one when it posts a worker a search or a resume
// while the worker holds a search of another caller, so that a worker busy with one
// caller's search learns, before its next document or term, that another caller's may be
// waiting for it (search-worker.ts shares its time between callers).
//
// Bodies are msgpackr-encoded with records enabled (several times faster to decode than
// JSON here), the records of the objects every search sends (RECORDS) declared up front on
// both sides: a message then names them instead of defining them again, and the reader of
// each is built once per thread, not once per message (which made decoding a blocking
// search's shard replies several times faster). An object of another shape still travels,
// defined in its message.

import { Packr } from 'msgpackr';
import type { ManifestRepo } from '../index/manifest.ts';
import type { ListedRepo, ShapedFile, ShapeOptions } from './file-json.ts';
import type { ShardSearchResult } from './shard-search.ts';
import { emptyCounters, type RepositoryInfo } from './types.ts';

export const CONTROL_NEXT = 0;
export const CONTROL_GRANTED = 1;
export const CONTROL_FOUND = 2;
export const CONTROL_LOADED = 3;
export const CONTROL_DEFS_ONLY = 4;
export const CONTROL_CLAIMS = 5;

/**
 * When a search stops taking shards: once it holds more than `ranges` match ranges and
 * either more than `rankedRanges` or more than `loadedKiB` of content read. A blocking
 * search ranks what it holds, so it reads on past `matches` (its cut is wider); a stream
 * stops at `matches`.
 */
export interface Cut {
  ranges: number;
  rankedRanges: number;
  loadedKiB: number;
}

/** Whether a search holding `ranges` match ranges, having read `loadedKiB` of content, takes no more shards. */
export function pastCut(cut: Cut, ranges: number, loadedKiB: number): boolean {
  return ranges > cut.ranges && (ranges > cut.rankedRanges || loadedKiB > cut.loadedKiB);
}

/** A shard's content bytes loaded as the cut counts them. */
export const loadedKiB = (bytes: number): number => Math.ceil(bytes / 1024);

/**
 * One shard of the index: its file, membership and symbols files, and the repositories of
 * it that serve (a compound shard's members whose manifests name it; the others are
 * tombstoned there), each with its current record. Made by shardRef(). The workers get
 * the index's shards once per index version (a catalog: ToWorker 'catalog'), and a search
 * names them by their place in it.
 */
export interface ShardRef {
  shardPath: string;
  /** The membership file that replaces the shard's branch lists (manifest.ts). */
  membership?: string;
  /** The symbols file that replaces the shard's symbol sections (manifest.ts). */
  symbols?: string;
  /** Its serving repositories, by ascending member. */
  members: MemberRef[];
}

/** A catalog's shard in a catalog sent with a `base`: a place in the base, or a shard the base does not hold. */
export type CatalogItem = number | ShardRef;

/** A repository of a shard (shard-reader.ts members): its member number, id and current record. */
export interface MemberRef {
  member: number;
  repoId: number;
  /** The repository's current record, from its manifest (it may have changed since the build). */
  repo?: ListedRepo;
}

/** A search as the workers get it: the plan once, and the shards to claim from. */
export interface SearchTask {
  /**
   * The search's plan, msgpack-encoded once by the searcher; a worker decodes it (and
   * builds its matchers) once per search, keyed by planId.
   */
  planId: number;
  plan: Uint8Array;
  limit: number;
  /** Brute force: bypass the index, verify every document with the reference matcher. */
  brute: boolean;
  /** The catalog (SearchPool.catalog) its shards are named in. */
  catalog: number;
  /** Its shards, in the order they are claimed and answered: places in the catalog. */
  shards: number[];
  /**
   * Per shard of `shards`, the members searched when the caller may see only some of its
   * repositories (indexes into the ShardRef's `members`); null or absent: all of them.
   */
  only?: Array<number[] | null> | undefined;
  /**
   * Per shard of `shards`, the only documents examined, ascending (SearchOptions.docs);
   * absent: every candidate.
   */
  docs?: number[][] | undefined;
  /** When no more shards are claimed (the searcher's cut). */
  cut: Cut;
  /**
   * Past the cut, go on claiming, each shard searched for the documents defining a name of
   * the query only (search/definition-first.ts): a blocking search with literals ranks the
   * definitions of the whole index, whichever shard holds them.
   */
  definitionsPastCut: boolean;
  /** How the hits are shaped into file results (file-json.ts), in the worker that found them. */
  shape: ShapeOptions;
  /**
   * Post a worker's replies together when it has claimed all it can (a blocking search,
   * which ranks nothing before every shard is in: one message per worker instead of one
   * per shard), rather than each as soon as it is done (a stream).
   */
  batch: boolean;
  /**
   * The shards from this index on are searched speculatively (shard-search.ts `speculate`):
   * a cluster's coordinator bets that its search will be past the cut before them
   * (cluster/fan-out.ts) and asks again, whole, any it needs after all. NO_SPECULATION
   * (every shard whole) unless a coordinator says otherwise.
   */
  speculateFrom: number;
  /**
   * Who asked (http/caller.ts; '' when nobody in particular): a worker shares its time
   * between the searches of different callers (search-worker.ts), so that one caller's
   * costly searches do not hold back everybody else's.
   */
  caller: string;
}

/** SearchTask.speculateFrom of a task that searches every shard whole. */
export const NO_SPECULATION = 0x7fffffff;

/**
 * A shard searched speculatively is searched whole after all when at most this many of its
 * documents can match (term-stats.ts planMaxDocs, or its candidates: shard-search.ts
 * SPECULATE_PROBE_DOCS): examining them costs about what the round trip to ask for it again
 * would, and the answer is then final.
 */
export const SPECULATE_WHOLE_DOCS = 64;

export type ShardReply =
  /**
   * `files`: the hits shaped, in the shard's order (`result.hits` is empty: each file holds
   * its hit); `repositories`: the repositoryInfo entries of its files' repositories.
   */
  | { status: 'done'; result: ShardSearchResult; files: ShapedFile[]; repositories: RepositoryInfo[]; queuedNs: number }
  /** Not run: the search stopped (it had enough, its time was up, its client left). */
  | { status: 'skipped' }
  /** `corrupt`: the shard failed its checks (ShardError), as opposed to a crash of the worker. */
  | { status: 'failed'; error: string; queuedNs: number; corrupt?: boolean };

/** Main thread → worker. */
export type ToWorker =
  /** A new search: `body` is a packed SearchTask; `sentAt` (ms since the epoch) gives each shard's `wait`. */
  | { kind: 'search'; run: number; body: Uint8Array; control: SharedArrayBuffer; cancel: SharedArrayBuffer; sentAt: number }
  /**
   * The shards of an index version, named by searches by their place (SearchTask.catalog):
   * sent once per version rather than with every search (thousands of repositories made
   * every search's message hundreds of KB). `body` is a packed ShardRef[]; with `base`,
   * the catalog this worker was sent last (CatalogItem), whose unchanged shards are named
   * by their place in it, so that the worker keeps what it worked out for them.
   */
  | { kind: 'catalog'; id: number; body: Uint8Array; base?: number }
  /** No search will name this catalog again. */
  | { kind: 'drop-catalog'; id: number }
  /** More shards of a known search were granted (or it stopped): claim again. */
  | { kind: 'resume'; run: number }
  /** Drop the mapping of these shard files (a re-index retired them). */
  | { kind: 'forget'; keys: string[] }
  /**
   * The checks of shard and symbols files (by path; index/section-checks.ts): every thread
   * that reads a file shares them, so a section's or a document's checksum is computed once
   * per process. `gone`: files no search will open again.
   */
  | { kind: 'verified'; add: Array<[string, SharedArrayBuffer]>; gone: string[] }
  /** Searches have gone quiet: collect the heap now (runtime/collect-heap.ts), and drop the message buffers kept. */
  | { kind: 'collect' }
  /** A message buffer of this worker's, every file of it written: for its next messages (file-codec.ts recycle). */
  | { kind: 'recycle'; buffer: ArrayBuffer };

/**
 * Worker → main thread: replies of shards of a search (`body` holds a packed ShardReply[],
 * one per entry of `shards`), or with `partial`, files of the one shard in `shards` that a
 * stream gets before the shard is done (a packed PartialReply; its reply follows). `body`
 * is file-codec.ts's packMessage: the files travel after the packed value (one group per
 * reply, in order, or the partial's one group), whose own `files` are empty.
 */
export interface FromWorker {
  run: number;
  shards: number[];
  body: Uint8Array;
  partial?: true;
}

/** Files of a stream's shard shaped before the shard is done (search-worker.ts, PartialHits). */
export interface PartialReply {
  files: ShapedFile[];
  /** The repositoryInfo entries of the files' repositories. */
  repositories: RepositoryInfo[];
}

/**
 * A ShardRef with its keys always present, in the order RECORDS declares (an absent file or
 * repository is undefined, not a missing key): an object of another key list is defined
 * again in every message that carries it.
 */
export function shardRef(shardPath: string, members: MemberRef[], membership?: string, symbols?: string): ShardRef {
  return { shardPath, membership, symbols, members };
}

/** A MemberRef with its keys always present (as shardRef). */
export function memberRef(member: number, repoId: number, repo?: ManifestRepo): MemberRef {
  const listed: ListedRepo | undefined = repo && {
    name: repo.name,
    archived: repo.archived,
    fork: repo.fork,
    visibility: repo.visibility,
    displayName: repo.displayName,
    codeHostType: repo.codeHostType,
    externalWebUrl: repo.externalWebUrl || undefined,
  };
  return { member, repoId, repo: listed };
}

/** How workers and the searcher key an open shard: the file and the files opened with it (a new membership or symbols file is another shard). */
export function shardKey(shardPath: string, membership?: string, symbols?: string): string {
  return membership || symbols ? `${shardPath}\0${membership ?? ''}\0${symbols ?? ''}` : shardPath;
}

/**
 * The key lists, in creation order, of the objects every search exchanges (searcher.ts,
 * search-worker.ts, shard-search.ts, file-json.ts build them so): the same list on both
 * sides of every message. A test checks a real reply's objects against it.
 */
export const RECORDS: readonly string[][] = [
  ['status', 'result', 'files', 'repositories', 'queuedNs'],
  ['hits', 'counters', 'filtered', 'more', 'found', 'termDocs', 'speculative'],
  Object.keys(emptyCounters()),
  ['id', 'codeHostType', 'name', 'displayName', 'webUrl'],
  ['status'],
  // (TaskParams as mergeSearch makes it, then its shards: pool.start({ ...task, catalog, shards, only, docs }).)
  ['planId', 'plan', 'limit', 'brute', 'cut', 'batch', 'definitionsPastCut', 'shape', 'speculateFrom', 'caller', 'catalog', 'shards', 'only', 'docs'],
  ['shardPath', 'membership', 'symbols', 'members'],
  ['member', 'repoId', 'repo'],
  ['name', 'archived', 'fork', 'visibility', 'displayName', 'codeHostType', 'externalWebUrl'],
  ['ranges', 'rankedRanges', 'loadedKiB'],
  ['contextLines', 'whole', 'maxWholeBytes', 'baseUrl', 'versions'],
];

// No structure beyond RECORDS is shared (maxSharedStructures): one learnt from a message
// on one side would be unknown on the other.
export const packr = new Packr({ useRecords: true, structures: RECORDS.map((k) => [...k]), maxSharedStructures: RECORDS.length } as ConstructorParameters<
  typeof Packr
>[0]);

/**
 * `value` packed into a buffer of its own. packr.pack returns a view into the packer's
 * larger working buffer, and postMessage clones a typed array's whole underlying buffer:
 * posting such a view copied the packer's unrelated bytes with every message, more work
 * than the message itself. A buffer of its own is also transferable (the replies move,
 * not copy).
 */
export function pack(value: unknown): Uint8Array<ArrayBuffer> {
  return new Uint8Array(packr.pack(value));
}
