// One sync pass: list every connection's repositories, bring the store's records in line,
// fetch each repository's mirror and index what moved, remove what is gone.
//
// Failure rules: a connection that cannot be listed keeps its repositories and
// their indexes untouched (a partial or failed listing must never delete anything); a
// repository that fails to fetch or index keeps serving its previous index, records the
// error, and is retried with exponential back-off (settings.retryBaseMs doubling up to
// retryMaxMs); nothing one repository does stops the others.
//
// A code host is not trusted: a repository whose clone URL the connection may not fetch
// (repos/hosts/clone-url.ts: a local path, another host or scheme) is refused, never fetched
// nor indexed; its record says why, and an index it had is removed with its mirror, since
// nothing says that index came from the host.
//
// A pass has two halves, which a cluster runs on different nodes (cluster/cluster-sync.ts):
// listConnections (the listing, the store's records, the deletions: one node, the leader)
// and syncRepo (one repository's fetch and build: any node, from a queued RepoJob through
// syncRepoJob). syncOnce runs both here, a few repositories at a time.

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { Config, Connection } from '../config/types.ts';
import { startBuildThreads } from '../index/build-pool.ts';
import {
  DEFAULT_MAX_TRIGRAMS,
  indexOrPack,
  SHARD_TARGET_BYTES,
  type BuildProgress,
  type IndexOptions,
  type PackCandidate,
  type SymbolsProgress,
} from '../index/indexer.ts';
import { unchangedSummary, type IndexSummary } from '../index/index-summary.ts';
import { buildPacks, type PackOptions } from '../index/pack-build.ts';
import { mergePacks } from '../index/pack-merge.ts';
import { loadManifest, retireRepository, type LoadedManifest, type ManifestRepo } from '../index/manifest.ts';
import { retireHistory, syncHistory } from '../history/history-index.ts';
import type { HeaderChecks } from '../index/index-health.ts';
import { refStamp, sameRefStamp } from '../repos/ref-stamp.ts';
import { warmCtags } from '../symbols/ctags.ts';
import { Slots } from '../runtime/slots.ts';
import { warmSpawner } from '../runtime/spawner.ts';
import { silentLogger, type Logger } from '../runtime/logger.ts';
import type { RepoRecord, Store } from '../store/store.ts';
import { createCodeHost, type CodeHostOptions } from '../repos/hosts/index.ts';
import type { CodeHost, HostRepo } from '../repos/hosts/types.ts';
import { cloneUrlRefusal, plainHttpOrigins } from '../repos/hosts/clone-url.ts';
import { removeMirror } from '../repos/mirror.ts';
import { fetchSource, mirrorPath } from './fetch-source.ts';
import { stampedIndex, UnchangedRecords } from './up-to-date.ts';

export interface SyncOptions {
  config: Config;
  dataDir: string;
  store: Store;
  /** For tests: environment, fetch, sleep of the code host clients. */
  hostOptions?: CodeHostOptions;
  /** Retry repositories that are still backing off. */
  force?: boolean;
  log?: Logger;
  onEvent?: (e: SyncEvent) => void;
  /**
   * Told when a pass, or a batch of repositories asked for (repo-queue.ts), has ended with
   * its compound shards merged: the index has settled (the watches check it then).
   */
  onSynced?: () => void;
  /** The index's manifests as this process's view holds them, for the merges of compound shards (absent: read from disk). */
  manifests?: () => readonly LoadedManifest[];
  /** Told when compound shards were merged (a pass's or a batch's end), with how long it took. */
  onMerged?: (merged: { packs: number; moved: number; seconds: number }) => void;
  now?: () => number;
  /**
   * A cluster's additions to each build (absent on a single node): asked after the
   * repository's fetch, just before its build, and passed through to indexPath. A failure
   * here is the repository's failure (recorded, retried with back-off).
   */
  indexExtras?: (record: RepoRecord, w: Pick<Work, 'rebuild'>) => Promise<IndexExtras>;
  /**
   * Build small repositories into compound shards (pack-build.ts) and merge packs after the
   * pass (pack-merge.ts); default true. False: every repository gets shards of its own.
   */
  packs?: boolean;
  /**
   * The longest the comparing of up-to-date repositories waits for one of a pass's first
   * changes to be read and built (Pass.focus); default FOCUS_MAX_MS. The bound keeps a slow
   * build from holding up the rest of the pass; a test of the ordering lifts it so that
   * the order does not depend on how loaded the machine is.
   */
  focusMaxMs?: number;
}

/** What a cluster adds to a build: the least generation it may use, and the hook told of each manifest it commits (to publish it). */
export type IndexExtras = Pick<IndexOptions, 'minGeneration' | 'onCommit' | 'current'>;

export type RepoOutcome = 'indexed' | 'unchanged' | 'failed' | 'deleted' | 'backing-off' | 'refused';

export type SyncEvent =
  | { type: 'connection'; name: string; repos?: number; error?: string }
  | { type: 'repo-refused'; connection: string; repoName: string; error: string }
  | { type: 'repo-start'; repoName: string; index: number; total: number; stage: 'fetch' | 'index' }
  | { type: 'repo-progress'; repoName: string; index: number; total: number; build?: BuildProgress; symbols?: SymbolsProgress }
  | { type: 'repo-done'; repoName: string; index: number; total: number; outcome: RepoOutcome; summary?: IndexSummary; error?: string; seconds: number }
  /** The small repositories that changed, built together into compound shards (pack-build.ts): how far. */
  | { type: 'packs-progress'; repos: number; build: BuildProgress };

export interface SyncReport {
  connections: Array<{ name: string; ok: boolean; repos: number; error?: string }>;
  repos: Array<{ repoId: number; repoName: string; outcome: RepoOutcome; mode?: IndexSummary['mode']; error?: string; seconds: number }>;
}

/** One listed repository to fetch and index. */
export interface Work {
  record: RepoRecord;
  host: CodeHost;
  hostRepo: HostRepo;
  connection: Connection;
  /** The connection's name in config.connections. */
  connectionName: string;
  /** RepoJob.rebuild. */
  rebuild?: boolean;
}

/**
 * A repository's sync as queued data (a cluster's job, cluster/jobs.ts): serialisable, so
 * that any node can run it with syncRepoJob. HostRepo is plain data.
 */
export interface RepoJob {
  repoId: number;
  /** The connection that listed it, by name. */
  connection: string;
  hostRepo: HostRepo;
  /** Run even when the repository is backing off (a forced pass). */
  force?: boolean;
  /**
   * Queued because a shard of the repository's published index lost every copy (a
   * cluster's replicator.ts, ClusterSyncScheduler.requeue): built even if its refs did not
   * move, when no copy came back meanwhile.
   */
  rebuild?: boolean;
}

/** A pass: the listing, then every listed repository fetched and indexed, a few at a time. */
export async function syncOnce(options: SyncOptions): Promise<SyncReport> {
  // Started while the pass lists and compares (warmBuilders).
  warmBuilders(options.config);
  // 1. List the connections, update the records, remove what is gone.
  const { report, work } = await listConnections(options);
  // 2. Fetch and index.
  report.repos.push(...(await syncWork(options, work)));
  report.repos.sort((a, b) => (a.repoName < b.repoName ? -1 : a.repoName > b.repoName ? 1 : 0));
  return report;
}

/**
 * What a build needs started ahead: ctags asked what it can do (a build on this thread
 * would otherwise start it twice before its first file, blocking); the git reader a
 * changed repository's build loads on demand (once the pass compares, a dynamic import
 * takes many turns of a busy event loop); the spawner process git is started through
 * (runtime/spawner.ts), whose own start would otherwise come after a change is found, on
 * the way to its build. Each is started once per process.
 */
function warmBuilders(config: Config): void {
  if (config.settings.symbols !== false) void warmCtags();
  void import('../repos/git.ts');
  warmSpawner();
}

/**
 * Step 2 of a pass, also run alone for repositories asked for by name (sync/repo-queue.ts,
 * `trawl sync --repo`): each repository of `work` fetched and indexed, a few at a time; the
 * small ones that changed are built together into compound shards (pack-build.ts), a
 * compound shard's worth at a time while the others are read (PackQueue). The outcomes in
 * the order they ended.
 */
export async function syncWork(options: SyncOptions, work: readonly Work[]): Promise<SyncReport['repos']> {
  const { config } = options;
  warmBuilders(config);
  const out: SyncReport['repos'] = [];
  const concurrency = Math.max(1, config.settings.syncConcurrency);
  const workers = buildWorkers(concurrency);
  let next = 0;
  const total = work.length;
  const packs = options.packs === false ? undefined : new PackQueue(options);
  // Reading a repository's refs and listing its files mostly waits (on git, on libgit2's
  // threads), and most repositories of a large installation are small ones handed back
  // for compound shards: many are read at once, while builds of their own take
  // `concurrency` slots (the setting's meaning: repositories built at once).
  const readers = options.packs === false ? concurrency : Math.max(concurrency, READERS);
  const pass: Pass = {
    turns: { builds: new Slots(concurrency), fetches: new Slots(concurrency) },
    unchanged: new UnchangedRecords(),
    headers: new Map(),
    changed: 0,
    ...(packs ? { packs } : {}),
  };
  try {
    // A repository found up to date is answered without leaving this turn of the event
    // loop (its checks are synchronous reads), so thousands of them would run back to back
    // while the few that changed wait for their reads of git: the runners let the event
    // loop run every few milliseconds, and stop comparing while one of the first changes
    // is read and built (Pass.focus), so that it is searchable before the pass ends. One
    // pause for all of them: a runner that resumes after it must not start the clock again
    // for the others of the same turn.
    let turnStarted = performance.now();
    let pause: Promise<void> | undefined;
    const paused = () =>
      (pause ??= new Promise<void>((resolve) =>
        setImmediate(() => {
          pause = undefined;
          turnStarted = performance.now();
          resolve();
        }),
      ));
    const runner = async (): Promise<void> => {
      for (;;) {
        while (pass.focus) await pass.focus;
        if (performance.now() - turnStarted > YIELD_AFTER_MS) await paused();
        if (next >= work.length) return;
        const index = next++;
        const done = await syncRepo(options, work[index]!, { index, total }, workers, pass);
        if (done) out.push(done);
      }
    };
    await Promise.all(Array.from({ length: Math.min(readers, work.length) }, runner));
    if (packs) out.push(...(await packs.finish()));
  } finally {
    packs?.releaseAll();
    await pass.unchanged.write(options.store, toolsOf(options).log);
  }
  return out;
}

/** Build threads of a pass's compound shards (pack-build.ts builds each shard on one). */
const PACK_THREADS = Math.max(1, availableParallelism());

/** How long a changed repository waits for others to be built with it (PackQueue): the others found meanwhile join it. */
const UPDATE_GATHER_MS = 1;
/** Builds of changed repositories a pass starts before its compound shards are full (PackQueue). */
const PROMPT_BUILDS = 4;

/** How long the runners of a pass go on comparing before they let the event loop run. */
const YIELD_AFTER_MS = 2;
/** The longest the comparing waits for a change being read and built (Pass.focus). */
const FOCUS_MAX_MS = 300;

/** Repositories a pass reads at once (their builds still take turns: syncConcurrency). */
const READERS = 16;

/** A pass's turns: to build (IndexOptions.buildSlot), and to fetch from a code host. */
interface Turns {
  builds: Slots;
  fetches: Slots;
}

/** What the repositories of one pass share: their turns, the queue of compound shards, the records of those found up to date, the shard headers checked (a pack's once, not once per member). */
interface Pass {
  turns: Turns;
  packs?: PackQueue;
  unchanged: UnchangedRecords;
  headers: HeaderChecks;
  /** Repositories of the pass found changed since they were last indexed. */
  changed: number;
  /**
   * While one of the pass's first few changes is read (found changed, until it is handed
   * to the compound-shard queue or built): the runners start comparing no other repository
   * until it is, or for FOCUS_MAX_MS. Each of its reads of git and of the disk waits for a
   * turn of the event loop, which thousands of comparisons would otherwise fill.
   */
  focus?: Promise<void>;
}

/** Makes the pass's runners wait (Pass.focus) until the function returned is called, or FOCUS_MAX_MS. */
function focusOn(pass: Pass, maxMs: number): () => void {
  let end!: () => void;
  const mine = new Promise<void>((resolve) => (end = resolve));
  const timer = setTimeout(end, maxMs);
  const before = pass.focus;
  const focus = before ? Promise.all([before, mine]).then(() => {}) : mine;
  pass.focus = focus;
  void focus.then(() => {
    if (pass.focus === focus) delete pass.focus;
  });
  return () => {
    clearTimeout(timer);
    end();
  };
}

/**
 * The small repositories of a pass handed back for compound shards (syncRepo with
 * `packs`), built while the pass reads the others: as soon as a compound shard's worth
 * for each build thread waits, they are built (one build at a time); finish() builds the
 * rest. A repository that was indexed before (a change, not a newcomer) is not kept waiting
 * for the others: what waits is built UPDATE_GATHER_MS after it arrives, so a pass that
 * finds a few changes among thousands of repositories makes each searchable before it goes
 * on comparing the rest (Pass.focus; the small packs this makes are merged after the pass,
 * as any).
 * Only the first PROMPT_BUILDS such builds: a pass that rebuilds many (a new index format)
 * fills its compound shards as one from nothing does.
 * Each repository's lock is given back once its build is over.
 */
class PackQueue {
  readonly #all: Deferred[] = [];
  #waiting: Deferred[] = [];
  #bytes = 0;
  #chain: Promise<unknown> = Promise.resolve();
  readonly #outcomes: Array<Promise<SyncReport['repos']>> = [];

  constructor(private readonly options: SyncOptions) {}

  push(d: Deferred): void {
    if (d.record.indexedAt !== undefined && this.#prompt < PROMPT_BUILDS) this.#soon();
    this.#all.push(d);
    // A compound shard's worth for each build thread: built together, one shard per thread.
    if (this.#waiting.length > 0 && this.#bytes + d.candidate.bytes > SHARD_TARGET_BYTES * PACK_THREADS) this.#build();
    this.#waiting.push(d);
    this.#bytes += d.candidate.bytes;
  }

  #timer: NodeJS.Timeout | undefined;
  /** Builds started by #soon in this pass. */
  #prompt = 0;

  /** Builds what waits in UPDATE_GATHER_MS (with what joins it meanwhile). */
  #soon(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#prompt++;
      if (this.#waiting.length > 0) this.#build();
    }, UPDATE_GATHER_MS);
  }

  /** Builds what waits; the outcomes of every build of the pass. */
  async finish(): Promise<SyncReport['repos']> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#waiting.length > 0) this.#build();
    try {
      return (await Promise.all(this.#outcomes)).flat();
    } finally {
      await this.#endThreads();
    }
  }

  /** Gives back every lock (the pass is over, or failed); ends the build threads. */
  releaseAll(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const d of this.#all) d.candidate.release();
    void this.#endThreads();
  }

  /** The pass's build threads, started by its first build on threads and kept for the next (pack-build.ts PackOptions.threads). */
  #threads: Worker[] | undefined;
  readonly #threadsOf = (): Worker[] => (this.#threads ??= startBuildThreads(PACK_THREADS));

  async #endThreads(): Promise<void> {
    const threads = this.#threads;
    this.#threads = undefined;
    if (threads) await Promise.all(threads.map((w) => w.terminate()));
  }

  #build(): void {
    const batch = this.#waiting;
    this.#waiting = [];
    this.#bytes = 0;
    const built = this.#chain.then(async () => {
      try {
        const outcomes = await buildDeferred(this.options, batch, this.#threadsOf);
        // A build that failed may have lost a thread: the next starts fresh ones.
        if (outcomes.some((o) => o.outcome === 'failed')) await this.#endThreads();
        return outcomes;
      } finally {
        for (const d of batch) {
          d.candidate.release();
          d.built?.();
        }
      }
    });
    this.#chain = built.catch(() => {});
    this.#outcomes.push(built);
  }
}

/** One repository's sync in a pass: its record, its place among the pass's repositories (in the events), and when it started (performance.now()). */
interface RepoTurn {
  record: RepoRecord;
  index: number;
  total: number;
  started: number;
}

/** The pass's logger and clock: the options', else silence and the system clock. */
function toolsOf(options: SyncOptions): { log: Logger; now: () => number } {
  return { log: options.log ?? silentLogger, now: options.now ?? Date.now };
}

/** A repository whose build was handed back for a compound shard (syncRepo with `packs`). */
interface Deferred extends RepoTurn {
  candidate: PackCandidate;
  /** Called once its build has ended, committed or failed. */
  built?: () => void;
}

/**
 * A git repository whose full build holds at most this many bytes of content is built
 * with others into compound shards (pack-build.ts) rather than into shards of its own.
 */
export const PACK_BELOW_BYTES = SHARD_TARGET_BYTES / 4;

/** How compound shards are built: the pass's settings. */
function packOptions(options: Pick<SyncOptions, 'config' | 'dataDir'>): PackOptions {
  const { config } = options;
  return {
    dataDir: options.dataDir,
    target: SHARD_TARGET_BYTES,
    maxFileSize: config.settings.maxFileSize,
    maxTrigrams: DEFAULT_MAX_TRIGRAMS,
    symbols: config.settings.symbols,
  };
}

/** How a cluster's nodes copy built repositories into compound shards (cluster/pack-job.ts): the same settings, and which repositories are small. */
export function compoundShardSettings(config: Config): { build: Omit<PackOptions, 'dataDir'>; below: number } {
  const { dataDir: _d, ...build } = packOptions({ config, dataDir: '' });
  return { build, below: PACK_BELOW_BYTES };
}

/**
 * Merges small and mostly tombstoned compound shards (pack-merge.ts): after a pass, by its
 * runner (the scheduler, `trawl sync`), so that a pass's repositories are searchable
 * without waiting for it. A failure is logged; the packs serve as they are.
 */
export async function mergeCompoundShards(options: SyncOptions): Promise<void> {
  if (options.packs === false) return;
  const { log } = toolsOf(options);
  try {
    const started = performance.now();
    const merged = await mergePacks(packOptions(options), options.manifests?.());
    if (merged.packs > 0) {
      const seconds = (performance.now() - started) / 1000;
      log.info({ ...merged, seconds }, 'compound shards merged');
      options.onMerged?.({ packs: merged.packs, moved: merged.moved, seconds });
    }
  } catch (err) {
    log.error({ err: (err as Error).message }, 'merging compound shards failed; they serve as they are');
  }
}

/** Builds the repositories handed back into compound shards and records each one's outcome. */
async function buildDeferred(options: SyncOptions, deferred: Deferred[], threads?: () => Worker[]): Promise<SyncReport['repos']> {
  if (deferred.length === 0) return [];
  const onProgress = (files: number, totalFiles: number, bytes: number) =>
    options.onEvent?.({ type: 'packs-progress', repos: deferred.length, build: { files, totalFiles, bytes } });
  const outcomes = await buildPacks(
    deferred.map((d) => d.candidate),
    { ...packOptions(options), onProgress, ...(threads ? { threads } : {}) },
  );
  const byCandidate = new Map(deferred.map((d) => [d.candidate, d]));
  const out: SyncReport['repos'] = [];
  for (const o of outcomes) {
    const d = byCandidate.get(o.candidate)!;
    out.push('summary' in o ? await recordIndexed(options, d, o.summary) : await recordFailed(options, d, o.error));
  }
  return out;
}

/** The build threads of one repository's build when `concurrency` repositories are built at once. */
export function buildWorkers(concurrency: number): number {
  return Math.max(1, Math.floor(availableParallelism() / Math.max(1, concurrency)));
}

/**
 * Step 1 of a pass: lists every connection, brings the store's records in line (upserts;
 * connections no longer configured deleted), and removes the repositories no complete
 * listing names any more (their index retired, their mirror removed, the record marked
 * deleted). Returns the report so far (connections, deleted repositories) and the listed
 * repositories still to fetch and index.
 */
export async function listConnections(options: SyncOptions): Promise<{ report: SyncReport; work: Work[] }> {
  const { config, store } = options;
  const { log, now } = toolsOf(options);
  const report: SyncReport = { connections: [], repos: [] };

  // Connections: list each; a failure leaves that connection's repositories alone.
  const work: Work[] = [];
  const claimed = new Set<string>();
  for (const [name, connection] of Object.entries(config.connections)) {
    const conn = await store.upsertConnection(name, connection.type);
    const plain = plainHttpOrigins(connection);
    if (plain.length > 0) {
      log.warn(
        { connection: name, origins: plain },
        'the connection reaches its host over plain http: whoever is on the path can answer for the host (its repositories, clone URLs and pages) and read its token; use https',
      );
    }
    let listed: HostRepo[];
    let host: CodeHost;
    try {
      host = createCodeHost(name, connection, { log, ...options.hostOptions });
      listed = await host.listRepos();
    } catch (err) {
      const error = (err as Error).message;
      await store.updateConnection(conn.id, { lastError: error, lastErrorAt: new Date(now()).toISOString() });
      log.error({ connection: name, err: error }, 'connection listing failed; its repositories keep their current index');
      report.connections.push({ name, ok: false, repos: 0, error });
      options.onEvent?.({ type: 'connection', name, error });
      continue;
    }
    await store.updateConnection(conn.id, { lastSyncedAt: new Date(now()).toISOString(), lastError: undefined, lastErrorAt: undefined });
    report.connections.push({ name, ok: true, repos: listed.length });
    options.onEvent?.({ type: 'connection', name, repos: listed.length });
    const seen = new Set<string>();
    for (const hostRepo of listed) {
      seen.add(hostRepo.repoName);
      // A repository two connections list belongs to the first (in configuration order).
      if (claimed.has(hostRepo.repoName)) continue;
      claimed.add(hostRepo.repoName);
      const refusal = cloneUrlRefusal(connection, hostRepo.cloneUrl);
      const record = await store.upsertRepo({
        repoName: hostRepo.repoName,
        displayName: hostRepo.displayName,
        codeHostType: hostRepo.codeHostType,
        connectionId: conn.id,
        // A refused location is not kept as the repository's source (http/local-source.ts reads a local clone URL in place).
        cloneUrl: refusal === undefined ? hostRepo.cloneUrl : undefined,
        externalWebUrl: hostRepo.externalWebUrl,
        imageUrl: hostRepo.imageUrl,
        defaultBranch: hostRepo.defaultBranch ?? (await store.getRepoByName(hostRepo.repoName))?.defaultBranch,
        isFork: hostRepo.isFork,
        isArchived: hostRepo.isArchived,
        visibility: hostRepo.visibility,
        pushedAt: hostRepo.pushedAt,
        // What search contexts select by; a host that lists none clears what it listed before.
        topics: hostRepo.topics ?? [],
      });
      if (refusal !== undefined) {
        report.repos.push(await refuseRepo(options, record, name, refusal));
        continue;
      }
      work.push({ record, host, hostRepo, connection, connectionName: name });
    }
    // Gone from a complete listing: deleted upstream, or excluded now.
    for (const r of await store.listRepos({ connectionId: conn.id })) {
      if (!seen.has(r.repoName)) report.repos.push(await deleteRepo(options, r));
    }
  }
  // Connections no longer configured take their repositories with them.
  for (const conn of await store.listConnections()) {
    if (config.connections[conn.name] !== undefined) continue;
    for (const r of await store.listRepos({ connectionId: conn.id })) report.repos.push(await deleteRepo(options, r));
    await store.deleteConnection(conn.id);
  }
  return { report, work };
}

/** Whether a repository's last failure still holds it back (unless `force`): syncRepo skips it then. */
export function backingOff(record: RepoRecord, now: number, force = false): boolean {
  return !force && record.nextAttemptAt !== undefined && Date.parse(record.nextAttemptAt) > now;
}

/**
 * Runs a queued repository's sync on this node: reloads its record (skipped, undefined,
 * when the repository was deleted since it was queued), recreates the connection's code
 * host from this node's configuration, and runs syncRepo. Throws when this node has no
 * connection of that name (its configuration differs from the node that listed it).
 */
export async function syncRepoJob(options: SyncOptions, job: RepoJob, workers: number): Promise<SyncReport['repos'][number] | undefined> {
  const { log } = toolsOf(options);
  const record = await options.store.getRepo(job.repoId);
  if (record === undefined || record.state === 'deleted') {
    log.info({ repoId: job.repoId, repo: job.hostRepo.repoName }, 'queued repository skipped: removed since it was queued');
    return undefined;
  }
  const connection = options.config.connections[job.connection];
  if (connection === undefined) {
    throw new Error(
      `cannot sync ${record.repoName}: connection "${job.connection}" is not configured on this node (its configuration differs from the node that listed it)`,
    );
  }
  const host = createCodeHost(job.connection, connection, { log, ...options.hostOptions });
  const w: Work = { record, host, hostRepo: job.hostRepo, connection, connectionName: job.connection, ...(job.rebuild === true ? { rebuild: true } : {}) };
  return syncRepo(job.force === true ? { ...options, force: true } : options, w, { index: 0, total: 1 }, workers);
}

/**
 * Step 2 of a pass, for one repository: fetches it and indexes what moved (`place.index`
 * of `place.total` in the events), recording the outcome in the store. Never throws for
 * the repository's own failures: they are recorded, with the back-off, and reported. With
 * the pass's `packs`: a small repository that changed is handed back there (undefined), to
 * be built into a compound shard.
 */
export async function syncRepo(
  options: SyncOptions,
  w: Work,
  place: Pick<RepoTurn, 'index' | 'total'>,
  workers: number,
  pass?: Pass,
): Promise<SyncReport['repos'][number] | undefined> {
  const packs = pass?.packs;
  const turns = pass?.turns;
  const { config } = options;
  const { now } = toolsOf(options);
  const { index, total } = place;
  const { record, hostRepo } = w;
  const turn: RepoTurn = { record, index, total, started: performance.now() };
  const base = { repoId: record.repoId, repoName: record.repoName };
  if (backingOff(record, now(), options.force)) {
    options.onEvent?.({ type: 'repo-done', repoName: record.repoName, index, total, outcome: 'backing-off', seconds: 0 });
    return { ...base, outcome: 'backing-off', seconds: 0 };
  }
  try {
    options.onEvent?.({ type: 'repo-start', repoName: record.repoName, index, total, stage: 'fetch' });
    const mirror = await fetchSource(options.dataDir, w, turns?.fetches.take);
    const defaultBranch = hostRepo.defaultBranch ?? mirror.defaultBranch;
    options.onEvent?.({ type: 'repo-start', repoName: record.repoName, index, total, stage: 'index' });
    const repo: ManifestRepo = {
      name: record.repoName,
      displayName: hostRepo.displayName,
      codeHostType: hostRepo.codeHostType,
      externalWebUrl: hostRepo.externalWebUrl,
      archived: hostRepo.isArchived,
      fork: hostRepo.isFork,
      visibility: hostRepo.visibility,
      kind: 'git',
      source: mirror.path,
    };
    const extras = (await options.indexExtras?.(record, w)) ?? {};
    const revisions = { ...w.connection.revisions, ...(defaultBranch ? { defaultBranch } : {}) };
    // Taken before the refs are read: a ref that moves meanwhile changes it for the next pass.
    // The stamp the index recorded is checked first by stating the paths it lists (no
    // directory read); only when that fails is the repository stamped again.
    const salt = JSON.stringify(revisions);
    const stamped = options.indexExtras === undefined && w.rebuild !== true;
    let sourceStamp: string | undefined;
    const stampNow = () => (sourceStamp ??= refStamp(mirror.path, salt));
    const stamp = (recorded: string) => sameRefStamp(mirror.path, salt, recorded) || recorded === stampNow();
    const known = stamped
      ? stampedIndex(options.dataDir, record.repoId, { stamp, repo, symbols: config.settings.symbols !== false }, pass?.headers ?? new Map())
      : undefined;
    if (known) {
      const summary = unchangedSummary(known, turn.started);
      await historyAfter(options, w, repo, mirror.path, summary);
      return await recordIndexed(options, turn, summary, pass?.unchanged);
    }
    stampNow();
    const unfocus =
      pass !== undefined && record.indexedAt !== undefined && ++pass.changed <= PROMPT_BUILDS ? focusOn(pass, options.focusMaxMs ?? FOCUS_MAX_MS) : undefined;
    const indexed = await indexOrPack(mirror.path, {
      ...extras,
      dataDir: options.dataDir,
      // The tip's commit time rides along: the push time of a repository whose host reports none (type git).
      register: async (d) => ({ repoId: record.repoId, repo: d.committedAt ? { ...repo, committedAt: d.committedAt } : repo }),
      revisions,
      maxFileSize: config.settings.maxFileSize,
      symbols: config.settings.symbols,
      workers,
      ...(sourceStamp !== undefined ? { sourceStamp } : {}),
      // A history index is built after the repository's own (historyAfter): never packed.
      ...(packs && w.connection.history !== true ? { packBelow: PACK_BELOW_BYTES } : {}),
      ...(turns ? { buildSlot: turns.builds.take } : {}),
      ...(options.onEvent
        ? {
            onProgress: (build: BuildProgress) => options.onEvent?.({ type: 'repo-progress', repoName: record.repoName, index, total, build }),
            onSymbolsProgress: (symbols: SymbolsProgress) => options.onEvent?.({ type: 'repo-progress', repoName: record.repoName, index, total, symbols }),
          }
        : {}),
    }).catch((err: unknown) => {
      unfocus?.();
      throw err;
    });
    if ('commit' in indexed) {
      // The focus lasts until its build: the one PackQueue starts at once for a change, or
      // the pass's last (then FOCUS_MAX_MS ends it first).
      packs!.push({ ...turn, candidate: indexed, ...(unfocus ? { built: unfocus } : {}) });
      return undefined;
    }
    unfocus?.();
    await historyAfter(options, w, repo, mirror.path, indexed);
    return await recordIndexed(options, turn, indexed);
  } catch (err) {
    return recordFailed(options, turn, (err as Error).message);
  }
}

/**
 * The repository's history index brought in line with its index (history/history-index.ts:
 * built when its connection has `history`, retired when no longer). A failure is logged; the
 * index just committed serves regardless, and the next sync tries again.
 */
async function historyAfter(options: SyncOptions, w: Work, repo: ManifestRepo, gitDir: string, summary: IndexSummary): Promise<void> {
  // A cluster's builds (indexExtras) make none: its nodes neither publish nor search history indexes.
  if (options.indexExtras !== undefined) return;
  const { log } = toolsOf(options);
  const { settings } = options.config;
  try {
    const done = await syncHistory({
      enabled: w.connection.history === true,
      dataDir: options.dataDir,
      repoId: w.record.repoId,
      repo,
      gitDir,
      refs: summary.refs,
      maxCommits: settings.historyMaxCommits,
      maxFileSize: settings.maxFileSize,
      symbols: settings.symbols,
    });
    if (typeof done === 'object')
      log.info({ repo: w.record.repoName, commits: done.commits, mode: done.mode, files: done.builtFiles, seconds: done.seconds }, 'history indexed');
  } catch (err) {
    log.warn(
      { repo: w.record.repoName, err: (err as Error).message },
      'indexing the history failed; searches at its commits find what the previous history index holds',
    );
  }
}

/** A repository's build is committed: its record says so, and the pass's report. */
async function recordIndexed(options: SyncOptions, turn: RepoTurn, summary: IndexSummary, later?: UnchangedRecords): Promise<SyncReport['repos'][number]> {
  const { record, index, total, started } = turn;
  const { log, now } = toolsOf(options);
  const at = new Date(now()).toISOString();
  const patch: Partial<RepoRecord> = {
    state: 'indexed',
    defaultBranch: summary.refs[0]!.name,
    indexedAt: summary.mode === 'unchanged' ? (record.indexedAt ?? at) : at,
    lastSuccessAt: at,
    failures: 0,
    lastError: undefined,
    lastErrorAt: undefined,
    nextAttemptAt: undefined,
    indexedRefs: summary.refs,
  };
  if (later && summary.mode === 'unchanged') later.add(record.repoId, patch);
  else await options.store.updateRepo(record.repoId, patch);
  const seconds = (performance.now() - started) / 1000;
  if (summary.mode !== 'unchanged') log.info({ repo: record.repoName, mode: summary.mode, files: summary.builtFiles, seconds }, 'repository indexed');
  const outcome = summary.mode === 'unchanged' ? 'unchanged' : 'indexed';
  options.onEvent?.({ type: 'repo-done', repoName: record.repoName, index, total, outcome, summary, seconds });
  return { repoId: record.repoId, repoName: record.repoName, outcome, mode: summary.mode, seconds };
}

/** A repository's fetch or build failed: recorded with its back-off; its previous index keeps serving. */
async function recordFailed(options: SyncOptions, turn: RepoTurn, message: string): Promise<SyncReport['repos'][number]> {
  const { record, index, total, started } = turn;
  const { log, now } = toolsOf(options);
  const { config } = options;
  const error = message.split('\n')[0]!;
  const failures = record.failures + 1;
  const delay = Math.min(config.settings.retryBaseMs * 2 ** (failures - 1), config.settings.retryMaxMs);
  const at = now();
  await options.store.updateRepo(record.repoId, {
    state: 'failed',
    failures,
    lastError: error,
    lastErrorAt: new Date(at).toISOString(),
    nextAttemptAt: new Date(at + delay).toISOString(),
  });
  log.error({ repo: record.repoName, err: error, failures, retryInMs: delay }, 'repository sync failed; its previous index keeps serving');
  const seconds = (performance.now() - started) / 1000;
  options.onEvent?.({ type: 'repo-done', repoName: record.repoName, index, total, outcome: 'failed', error, seconds });
  return { repoId: record.repoId, repoName: record.repoName, outcome: 'failed', error, seconds };
}

/**
 * A listed repository whose clone URL its connection refuses: not fetched, not indexed.
 * Recorded as failed with the reason, without back-off (the next listing decides again, at
 * no cost). An index it has is retired and its mirror removed: built before trawl checked,
 * or from where the host pointed before, nothing says it holds the host's repository.
 */
async function refuseRepo(options: SyncOptions, r: RepoRecord, connection: string, reason: string): Promise<SyncReport['repos'][number]> {
  const { log, now } = toolsOf(options);
  const manifest = loadManifest(options.dataDir, r.repoId);
  if (manifest !== undefined && ('unreadable' in manifest || manifest.shards.length > 0)) retireRepository(options.dataDir, r.repoId);
  retireHistory(options.dataDir, r.repoId);
  removeMirror(mirrorPath(options.dataDir, r.repoId));
  await options.store.updateRepo(r.repoId, {
    state: 'failed',
    lastError: reason,
    lastErrorAt: new Date(now()).toISOString(),
    nextAttemptAt: undefined,
    indexedAt: undefined,
    indexedRefs: [],
  });
  log.error({ connection, repo: r.repoName, err: reason }, 'repository skipped: its clone URL is refused, it is not fetched nor indexed');
  options.onEvent?.({ type: 'repo-refused', connection, repoName: r.repoName, error: reason });
  return { repoId: r.repoId, repoName: r.repoName, outcome: 'refused', error: reason, seconds: 0 };
}

async function deleteRepo(options: SyncOptions, r: RepoRecord): Promise<SyncReport['repos'][number]> {
  const { log } = toolsOf(options);
  retireRepository(options.dataDir, r.repoId);
  retireHistory(options.dataDir, r.repoId);
  removeMirror(mirrorPath(options.dataDir, r.repoId));
  await options.store.updateRepo(r.repoId, { state: 'deleted', connectionId: undefined });
  log.info({ repo: r.repoName }, 'repository removed: no connection lists it any more');
  return { repoId: r.repoId, repoName: r.repoName, outcome: 'deleted', seconds: 0 };
}
