// Which repositories' indexes are broken, and the view of the index that searches and
// listings share. What "broken" means, and the mark file that records damage found while
// searching, are described in manifest.ts's header.
//
// Cost: reading the index state reads every manifest, stats every file they name and reads
// each shard's header and table of contents (a few hundred bytes); the sections are
// checked when a searcher first opens a shard, documents when they are first read. A view
// reads the state again only when index-version changes, and then parses and checks again
// only the repositories whose manifest or mark file reads differently.

import { dirname, join, sep } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { readBoundedText, RefusedFile } from '../bounded-read.ts';
import { shardsDir, writeFileAtomic } from './data-dir.ts';
import {
  BROKEN_MARK,
  announceChange,
  loadManifest,
  MANIFEST_MAX_BYTES,
  manifestRepoName,
  manifestVisibility,
  namedPaths,
  readIndexVersion,
  repoDirs,
  shardFiles,
  type LoadedManifest,
} from './manifest.ts';
import { indexVersionStamp } from './index-stamp.ts';
import { JournalCursor } from './index-journal.ts';
import { checkShardHeader } from './section-file.ts';
import { SHARD_FORMAT, SYMBOLS_FORMAT } from './shard-format.ts';

export interface BrokenRepo {
  repoId: number;
  /** Why, for people (logs, `trawl repos`). */
  reason: string;
  /** The manifest's generation, when the manifest itself could be read. */
  generation?: number;
  /** The repository's name, when the manifest could be read. */
  name?: string;
  /** Its visibility and number of shards, when the manifest could be read. */
  visibility?: 'public' | 'private';
  shards?: number;
}

/** What a readable manifest tells of a broken repository. */
function brokenFrom(m: LoadedManifest, reason: string): BrokenRepo {
  const b: BrokenRepo = { repoId: m.repoId, reason, generation: m.generation, name: manifestRepoName(m), shards: m.shards.length };
  if (m.repo) b.visibility = m.repo.visibility;
  return b;
}

export interface IndexState {
  /** index-version when the state was read. */
  version: string;
  /** The healthy repositories' manifests, by repository id. */
  manifests: LoadedManifest[];
  /** The broken ones, by repository id. */
  broken: BrokenRepo[];
}

/** The mark file's content (manifest.ts). */
export interface BrokenMark {
  generation?: number;
  reason: string;
  at?: string;
}

/** The largest mark file read: a generation, a reason of a line or two, a time. */
const MARK_MAX_BYTES = 64 * 1024;

/**
 * Reads every repository's manifest and sorts the healthy from the broken. With `earlier`
 * (the reads of a view's previous state), only what changed is read again: after a bump
 * that the change journal announces (index-journal.ts), the repositories it names and
 * those that were broken; otherwise every repository, of which one whose manifest and mark
 * read as the same bytes as then keeps that verdict without being parsed and checked
 * again. The files a manifest names carry its generation and are never rewritten, so the
 * same manifest names the same files. (Bytes, not stat identities: a manifest replaced
 * twice within a clock tick can come back with the inode, size and times of the one
 * before.) Damage that appears later in a named file is found by the searches and the
 * scrub, which mark it.
 */
export function readIndexState(dataDir: string, earlier?: ManifestReads): IndexState {
  // Read first: a change that lands while the state is read is seen at the next look.
  const version = readIndexVersion(dataDir);
  earlier?.of(dataDir);
  const changed = earlier?.changedSince(version);
  if (changed !== undefined) return readChanged(dataDir, version, earlier!, changed);
  earlier?.startFull(version);
  const manifests: LoadedManifest[] = [];
  const broken: BrokenRepo[] = [];
  const headers: HeaderChecks = new Map();
  const seen = earlier ? new Set<number>() : undefined;
  for (const repoId of repoDirs(dataDir)) {
    seen?.add(repoId);
    const verdict = earlier ? earlier.verdict(repoId, headers) : readVerdict(dataDir, repoId, headers);
    if (verdict === undefined) continue;
    if ('reason' in verdict) broken.push(verdict);
    else manifests.push(verdict);
  }
  if (seen) earlier!.keepOnly(seen);
  return { version, manifests, broken };
}

/** The state after a journaled change: the earlier verdicts, with the repositories named (and those broken) read again. */
function readChanged(dataDir: string, version: string, earlier: ManifestReads, repoIds: Set<number>): IndexState {
  const headers: HeaderChecks = new Map();
  const broken: BrokenRepo[] = [];
  for (const repoId of repoIds) {
    const verdict = existsSync(shardsDir(dataDir, repoId)) ? earlier.verdict(repoId, headers) : earlier.forget(repoId);
    if (verdict !== undefined && 'reason' in verdict) broken.push(verdict);
  }
  broken.sort((a, b) => a.repoId - b.repoId);
  return { version, manifests: earlier.healthy(), broken };
}

/** A repository's manifest when its index can be served, what is wrong otherwise; undefined when it has no manifest. */
function readVerdict(dataDir: string, repoId: number, headers: HeaderChecks): LoadedManifest | BrokenRepo | undefined {
  const m = loadManifest(dataDir, repoId);
  if (m === undefined) return undefined;
  if ('unreadable' in m) return { repoId, reason: m.unreadable };
  const reason = indexProblem(dataDir, m, headers);
  return reason === undefined ? m : brokenFrom(m, reason);
}

/** A repository's manifest and mark as they read now ('' for one that is absent, a reason for one refused). */
function fileIdentities(dataDir: string, repoId: number): string {
  const dir = shardsDir(dataDir, repoId);
  return `${contentOf(join(dir, 'manifest.json'), MANIFEST_MAX_BYTES)}\0${contentOf(join(dir, BROKEN_MARK), MARK_MAX_BYTES)}`;
}

function contentOf(path: string, bound: number): string {
  if (!existsSync(path)) return '';
  try {
    return readBoundedText(path, bound);
  } catch (err) {
    // Refused or unreadable: never the bytes of a healthy read, so never kept.
    return `\u0001${(err as Error).message}`;
  }
}

/** How many of the versions last read from the journal are remembered (a bump read after its line was). */
const VERSIONS_KEPT = 256;

/**
 * What a view's last read found, by repository: the healthy manifests with the bytes they
 * were read from, the repositories found broken (read again every time: the view completes
 * and reports the copy it is handed, and damage is rare), and its place in the change
 * journal.
 */
export class ManifestReads {
  readonly #byRepo = new Map<number, { files: string; manifest: LoadedManifest }>();
  readonly #broken = new Set<number>();
  #journal: JournalCursor | undefined;
  #dataDir: string | undefined;
  /** index-version at the last read ('' before the first). */
  #version = '';
  /** Versions the journal named lately, oldest first. */
  readonly #versions = new Set<string>();

  /** What the journal says changed since the last read, broken repositories added; undefined: read everything. */
  changedSince(version: string): Set<number> | undefined {
    const journal = this.#journal;
    if (journal === undefined || this.#version === '' || version === this.#version) return undefined;
    const since = journal.read();
    if (since === undefined) return undefined;
    for (const v of since.versions) {
      this.#versions.delete(v);
      this.#versions.add(v);
    }
    while (this.#versions.size > VERSIONS_KEPT) this.#versions.delete(this.#versions.values().next().value!);
    if (!this.#versions.has(version.trim())) return undefined;
    this.#version = version;
    const ids = since.repoIds;
    for (const id of this.#broken) ids.add(id);
    return ids;
  }

  /** A full read begins: the journal is read from its end as it is now. */
  startFull(version: string): void {
    this.#version = version;
    this.#journal?.mark();
  }

  /** The repository's verdict: the one kept when its manifest and mark read as the same bytes, else read now. */
  verdict(repoId: number, headers: HeaderChecks): LoadedManifest | BrokenRepo | undefined {
    const dataDir = this.#dataDir!;
    const files = fileIdentities(dataDir, repoId);
    const e = this.#byRepo.get(repoId);
    if (e !== undefined && e.files === files) return e.manifest;
    const verdict = readVerdict(dataDir, repoId, headers);
    this.#byRepo.delete(repoId);
    this.#broken.delete(repoId);
    if (verdict !== undefined && 'reason' in verdict) this.#broken.add(repoId);
    else if (verdict !== undefined) this.#byRepo.set(repoId, { files, manifest: verdict });
    return verdict;
  }

  /** The repository has no directory any more. */
  forget(repoId: number): undefined {
    this.#byRepo.delete(repoId);
    this.#broken.delete(repoId);
    return undefined;
  }

  /** The healthy manifests, by repository id. */
  healthy(): LoadedManifest[] {
    return [...this.#byRepo.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e.manifest);
  }

  keepOnly(repoIds: Set<number>): void {
    for (const id of this.#byRepo.keys()) if (!repoIds.has(id)) this.#byRepo.delete(id);
    for (const id of this.#broken) if (!repoIds.has(id)) this.#broken.delete(id);
  }

  /** Reads of data dir `dataDir` (one ManifestReads serves one data dir). */
  of(dataDir: string): this {
    if (this.#dataDir !== dataDir) {
      this.#dataDir = dataDir;
      this.#journal = new JournalCursor(dataDir);
      this.#byRepo.clear();
      this.#broken.clear();
      this.#version = '';
    }
    return this;
  }
}

/**
 * Why a repository's index (its readable manifest) cannot be served, or undefined: a mark
 * for its generation, a file it names that is missing, not a regular file or of another
 * size than the manifest recorded, a shard (or symbols file) whose header or table of
 * contents fails its checks.
 */
export function indexProblem(dataDir: string, m: LoadedManifest, headers: HeaderChecks = new Map()): string | undefined {
  const mark = readMark(dataDir, m.repoId);
  if (mark && (mark.generation === undefined || mark.generation === m.generation)) return mark.reason;
  const recorded = m.version === 2 ? m.fileBytes : undefined;
  for (const { file, path } of namedPaths(dataDir, m)) {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return `manifest.json names ${file}, which is missing`;
    if (!st.isFile()) return `manifest.json names ${file}, which is not a regular file`;
    const bytes = recorded?.[file];
    if (bytes !== undefined && st.size !== bytes) return `manifest.json names ${file} of ${bytes} bytes, which has ${st.size}`;
  }
  for (const s of m.shards) {
    const files = shardFiles(dataDir, m.repoId, s);
    const problem = checkedHeader(headers, files.path) ?? (files.symbols !== undefined ? checkedHeader(headers, files.symbols, SYMBOLS_FORMAT) : undefined);
    if (problem !== undefined) return relativeReason(dirname(files.path), problem);
  }
  return undefined;
}

/**
 * Header checks made while reading one index state, by path: a compound shard is named by
 * each of its repositories' manifests and checked once. Undefined: it passed.
 */
export type HeaderChecks = Map<string, string | undefined>;

function checkedHeader(headers: HeaderChecks, path: string, format = SHARD_FORMAT): string | undefined {
  if (headers.has(path)) return headers.get(path);
  let problem: string | undefined;
  try {
    checkShardHeader(path, format);
  } catch (err) {
    problem = (err as Error).message;
  }
  headers.set(path, problem);
  return problem;
}

/** The repository's mark, or undefined. A mark that cannot be read still marks (no generation). */
export function readMark(dataDir: string, repoId: number): BrokenMark | undefined {
  const path = join(shardsDir(dataDir, repoId), BROKEN_MARK);
  // Most repositories have none: asked without the cost of a failed open's error.
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = readBoundedText(path, MARK_MAX_BYTES);
  } catch (err) {
    if (err instanceof RefusedFile) return { reason: `marked broken (the mark ${err.reason})` };
    return undefined;
  }
  try {
    const raw = JSON.parse(text) as Partial<BrokenMark>;
    const mark: BrokenMark = { reason: typeof raw.reason === 'string' ? raw.reason : 'marked broken' };
    if (typeof raw.generation === 'number') mark.generation = raw.generation;
    if (typeof raw.at === 'string') mark.at = raw.at;
    return mark;
  } catch {
    return { reason: 'marked broken (the mark itself cannot be read)' };
  }
}

/**
 * Records that generation `generation` of the repository's index is broken (the mark file,
 * then index-version, so that every process sharing the data dir leaves it out). Nothing
 * is written when that generation is already marked, or is no longer the current one (a
 * re-index committed meanwhile). Returns true when the mark was written.
 */
export function markBroken(dataDir: string, repoId: number, generation: number, reason: string, now = new Date()): boolean {
  const mark = readMark(dataDir, repoId);
  if (mark && mark.generation === generation) return false;
  const current = loadManifest(dataDir, repoId);
  if (!current || 'unreadable' in current || current.generation !== generation) return false;
  writeFileAtomic(join(shardsDir(dataDir, repoId), BROKEN_MARK), `${JSON.stringify({ generation, reason, at: now.toISOString() } satisfies BrokenMark)}\n`);
  announceChange(dataDir, repoId);
  return true;
}

/** "shard g3-0.trawl: truncated: ..." rather than the absolute paths ShardError names. */
function relativeReason(dir: string, message: string): string {
  return message.split(dir + sep).join('');
}

export interface IndexViewHooks {
  /** A repository found broken: once per damage (per generation, or per reason for an unreadable manifest). */
  onBroken?: (b: BrokenRepo) => void;
  /** Every shard error seen while searching or browsing (a metric counts them). */
  onShardError?: () => void;
  /**
   * What else knows a repository whose manifest is lost or names no visibility (the
   * store): its name for the report, its visibility for searches (an unknown one counts
   * as private).
   */
  lookup?: (repoId: number) => { name: string; visibility: 'public' | 'private' } | undefined;
}

/**
 * The index as this process serves it: the state, read again when index-version changes,
 * without the repositories found broken. Shard errors that searches and listings meet are
 * reported here: counted, marked (so that other processes leave the repository out too)
 * and logged once. A daemon has one, shared by its searcher and its catalog.
 */
export class IndexView {
  private state: IndexState | undefined;
  /** What was reported per repository, so that a damage is reported once. */
  private readonly reported = new Map<number, string>();
  /**
   * "repoId:generation" -> reason: damage this process met. Applied even when the mark
   * could not be written (a full disk), and before other processes' marks are read back.
   */
  private readonly found = new Map<string, string>();

  constructor(
    readonly dataDir: string,
    private readonly hooks: IndexViewHooks = {},
  ) {}

  /** The current state; read again when index-version changed (or nothing was indexed yet). */
  current(): IndexState {
    const s = this.state;
    if (!s || (s.manifests.length === 0 && s.broken.length === 0)) return this.reload();
    // Stamped before the read: a bump between the two only makes the next call read again.
    const stamp = indexVersionStamp(this.dataDir);
    if (stamp !== '' && stamp === this.stamp) return s;
    if (readIndexVersion(this.dataDir) !== s.version) return this.reload();
    this.stamp = stamp;
    return s;
  }

  /** indexVersionStamp() when index-version last read as the state's version ('' : not known). */
  private stamp = '';

  /** What the last reload read, so that the next reads only the manifests that changed. */
  private readonly reads = new ManifestReads();

  /** Reads the state now. */
  reload(): IndexState {
    this.stamp = '';
    const read = readIndexState(this.dataDir, this.reads);
    const state: IndexState = { version: read.version, manifests: [], broken: read.broken };
    for (const m of read.manifests) {
      const reason = this.found.get(`${m.repoId}:${m.generation}`);
      if (reason === undefined) state.manifests.push(m);
      else state.broken.push(brokenFrom(m, reason));
    }
    for (const b of state.broken) {
      if (b.name !== undefined && b.visibility !== undefined) continue;
      const known = this.hooks.lookup?.(b.repoId);
      if (known) {
        b.name ??= known.name;
        b.visibility ??= known.visibility;
      }
    }
    state.broken.sort((a, b) => a.repoId - b.repoId);
    for (const m of state.manifests) this.reported.delete(m.repoId);
    for (const b of state.broken) this.announce(b);
    this.state = state;
    return state;
  }

  /**
   * A shard of generation `generation` of the repository failed its checks (ShardError) in
   * a search or a listing: counts it, marks the repository broken and reports it once. The
   * next current() leaves it out.
   */
  report(repoId: number, generation: number, message: string): void {
    this.hooks.onShardError?.();
    const key = `${repoId}:${generation}`;
    if (this.found.has(key)) return;
    const reason = relativeReason(shardsDir(this.dataDir, repoId), message);
    this.found.set(key, reason);
    const m = this.state?.manifests.find((x) => x.repoId === repoId && x.generation === generation);
    this.announce(m ? brokenFrom(m, reason) : { repoId, reason, generation });
    try {
      markBroken(this.dataDir, repoId, generation, reason);
    } catch {
      // The mark could not be written (a full disk): this process still leaves the
      // repository out (found); other processes meet the damage themselves.
    }
    this.state = undefined;
  }

  /** Who may see a healthy repository of the state (manifestVisibility, with what the store knows of it). */
  visibility(m: LoadedManifest): 'public' | 'private' {
    return manifestVisibility(m, m.version === 2 ? undefined : this.hooks.lookup?.(m.repoId));
  }

  private announce(b: BrokenRepo): void {
    const key = b.generation !== undefined ? `g${b.generation}` : `r:${b.reason}`;
    if (this.reported.get(b.repoId) === key) return;
    this.reported.set(b.repoId, key);
    this.hooks.onBroken?.(b);
  }
}
