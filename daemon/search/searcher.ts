// The Searcher: runs a search over every shard of the data dir on the worker pool and
// takes the shards' answers in shard order (repository name, then shard number, so
// results are deterministic however the threads interleave). Each shard returns its first
// `matches` hits in static-rank order, scored (hit-score.ts) and shaped into finished file
// results by the worker that found them (shape-file.ts). One pipeline serves every kind of
// search and hands each shard's files to a sink (sink.ts): a blocking search's collects
// the files of all the shards it took and keeps the best `matches` ranges' worth
// (collect-sink.ts); a stream's sends them in batches as they come, each ranked in itself,
// at its client's pace (stream-sink.ts). The main thread merges and writes; it shapes a
// file itself only when a budget of match ranges ends inside it where its worker did not
// cut it, or when its worker left it unshaped.
//
// Index swaps: before each search the searcher reads the data dir's index-version (one
// small read) and, when it changed, reloads the manifests into a new snapshot. A search
// holds its snapshot from start to end, so it sees a repository either before or after a
// swap, never half of each; files a swap retired stay on disk past any search's life
// (manifest.ts), and `inUse()` tells a garbage collector which ones a running search holds.
//
// Damage: repositories whose index is broken (index-health.ts) are not in the snapshot. A
// shard that fails its checks during a search (ShardError, in a worker or while shaping
// here) gives no results; the search counts it in `crashes` (so it is not exhaustive) and
// reports it to the index view, which marks the repository broken: later searches leave
// the whole repository out until it is re-indexed.

import { join } from 'node:path';
import { ServiceError } from '../errors.ts';
import { shardsDir } from '../index/data-dir.ts';
import { IndexView, type IndexState } from '../index/index-health.ts';
import { manifestRepoName, shardFiles, type ManifestRepo } from '../index/manifest.ts';
import { Shard, ShardError } from '../index/shard-reader.ts';
import { planQuery, type Plan } from '../query/plan.ts';
import { DEFAULT_BASE_URL } from '../repos/web-urls.ts';
import { CollectSink } from './collect-sink.ts';
import { positiveLiterals } from './definition-first.ts';
import { SearchPool, type PoolRun } from './pool.ts';
import { loadedKiB, pack, pastCut, shardKey, shardRef, type PartialReply, type SearchTask, type ShardRef, type ShardReply } from './protocol.ts';
import { resultRepo, shapeInto, type ShapedFile, type ShapeOptions } from './shape-file.ts';
import type { Reshape, Sink } from './sink.ts';
import { StreamSink, type OnChunk } from './stream-sink.ts';
import { parseJson } from './wire.ts';
import { emptyCounters, emptyStats, type FileResult, type ShardCounters, type RepositoryInfo, type SearchRequest, type SearchResponse, type SearchStats } from './types.ts';

export type { SearchChunk } from './stream-sink.ts';

export interface SearcherOptions {
  dataDir: string;
  /** Worker threads; default: the machine's available parallelism; 0: searches run in this thread (SearchPool). */
  workers?: number;
  /** The daemon's public URL, for webUrl fields. */
  baseUrl?: string;
  /** The index as the process sees it (shared with the daemon's catalog); default: a view of its own. */
  view?: IndexView;
  /** `whole: true` gives at most this much of a file's content (settings.http.maxSourceBytes); default: all of it. */
  maxWholeBytes?: number;
}

/** A query planned ahead (planSearch): a caller checks the query before it waits for a turn, and the search does not plan it again. */
export interface PlannedSearch {
  plan: Plan;
  /** How long planning took (stats.matchTreeConstruction; counted in stats.duration). */
  planNs: number;
  /** The plan as the workers get it (msgpack) and its id: they keep a plan they know, with its matchers, by id. */
  planId: number;
  bytes: Uint8Array;
}

let nextPlanId = 1;

/**
 * Plans made recently, by the request fields a plan is made from (planQuery reads only
 * these): a query asked again is neither parsed nor encoded again, and gets the same planId,
 * so the workers keep its decoded plan and matchers instead of building them again
 * (measured under 16 connections of one rare literal: ~0.05 ms per search and worker, and
 * the planning and encoding here). Plans are not changed once made.
 */
const PLAN_CACHE_SIZE = 256;
const plans = new Map<string, { plan: Plan; planId: number; bytes: Uint8Array }>();

/** Plans a search's query: a FAILED_TO_PARSE_QUERY ServiceError when it is not valid. */
export function planSearch(req: Required<SearchRequest>): PlannedSearch {
  const t = process.hrtime.bigint();
  const key = `${req.isRegexEnabled ? 'r' : 'l'}${req.isCaseSensitivityEnabled ? 'c' : 'i'}${req.query}`;
  let known = plans.get(key);
  if (known) {
    plans.delete(key);
  } else {
    const plan = planQuery(req);
    known = { plan, planId: nextPlanId++, bytes: pack(plan) };
  }
  plans.set(key, known);
  if (plans.size > PLAN_CACHE_SIZE) plans.delete(plans.keys().next().value!);
  return { ...known, planNs: Number(process.hrtime.bigint() - t) };
}

export interface SearchOptions {
  /** The query as planned by planSearch(req) for this very request; planned here when absent. */
  planned?: PlannedSearch;
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
   * Streaming: receives the results in batches as shards finish, in shard order (each
   * batch ranked in itself); returning false stops the search. A promise holds the search
   * until it settles (a slow client slows the search instead of piling up results): the
   * stream's sink (stream-sink.ts). The returned response then has no files, and its stats
   * cover the whole search.
   */
  onChunk?: OnChunk;
}

interface ShardEntry {
  path: string;
  membership?: string;
  symbols?: string;
  /** shardKey(path, membership, symbols): how the workers and the shaping cache name the open shard. */
  key: string;
  repoId: number;
  /** The manifest's generation: what a shard error marks broken. */
  generation: number;
  /** From the manifest; undefined for manifests written before it was recorded. */
  repo?: ManifestRepo;
  /** Which documents have passed their checksum, shared by every thread that reads the file (Shard.open). */
  verified: SharedArrayBuffer;
}

interface Snapshot {
  entries: ShardEntry[];
  /** Repositories left out because their index is broken, and how many shards each had. */
  broken: Array<{ repoId: number; visibility: 'public' | 'private'; shards: number }>;
  /** Searches running on this snapshot. */
  users: number;
}

export class Searcher {
  private readonly options: SearcherOptions;
  private readonly view: IndexView;
  private pool: SearchPool | undefined;
  private current: Snapshot = { entries: [], broken: [], users: 0 };
  /** Older snapshots that searches still hold. */
  private readonly held = new Set<Snapshot>();
  /** The index state the current snapshot was made from. */
  private state: IndexState | undefined;
  private readonly mapped = new Map<string, Shard>();
  /** The documents-checked bitmap of each shard file a snapshot names (ShardEntry.verified). */
  private readonly bitmaps = new Map<string, SharedArrayBuffer>();
  /** The files whose bitmaps the workers have; null: the pool has not been told of changes. */
  private shared: Set<string> | null = null;

  constructor(options: SearcherOptions) {
    this.options = options;
    this.view = options.view ?? new IndexView(options.dataDir);
    this.refresh();
  }

  /** Re-reads the manifests: picks up repositories indexed, re-indexed or removed since the last call. */
  refresh(): void {
    this.snapshot(this.view.reload());
  }

  /** Makes the current snapshot from an index state. */
  private snapshot(state: IndexState): void {
    this.state = state;
    const entries: ShardEntry[] = [];
    const manifests = [...state.manifests].sort((a, b) => {
      const x = manifestRepoName(a);
      const y = manifestRepoName(b);
      return x < y ? -1 : x > y ? 1 : a.repoId - b.repoId;
    });
    for (const m of manifests) {
      const dir = shardsDir(this.options.dataDir, m.repoId);
      for (const s of m.shards) {
        const { path, membership, symbols } = shardFiles(dir, s);
        let verified = this.bitmaps.get(path);
        if (!verified) {
          verified = new SharedArrayBuffer(s.docs);
          this.bitmaps.set(path, verified);
        }
        const entry: ShardEntry = { path, key: shardKey(path, membership, symbols), repoId: m.repoId, generation: m.generation, verified };
        if (membership) entry.membership = membership;
        if (symbols) entry.symbols = symbols;
        if (m.repo) entry.repo = m.repo;
        entries.push(entry);
      }
    }
    // A broken repository whose visibility is unknown (its manifest is lost) counts as private.
    const broken = state.broken.map((b) => ({ repoId: b.repoId, visibility: b.visibility ?? ('private' as const), shards: Math.max(1, b.shards ?? 1) }));
    if (this.current.users > 0) this.held.add(this.current);
    this.current = { entries, broken, users: 0 };
    this.release();
  }

  /** Shard files (and membership and symbols files) that a running search may still open. */
  inUse(): Set<string> {
    const paths = new Set<string>();
    for (const snap of [this.current, ...this.held]) {
      for (const e of snap.entries) {
        paths.add(e.path);
        if (e.membership) paths.add(e.membership);
        if (e.symbols) paths.add(e.symbols);
      }
    }
    return paths;
  }

  /** Starts the worker threads now rather than at the first search (a daemon's first answer would wait ~0.5 s). */
  warm(): void {
    this.startPool();
  }

  private startPool(): SearchPool {
    if (!this.pool) {
      this.pool = new SearchPool(this.options.workers);
      this.shared = null;
      this.shareBitmaps();
    }
    return this.pool;
  }

  /** Worker threads searching (0 when they run in this thread, or before the first search). */
  get threads(): number {
    return !this.pool || this.pool.inThread ? 0 : this.pool.size;
  }

  /** Shard tasks running on the workers and waiting for one (the metrics; zero when idle). */
  load(): { busy: number; queued: number } {
    return this.pool?.load() ?? { busy: 0, queued: 0 };
  }

  /** Asks the worker threads to collect their heaps (the daemon's searches have gone quiet). */
  collectHeaps(): void {
    this.pool?.collectHeaps();
  }

  get shardCount(): number {
    return this.current.entries.length;
  }

  /** Repositories left out because their index is broken. */
  get brokenCount(): number {
    return this.current.broken.length;
  }

  /** Forgets open shards no snapshot names any more (workers and the shaping cache). */
  private release(): void {
    const live = new Set<string>();
    for (const snap of [this.current, ...this.held]) for (const e of snap.entries) live.add(e.key);
    const gone = [...this.mapped.keys()].filter((k) => !live.has(k));
    for (const k of gone) this.mapped.delete(k);
    if (gone.length > 0) this.pool?.forget(gone);
    const files = new Set<string>();
    for (const snap of [this.current, ...this.held]) for (const e of snap.entries) files.add(e.path);
    for (const path of this.bitmaps.keys()) if (!files.has(path)) this.bitmaps.delete(path);
    this.shareBitmaps();
  }

  /** Tells the workers of the bitmaps they lack and of the ones no snapshot names any more. */
  private shareBitmaps(): void {
    if (!this.pool) return;
    const shared = (this.shared ??= new Set());
    const add: Array<[string, SharedArrayBuffer]> = [];
    for (const [path, bitmap] of this.bitmaps) if (!shared.has(path)) add.push([path, bitmap]);
    const gone = [...shared].filter((path) => !this.bitmaps.has(path));
    if (add.length === 0 && gone.length === 0) return;
    for (const [path] of add) shared.add(path);
    for (const path of gone) shared.delete(path);
    this.pool.shareVerified(add, gone);
  }

  /** A search, its files as objects (the wire form parsed; see searchWire). */
  async search(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<SearchResponse> {
    const res = await this.searchWire(req, options);
    return { stats: res.stats, files: res.files.map(parseFile), repositoryInfo: res.repositoryInfo, isSearchExhaustive: res.isSearchExhaustive };
  }

  /**
   * A search, its files in their wire form (JSON bytes, shape-file.ts): what the HTTP API
   * writes as they are. A search aborted with a ServiceError as the reason (the server's
   * shutdown deadline) fails with it at once.
   */
  searchWire(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<WireResponse> {
    const running = this.searchHeld(req, options);
    const signal = options.signal;
    if (!signal) return running;
    // Aborted with a ServiceError (the server's shutdown deadline), the search fails with it
    // at once: the caller answers now while the shards stop behind it (a running shard sees
    // the cancel at its next check, which on a loaded machine can come after the server
    // has cut what did not end).
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        if (signal.reason instanceof ServiceError) reject(signal.reason);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      running.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  private async searchHeld(req: Required<SearchRequest>, options: SearchOptions): Promise<WireResponse> {
    const state = this.view.current();
    if (state !== this.state) this.snapshot(state);
    const snapshot = this.current;
    snapshot.users++;
    try {
      const filter = options.repoFilter;
      const entries = filter ? snapshot.entries.filter((e) => filter({ repoId: e.repoId, visibility: e.repo?.visibility ?? 'public' })) : snapshot.entries;
      // The shards of broken repositories the caller may see count as failed: the answer
      // says it is not exhaustive, as it did when such a shard failed in the search.
      const lost = (filter ? snapshot.broken.filter((b) => filter(b)) : snapshot.broken).reduce((n, b) => n + b.shards, 0);
      const res = await this.searchSnapshot(entries, req, options, lost);
      // Stopped with a reason the caller must hear (the server's shutdown deadline), not
      // because its client left: partial results would pass for a (non-exhaustive) answer.
      const reason: unknown = options.signal?.reason;
      if (reason instanceof ServiceError) throw reason;
      return res;
    } finally {
      snapshot.users--;
      if (snapshot.users === 0 && this.held.delete(snapshot)) this.release();
    }
  }

  private async searchSnapshot(shards: ShardEntry[], req: Required<SearchRequest>, options: SearchOptions, lostShards: number): Promise<WireResponse> {
    const started = process.hrtime.bigint();
    const planned = options.planned ?? planSearch(req);
    const { plan, planNs } = planned;
    // A plan made before the search waited for its turn counts as the search's own work.
    const aheadNs = options.planned ? planNs : 0;
    const pool = this.startPool();
    const limit = req.matches;
    const cancel = new SharedArrayBuffer(4);
    // Stopping sets the flag the running shards check and skips the ones not started. (The
    // sink stops the search only once results flow, after the run has started.)
    let run: PoolRun | undefined;
    const stop = () => {
      Atomics.store(new Int32Array(cancel), 0, 1);
      run?.stop();
    };
    const shape: ShapeOptions = { contextLines: req.contextLines, whole: req.whole, maxWholeBytes: this.options.maxWholeBytes ?? Infinity, baseUrl: this.options.baseUrl ?? DEFAULT_BASE_URL };
    const reshape: Reshape = (f, budget) => this.reshape(shards[f.shard]!, shape, f, budget);
    const sink: Sink = options.onChunk ? new StreamSink(limit, pool.size, reshape, options.onChunk, stop) : new CollectSink(limit, reshape);
    const cut = sink.cut;
    // Past its cut a blocking search with literals still takes every shard's definitions of
    // the query's names (definition-first.ts); a stream stops at its cut.
    const definitionsPastCut = sink.batch && positiveLiterals(plan).length > 0;
    const task: SearchTask = { planId: planned.planId, plan: planned.bytes, limit, brute: options.brute === true, shards: shards.map(refOf), cut, batch: sink.batch, definitionsPastCut, shape };
    run = pool.start(task, cancel, sink.ahead);
    const timer = options.timeoutMs !== undefined ? setTimeout(stop, options.timeoutMs) : undefined;
    options.signal?.addEventListener('abort', stop, { once: true });
    if (options.signal?.aborted) stop();

    const stats = emptyStats();
    stats.matchTreeConstruction = planNs;
    stats.crashes = lostShards;
    let ranges = 0;
    /** KiB of content the shards taken have read (as the cut counts it). */
    let read = 0;
    let more = false;
    /** Whether the files of shard `i` can still be taken: before the cut, the client still there. */
    const taking = (): boolean => (!pastCut(cut, ranges, read) || definitionsPastCut) && !options.signal?.aborted;
    // A stream's files of shards not yet done (protocol.ts, PartialReply), by shard, taken
    // in shard order like the rest; `arrived` wakes the loop waiting on their shard.
    const early: PartialReply[][] = shards.map(() => []);
    let current = -1;
    let arrived: (() => void) | undefined;
    run.onPartial = (shard, p) => {
      early[shard]!.push(p);
      if (shard === current) arrived?.();
    };
    const takeEarly = async (i: number): Promise<void> => {
      const parts = early[i]!.splice(0);
      if (parts.length === 0) return;
      for (const p of parts) {
        if (p.files.length === 0 || !taking()) continue;
        const crashes = sink.crashes;
        sink.take(p.files, p.repository);
        stats.crashes += sink.crashes - crashes;
      }
      await sink.partDone();
    };
    try {
      for (let i = 0; i < shards.length; i++) {
        current = i;
        let answered = false;
        void run.replies[i]!.then(() => (answered = true));
        for (;;) {
          await takeEarly(i);
          if (answered) break;
          const next = Promise.race([run.replies[i]!, new Promise<void>((r) => (arrived = r))]);
          await sink.waiting(next);
          await next;
          arrived = undefined;
        }
        await takeEarly(i);
        const reply: ShardReply = await run.replies[i]!;
        const before = sink.shardStats ? { ...stats } : undefined;
        if (reply.status === 'skipped') {
          stats.shardsSkipped++;
        } else {
          stats.wait += reply.queuedNs;
          if (reply.status === 'failed') {
            stats.crashes++;
            if (reply.corrupt) this.view.report(shards[i]!.repoId, shards[i]!.generation, reply.error);
          } else {
            const r = reply.result;
            for (const k of COUNTERS) stats[k] += r.counters[k];
            if (r.filtered) stats.shardsSkippedFilter++;
            else stats.shardsScanned++;
            stats.totalMatchCount += r.found;
            if (r.more) more = true;
            // The shards taken before the cut count, in shard order; the files of a shard after
            // it are dropped (their work is counted), whatever the threads' timing, as are
            // those of shards already in when the search was aborted: nobody waits for them.
            // Past the cut a blocking search with literals keeps each shard's definitions
            // (definition-first.ts: examined first and whole, so which ones does not depend on
            // when the shard saw the cut either).
            const past = pastCut(cut, ranges, read);
            const files = past && definitionsPastCut ? reply.files.filter((f) => f.hit.definition) : reply.files;
            if (files.length > 0 && taking()) {
              const crashes = sink.crashes;
              sink.take(files, reply.repository);
              stats.crashes += sink.crashes - crashes;
            }
            ranges += r.found;
            read += loadedKiB(r.counters.contentBytesLoaded);
            if (pastCut(cut, ranges, read)) {
              if (definitionsPastCut) run.definitionsOnly();
              else stop();
            }
          }
        }
        if (before) await sink.shardDone(delta(before, stats));
        if (sink.ahead !== Infinity) run.grant(i + 1 + sink.ahead);
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
    }
    const crashes = sink.crashes;
    await sink.end();
    stats.crashes += sink.crashes - crashes;
    stats.actualMatchCount = sink.actual;
    stats.flushReason = 'FLUSH_REASON_FINAL_FLUSH';
    const response: WireResponse = { stats, files: sink.files, repositoryInfo: sink.repositoryInfo, isSearchExhaustive: false };
    stats.fileCount = sink.fileCount;
    stats.duration = Number(process.hrtime.bigint() - started) + aheadNs;
    response.isSearchExhaustive =
      !more && stats.filesSkipped === 0 && stats.shardsSkipped === 0 && stats.crashes === 0 && stats.totalMatchCount === stats.actualMatchCount;
    return response;
  }

  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
    this.mapped.clear();
  }

  private shard(entry: ShardEntry): Shard {
    let s = this.mapped.get(entry.key);
    if (!s) {
      s = Shard.open(entry.path, entry);
      this.mapped.set(entry.key, s);
    }
    return s;
  }

  /**
   * Shapes a file here with at most `budget` match ranges: the last file a search's budget
   * takes when its worker cut it elsewhere, or one its worker left unshaped. A shard that
   * fails its checks here is reported and the ShardError thrown on to the sink.
   */
  private reshape(entry: ShardEntry, shape: ShapeOptions, f: ShapedFile, budget: number): ShapedFile {
    try {
      const shard = this.shard(entry);
      // (Field by field: a message's file reads its path and hit on demand, getters a spread would not copy.)
      const g: ShapedFile = { json: f.json, count: f.count, total: f.total, score: f.score, repositoryId: f.repositoryId, repository: f.repository, path: f.path, hit: f.hit, shard: f.shard };
      shapeInto(g, shard, resultRepo(entry.repoId, refOf(entry).repo, shard, shape.baseUrl), shape, budget);
      return g;
    } catch (err) {
      if (err instanceof ShardError) this.damaged(entry, err);
      throw err;
    }
  }

  /** A shard failed its checks while shaping: forget its mapping, mark its repository broken. */
  private damaged(entry: ShardEntry, err: ShardError): void {
    this.mapped.delete(entry.key);
    this.view.report(entry.repoId, entry.generation, err.message);
  }
}

/** A search's answer with its files in their wire form (shape-file.ts); `search()` parses them. */
export interface WireResponse {
  stats: SearchStats;
  files: ShapedFile[];
  repositoryInfo: RepositoryInfo[];
  isSearchExhaustive: boolean;
}

/** A file in its wire form as an object. */
export function parseFile(f: ShapedFile): FileResult {
  return parseJson(f.json) as FileResult;
}

function refOf(s: ShardEntry): ShardRef {
  return shardRef(s.path, s.repoId, s.membership, s.symbols, s.repo);
}

/** The counters a shard reports, summed into the search's stats. */
const COUNTERS = Object.keys(emptyCounters()) as Array<keyof ShardCounters>;

/** What changed in the numeric stats between two moments (a batch's share). */
function delta(before: SearchStats, after: SearchStats): SearchStats {
  const d = emptyStats();
  for (const k of Object.keys(d) as Array<keyof SearchStats>) {
    if (k !== 'flushReason') (d as unknown as Record<string, number>)[k] = (after[k] as number) - (before[k] as number);
  }
  return d;
}
