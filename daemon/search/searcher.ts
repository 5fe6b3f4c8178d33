// The Searcher: runs a search over every shard of the data dir on the worker pool and
// takes the shards' answers in shard order (repository name, then shard number, so
// results are deterministic however the threads interleave). Each shard returns its first
// `matches` hits in static-rank order, scored (hit-score.ts). A blocking search ranks the
// hits of all the shards it took together and shapes only the best `matches` ranges'
// worth; it stops taking shards once RANK_DEPTH × `matches` ranges are in hand. A stream
// shapes each shard's hits as they come, in batches ranked in themselves, and stops at
// `matches`.
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
import { manifestRepoName, type ManifestRepo } from '../index/manifest.ts';
import { Shard, ShardError } from '../index/shard-reader.ts';
import { planQuery, type Plan } from '../query/plan.ts';
import { DEFAULT_BASE_URL, displayName, externalFileUrl, fileWebUrl, repoWebUrl } from '../repos/web-urls.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import { SearchPool } from './pool.ts';
import { loadedKiB, packr, pastCut, shardKey, type Cut, type SearchTask, type ShardRef, type ShardReply } from './protocol.ts';
import { buildChunks, locateRanges, nameRanges, wholeContent } from './shape.ts';
import type { ShardHit } from './shard-search.ts';
import { compareRanked } from './rank.ts';
import { positiveLiterals } from './definition-first.ts';
import type { SymbolDef } from '../symbols/ctags.ts';
import { emptyStats, type Chunk, type FileResult, type FlushReason, type RepositoryInfo, type SearchRequest, type SearchResponse, type SearchStats } from './types.ts';

export interface SearcherOptions {
  dataDir: string;
  /** Worker threads; default: the machine's available parallelism. */
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
}

/** Plans a search's query: a FAILED_TO_PARSE_QUERY ServiceError when it is not valid. */
export function planSearch(req: Required<SearchRequest>): PlannedSearch {
  const t = process.hrtime.bigint();
  const plan = planQuery(req);
  return { plan, planNs: Number(process.hrtime.bigint() - t) };
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
   * until it settles (a slow client slows the search instead of piling up results). The
   * returned response then has no files, and its stats cover the whole search.
   */
  onChunk?: (chunk: SearchChunk) => boolean | void | Promise<boolean | void>;
}

/** One batch of a streamed search; `stats` covers this batch only. */
export interface SearchChunk {
  stats: SearchStats;
  files: FileResult[];
  repositoryInfo: RepositoryInfo[];
}

/**
 * Shards a stream's workers may run ahead of the one being sent, per worker. A stream holds
 * at most workers × STREAM_AHEAD_PER_WORKER shard replies beyond the batch being written
 * (each at most `matches` match ranges), whatever its client's speed.
 */
const STREAM_AHEAD_PER_WORKER = 2;

/**
 * A blocking search that holds its `matches` ranges stops taking shards once it holds this
 * many times `matches` (the best `matches` are chosen among those: with many repositories,
 * the first ones in shard order that hold them; each shard's own best files come first),
 * or once the shards taken have read RANK_READ_KIB of content: reading on for a rare regex
 * match costs more than the ranking gains. Measured on Linux 6.1 (idle, 10 shards): with
 * ten times `matches` alone `\d{10}` took 31 → 348 ms and `[A-Z]{6}_[0-9]{2}` 5.2 → 61 ms
 * (47 MB read); with 32 MiB read as the bound still 253 and 61 ms. At 8 MiB a common
 * literal (`mutex_lock`: 8.8 MB over all ten shards, `kfree_skb` 11.7 MB) is still ranked
 * over most of the index.
 */
const RANK_DEPTH = 10;
const RANK_READ_KIB = 8 * 1024;

/** A streamed batch is sent once it holds this many files, or this long after the last one. */
const CHUNK_MAX_FILES = 100;
const CHUNK_MAX_WAIT_MS = 100;

interface ShardEntry {
  path: string;
  membership?: string;
  /** shardKey(path, membership): how the workers and the shaping cache name the open shard. */
  key: string;
  repoId: number;
  /** The manifest's generation: what a shard error marks broken. */
  generation: number;
  /** From the manifest; undefined for manifests written before it was recorded. */
  repo?: ManifestRepo;
}

interface Snapshot {
  entries: ShardEntry[];
  /** Repositories left out because their index is broken, and how many shards each had. */
  broken: Array<{ repoId: number; visibility: 'public' | 'private'; shards: number }>;
  /** Searches running on this snapshot. */
  users: number;
}

let nextPlanId = 1;

/**
 * Plans recently sent to the workers, by the request fields a plan is made from (planQuery
 * reads only these): a query asked again gets the same planId, so the workers keep its
 * decoded plan and matchers instead of building them again (measured under 16 connections
 * of one rare literal: ~0.05 ms per search and worker, and the encoding here).
 */
const PLAN_CACHE_SIZE = 256;
const sentPlans = new Map<string, { planId: number; bytes: Uint8Array }>();

function sentPlan(req: Required<SearchRequest>, plan: Plan): { planId: number; bytes: Uint8Array } {
  const key = JSON.stringify([req.query, req.isRegexEnabled, req.isCaseSensitivityEnabled]);
  let sent = sentPlans.get(key);
  if (sent) sentPlans.delete(key);
  else sent = { planId: nextPlanId++, bytes: packr.pack(plan) };
  sentPlans.set(key, sent);
  if (sentPlans.size > PLAN_CACHE_SIZE) sentPlans.delete(sentPlans.keys().next().value!);
  return sent;
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
        const path = join(dir, s.file);
        const membership = s.membership ? join(dir, s.membership) : undefined;
        const entry: ShardEntry = { path, key: shardKey(path, membership), repoId: m.repoId, generation: m.generation };
        if (membership) entry.membership = membership;
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

  /** Shard files (and membership files) that a running search may still open. */
  inUse(): Set<string> {
    const paths = new Set<string>();
    for (const snap of [this.current, ...this.held]) {
      for (const e of snap.entries) {
        paths.add(e.path);
        if (e.membership) paths.add(e.membership);
      }
    }
    return paths;
  }

  /** Starts the worker threads now rather than at the first search (a daemon's first answer would wait ~0.5 s). */
  warm(): void {
    this.pool ??= new SearchPool(this.options.workers);
  }

  /** Shard tasks running on the workers and waiting for one (the metrics; zero when idle). */
  load(): { busy: number; queued: number } {
    return this.pool?.load() ?? { busy: 0, queued: 0 };
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
  }

  search(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<SearchResponse> {
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

  private async searchHeld(req: Required<SearchRequest>, options: SearchOptions): Promise<SearchResponse> {
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

  private async searchSnapshot(shards: ShardEntry[], req: Required<SearchRequest>, options: SearchOptions, lostShards: number): Promise<SearchResponse> {
    const started = process.hrtime.bigint();
    const { plan, planNs } = options.planned ?? planSearch(req);
    // A plan made before the search waited for its turn counts as the search's own work.
    const aheadNs = options.planned ? planNs : 0;
    const pool = (this.pool ??= new SearchPool(this.options.workers));
    const limit = req.matches;
    const cancel = new SharedArrayBuffer(4);
    const streaming = options.onChunk !== undefined;
    const cut: Cut = streaming ? { ranges: limit, rankedRanges: limit, loadedKiB: Infinity } : { ranges: limit, rankedRanges: limit * RANK_DEPTH, loadedKiB: RANK_READ_KIB };
    const sent = sentPlan(req, plan);
    const task: SearchTask = { planId: sent.planId, plan: sent.bytes, limit, brute: options.brute === true, shards: shards.map(shardRef), cut, batch: !streaming, definitionsPastCut: !streaming && positiveLiterals(plan).length > 0 };
    // A stream lets the workers run only STREAM_AHEAD shards past the one its client is
    // being sent: a slow client holds the search back instead of replies piling up.
    const ahead = streaming ? pool.size * STREAM_AHEAD_PER_WORKER : shards.length;
    const run = pool.start(task, cancel, ahead);
    // Stopping sets the flag the running shards check and skips the ones not started.
    const stop = () => {
      Atomics.store(new Int32Array(cancel), 0, 1);
      run.stop();
    };
    const timer = options.timeoutMs !== undefined ? setTimeout(stop, options.timeoutMs) : undefined;
    options.signal?.addEventListener('abort', stop, { once: true });
    if (options.signal?.aborted) stop();

    const stats = emptyStats();
    stats.matchTreeConstruction = planNs;
    stats.crashes = lostShards;
    const shaping: Shaping = { budget: limit, files: [], repos: new Map(), actual: 0 };
    const stream = options.onChunk ? new ChunkStream(options.onChunk, stop) : undefined;
    let ranges = 0;
    /** KiB of content the shards taken have read (as the cut counts it). */
    let read = 0;
    let more = false;
    /** A blocking search's hits, by shard, until they are ranked together. */
    const found: Array<{ entry: ShardEntry; hits: ShardHit[] }> = [];
    try {
      for (let i = 0; i < shards.length; i++) {
        // Results waiting in a streamed batch go out on time even while a slow shard runs.
        if (stream && shaping.files.length > 0) await stream.flushWhileWaiting(run.replies[i]!, shaping);
        const reply: ShardReply = await run.replies[i]!;
        const before = stream ? { ...stats } : undefined;
        if (reply.status === 'skipped') {
          stats.shardsSkipped++;
        } else {
          stats.wait += reply.queuedNs;
          if (reply.status === 'failed') {
            stats.crashes++;
            if (reply.corrupt) this.view.report(shards[i]!.repoId, shards[i]!.generation, reply.error);
          } else {
            const r = reply.result;
            for (const [k, v] of Object.entries(r.counters)) (stats as unknown as Record<string, number>)[k]! += v;
            if (r.filtered) stats.shardsSkippedFilter++;
            else stats.shardsScanned++;
            stats.totalMatchCount += r.found;
            if (r.more) more = true;
            // The shards taken before the cut count, in shard order; the hits of a shard after
            // it are dropped (their work is counted), whatever the threads' timing, as are
            // those of shards already in when the search was aborted: nobody waits for them.
            // A blocking search ranks the hits of every shard it took before it keeps
            // `matches` of them (each shard stops at `matches` itself, its best files first by
            // the static rank). A stream sends the first `matches` ranges in shard order, each
            // batch ranked in itself.
            // Past the cut a blocking search with literals keeps each shard's definitions
            // (definition-first.ts: examined first and whole, so which ones does not depend on
            // when the shard saw the cut either).
            const past = pastCut(cut, ranges, read);
            const hits = past && task.definitionsPastCut ? r.hits.filter((h) => h.definition) : r.hits;
            if (hits.length > 0 && (!past || task.definitionsPastCut) && !options.signal?.aborted) {
              if (!stream) found.push({ entry: shards[i]!, hits });
              else if (!this.shape(req, shards[i]!, hits, shaping)) stats.crashes++;
            }
            ranges += r.found;
            read += loadedKiB(r.counters.contentBytesLoaded);
            if (pastCut(cut, ranges, read)) {
              if (task.definitionsPastCut) run.definitionsOnly();
              else stop();
            }
          }
        }
        if (stream) {
          await stream.add(shaping, delta(before!, stats));
          run.grant(i + 1 + ahead);
        }
      }
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', stop);
    }
    await stream?.flush(shaping, 'FLUSH_REASON_FINAL_FLUSH');
    if (!stream) stats.crashes += this.shapeRanked(req, found, shaping);
    stats.actualMatchCount = shaping.actual;
    stats.flushReason = 'FLUSH_REASON_FINAL_FLUSH';
    const response = stream ? { stats, files: [], repositoryInfo: [], isSearchExhaustive: false } : finish(shaping, stats);
    stats.fileCount = stream ? stream.files : response.files.length;
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
      s = Shard.open(entry.path, entry.membership);
      this.mapped.set(entry.key, s);
    }
    return s;
  }

  /**
   * Shapes one shard's hits into `out`, in the shard's order, within the remaining budget of
   * match ranges (a stream's batch). A shard that fails its checks here (a document's
   * content, read for the first time in this thread) gives nothing: `out` is left as it
   * was, the damage is reported, and false returned.
   */
  private shape(req: Required<SearchRequest>, entry: ShardEntry, hits: ShardHit[], out: Shaping): boolean {
    const before = { budget: out.budget, actual: out.actual, files: out.files.length, repos: out.repos.size };
    try {
      const shard = this.shard(entry);
      const repo = repoOf(entry, shard, this.options.baseUrl ?? DEFAULT_BASE_URL);
      for (const hit of hits) {
        if (out.budget <= 0) break;
        this.shapeHit(req, entry, shard, repo, hit, out);
      }
      return true;
    } catch (err) {
      if (!(err instanceof ShardError)) throw err;
      out.budget = before.budget;
      out.actual = before.actual;
      out.files.length = before.files;
      for (const id of [...out.repos.keys()].slice(before.repos)) out.repos.delete(id);
      this.damaged(entry, err);
      return false;
    }
  }

  /**
   * Shapes the best hits of all the shards into `out`: every hit by its score (computed in
   * the workers), best first, until the budget of match ranges is spent. A shard that
   * fails its checks here gives nothing: its files already shaped are taken back (and
   * their budget returned to the others), the damage is reported; returns how many
   * shards failed.
   */
  private shapeRanked(req: Required<SearchRequest>, found: Array<{ entry: ShardEntry; hits: ShardHit[] }>, out: Shaping): number {
    const ranked: Array<{ entry: ShardEntry; shard: Shard; repo: ResultRepo; hit: ShardHit; score: number; repository: string; path: string }> = [];
    for (const { entry, hits } of found) {
      const shard = this.shard(entry);
      const repo = repoOf(entry, shard, this.options.baseUrl ?? DEFAULT_BASE_URL);
      for (const hit of hits) ranked.push({ entry, shard, repo, hit, score: hit.score, repository: repo.name, path: shard.name(hit.doc) });
    }
    ranked.sort(compareRanked);
    const failed = new Set<string>();
    for (const r of ranked) {
      if (out.budget <= 0) break;
      if (failed.has(r.entry.key)) continue;
      try {
        this.shapeHit(req, r.entry, r.shard, r.repo, r.hit, out);
      } catch (err) {
        if (!(err instanceof ShardError)) throw err;
        failed.add(r.entry.key);
        const kept = out.files.filter((f) => f.shard !== r.entry.key);
        for (const f of out.files) {
          if (f.shard !== r.entry.key) continue;
          out.budget += f.count;
          out.actual -= f.count;
        }
        out.files = kept;
        this.damaged(r.entry, err);
      }
    }
    out.repos.clear();
    for (const f of out.files) if (!out.repos.has(f.repositoryId)) out.repos.set(f.repositoryId, f.repo);
    return failed.size;
  }

  /** A shard failed its checks while shaping: forget its mapping, mark its repository broken. */
  private damaged(entry: ShardEntry, err: ShardError): void {
    this.mapped.delete(entry.key);
    this.view.report(entry.repoId, entry.generation, err.message);
  }

  /** Shapes one hit into `out`, taking its match ranges (at most the budget left) from the budget. */
  private shapeHit(req: Required<SearchRequest>, entry: ShardEntry, shard: Shard, repo: ResultRepo, hit: ShardHit, out: Shaping): void {
    const baseUrl = this.options.baseUrl ?? DEFAULT_BASE_URL;
    const path = shard.name(hit.doc);
    const names = hit.nameRanges.slice(0, 2 * Math.min(out.budget, hit.nameRanges.length / 2));
    const ranges = hit.ranges.slice(0, 2 * Math.min(out.budget - names.length / 2, hit.ranges.length / 2));
    const content = shard.contentOf(hit.doc);
    const located = locateRanges(content, ranges);
    const symbols = shard.symbolsOverlapping(hit.doc, located.map((r) => [r.start.lineNumber, r.end.lineNumber] as [number, number]));
    // Links point at the first branch the file matched on (the default branch when it did).
    const branch = hit.branches[0] ?? repo.defaultBranch;
    const file: FileResult = {
      fileName: { text: path, matchRanges: nameRanges(path, names) },
      webUrl: fileWebUrl(baseUrl, repo.name, branch, path),
      repository: repo.name,
      repositoryId: repo.id,
      language: shard.language(hit.doc),
      chunks: withSymbols(buildChunks(content, located, req.contextLines), symbols),
      branches: hit.branches,
    };
    const external = externalFileUrl(repo.codeHostType, repo.externalWebUrl, branch, path);
    if (external) file.externalWebUrl = external;
    if (req.whole) {
      const whole = wholeContent(content, this.options.maxWholeBytes ?? Infinity);
      file.content = whole.content;
      if (whole.truncated) file.contentTruncated = true;
    }
    // As the shard counted it (found): a match without ranges is one, so that a query of
    // filters alone, fully answered, has actual = total and is exhaustive.
    const count = Math.max(1, (names.length + ranges.length) / 2);
    out.budget -= count;
    out.actual += count;
    out.files.push({ file, count, repositoryId: repo.id, repository: repo.name, path, score: hit.score, shard: entry.key, repo: repo.info });
    if (!out.repos.has(repo.id)) out.repos.set(repo.id, repo.info);
  }
}

/** Results shaped so far (a streamed search empties `files` at each batch). */
interface Shaping {
  /** Match ranges still to give. */
  budget: number;
  files: Array<{ file: FileResult; count: number; repositoryId: number; score: number; repository: string; path: string; shard: string; repo: RepositoryInfo }>;
  repos: Map<number, RepositoryInfo>;
  /** Match ranges given. */
  actual: number;
}

function shardRef(s: ShardEntry): ShardRef {
  const ref: ShardRef = { shardPath: s.path };
  if (s.membership) ref.membership = s.membership;
  if (s.repo) ref.repo = { name: s.repo.name, archived: s.repo.archived, fork: s.repo.fork, visibility: s.repo.visibility };
  return ref;
}

function finish(shaping: Shaping, stats: SearchStats): SearchResponse {
  const ranked = shaping.files.sort(compareRanked);
  return { stats, files: ranked.map((r) => r.file), repositoryInfo: [...shaping.repos.values()], isSearchExhaustive: false };
}

/** What changed in the numeric stats between two moments (a batch's share). */
function delta(before: SearchStats, after: SearchStats): SearchStats {
  const d = emptyStats();
  for (const k of Object.keys(d) as Array<keyof SearchStats>) {
    if (k !== 'flushReason') (d as unknown as Record<string, number>)[k] = (after[k] as number) - (before[k] as number);
  }
  return d;
}

/** Batches a streamed search's results (CHUNK_MAX_FILES / CHUNK_MAX_WAIT_MS) and hands them on. */
class ChunkStream {
  files = 0;
  private stats = emptyStats();
  private last = performance.now();
  private stopped = false;

  constructor(
    private readonly onChunk: (chunk: SearchChunk) => boolean | void | Promise<boolean | void>,
    private readonly stop: () => void,
  ) {}

  async add(shaping: Shaping, stats: SearchStats): Promise<void> {
    for (const k of Object.keys(stats) as Array<keyof SearchStats>) {
      if (k !== 'flushReason') (this.stats as unknown as Record<string, number>)[k]! += stats[k] as number;
    }
    if (shaping.files.length >= CHUNK_MAX_FILES) await this.flush(shaping, 'FLUSH_REASON_MAX_SIZE');
    else if (shaping.files.length > 0 && performance.now() - this.last >= CHUNK_MAX_WAIT_MS) await this.flush(shaping, 'FLUSH_REASON_TIMER_EXPIRED');
  }

  /** Flushes the pending batch if `reply` is not in before the batch is due. */
  async flushWhileWaiting(reply: Promise<ShardReply>, shaping: Shaping): Promise<void> {
    const due = CHUNK_MAX_WAIT_MS - (performance.now() - this.last);
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([reply.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), Math.max(0, due))))]);
    clearTimeout(timer);
    if (late) await this.flush(shaping, 'FLUSH_REASON_TIMER_EXPIRED');
  }

  /** Sends what is pending, ranked, in messages of at most CHUNK_MAX_FILES files. */
  async flush(shaping: Shaping, reason: FlushReason): Promise<void> {
    // A batch without files is not sent: the end of the search reports the stats of it all.
    if (this.stopped || shaping.files.length === 0) return;
    const pending = shaping.files.splice(0).sort(compareRanked);
    for (let at = 0; at < pending.length && !this.stopped; at += CHUNK_MAX_FILES) {
      const batch = pending.slice(at, at + CHUNK_MAX_FILES);
      const ids = new Set(batch.map((f) => f.repositoryId));
      // The batch's share of the work goes with its first message.
      const stats = this.stats;
      stats.actualMatchCount = batch.reduce((n, f) => n + f.count, 0);
      stats.fileCount = batch.length;
      stats.flushReason = at + CHUNK_MAX_FILES < pending.length ? 'FLUSH_REASON_MAX_SIZE' : reason;
      const now = performance.now();
      stats.duration = Math.round((now - this.last) * 1e6); // since the previous message
      this.stats = emptyStats();
      this.last = now;
      this.files += batch.length;
      const go = await this.onChunk({ stats, files: batch.map((f) => f.file), repositoryInfo: [...shaping.repos.values()].filter((r) => ids.has(r.id)) });
      if (go === false) {
        this.stopped = true;
        this.stop();
      }
    }
  }
}

interface ResultRepo {
  id: number;
  name: string;
  displayName: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
  defaultBranch: string;
  /** The response's repositoryInfo entry for it. */
  info: RepositoryInfo;
}

/** The repository as results show it: the manifest's record, else what the shard stored. */
function repoOf(entry: ShardEntry, shard: Shard, baseUrl: string): ResultRepo {
  const m = shard.meta.repo;
  const r = entry.repo;
  const base = r
    ? { id: entry.repoId, name: r.name, displayName: r.displayName, codeHostType: r.codeHostType, defaultBranch: shard.branches.names[0] ?? m.branch }
    : { id: m.id, name: m.name, displayName: displayName(m.name), codeHostType: m.codeHostType as CodeHostType, defaultBranch: m.branch };
  const out: ResultRepo = { ...base, info: { id: base.id, codeHostType: base.codeHostType, name: base.name, displayName: base.displayName, webUrl: repoWebUrl(baseUrl, base.name) } };
  if (r?.externalWebUrl) out.externalWebUrl = r.externalWebUrl;
  else if (!r && m.codeHostType !== 'genericGitHost' && m.name.includes('/')) out.externalWebUrl = `https://${m.name}`;
  return out;
}

/** Each chunk's symbols: the definitions whose line span contains one of its matches. */
function withSymbols(chunks: Chunk[], symbols: SymbolDef[]): Chunk[] {
  if (symbols.length === 0) return chunks;
  for (const chunk of chunks) {
    const hit = symbols.filter((s) => chunk.matchRanges.some((r) => s.line <= r.end.lineNumber && r.start.lineNumber <= s.endLine));
    chunk.symbols = hit.map((s) => (s.parent ? { symbol: s.name, kind: s.kind, parent: { symbol: s.parent.name, kind: s.parent.kind } } : { symbol: s.name, kind: s.kind }));
  }
  return chunks;
}
