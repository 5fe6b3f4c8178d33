// The Searcher: runs a search over every shard of the data dir on the worker pool and
// takes the shards' answers in shard order (repository name, then shard number, so
// results are deterministic however the threads interleave). Each shard returns its first
// `matches` hits in static-rank order, scored (hit-score.ts) and shaped into finished file
// results by the worker that found them (file-json.ts). One pipeline serves every kind of
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
// the whole repository out until it is re-indexed. The sections a search does not check
// when it opens a file are verified by the scrub (index/section-scrub.ts, started with the
// worker threads), whose findings are reported the same way.

import { basename } from 'node:path';
import { GLOBAL_CONTEXT } from '../config/contexts.ts';
import { ServiceError } from '../errors.ts';
import { MAX_DELTA_SHARDS } from '../index/delta.ts';
import { IndexView, type IndexState } from '../index/index-health.ts';
import { manifestRepoName, shardFiles, type LoadedManifest } from '../index/manifest.ts';
import { Shard } from '../index/shard-reader.ts';
import { ShardError } from '../index/shard-error.ts';
import { markAllPassed, newChecks, takeWritten } from '../index/section-checks.ts';
import { SectionScrub, type ScrubFile } from '../index/section-scrub.ts';
import { DEFAULT_BASE_URL } from '../repos/web-urls.ts';
import { asciiLower, refNames, type RepoFlags } from './match-tree.ts';
import { mergeSearch, type MergeDeps, type TaskParams } from './merge.ts';
import { HERE_MAX_DOCS, runHere, type HereShard } from './here-run.ts';
import { Matcher } from './matcher.ts';
import { refParts, type IndexHold, type RefParts } from './held-files.ts';
import { searchedMembers } from './shard-files.ts';
import { ruledOutByDocs, shardCandidates } from './shard-search.ts';
import { planSearch, refuseHistoryPlan } from './plan-cache.ts';
import type { PoolRun } from './pool.ts';
import { SearchPool } from './pool.ts';
import { memberRef, shardKey, shardRef, type ShardRef } from './protocol.ts';
import type { SearchOptions, SearchService, WireResponse } from './search-options.ts';
import { resultRepo, shapeInto, type ShapedFile, type ShapeOptions } from './file-json.ts';
import { loneLiteralBytes } from './version-matches.ts';
import { parseJson } from './wire.ts';
import { visibleShards, withCandidates, withDocs, type EntryMember, type ShardEntry, type Snapshot, type VisibleShards } from './visible-shards.ts';
import type { FileResult, SearchRequest, SearchResponse } from './types.ts';
import { planTerms, type Plan } from '../query/terms.ts';

/**
 * A search asked to find its candidates here (SearchOptions.candidatesHere) does so when it
 * reads at most this many shards (a history's: the few shards of its last full build, and
 * the delta shards of its updates since, at most MAX_DELTA_SHARDS), and hands them on only
 * up to this many in all: past it, reading the posting lists was the workers' share of the
 * work, and the candidates are a long message.
 */
const CANDIDATES_HERE_SHARDS = 4 + MAX_DELTA_SHARDS;
const CANDIDATES_HERE_MAX = 4096;

export type { SearchChunk } from './stream-sink.ts';
export { planSearch, type PlannedSearch } from './plan-cache.ts';
export type { SearchOptions, SearchService, UnavailableShard, WireResponse } from './search-options.ts';

/** A shard named as a cluster names it (cluster/link-frames.ts Unit). */
export interface ShardUnit {
  repoId: number;
  /** The shard's file name, unique in the cluster. */
  file: string;
  /**
   * The published generation the file is of. A node that has copied that generation into a
   * compound shard and not yet published the copy (cluster/pack-job.ts) no longer holds the
   * file, and answers from the copy, which holds the same documents. (Absent from older nodes.)
   */
  generation?: number;
}

/** A task started on shards named by unit (Searcher.startUnits). */
export interface UnitRun {
  run: PoolRun;
  /** Per unit asked: its index in the run's shards, -1 when this node does not hold it. */
  held: number[];
  /** The pool's threads. */
  workers: number;
  /** Shapes again a file of the run's shard `i` (Searcher's reshape). */
  reshape(i: number, shape: ShapeOptions, f: ShapedFile, budget: number): ShapedFile;
  /** The run's shard `i` failed its checks. */
  corrupt(i: number, error: string): void;
  /** The run and every reshape are over: the snapshot may go. */
  release(): void;
}

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
  /** Verify the sections searches do not check at open in the background (index/section-scrub.ts; default true; never with `workers: 0`). */
  scrub?: boolean;
}

export class Searcher implements SearchService {
  private readonly options: SearcherOptions;
  private readonly view: IndexView;
  private pool: SearchPool | undefined;
  private current: Snapshot = { entries: [], broken: [], users: 0 };
  /** Older snapshots that searches still hold. */
  private readonly held = new Set<Snapshot>();
  /** The index state the current snapshot was made from. */
  private state: IndexState | undefined;
  private readonly mapped = new Map<string, Shard>();
  /** The checks of each shard and symbols file a snapshot names (ShardEntry.verified). */
  private readonly bitmaps = new Map<string, SharedArrayBuffer>();
  private scrub: SectionScrub | undefined;
  /** The files whose bitmaps the workers have; null: the pool has not been told of changes. */
  private shared: Set<string> | null = null;
  private closed = false;

  constructor(options: SearcherOptions) {
    this.options = options;
    this.view = options.view ?? new IndexView(options.dataDir);
    this.refresh();
  }

  /** Re-reads the manifests: picks up repositories indexed, re-indexed or removed since the last call. */
  refresh(): void {
    this.snapshot(this.view.reload());
  }

  /**
   * Moves to the index as it is now, when it has changed: each search does first, and a
   * sync as it ends, so that the first search after a push (a user's, or the watches'
   * check) does not wait for the new snapshot.
   */
  catchUp(): void {
    const state = this.view.current();
    if (state !== this.state) this.snapshot(state);
  }

  /**
   * Holds the index as it is now until released: its shards stay open (and their files on
   * disk) for a reader that compares it with a later state (held-files.ts).
   */
  hold(): IndexHold {
    this.catchUp();
    const snapshot = this.current;
    const manifests = this.state?.manifests ?? [];
    snapshot.users++;
    const read = new Map<string, RefParts | undefined>();
    let byId: Map<number, LoadedManifest> | undefined;
    const manifest = (repoId: number) => (byId ??= new Map(manifests.map((m) => [m.repoId, m]))).get(repoId);
    let released = false;
    return {
      manifest,
      parts: (repoId, generation) => {
        const key = `${repoId}/${generation}`;
        if (!read.has(key)) {
          const m = manifest(repoId);
          read.set(key, m?.generation === generation ? refParts(snapshot.entries, m, (e) => this.shard(e)) : undefined);
        }
        return read.get(key);
      },
      release: () => {
        if (released) return;
        released = true;
        this.done(snapshot);
      },
    };
  }

  /** What a snapshot takes from each manifest, worked out once per manifest (an unchanged one is the same object in the next state). */
  private readonly parts = new WeakMap<LoadedManifest, ManifestParts>();

  private partsOf(m: LoadedManifest): ManifestParts {
    let p = this.parts.get(m);
    if (!p) {
      // One for all the repository's shards (a history's are several, and its refs thousands).
      const flags: RepoFlags | undefined = m.repo && {
        repoName: m.repo.name,
        lowerName: asciiLower(m.repo.name),
        archived: m.repo.archived,
        fork: m.repo.fork,
        visibility: m.repo.visibility,
        refs: refNames(m.refs.map((r) => r.name)),
      };
      const shards = m.shards.map((s) => {
        const { path, membership, symbols } = shardFiles(this.options.dataDir, m.repoId, s);
        // (A compound shard's documents are all its members': the pack's count.)
        return {
          path,
          membership,
          symbols,
          key: shardKey(path, membership, symbols),
          member: s.member,
          docs: s.member !== undefined ? (s.packDocs ?? 0) : s.docs,
        };
      });
      this.parts.set(m, (p = { name: manifestRepoName(m), flags, shards }));
    }
    return p;
  }

  /** Makes the current snapshot from an index state. */
  private snapshot(state: IndexState): void {
    this.state = state;
    const entries: ShardEntry[] = [];
    /** Compound shards' entries by file: each repository naming one joins it. */
    const byPath = new Map<string, ShardEntry>();
    const manifests = state.manifests.map((m) => ({ m, parts: this.partsOf(m) }));
    manifests.sort((a, b) => (a.parts.name < b.parts.name ? -1 : a.parts.name > b.parts.name ? 1 : a.m.repoId - b.m.repoId));
    for (const { m, parts } of manifests) {
      const visibility = this.view.visibility(m);
      for (const s of parts.shards) {
        const member: EntryMember = { member: s.member ?? 0, repoId: m.repoId, visibility, generation: m.generation };
        if (m.copyOf !== undefined && parts.shards.length === 1) member.copyOf = m.copyOf;
        if (m.repo) {
          member.repo = m.repo;
          member.flags = parts.flags;
        }
        const known = byPath.get(s.path);
        if (known) {
          known.members.push(member);
          continue;
        }
        const entry: ShardEntry = { path: s.path, key: s.key, members: [member], verified: this.checksOf(s.path, s.docs), index: entries.length };
        if (s.membership) entry.membership = s.membership;
        if (s.symbols) {
          entry.symbols = s.symbols;
          entry.symbolsVerified = this.checksOf(s.symbols, 0);
        }
        if (s.member !== undefined) byPath.set(s.path, entry);
        entries.push(entry);
      }
    }
    for (const e of byPath.values()) e.members.sort((a, b) => a.member - b.member);
    keepRefs(this.current.entries, entries);
    // A broken repository whose visibility is unknown (its manifest is lost) counts as private.
    const broken = state.broken.map((b) => ({ repoId: b.repoId, visibility: b.visibility ?? ('private' as const), shards: Math.max(1, b.shards ?? 1) }));
    if (this.current.users > 0) this.held.add(this.current);
    else this.dropCatalog(this.current);
    this.current = { entries, broken, users: 0 };
    this.release();
    this.scrubCurrent();
  }

  /** A file's checks (ShardEntry.verified), made the first time a snapshot names it: all passed when this process wrote it. */
  private checksOf(path: string, docs: number): SharedArrayBuffer {
    let checks = this.bitmaps.get(path);
    if (!checks) {
      checks = newChecks(docs);
      if (takeWritten(path)) markAllPassed(checks);
      this.bitmaps.set(path, checks);
    }
    return checks;
  }

  /** Gives the scrub the current snapshot's files. */
  private scrubCurrent(): void {
    if (!this.scrub) return;
    const files: ScrubFile[] = [];
    for (const e of this.current.entries) {
      files.push({ path: e.path, kind: 'shard', checks: e.verified });
      if (e.symbols) files.push({ path: e.symbols, kind: 'symbols', checks: e.symbolsVerified! });
    }
    this.scrub.set(files);
  }

  /** Resolves once the scrub has verified every file of the current snapshot (at once without a scrub). */
  scrubbed(): Promise<void> {
    return this.scrub?.idle() ?? Promise.resolve();
  }

  /** The snapshot's catalog in the pool, made now if it has none. */
  private catalogOf(pool: SearchPool, snapshot: Snapshot): number {
    snapshot.catalog ??= pool.catalog(snapshot.entries.map(refOf));
    return snapshot.catalog;
  }

  /** A snapshot no search will use again: the workers forget its catalog. */
  private dropCatalog(snapshot: Snapshot): void {
    if (snapshot.catalog !== undefined) this.pool?.dropCatalog(snapshot.catalog);
    snapshot.catalog = undefined;
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

  /** Starts the worker threads now rather than at the first search (a daemon's first answer would wait for them to start). */
  warm(): void {
    this.startPool();
  }

  private startPool(): SearchPool {
    // A request that arrives while the daemon stops (a peer's, which draining lets through) must not start threads nobody will stop.
    if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'the searcher is closed: the server is shutting down');
    if (!this.pool) {
      this.pool = new SearchPool(this.options.workers);
      this.shared = null;
      // Catalogs made for a pool that was closed name nothing in this one.
      for (const snap of [this.current, ...this.held]) snap.catalog = undefined;
      this.shareBitmaps();
      // A command's in-thread search ends long before a scrub would (and it runs no thread).
      if (!this.pool.inThread && this.options.scrub !== false) {
        this.scrub = new SectionScrub({ activity: this.pool.activity, onDamage: (f, message) => this.damagedFile(f.path, message) });
        this.scrubCurrent();
      }
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
    for (const snap of [this.current, ...this.held]) {
      for (const e of snap.entries) {
        files.add(e.path);
        if (e.symbols) files.add(e.symbols);
      }
    }
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
   * A search, its files in their wire form (JSON bytes, file-json.ts): what the HTTP API
   * writes as they are. A search aborted with a ServiceError as the reason (the server's
   * shutdown deadline) fails with it at once.
   */
  searchWire(req: Required<SearchRequest>, options: SearchOptions = {}): Promise<WireResponse> {
    return failOnServiceAbort(this.searchHeld(req, options), options.signal);
  }

  private async searchHeld(req: Required<SearchRequest>, options: SearchOptions): Promise<WireResponse> {
    this.catchUp();
    const snapshot = this.current;
    snapshot.users++;
    try {
      const filter = options.repoFilter;
      const planned = options.planned ?? planSearch(req);
      refuseHistoryPlan(planned.plan);
      unresolvedContext(planned.plan.context, filter);
      const visible = withDocs(visibleShards(snapshot, filter, planned.plan.root), options.docs);
      // The shards of broken repositories the caller may see count as failed: the answer
      // says it is not exhaustive, as it did when such a shard failed in the search.
      const lost = (filter ? snapshot.broken.filter((b) => filter(b)) : snapshot.broken).reduce((n, b) => n + b.shards, 0);
      const res = await this.searchSnapshot(snapshot, visible, req, { ...options, planned }, lost);
      // Stopped with a reason the caller must hear (the server's shutdown deadline), not
      // because its client left: partial results would pass for a (non-exhaustive) answer.
      const reason: unknown = options.signal?.reason;
      if (reason instanceof ServiceError) throw reason;
      return res;
    } finally {
      this.done(snapshot);
    }
  }

  /** A search on `snapshot` ended. */
  private done(snapshot: Snapshot): void {
    snapshot.users--;
    if (snapshot.users === 0 && this.held.delete(snapshot)) {
      this.dropCatalog(snapshot);
      this.release();
    }
  }

  private searchSnapshot(
    snapshot: Snapshot,
    visible: VisibleShards,
    req: Required<SearchRequest>,
    options: SearchOptions,
    lostShards: number,
  ): Promise<WireResponse> {
    const planned = options.planned;
    let matchers: Matcher[] | undefined;
    // Candidates found here, when asked and cheap to find: as if named (their matchers serve
    // the run here too); a shard the filters leave no branch is ruled out here, as its search
    // would have found (a history's delta shards hold nothing at an older commit).
    if (
      visible.docs === undefined &&
      options.candidatesHere === true &&
      planned !== undefined &&
      options.brute !== true &&
      visible.entries.length <= CANDIDATES_HERE_SHARDS
    ) {
      matchers = planTerms(planned.plan).map((t) => new Matcher(t, 'indexed'));
      const found = this.candidatesHere(visible.entries, visible.only, planned.plan, matchers);
      if (found !== undefined) visible = withCandidates(visible, found);
    }
    const { entries: shards, only, docs, ruledOut } = visible;
    const merged = {
      lostShards,
      skippedShards: ruledOut,
      shape: versionsShape(this.shapeOptions(req), planned?.plan),
      reshape: (i: number, shape: ShapeOptions, f: ShapedFile, budget: number) => this.reshape(shards[i]!, shape, f, budget),
      corrupt: (i: number, error: string) => this.corrupt(shards[i]!, error),
    };
    // A few documents named: searched in this thread (here-run.ts).
    if (docs !== undefined && planned !== undefined && docs.reduce((n, d) => n + d.length, 0) <= HERE_MAX_DOCS) {
      if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'the searcher is closed: the server is shutting down');
      // None at all (the candidates found here: a search at a commit where the literal is
      // not): each shard's run would examine nothing, and count the shard as shard-search.ts
      // ruledOutByDocs says. Counted so without the run, whose machinery cost more than the
      // rest of such a search.
      if (docs.every((d) => d.length === 0)) {
        const filtered = shards.filter((e) => ruledOutByDocs(this.shard(e))).length;
        return mergeSearch(0, req, options, {
          ...merged,
          skippedShards: ruledOut + filtered,
          scannedShards: shards.length - filtered,
          workers: 1,
          start: noRun,
        });
      }
      const here = shards.map((e, i): HereShard => ({ ref: refOf(e), only: only?.[i] ?? null, docs: docs[i]!, open: () => this.shard(e) }));
      // (A shard that failed its checks is opened afresh next time; the merge reports it.)
      const forget = (i: number) => this.mapped.delete(shards[i]!.key);
      return mergeSearch(shards.length, req, options, { ...merged, workers: 1, start: (task) => runHere(task, planned.plan, here, forget, matchers) });
    }
    // No shard left (the filters ruled every one out, as a tip index does for a search at
    // an older commit): nothing for a worker, and no plan to pack for one.
    if (shards.length === 0) return mergeSearch(0, req, options, { ...merged, workers: 1, start: noRun });
    const pool = this.startPool();
    const catalog = this.catalogOf(pool, snapshot);
    const indexes = shards.map((e) => e.index);
    return mergeSearch(shards.length, req, options, {
      ...merged,
      workers: pool.size,
      start: (task, cancel, grant) => pool.start({ ...task, catalog, shards: indexes, only, docs }, cancel, grant),
    });
  }

  /**
   * Each shard's candidates for `plan` (shard-search.ts shardCandidates), found with this
   * thread's mappings; undefined when a shard's index rules out none, they are more than
   * CANDIDATES_HERE_MAX in all, or a shard fails here (the workers then search as usual, and
   * report a damaged shard as they do).
   */
  private candidatesHere(shards: readonly ShardEntry[], only: VisibleShards['only'], plan: Plan, matchers: Matcher[]): Array<number[] | null> | undefined {
    const out: Array<number[] | null> = [];
    let total = 0;
    try {
      for (const [i, e] of shards.entries()) {
        const found = shardCandidates(this.shard(e), plan, matchers, searchedMembers(refOf(e), only?.[i] ?? null).search);
        if (found === undefined || (total += found?.length ?? 0) > CANDIDATES_HERE_MAX) return undefined;
        out.push(found && Array.from(found));
      }
    } catch {
      return undefined;
    }
    return out;
  }

  /** The scrub found damage in a file (a shard or its symbols file): every repository it serves is marked broken. */
  private damagedFile(path: string, message: string): void {
    for (const snap of [this.current, ...this.held]) {
      const entry = snap.entries.find((e) => e.path === path || e.symbols === path);
      if (entry) return this.corrupt(entry, message);
    }
  }

  /** A shard failed its checks: every repository it serves is marked broken. */
  private corrupt(entry: ShardEntry, error: string): void {
    for (const m of entry.members) this.view.report(m.repoId, m.generation, error);
  }

  /**
   * Starts a search task on shards of this node's index named by repository and shard file
   * (a cluster's fan-out, cluster/fan-out.ts: the coordinator's own part, or a peer's
   * request): `held[k]` is the run's shard index of `units[k]`, or -1 when the current
   * index does not hold it (another generation, or not copied here). A unit that names its
   * generation is also held by a copy of that generation into a compound shard, committed
   * here and not yet published in its place (cluster/pack-job.ts). The task's
   * speculateFrom is an index into `units`. The snapshot is held
   * until release(), so that the files stay while the coordinator may still reshape them.
   * `releasesFiles`: the caller releases the replies' files once copied (SearchPool.start).
   */
  startUnits(units: ReadonlyArray<ShardUnit>, task: TaskParams, cancel: SharedArrayBuffer, grant: number, releasesFiles = false): UnitRun {
    const pool = this.startPool();
    this.catchUp();
    const snapshot = this.current;
    snapshot.users++;
    const entries: ShardEntry[] = [];
    const only: Array<number[] | null> = [];
    const held = units.map((u) => {
      const found = heldUnit(snapshot, u);
      if (!found) return -1;
      entries.push(found.entry);
      only.push(found.entry.members.length === 1 ? null : [found.member]);
      return entries.length - 1;
    });
    // The task's speculateFrom counts units; the run's shards are the units held.
    const speculateFrom = task.speculateFrom >= units.length ? task.speculateFrom : held.slice(0, task.speculateFrom).filter((at) => at >= 0).length;
    const catalog = this.catalogOf(pool, snapshot);
    const run = pool.start(
      { ...task, speculateFrom, catalog, shards: entries.map((e) => e.index), only: only.some((o) => o !== null) ? only : undefined, docs: undefined },
      cancel,
      grant,
      releasesFiles,
    );
    let released = false;
    return {
      run,
      held,
      workers: pool.size,
      reshape: (i, shape, f, budget) => this.reshape(entries[i]!, shape, f, budget),
      corrupt: (i, error) => this.corrupt(entries[i]!, error),
      release: () => {
        if (released) return;
        released = true;
        this.done(snapshot);
      },
    };
  }

  /**
   * Shapes again a file of the shard named by unit in the current index (a peer's
   * coordinator asks: cluster/peer-routes.ts); undefined when this node does not hold it.
   */
  reshapeUnit(unit: ShardUnit, shape: ShapeOptions, f: ShapedFile, budget: number): ShapedFile | undefined {
    this.catchUp();
    const found = heldUnit(this.current, unit);
    return found && this.reshape(found.entry, shape, f, budget);
  }

  /** How this daemon shapes a request's files (its limits and its address in webUrl). */
  shapeOptions(req: Required<SearchRequest>): ShapeOptions {
    return {
      contextLines: req.contextLines,
      whole: req.whole,
      maxWholeBytes: this.options.maxWholeBytes ?? Infinity,
      baseUrl: this.options.baseUrl ?? DEFAULT_BASE_URL,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.scrub?.close();
    this.scrub = undefined;
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
      const g: ShapedFile = {
        json: f.json,
        count: f.count,
        total: f.total,
        score: f.score,
        repositoryId: f.repositoryId,
        repository: f.repository,
        path: f.path,
        hit: f.hit,
        shard: f.shard,
      };
      const member = refOf(entry).members.find((m) => m.member === f.hit.member);
      if (!member) throw new Error(`a file of ${entry.path} names member ${f.hit.member}, which the search did not search`);
      shapeInto(g, shard, resultRepo(member.repoId, member.repo, shard, shape.baseUrl, member.member), shape, budget);
      return g;
    } catch (err) {
      if (err instanceof ShardError) this.damaged(entry, err);
      throw err;
    }
  }

  /** A shard failed its checks while shaping: forget its mapping, mark its repositories broken. */
  private damaged(entry: ShardEntry, err: ShardError): void {
    this.mapped.delete(entry.key);
    this.corrupt(entry, err.message);
  }
}

/**
 * A search aborted with a ServiceError as the reason (the server's shutdown deadline) fails
 * with it at once: the caller answers now while the shards stop behind it (a running shard
 * sees the cancel at its next check, which on a loaded machine can come after the server
 * has cut what did not end).
 */
export function failOnServiceAbort<T>(running: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return running;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      if (signal.reason instanceof ServiceError) reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    running.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A file in its wire form as an object. */
export function parseFile(f: ShapedFile): FileResult {
  return parseJson(f.json) as FileResult;
}

/** Where the snapshot holds a unit: its file, else a copy of its generation (startUnits). */
function heldUnit(snapshot: Snapshot, u: ShardUnit): { entry: ShardEntry; member: number } | undefined {
  if (!snapshot.byUnit) {
    const byUnit = new Map<string, { entry: ShardEntry; member: number }>();
    for (const entry of snapshot.entries)
      entry.members.forEach((m, member) => {
        byUnit.set(`${m.repoId}/${basename(entry.path)}`, { entry, member });
        if (m.copyOf !== undefined) byUnit.set(`${m.repoId}@${m.copyOf}`, { entry, member });
      });
    snapshot.byUnit = byUnit;
  }
  return snapshot.byUnit.get(`${u.repoId}/${u.file}`) ?? (u.generation === undefined ? undefined : snapshot.byUnit.get(`${u.repoId}@${u.generation}`));
}

/**
 * A query that names a search context is searched within it only when its caller resolved
 * the context into the search's repository filter (the daemon's API does: http/contexts.ts).
 * A search without a filter (the command line on a data dir, which knows no contexts) would
 * ignore it and search everything, so it is refused.
 */
function unresolvedContext(context: string | undefined, filter: SearchOptions['repoFilter']): void {
  if (context === undefined || context === GLOBAL_CONTEXT || filter) return;
  throw new ServiceError(
    'FAILED_TO_PARSE_QUERY',
    `context:${context} names a search context, which the daemon resolves: search through its API (POST /api/search), or leave context: out`,
  );
}

/** What the workers know of a shard (its catalog entry). */
const refs = new WeakMap<ShardEntry, ShardRef>();

/** A manifest's part of a snapshot (Searcher.partsOf). */
interface ManifestParts {
  /** Its repository's name: what the snapshot is sorted by. */
  name: string;
  flags: RepoFlags | undefined;
  shards: Array<{ path: string; membership?: string; symbols?: string; key: string; member?: number; docs: number }>;
}

/**
 * Gives the entries of a new snapshot that name a shard as the old one did the old one's
 * ShardRef: the pool sends the workers only the shards that changed (SearchPool.catalog),
 * and they keep what they worked out for the others. An unchanged manifest is the same
 * object from one state to the next (index-health.ts), so its repository record is too.
 */
function keepRefs(old: readonly ShardEntry[], entries: readonly ShardEntry[]): void {
  if (old.length === 0) return;
  const byPath = new Map(old.map((e) => [e.path, e]));
  for (const e of entries) {
    const o = byPath.get(e.path);
    if (o === undefined || o.membership !== e.membership || o.symbols !== e.symbols || o.members.length !== e.members.length) continue;
    if (o.members.every((m, i) => m.member === e.members[i]!.member && m.repoId === e.members[i]!.repoId && m.repo === e.members[i]!.repo))
      refs.set(e, refOf(o));
  }
}

function refOf(e: ShardEntry): ShardRef {
  let ref = refs.get(e);
  if (!ref) {
    ref = shardRef(
      e.path,
      e.members.map((m) => memberRef(m.member, m.repoId, m.repo)),
      e.membership,
      e.symbols,
    );
    refs.set(e, ref);
  }
  return ref;
}

/** The shaping of a search of versions (Plan.versions): each file its blob and its matches, no chunks. */
function versionsShape(shape: ShapeOptions, plan: Plan | undefined): ShapeOptions {
  return plan?.versions ? { ...shape, versions: { literalBytes: loneLiteralBytes(plan) } } : shape;
}

/** The run of no shards. */
const noRun: MergeDeps['start'] = () => ({ replies: [], grant() {}, stop() {}, definitionsOnly() {} });
