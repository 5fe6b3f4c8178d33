// Indexes one repository into the data dir: a local git repository (or a mirror of a
// remote one), or a plain directory. A git repository is indexed at its selected refs; when
// its previous index holds blob ids, only the file versions that changed are built, into a
// delta shard, and the existing shards' branch lists are updated beside them (delta.ts).
// Every run ends by committing a new manifest (manifest.ts), atomically.
//
// Faults (manifest.ts's header has the whole story): a run first removes what killed runs
// left in the repository's directory; a run that fails removes every file of its own
// generation before rethrowing, unless its manifest was committed; a repository whose
// index is damaged (index-health.ts) is rebuilt in full, never incrementally on top of it.

import { readdirSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { GitRef, GitSource, RevisionSelection } from '../repos/git.ts';
import { walkSorted, type WalkedFile } from '../repos/walk.ts';
import { writeMembershipFile } from './branch-set.ts';
import { detectRepo, openSource, type DetectedRepo, type OpenedSource } from './detect-repo.ts';
import { type BlobFile, type BuildPool, cutShards, cutShardsAsync, runSymbolsPool, startBuildThreads, type BuildResult } from './build-pool.ts';
import { buildShards, INLINE_BUILD_FILES, type BuiltShards, type ShardsBuild } from './build-shards.ts';
import { ctagsAvailable } from '../symbols/ctags.ts';
import { acquireLock } from '../runtime/lock-file.ts';
import { removeLeftoverTemps } from '../runtime/left-behind.ts';
import { shardsDir, syncFiles } from './data-dir.ts';
import { deltaTooLarge, planDelta, type DeltaPlan } from './delta.ts';
import { indexProblem, readMark } from './index-health.ts';
import {
  commitManifest,
  type CommitBatch,
  fileGeneration,
  loadManifest,
  memberEntry,
  MEMBERSHIP_EXT,
  removeUnlisted,
  repairMissedBump,
  sameRefs,
  shardFiles,
  symbolsPending,
  type LoadedManifest,
  type Manifest,
  type ManifestRepo,
  type ManifestShard,
  type ShardFiles,
} from './manifest.ts';
import type { MemberResult, ShardFile } from './shard-builder.ts';
import { noteWritten } from './section-checks.ts';
import type { SymbolsJob } from './symbols-pass.ts';
import { SYMBOLS_EXT, type ShardRepoMeta } from './shard-format.ts';
import { runSummary, type IndexSummary } from './index-summary.ts';

/**
 * Content per shard, about what zoekt found best: large enough that per-shard
 * costs (trigram tables, task dispatch) stay small, small enough that shards of a large
 * repository spread across the search pool's threads and build in bounded memory.
 */
export const SHARD_TARGET_BYTES = 100 * 1024 * 1024;
export const DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024;
/** Files with more distinct trigrams are almost always data, not code (zoekt uses the same cut). */
export const DEFAULT_MAX_TRIGRAMS = 20_000;

/** Assigns the repository its id and metadata (the embedded store, or a connection's record). */
export type RegisterRepo = (detected: DetectedRepo) => Promise<{ repoId: number; repo: ManifestRepo }>;

export interface IndexOptions {
  dataDir: string;
  /** Names the repository and gives its id. */
  register: RegisterRepo;
  maxFileSize?: number;
  maxTrigrams?: number;
  workers?: number;
  shardTargetBytes?: number;
  /** Extract symbol definitions with universal-ctags (default true; skipped when ctags is missing). */
  symbols?: boolean;
  /** Store each version of a path as a delta against the one before it (ShardJob.versionDeltas): the history index's shards. */
  versionDeltas?: boolean;
  /** A full build's last shard is never a runt: it joins the one before (build-pool.ts cutShards): the history index's shards. */
  foldRunt?: boolean;
  /** Store the shards' compressible sections compressed (ShardJob.compressed): the history index's shards. */
  compressSections?: boolean;
  /** Branches and tags to index besides the default branch. */
  revisions?: RevisionSelection;
  /** Build only what changed since the previous index, when possible (default true). */
  incremental?: boolean;
  /**
   * The source's refs stamp, taken before its refs were read (repos/ref-stamp.ts): every
   * manifest the run commits records it, so that the next sync can tell nothing moved.
   */
  sourceStamp?: string;
  /**
   * A git repository whose full build would hold at most this many bytes is handed back
   * for a compound shard instead of built (indexOrPack); default: every one is built.
   */
  packBelow?: number;
  /**
   * Waited for before the run builds anything (its release when the run ends): a sync
   * lists and sizes many repositories at once but builds only a few (sync.ts).
   */
  buildSlot?: () => Promise<() => void>;
  onProgress?: (p: BuildProgress) => void;
  /** After the content of a full build is searchable, the symbols pass's shards done (symbolsLater). */
  onSymbolsProgress?: (p: SymbolsProgress) => void;
  /**
   * The least generation the run may use (and so the symbols pass one past it). A cluster
   * hands each build of a repository generations no other node's build of it has, so that
   * a file name never stands for two contents anywhere in the cluster (cluster/jobs.ts).
   */
  minGeneration?: number;
  /** Told of each manifest the run commits (its content, then its symbols pass's): a cluster publishes it. */
  onCommit?: (m: Manifest) => void;
  /**
   * The shards' postings are over groups of versions of one path (ShardJob.grouped): set
   * by the history index only, whose shards hold many versions of each path.
   */
  groupVersions?: boolean;
  /**
   * In a cluster: the repository's index as published (cluster/published.ts), built on any
   * node. A node holds some of its shards or none, so its own manifest cannot tell that
   * nothing moved; this can. When the source's refs and the repository's metadata are the
   * ones it was built from (and its symbols are in), the run builds nothing: 'unchanged'.
   */
  current?: Pick<Manifest, 'refs' | 'repo' | 'files' | 'contentBytes' | 'shards' | 'symbolsPending'>;
}

/** How far a build is: files and bytes built, of the files listed so far (a directory's walk may still be adding some). */
export interface BuildProgress {
  files: number;
  totalFiles: number;
  bytes: number;
}

/** How far a symbols pass is, in shards. */
export interface SymbolsProgress {
  shards: number;
  totalShards: number;
}

/**
 * A small repository's full build handed back to the caller instead of run (indexOrPack):
 * built with others into a compound shard (pack-build.ts). It holds the repository's lock
 * until release().
 */
export interface PackCandidate {
  readonly repoId: number;
  readonly repo: ManifestRepo;
  readonly refs: GitRef[];
  /** The git repository its blobs are read from. */
  readonly gitDir: string;
  /** Its file versions, sized, each with the indexes of the refs holding it. */
  readonly files: ShardFile[];
  /** Bytes of the files that would be indexed (within the size limit). */
  readonly bytes: number;
  /**
   * Commits the repository as member `member` of the compound shard `file` (packs
   * directory), as `built` says it holds it; with `batch`, index-version is bumped by the
   * batch's end (manifest.ts startBatch). Its summary.
   */
  commit(file: string, member: number, built: MemberResult, batch: CommitBatch): IndexSummary;
  /** Lets go of the repository (its lock): after its commit, or instead of it. */
  release(): void;
}

/** Indexes the repository at `pathArg`. */
export async function indexPath(pathArg: string, options: IndexOptions): Promise<IndexSummary> {
  const { packBelow: _packBelow, ...whole } = options;
  return (await indexOrPack(pathArg, whole)) as IndexSummary;
}

/**
 * Indexes the repository at `pathArg`, or, when its full build would hold at most
 * `options.packBelow` bytes, hands it back for a compound shard (PackCandidate, holding
 * its lock) without building anything.
 */
export async function indexOrPack(pathArg: string, options: IndexOptions): Promise<IndexSummary | PackCandidate> {
  const started = performance.now();
  return indexOpened(await openSource(pathArg, options.revisions), options, started);
}

/**
 * indexOrPack of a source already opened (closed here): a repository's history is one
 * (history/history-index.ts), whose refs are its commits.
 */
export async function indexOpened(source: OpenedSource, options: IndexOptions, started = performance.now()): Promise<IndexSummary | PackCandidate> {
  const { root, git } = source;
  try {
    const { repoId, repo } = await options.register(detectRepo(source));
    const dir = shardsDir(options.dataDir, repoId);
    // (Off this thread: a sync makes many repositories' directories at once.)
    await mkdir(dir, { recursive: true });
    const release = await acquireLock(join(dir, 'lock'), `repository ${repo.name}`);
    let handedOver = false;
    try {
      const found = inspect(options.dataDir, repoId, options.minGeneration ?? 0);
      removeUnlisted(dir, found.previous);
      removeLeftoverTemps(options.dataDir); // index-version of a killed process
      repairMissedBump(options.dataDir, repoId);
      const run = new IndexRun(options, repoId, repo, found, started);
      try {
        const out = git ? await run.git(git) : await run.directory(root);
        if ('commit' in out) {
          handedOver = true;
          return { ...out, release };
        }
        return out;
      } catch (err) {
        run.discard();
        throw err;
      } finally {
        await run.releaseThreads();
      }
    } finally {
      if (!handedOver) release();
    }
  } finally {
    git?.close();
  }
}

/** What the repository's directory holds before a run. */
interface Found {
  /** The readable manifest, damaged or not (its files are retired by the commit). */
  previous: LoadedManifest | undefined;
  /** Why the index cannot be built upon (index-health.ts), else undefined. */
  damage: string | undefined;
  generation: number;
}

function inspect(dataDir: string, repoId: number, minGeneration: number): Found {
  const loaded = loadManifest(dataDir, repoId);
  if (loaded && 'unreadable' in loaded)
    return { previous: undefined, damage: loaded.unreadable, generation: Math.max(minGeneration, nextGeneration(dataDir, repoId, undefined)) };
  return {
    previous: loaded,
    damage: loaded ? indexProblem(dataDir, loaded) : undefined,
    generation: Math.max(minGeneration, nextGeneration(dataDir, repoId, loaded)),
  };
}

/**
 * The generation of the next run: past the manifest's. When the manifest is lost (unreadable)
 * its generation is not known: past every shard or membership file still in the directory
 * and past the mark, so that no name a manifest once named is used again (manifest.ts).
 */
function nextGeneration(dataDir: string, repoId: number, current: LoadedManifest | undefined): number {
  if (current) return current.generation + 1;
  let max = readMark(dataDir, repoId)?.generation ?? 0;
  for (const name of readdirSync(shardsDir(dataDir, repoId))) max = Math.max(max, fileGeneration(name) ?? 0);
  return max + 1;
}

/** One index run of one repository, holding its lock. */
class IndexRun {
  readonly dir: string;
  readonly generation: number;
  readonly maxFileSize: number;
  readonly maxTrigrams: number;
  readonly target: number;
  readonly indexedAt = new Date().toISOString();
  readonly previous: LoadedManifest | undefined;
  /** Why the previous index is not built upon: a full build replaces it. */
  readonly damage: string | undefined;
  /** The build threads of a content build, kept for its symbols pass (released by releaseThreads when it does not run). */
  threads: Worker[] | undefined;
  /** Their pool, holding the symbols pass's jobs (some perhaps done already). */
  pool: BuildPool | undefined;
  /** The build slot held (IndexOptions.buildSlot), given back by releaseThreads. */
  private slot: (() => void) | undefined;

  constructor(
    readonly options: IndexOptions,
    readonly repoId: number,
    readonly repo: ManifestRepo,
    found: Found,
    readonly started: number,
  ) {
    this.dir = shardsDir(options.dataDir, repoId);
    this.previous = found.previous;
    this.damage = found.damage;
    this.generation = found.generation;
    this.maxFileSize = options.maxFileSize ?? DEFAULT_MAX_FILE_SIZE;
    this.maxTrigrams = options.maxTrigrams ?? DEFAULT_MAX_TRIGRAMS;
    this.target = options.shardTargetBytes ?? SHARD_TARGET_BYTES;
  }

  /**
   * A plain directory, built as it is walked (walkSorted gives its files in path order): the
   * first shard starts once its files are listed. Whether the build is small (on this
   * thread, symbols inline) is known from its first INLINE_BUILD_FILES + 1 files.
   */
  async directory(root: string): Promise<IndexSummary> {
    const listErrors: string[] = [];
    const walk = walkSorted(root, (path, err) => listErrors.push(`${path}: ${err.message}`))[Symbol.asyncIterator]();
    const head: WalkedFile[] = [];
    let walked = false;
    while (head.length <= INLINE_BUILD_FILES) {
      const n = await walk.next();
      if (n.done) {
        walked = true;
        break;
      }
      head.push(n.value);
    }
    let listed = head.length;
    async function* files(): AsyncIterable<ShardFile> {
      for (const f of head) yield { path: f.path, size: f.size, absPath: f.absPath };
      if (walked) return;
      for (let n = await walk.next(); !n.done; n = await walk.next()) {
        listed++;
        yield { path: n.value.path, size: n.value.size, absPath: n.value.absPath };
      }
    }
    const refs: GitRef[] = [{ name: 'HEAD', kind: 'branch', commit: '' }];
    const later = this.symbolsLater(walked ? head.length : Infinity);
    const built = await this.build({ refs, groups: cutShardsAsync(files(), this.target, this.maxFileSize), totalFiles: () => listed, counted: walked, later });
    return this.finishFull(refs, built, listErrors.length, this.damageReason(), later);
  }

  /**
   * Whether a full build of `files` files builds its content first, commits it (searchable
   * at once), and adds the symbols after (symbolsPass): when symbols are wanted, ctags is
   * there, and the build is large enough for build threads (a small one takes the symbols
   * inline: a second pass would cost more than it saves).
   */
  private symbolsLater(files: number): boolean {
    return this.options.symbols !== false && files > INLINE_BUILD_FILES && ctagsAvailable();
  }

  /** Commits a full build; with `later`, its content first, then the symbols pass's shards. */
  private async finishFull(refs: GitRef[], built: Built, listErrors: number, fullReason: string | undefined, later: boolean): Promise<IndexSummary> {
    const { summary, manifest } = this.commitFull(refs, built, listErrors, fullReason, later);
    if (!later) return summary;
    summary.contentSeconds = summary.seconds;
    const symbols = await this.symbolsPass(manifest);
    summary.symbols = symbols.symbolCount;
    summary.symbolFailures = symbols.symbolFailures;
    summary.symbolsReused = symbols.symbolsReused;
    summary.seconds = (performance.now() - this.started) / 1000;
    return summary;
  }

  /**
   * The symbols pass's job for this build's shard number `index` (at `from`): its symbols
   * file is of the next generation, which the pass commits. A git repository's previous
   * index, when sound and with its symbols, lends the definitions of unchanged file
   * versions (symbols-pass.ts).
   */
  private symbolsJob(from: string, index: number): SymbolsJob {
    this.previousShards ??= (() => {
      const prev = this.previous;
      return this.repo.kind === 'git' && prev && this.damage === undefined && !symbolsPending(prev)
        ? prev.shards.map((s) => shardFiles(this.options.dataDir, this.repoId, s))
        : [];
    })();
    return { from, finalPath: join(this.dir, `g${this.generation + 1}-y${index}${SYMBOLS_EXT}`), previous: this.previousShards };
  }

  private previousShards: ShardFiles[] | undefined;

  /**
   * Adds the symbols to the shards of `manifest` (committed without them) on build threads
   * (symbols-pass.ts): a symbols file per shard, of generation + 1, and commits that
   * generation, which names each shard with its symbols file. Fails (its files removed by
   * discard(), the content left serving) if a shard does.
   */
  private async symbolsPass(manifest: Manifest): Promise<{ symbolCount: number; symbolFailures: number; symbolsReused: number }> {
    await this.holdSlot();
    const jobs = manifest.shards.map((s, i) => this.symbolsJob(join(this.dir, s.file), i));
    // The content build's threads, which took the pass's jobs as each shard was built and
    // may have done some already (BuildPool); else threads of its own.
    const pool = this.pool;
    const workers = this.threads ?? startBuildThreads(Math.min(jobs.length, this.options.workers ?? availableParallelism()));
    this.threads = undefined;
    this.pool = undefined;
    let results;
    this.options.onSymbolsProgress?.({ shards: 0, totalShards: jobs.length });
    // Each symbols file is flushed as soon as it is written, while the threads write the
    // next ones, rather than all of them at the end.
    const flushed: Array<Promise<void>> = [];
    const onShard = (done: number) => this.options.onSymbolsProgress?.({ shards: done, totalShards: jobs.length });
    const onBuilt = (job: SymbolsJob) => {
      const p = syncFiles(dirname(job.finalPath), [basename(job.finalPath)]);
      p.catch(() => undefined); // awaited below; a failure is reported there
      flushed.push(p);
    };
    try {
      if (pool) {
        results = await pool.symbols((job, done) => {
          onBuilt(job);
          onShard(done);
        });
      } else results = await runSymbolsPool(jobs, workers, onShard, onBuilt);
    } finally {
      await Promise.all(workers.map((w: Worker) => w.terminate()));
    }
    const names = jobs.map((j) => basename(j.finalPath));
    await Promise.all(flushed);
    await syncFiles(this.dir, []);
    const { retired: _retired, indexVersion: _indexVersion, symbolsPending: _pending, ...rest } = manifest;
    const committed = commitManifest(
      this.options.dataDir,
      { ...rest, generation: this.generation + 1, shards: manifest.shards.map((s, i) => ({ ...s, symbols: names[i]! })) },
      manifest,
    );
    this.noteWritten(committed, manifest);
    this.options.onCommit?.(committed);
    return {
      symbolCount: results.reduce((n, r) => n + r.symbolCount, 0),
      symbolFailures: results.reduce((n, r) => n + r.symbolFailures, 0),
      symbolsReused: results.reduce((n, r) => n + r.symbolsReused, 0),
    };
  }

  /** The full build's reason when the previous index is damaged. */
  private damageReason(): string | undefined {
    return this.damage === undefined ? undefined : `the previous index is damaged: ${this.damage}`;
  }

  /** Ends the build threads kept for a symbols pass that did not take them (a failure between the two), and gives back the build slot. */
  async releaseThreads(): Promise<void> {
    const threads = this.threads;
    this.threads = undefined;
    this.pool = undefined;
    try {
      if (threads) await Promise.all(threads.map((w) => w.terminate()));
    } finally {
      this.slot?.();
      this.slot = undefined;
    }
  }

  /** Waits for the sync's leave to build (IndexOptions.buildSlot), once per run. */
  private async holdSlot(): Promise<void> {
    if (this.slot === undefined && this.options.buildSlot) this.slot = await this.options.buildSlot();
  }

  /**
   * After a failure: removes every file of this run's generation (shards, membership files,
   * temporary files of its build threads), unless its manifest was committed (then they
   * are the index). Nothing half-written is left behind.
   */
  discard(): void {
    const m = loadManifest(this.options.dataDir, this.repoId);
    const committed = m && !('unreadable' in m) ? m.generation : -1;
    // This run's generations: its build's, and its symbols pass's (symbolsPass) after it.
    for (const generation of [this.generation, this.generation + 1]) {
      if (committed >= generation) continue;
      const mine = `g${generation}-`;
      for (const name of readdirSync(this.dir)) if (name.startsWith(mine)) rmSync(join(this.dir, name), { force: true });
    }
  }

  async git(git: GitSource): Promise<IndexSummary | Omit<PackCandidate, 'release'>> {
    const current = this.options.current;
    if (current && sameRefs(current.refs, git.refs) && sameRepo(current.repo, this.repo) && !(current.symbolsPending && this.options.symbols !== false)) {
      return runSummary(this, { mode: 'unchanged', refs: git.refs, manifest: current });
    }
    const prev = this.previous;
    const incremental = this.options.incremental !== false;
    let fullReason: string | undefined;
    if (this.damage !== undefined) {
      fullReason = this.damageReason();
    } else if (prev && symbolsPending(prev) && this.options.symbols !== false) {
      // The run that built them was stopped before its symbols pass committed.
      fullReason = 'the previous build did not finish adding its symbols';
    } else if (prev?.version === 2 && prev.subset) {
      // A cluster replica's: some of the shards of another node's build (manifest.ts).
      fullReason = 'this node holds only some of the shards (a replica)';
    } else if (prev?.version === 2 && prev.shards.length > 0 && incremental) {
      if (sameRefs(prev.refs, git.refs)) {
        // Nothing moved: the shards stand; only the repository's metadata may have changed.
        // (A new stamp of the same refs, e.g. after `git pack-refs`, is recorded, so that the next sync need not open the repository.)
        const restamped = this.options.sourceStamp !== undefined && prev.sourceStamp !== this.options.sourceStamp;
        if (JSON.stringify(prev.repo) !== JSON.stringify(this.repo) || restamped) this.commit({ ...prev, repo: this.repo, generation: this.generation });
        return runSummary(this, { mode: 'unchanged', refs: git.refs, manifest: prev });
      }
      const versions = await git.versions();
      const plan = await planDelta(this.options.dataDir, prev, git.refs, versions);
      fullReason = 'impossible' in plan ? plan.impossible : deltaTooLarge(prev, plan, versions.length);
      if (fullReason === undefined) return this.delta(git, prev, plan as DeltaPlan);
    } else if (!incremental) {
      fullReason = 'incremental indexing is off';
    }
    const files = await this.sized(
      git,
      (await git.versions()).map((v) => ({ path: v.path, oid: v.oid, branches: v.refs })),
    );
    const packBelow = this.options.packBelow;
    // A compound shard is built without version deltas (shard-builder.ts ShardJob.versionDeltas): such a build is never handed back for one.
    if (packBelow !== undefined && this.options.versionDeltas) throw new Error('a build with version deltas is never packed into a compound shard');
    if (packBelow !== undefined) {
      const bytes = files.reduce((n, f) => n + (f.size <= this.maxFileSize ? f.size : 0), 0);
      if (bytes <= packBelow) return this.packCandidate(git, files, bytes, fullReason);
    }
    const later = this.symbolsLater(files.length);
    const built = await this.build({
      refs: git.refs,
      groups: fromArray(cutShards(files, this.target, this.maxFileSize, this.options.foldRunt === true)),
      totalFiles: () => files.length,
      counted: true,
      gitDir: git.gitDir,
      later,
    });
    return this.finishFull(git.refs, built, 0, fullReason, later);
  }

  /** The full build handed back for a compound shard (PackCandidate; indexOrPack adds its release). */
  private packCandidate(git: GitSource, files: ShardFile[], bytes: number, fullReason: string | undefined): Omit<PackCandidate, 'release'> {
    const refs = git.refs;
    return {
      repoId: this.repoId,
      repo: this.repo,
      refs,
      gitDir: git.gitDir,
      files,
      bytes,
      commit: (file, member, built, batch) => {
        const shards: ManifestShard[] = [memberEntry(file, member, built)];
        const manifest = this.commit(
          {
            version: 2,
            repoId: this.repoId,
            repo: this.repo,
            generation: this.generation,
            refs,
            shards,
            indexedAt: this.indexedAt,
            files: built.docs,
            contentBytes: built.contentBytes,
            skipped: built.skipped.length,
            baseGeneration: this.generation,
          },
          batch,
        );
        const result: BuildResult = {
          docCount: built.docs,
          contentBytes: built.contentBytes,
          totalBytes: bytes,
          skipped: built.skipped,
          symbolCount: 0,
          symbolFailures: 0,
          members: [built],
        };
        return runSummary(this, { mode: 'full', refs, results: [result], manifest, fullReason, builtFiles: built.docs + built.skipped.length });
      },
    };
  }

  /** The files with their blobs' sizes (read from git's object headers: no blob is read here). */
  private async sized(git: GitSource, files: BlobFile[]): Promise<ShardFile[]> {
    const sizes = await git.blobSizes(files.map((f) => f.oid));
    return files.map((f, i) => ({ path: f.path, size: sizes[i]!, oid: f.oid, branches: f.branches }));
  }

  private async delta(git: GitSource, prev: Manifest, plan: DeltaPlan): Promise<IndexSummary> {
    const built =
      plan.added.length > 0
        ? await this.build({
            refs: git.refs,
            groups: fromArray(cutShards(await this.sized(git, plan.added), this.target, this.maxFileSize)),
            totalFiles: () => plan.added.length,
            counted: true,
            delta: true,
            gitDir: git.gitDir,
          })
        : { names: [], results: [] };
    const shards: ManifestShard[] = [];
    const memberships: string[] = [];
    plan.shards.forEach((u, i) => {
      // Nothing in it is on any ref any more, nor skipped there (a shard of skipped files alone keeps their record).
      if (u.liveDocs === 0 && u.liveSkipped === 0) return;
      const entry: ManifestShard = { ...u.entry, liveDocs: u.liveDocs, liveContentBytes: u.liveContentBytes };
      if (u.changed) {
        const name = `g${this.generation}-m${i}${MEMBERSHIP_EXT}`;
        writeMembershipFile(join(this.dir, name), { names: git.refs.map((r) => r.name), lists: u.lists }, this.options.compressSections === true);
        memberships.push(name);
        entry.membership = name;
      }
      shards.push(entry);
    });
    shards.push(...this.entries(built, true));
    await syncFiles(this.dir, built.names);
    const manifest = this.commit({
      version: 2,
      repoId: this.repoId,
      repo: this.repo,
      generation: this.generation,
      refs: git.refs,
      shards,
      indexedAt: this.indexedAt,
      files: shards.reduce((n, s) => n + s.liveDocs, 0),
      contentBytes: shards.reduce((n, s) => n + s.liveContentBytes, 0),
      skipped: prev.skipped + built.results.reduce((n, r) => n + r.skipped.length, 0),
      baseGeneration: prev.baseGeneration,
    });
    return runSummary(this, { mode: 'delta', refs: git.refs, results: built.results, manifest, builtFiles: plan.added.length });
  }

  private commitFull(
    refs: GitRef[],
    built: Built,
    listErrors: number,
    fullReason: string | undefined,
    pending: boolean,
  ): { summary: IndexSummary; manifest: Manifest } {
    const shards = this.entries(built, false);
    const skipped = built.results.reduce((n, r) => n + r.skipped.length, 0) + listErrors;
    const manifest = this.commit({
      version: 2,
      repoId: this.repoId,
      repo: this.repo,
      generation: this.generation,
      refs,
      shards,
      indexedAt: this.indexedAt,
      files: shards.reduce((n, s) => n + s.liveDocs, 0),
      contentBytes: shards.reduce((n, s) => n + s.contentBytes, 0),
      skipped,
      baseGeneration: this.generation,
      ...(pending ? { symbolsPending: true as const } : {}),
    });
    const summary = runSummary(this, {
      mode: 'full',
      refs,
      results: built.results,
      manifest,
      fullReason,
      builtFiles: built.results.reduce((n, r) => n + r.docCount + r.skipped.length, 0),
    });
    if (listErrors > 0) {
      summary.skipped += listErrors;
      summary.skippedByReason.unreadable = (summary.skippedByReason.unreadable ?? 0) + listErrors;
    }
    return { summary, manifest };
  }

  private commit(next: Omit<Manifest, 'retired'>, batch?: CommitBatch): Manifest {
    const { subset: _subset, sourceStamp: _stamp, ...rest } = next;
    const whole = this.options.sourceStamp !== undefined ? { ...rest, sourceStamp: this.options.sourceStamp } : rest;
    const committed = commitManifest(this.options.dataDir, whole, this.previous, Date.now(), batch);
    this.noteWritten(committed, this.previous);
    this.options.onCommit?.(committed);
    return committed;
  }

  /**
   * Tells this process's searches that the shard and symbols files `committed` names and
   * `before` did not were written by this run, their sections hashed as they were written
   * (section-checks.ts noteWritten: they count as checked).
   */
  private noteWritten(committed: Manifest, before: Pick<Manifest, 'shards'> | undefined): void {
    const had = new Set(before?.shards.flatMap((s) => [s.file, s.symbols ?? '']));
    for (const s of committed.shards) {
      for (const f of [s.file, s.symbols]) if (f !== undefined && !had.has(f)) noteWritten(join(this.dir, f));
    }
  }

  private entries(built: Built, delta: boolean): ManifestShard[] {
    return built.names.map((file, i) => {
      const r = built.results[i]!;
      return { file, docs: r.docCount, liveDocs: r.docCount, contentBytes: r.contentBytes, liveContentBytes: r.contentBytes, delta };
    });
  }

  /** Builds the groups into shards `g<generation>-<n>` (build-shards.ts), once the run holds its build slot. */
  private async build(request: BuildRequest): Promise<Built> {
    await this.holdSlot();
    const { later, refs, ...rest } = request;
    const built = await buildShards({
      ...rest,
      dir: this.dir,
      generation: this.generation,
      repo: shardRepoMeta(this.repoId, this.repo, refs),
      branches: refs.map((r) => r.name),
      maxFileSize: this.maxFileSize,
      maxTrigrams: this.maxTrigrams,
      indexedAt: this.indexedAt,
      symbols: later ? false : this.options.symbols,
      ...(this.options.groupVersions === true ? { grouped: true } : {}),
      ...(this.options.versionDeltas ? { versionDeltas: true } : {}),
      ...(this.options.compressSections ? { compressed: true } : {}),
      ...(later ? { symbolsJob: (path: string, index: number) => this.symbolsJob(path, index) } : {}),
      threads: this.options.workers ?? availableParallelism(),
      onProgress: (files, bytes) => this.options.onProgress?.({ files, totalFiles: request.totalFiles(), bytes }),
    });
    if (built.kept) {
      this.threads = built.kept.threads;
      this.pool = built.kept.pool;
    }
    return built;
  }
}

/** What a run builds (IndexRun.build): its files, and the refs they are on. */
interface BuildRequest extends Pick<ShardsBuild, 'groups' | 'totalFiles' | 'counted' | 'delta' | 'gitDir'> {
  refs: GitRef[];
  /** The symbols come after the content (symbolsLater): the shards are built without them, the threads kept for the pass. */
  later?: boolean;
}

type Built = Pick<BuiltShards, 'names' | 'results'>;

/** The same repository metadata, wherever its source sits (a node's own mirror path differs from the builder's). */
export function sameRepo(a: ManifestRepo, b: ManifestRepo): boolean {
  const { source: _a, ...x } = a;
  const { source: _b, ...y } = b;
  return JSON.stringify(x) === JSON.stringify(y);
}

async function* fromArray<T>(xs: T[]): AsyncIterable<T> {
  yield* xs;
}

/** The repository as a shard records it (ShardRepoMeta), from its manifest record and refs. */
export function shardRepoMeta(repoId: number, repo: ManifestRepo, refs: GitRef[]): ShardRepoMeta {
  return {
    name: repo.name,
    id: repoId,
    codeHostType: repo.codeHostType,
    source: repo.source,
    kind: repo.kind,
    branch: refs[0]!.name,
    commit: refs[0]!.commit,
    remoteUrl: '',
    archived: repo.archived,
    fork: repo.fork,
    visibility: repo.visibility,
  };
}
