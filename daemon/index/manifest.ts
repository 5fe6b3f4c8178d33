// A repository's manifest: the list of shard files (and membership and symbols files) that
// make up its current index, with the repository's metadata and the refs it holds.
//
//   <dataDir>/shards/<id>/manifest.json     this file
//   <dataDir>/shards/<id>/g<gen>-<n>.trawl  shards written by generation <gen>
//   <dataDir>/shards/<id>/g<gen>-m<n>.branches  membership files (branch-set.ts)
//   <dataDir>/shards/<id>/g<gen>-y<n>.symbols   symbols files (shard-format.ts: the symbols
//                                           pass's, for shards built without symbols)
//   <dataDir>/shards/<id>/lock              held by the process indexing the repository
//                                           (format and take-over: runtime/lock-file.ts)
//   <dataDir>/shards/<id>/broken            the "broken" mark (below)
//   <dataDir>/index-version                 changes whenever any manifest does
//   <dataDir>/index-seq                     rewritten in place after each such change: the
//                                           signal searchers read as memory (index-stamp.ts)
//   <dataDir>/index-changes                 which repositories each change touched, so that
//                                           views read only theirs again (index-journal.ts)
//
// The manifest is the commit point of an index run: new files are written beside the old
// ones under a new generation number, then the manifest is replaced atomically (temporary
// file + fsync + rename). A crash at any point leaves a manifest that names complete files,
// so the previous index keeps serving.
//
// Files the new manifest no longer names are not deleted at once: searches that began
// before the swap may still have to open them. They are listed as `retired` with the time
// they were retired, and deleted by a later commit or by collectGarbage once RETIRE_GRACE_MS
// has passed, longer than any search may run. The searcher notices a swap by reading
// index-version before each search, and a search uses one snapshot of every manifest from
// its start to its end, so it never sees half of a swap.
//
// Crashes and failures. Every file is written under a temporary name (`*.tmp-<pid>...`) and
// renamed into place, so a file with a final name is complete. A run killed at any moment
// leaves the previous manifest, and so the previous index, in place; what it wrote (shards
// of its uncommitted generation, membership files, temporary files) is named by no
// manifest and is removed by the next run of that repository once it holds the lock
// (removeUnlisted), and by every commit; one killed between the manifest's rename and the
// index-version bump is caught up by the next run (repairMissedBump). A run that fails (an
// exception: a full disk) removes the files it wrote before it rethrows (indexer.ts). A name
// a manifest once named is never used again (indexer.ts nextGeneration), so a file never
// comes back with other content while a searcher may still have the old one open.
//
// Broken repositories. A repository's index is broken when its manifest cannot be read
// (not a regular file, over MANIFEST_MAX_BYTES, unparsable, truncated, an unknown version, a
// malformed entry: loadManifest), names a file that is missing, not a regular file or of
// another size than its commit recorded (fileBytes), or a shard fails its checks
// (shard-reader.ts: a header or table of contents at open, a section at open, a document's
// content when it is read). Every file here is read back through ../bounded-read.ts: a
// regular file within its kind's bound, or refused. A broken repository is left out of
// searches and of the repository list, and never served; every other repository is
// unaffected (index-health.ts finds and reports them). Damage found
// only when a shard is opened or read (by a search) is recorded in the mark file `broken`,
// JSON {"generation": G, "reason": "...", "at": ISO 8601}, written atomically, so that
// every process sharing the data dir sees it (the writer bumps index-version). A mark
// applies to generation G only: once another manifest is committed it is stale. The next
// index run of a broken repository (`trawl index`, `trawl sync`, the scheduler) builds it
// in full, never incrementally on the broken base; committing removes the mark.

import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readBoundedText, RefusedFile } from '../bounded-read.ts';
import { SHARD_EXT, SYMBOLS_EXT } from './shard-format.ts';
import { packsDir, shardsDir, writeFileAtomic } from './data-dir.ts';
import { forgetStamp, INDEX_VERSION_FILE, signalIndexChange } from './index-stamp.ts';
import { journalChange } from './index-journal.ts';
import { removeLeftoverTemps } from '../runtime/left-behind.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import type { GitRef } from '../repos/git.ts';

/**
 * How long a retired file stays on disk. Searches are bounded by settings.search.timeoutMs
 * (20 s by default); a minute covers that with room to spare.
 */
export const RETIRE_GRACE_MS = 60_000;

export const MEMBERSHIP_EXT = '.branches';

/**
 * The largest manifest read. Its size grows with the refs indexed (about 110 bytes each)
 * and the shards: this is over half a million refs. A larger one is damage, not an index.
 */
export const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;

/** The largest index-version file read: it holds one line of some 30 bytes. */
const INDEX_VERSION_MAX_BYTES = 4096;

export interface ManifestShard {
  /** The shard file: in the repository's directory, or with `member`, in the data dir's packs directory. */
  file: string;
  /**
   * The repository is member `member` of a compound shard (shard-reader.ts members), a file
   * of the packs directory that holds several repositories. Its counts below are the
   * member's. Such an entry has no membership file: a change to the repository builds it
   * anew, and the compound shard's range of it is then named by no manifest (tombstoned).
   */
  member?: number;
  /** With `member`: the compound shard's content bytes, every member's (what a merge weighs its live share against: pack-merge.ts). */
  packBytes?: number;
  /** With `member`: the compound shard's document count, every member's (the size of what its readers share: index/section-checks.ts). */
  packDocs?: number;
  /** A membership file that replaces the shard's own branch lists. */
  membership?: string;
  /** A symbols file that replaces the shard's own (empty) symbol sections. */
  symbols?: string;
  docs: number;
  /** Documents still on at least one indexed ref. */
  liveDocs: number;
  contentBytes: number;
  liveContentBytes: number;
  /** Written by an incremental run (holds only files that changed). */
  delta: boolean;
}

/** What searches need to know of the repository, kept current without rewriting shards. */
export interface ManifestRepo {
  name: string;
  displayName: string;
  codeHostType: CodeHostType;
  /** The host's page of the repository. */
  externalWebUrl?: string;
  archived: boolean;
  fork: boolean;
  visibility: 'public' | 'private';
  kind: 'git' | 'directory';
  /** Where it was indexed from: a local path or the mirror in the data dir. */
  source: string;
  /** Git: when the default branch's tip was committed; the push time of a repository whose host reports none (plain git). */
  committedAt?: string;
}

export interface Manifest {
  version: 2;
  repoId: number;
  repo: ManifestRepo;
  generation: number;
  /** The refs indexed; refs[0] is the default branch. Directories: one ref, "HEAD". */
  refs: GitRef[];
  shards: ManifestShard[];
  indexedAt: string;
  /** Live documents and their bytes, over all shards. */
  files: number;
  contentBytes: number;
  skipped: number;
  /** Generation of the last full build; delta shards pile up on it until the next one. */
  baseGeneration: number;
  retired: Array<{ file: string; at: number }>;
  /** The index-version its commit wrote right after it (repairMissedBump); absent in older manifests. */
  indexVersion?: string;
  /**
   * The size in bytes of every file it names, as committed: a file of another size is
   * damage (index-health.ts), found before anything maps or reads it. Absent in older
   * manifests.
   */
  fileBytes?: Record<string, number>;
  /**
   * The shards were built without their symbols, which the same run is adding
   * (indexer.ts symbolsPass: it commits the next generation, without this). Left by a
   * run stopped before that: the next run builds in full.
   */
  symbolsPending?: true;
  /**
   * In a cluster: this node holds only some of the shards of the build that made this
   * generation (another node's, copied: cluster/replicator.ts). It is served, but nothing
   * is built upon it: the next build here is a full one.
   */
  subset?: true;
  /**
   * The source's refs as they were on disk when this index was built (repos/ref-stamp.ts):
   * a sync that finds the same stamp knows nothing moved without opening the repository.
   */
  sourceStamp?: string;
  /**
   * In a cluster: this index is a copy of generation `copyOf`'s documents into a compound
   * shard (cluster/pack-job.ts), to be published in its place only.
   */
  copyOf?: number;
}

/** Whether the repository's content is searchable while its symbols are still being added (Manifest.symbolsPending). */
export function symbolsPending(m: LoadedManifest): boolean {
  return m.version === 2 && m.symbolsPending === true;
}

/** Manifests of version 1 (before branches): shard names only; the shards carry the rest. */
interface ManifestV1 {
  version: 1;
  repoId: number;
  repoName: string;
  generation: number;
  shards: string[];
  indexedAt: string;
  files: number;
  contentBytes: number;
  skipped: number;
}

/** A readable manifest: the current version, or version 1 with `repo` and `refs` unknown. */
export type LoadedManifest = Manifest | (Omit<Manifest, 'repo' | 'refs' | 'version'> & { version: 1; repoName: string; repo?: undefined; refs?: undefined });

/** The same refs, of the same kinds, at the same commits, in the same order. */
export function sameRefs(a: readonly GitRef[], b: readonly GitRef[]): boolean {
  return a.length === b.length && a.every((r, i) => r.name === b[i]!.name && r.kind === b[i]!.kind && r.commit === b[i]!.commit);
}

/**
 * Whether two manifests of a repository name the same documents: the same full build with
 * no delta on it in either, at the same refs (what a merge of compound shards leaves when it
 * moves a repository, or a commit of new metadata alone). False when it cannot tell.
 */
export function sameDocuments(a: LoadedManifest, b: LoadedManifest): boolean {
  if (a.version !== 2 || b.version !== 2 || a.repoId !== b.repoId) return false;
  if (a.baseGeneration !== b.baseGeneration || a.files !== b.files || !sameRefs(a.refs, b.refs)) return false;
  return !a.shards.some((s) => s.delta) && !b.shards.some((s) => s.delta);
}

/** The repository's name, whichever version the manifest is. */
export function manifestRepoName(m: LoadedManifest): string {
  return m.version === 2 ? m.repo.name : m.repoName;
}

/**
 * Who may see the repository of a manifest: its own record says. A version 1 manifest names
 * no visibility: what else knows the repository (the store's record, `known`) says, and
 * without it the repository counts as private, so that one nobody can vouch for is never
 * shown to everyone.
 */
export function manifestVisibility(m: LoadedManifest, known?: { visibility: 'public' | 'private' }): 'public' | 'private' {
  return m.version === 2 ? m.repo.visibility : (known?.visibility ?? 'private');
}

/** The name of the mark file of a broken repository (header). */
export const BROKEN_MARK = 'broken';

/** A manifest that cannot be used, and why. */
export interface UnreadableManifest {
  unreadable: string;
}

/**
 * The repository's manifest; undefined when it has none (never indexed, or its first run
 * has not committed); `{ unreadable }` when it cannot be trusted.
 */
export function loadManifest(dataDir: string, repoId: number): LoadedManifest | UnreadableManifest | undefined {
  const path = join(shardsDir(dataDir, repoId), 'manifest.json');
  let text: string;
  try {
    text = readBoundedText(path, MANIFEST_MAX_BYTES);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof RefusedFile) return { unreadable: `manifest.json ${err.reason}` };
    return { unreadable: `manifest.json cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { unreadable: `manifest.json is not valid JSON (${text.length === 0 ? 'empty' : (err as Error).message})` };
  }
  const problem = manifestProblem(raw, repoId);
  if (problem !== undefined) return { unreadable: `manifest.json ${problem}` };
  return upgrade(raw as Manifest | ManifestV1);
}

/** The repository's manifest, or undefined; throws when it cannot be read (tools and tests). */
export function readManifest(dataDir: string, repoId: number): LoadedManifest | undefined {
  const m = loadManifest(dataDir, repoId);
  if (m && 'unreadable' in m) throw new Error(`repository ${repoId}: ${m.unreadable}`);
  return m;
}

const SHARD_NAME = /^g\d+-\d+\.trawl$/;
const MEMBERSHIP_NAME = /^g\d+-m\d+\.branches$/;
const SYMBOLS_NAME = /^g\d+-y\d+\.symbols$/;
/** Compound shards and their symbols files, in the packs directory (pack-files.ts names them). */
export const PACK_NAME = /^p\d+-\d+\.trawl$/;
export const PACK_SYMBOLS_NAME = /^p\d+-y\d+\.symbols$/;

/** Whether `name` is the final name of a file a manifest may name: a shard, a membership file, a symbols file. */
function indexFileName(name: string): boolean {
  return SHARD_NAME.test(name) || MEMBERSHIP_NAME.test(name) || SYMBOLS_NAME.test(name);
}

/** The generation of a shard, membership or symbols file (by its final name), else undefined (temporary files, others). */
export function fileGeneration(name: string): number | undefined {
  return indexFileName(name) ? Number(/^g(\d+)-/.exec(name)![1]) : undefined;
}

/** A repository's entry as member `member` of compound shard `file`: its counts and the pack's, as the build gave them. */
export function memberEntry(
  file: string,
  member: number,
  built: { docs: number; contentBytes: number; shardContentBytes: number; shardDocs: number },
): ManifestShard {
  return {
    file,
    member,
    packBytes: built.shardContentBytes,
    packDocs: built.shardDocs,
    docs: built.docs,
    liveDocs: built.docs,
    contentBytes: built.contentBytes,
    liveContentBytes: built.contentBytes,
    delta: false,
  };
}

/** A shard entry's files as paths: the shard, and those Shard.open reads with it. */
export interface ShardFiles {
  path: string;
  membership?: string;
  symbols?: string;
}

/** A shard entry's files as paths: in the repository's directory, or a compound shard's in the packs directory. */
export function shardFiles(dataDir: string, repoId: number, s: ManifestShard): ShardFiles {
  const dir = s.member !== undefined ? packsDir(dataDir) : shardsDir(dataDir, repoId);
  const files: ShardFiles = { path: join(dir, s.file) };
  if (s.membership) files.membership = join(dir, s.membership);
  if (s.symbols) files.symbols = join(dir, s.symbols);
  return files;
}

/**
 * What makes a parsed manifest unusable, or undefined. Checks what readers rely on: the
 * version, the repository id, the file names (which must be plain names of this
 * directory), the numbers and the lists.
 */
function manifestProblem(raw: unknown, repoId: number): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'is not a JSON object';
  const m = raw as Record<string, unknown>;
  if (m.version !== 1 && m.version !== 2) return `has unsupported version ${JSON.stringify(m.version)} (this trawl reads versions 1 and 2)`;
  if (m.repoId !== repoId) return `belongs to repository ${JSON.stringify(m.repoId)}, not ${repoId}`;
  if (!isCount(m.generation) || typeof m.indexedAt !== 'string' || !isCount(m.files) || !isCount(m.contentBytes) || !isCount(m.skipped))
    return 'has a missing or malformed field';
  if (!Array.isArray(m.shards)) return 'has no shard list';
  if (m.version === 1) {
    if (typeof m.repoName !== 'string') return 'has no repository name';
    for (const f of m.shards) if (typeof f !== 'string' || !SHARD_NAME.test(f)) return `names a malformed shard ${JSON.stringify(f)}`;
    return undefined;
  }
  const repo = m.repo as Record<string, unknown> | undefined;
  if (
    typeof repo !== 'object' ||
    repo === null ||
    typeof repo.name !== 'string' ||
    typeof repo.displayName !== 'string' ||
    (repo.visibility !== 'public' && repo.visibility !== 'private')
  )
    return 'has a malformed repository record';
  if (!Array.isArray(m.refs) || m.refs.some((r) => typeof r !== 'object' || r === null || typeof (r as GitRef).name !== 'string'))
    return 'has a malformed ref list';
  if (!isCount(m.baseGeneration) || !Array.isArray(m.retired)) return 'has a missing or malformed field';
  for (const s of m.shards as unknown[]) {
    const e = s as Record<string, unknown>;
    if (typeof e === 'object' && e !== null && e.member !== undefined) {
      if (
        !isCount(e.member) ||
        typeof e.file !== 'string' ||
        !PACK_NAME.test(e.file) ||
        e.membership !== undefined ||
        (e.packBytes !== undefined && !isCount(e.packBytes)) ||
        (e.packDocs !== undefined && !isCount(e.packDocs))
      )
        return `names a malformed compound shard ${JSON.stringify(e.file)}`;
      if (e.symbols !== undefined && (typeof e.symbols !== 'string' || !PACK_SYMBOLS_NAME.test(e.symbols)))
        return `names a malformed symbols file ${JSON.stringify(e.symbols)}`;
      if (!isCount(e.docs) || !isCount(e.liveDocs) || !isCount(e.contentBytes) || !isCount(e.liveContentBytes)) return `has malformed counts for ${e.file}`;
      continue;
    }
    if (typeof e !== 'object' || e === null || typeof e.file !== 'string' || !SHARD_NAME.test(e.file))
      return `names a malformed shard ${JSON.stringify(e?.file ?? e)}`;
    if (e.membership !== undefined && (typeof e.membership !== 'string' || !MEMBERSHIP_NAME.test(e.membership)))
      return `names a malformed membership file ${JSON.stringify(e.membership)}`;
    if (e.symbols !== undefined && (typeof e.symbols !== 'string' || !SYMBOLS_NAME.test(e.symbols)))
      return `names a malformed symbols file ${JSON.stringify(e.symbols)}`;
    if (!isCount(e.docs) || !isCount(e.liveDocs) || !isCount(e.contentBytes) || !isCount(e.liveContentBytes)) return `has malformed counts for ${e.file}`;
  }
  for (const r of m.retired as unknown[]) {
    const e = r as Record<string, unknown>;
    if (typeof e !== 'object' || e === null || typeof e.file !== 'string' || !indexFileName(e.file) || typeof e.at !== 'number')
      return 'has a malformed retired entry';
  }
  if (m.sourceStamp !== undefined && typeof m.sourceStamp !== 'string') return 'has a malformed source stamp';
  if (m.copyOf !== undefined && !isCount(m.copyOf)) return 'has a malformed copied generation';
  if (m.fileBytes !== undefined) {
    const sizes = m.fileBytes as Record<string, unknown>;
    if (typeof sizes !== 'object' || sizes === null || Array.isArray(sizes) || !Object.values(sizes).every(isCount)) return 'has malformed file sizes';
  }
  return undefined;
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function upgrade(raw: Manifest | ManifestV1): LoadedManifest {
  if (raw.version === 2) return raw;
  return {
    version: 1,
    repoId: raw.repoId,
    repoName: raw.repoName,
    generation: raw.generation,
    shards: raw.shards.map((file) => ({ file, docs: 0, liveDocs: 0, contentBytes: 0, liveContentBytes: 0, delta: false })),
    indexedAt: raw.indexedAt,
    files: raw.files,
    contentBytes: raw.contentBytes,
    skipped: raw.skipped,
    baseGeneration: raw.generation,
    retired: [],
  };
}

/** The ids of the repository directories in the data dir, ascending. */
export function repoDirs(dataDir: string): number[] {
  const root = join(dataDir, 'shards');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .sort((a, b) => a - b);
}

/**
 * Every repository's readable manifest, ordered by repository id; unreadable ones are left
 * out (index-health.ts reports them, with the other kinds of damage).
 */
export function readAllManifests(dataDir: string): LoadedManifest[] {
  const manifests: LoadedManifest[] = [];
  for (const id of repoDirs(dataDir)) {
    const m = loadManifest(dataDir, id);
    if (m && !('unreadable' in m)) manifests.push(m);
  }
  return manifests;
}

/** Files a manifest names in its repository's directory (shards, membership and symbols files). */
export function named(m: LoadedManifest): string[] {
  return m.shards.flatMap((s) => (s.member !== undefined ? [] : [s.file, ...(s.membership ? [s.membership] : []), ...(s.symbols ? [s.symbols] : [])]));
}

/** Files a manifest names in the packs directory (compound shards and their symbols files). */
export function namedPacks(m: LoadedManifest): string[] {
  return m.shards.flatMap((s) => (s.member === undefined ? [] : [s.file, ...(s.symbols ? [s.symbols] : [])]));
}

/** Every file a manifest names, with its path. */
export function namedPaths(dataDir: string, m: LoadedManifest): Array<{ file: string; path: string }> {
  const dir = shardsDir(dataDir, m.repoId);
  const packs = packsDir(dataDir);
  return [...named(m).map((file) => ({ file, path: join(dir, file) })), ...namedPacks(m).map((file) => ({ file, path: join(packs, file) }))];
}

/**
 * Makes `next` the repository's current index. Files of `previous` that `next` does not
 * name are retired; retired files past their grace, and stray files no manifest names
 * (temporary files of crashed runs), are deleted. The caller holds the repository's lock.
 */
export function commitManifest(
  dataDir: string,
  next: Omit<Manifest, 'retired' | 'indexVersion' | 'fileBytes'>,
  previous: LoadedManifest | undefined,
  now = Date.now(),
  batch?: CommitBatch,
): Manifest {
  const dir = shardsDir(dataDir, next.repoId);
  const keep = new Set(named(next as Manifest));
  const retired = new Map<string, number>();
  for (const r of previous?.retired ?? []) if (!keep.has(r.file)) retired.set(r.file, r.at);
  for (const f of previous ? named(previous) : []) if (!keep.has(f) && !retired.has(f)) retired.set(f, now);
  // The files are complete and flushed by now: their sizes are final.
  const fileBytes: Record<string, number> = {};
  for (const { file, path } of namedPaths(dataDir, next as Manifest)) {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st) fileBytes[file] = st.size;
  }
  const manifest: Manifest = { ...next, retired: [], indexVersion: batch?.version ?? newIndexVersion(), fileBytes };
  for (const [file, at] of retired) {
    if (now - at >= RETIRE_GRACE_MS) rmSync(join(dir, file), { force: true });
    else manifest.retired.push({ file, at });
  }
  writeFileAtomic(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  // Committed. A mark names an older generation now (stale, header): it goes.
  rmSync(join(dir, BROKEN_MARK), { force: true });
  journalChange(dataDir, next.repoId, manifest.indexVersion);
  if (!batch) bumpIndexVersion(dataDir, manifest.indexVersion);
  // Content committed before its symbols: the same run is writing the next generation's
  // symbols files (indexer.ts symbolsPass; the first ones may be done already, written by
  // threads that ran out of shards to build), which its next commit names.
  removeUnlisted(dir, manifest, manifest.symbolsPending ? manifest.generation + 1 : undefined);
  return manifest;
}

/**
 * Commits of many repositories (a compound shard's) that bump index-version once, at the
 * end (endBatch): searchers reload once, not once per repository. Each manifest records
 * the version the end writes, so that a run killed before it is caught up (repairMissedBump).
 */
export interface CommitBatch {
  version: string;
}

export function startBatch(): CommitBatch {
  return { version: newIndexVersion() };
}

export function endBatch(dataDir: string, batch: CommitBatch): void {
  bumpIndexVersion(dataDir, batch.version);
}

/**
 * Removes what no manifest names from a repository's directory: shard, membership and symbols files
 * (complete or temporary) of runs that never committed, and temporary manifests. Only the
 * holder of the repository's lock writes those, and it calls this. `current` is the
 * repository's manifest (undefined or unreadable: nothing is named, everything goes).
 * `writing`: a generation whose symbols files the caller is writing (kept).
 */
export function removeUnlisted(dir: string, current: LoadedManifest | undefined, writing?: number): void {
  const listed = new Set(current ? [...named(current), ...current.retired.map((r) => r.file)] : []);
  for (const entry of readdirSync(dir)) {
    if (listed.has(entry)) continue;
    if (writing !== undefined && entry.includes(SYMBOLS_EXT) && fileGeneration(entry.slice(0, entry.indexOf(SYMBOLS_EXT) + SYMBOLS_EXT.length)) === writing)
      continue;
    if (entry.includes(SHARD_EXT) || entry.includes(MEMBERSHIP_EXT) || entry.includes(SYMBOLS_EXT) || entry.startsWith('manifest.json.tmp-'))
      rmSync(join(dir, entry), { force: true });
  }
  // Temporary files of others (a mark being written, a lock record): only their writers' leftovers.
  removeLeftoverTemps(dir);
}

/**
 * Removes a repository from the index: an empty manifest that retires every file; the
 * directory goes when the grace has passed (collectGarbage).
 */
export function retireRepository(dataDir: string, repoId: number, now = Date.now()): void {
  const loaded = loadManifest(dataDir, repoId);
  const previous = loaded && !('unreadable' in loaded) ? loaded : undefined;
  if (!previous) {
    rmSync(shardsDir(dataDir, repoId), { recursive: true, force: true });
    announceChange(dataDir, repoId);
    return;
  }
  commitManifest(dataDir, { ...(previous as Manifest), version: 2, shards: [], files: 0, contentBytes: 0, skipped: 0 }, previous, now);
}

/**
 * Deletes retired files whose grace has passed, and the directories of removed
 * repositories once nothing in them is still retired. `inUse` (absolute paths) are kept
 * regardless: a long search in this process still reads them.
 */
export function collectGarbage(dataDir: string, inUse: ReadonlySet<string> = new Set(), now = Date.now()): void {
  for (const m of readAllManifests(dataDir)) {
    const dir = shardsDir(dataDir, m.repoId);
    let pending = 0;
    for (const r of m.retired) {
      const path = join(dir, r.file);
      if (now - r.at >= RETIRE_GRACE_MS && !inUse.has(path)) rmSync(path, { force: true });
      else pending++;
    }
    if (m.shards.length === 0 && pending === 0) {
      rmSync(dir, { recursive: true, force: true });
      // Nothing is served from it any more: no bump, but views drop it at their next read.
      journalChange(dataDir, m.repoId, undefined);
    }
  }
}

/**
 * Bumps index-version if the repository's last commit was killed before its own bump:
 * searchers that were running then would otherwise never notice the commit (a re-run with
 * nothing to do commits nothing). A commit records in its manifest the index-version it
 * writes next ("<ms>-<random>"); it was missed when the file holds an earlier one, or
 * another of the same millisecond (then bumping once more is harmless). The caller holds
 * the repository's lock.
 */
export function repairMissedBump(dataDir: string, repoId: number): void {
  const m = loadManifest(dataDir, repoId);
  const ours = m && !('unreadable' in m) && m.version === 2 ? m.indexVersion : undefined;
  if (ours === undefined) return;
  const current = readIndexVersion(dataDir).trim();
  if (current === ours) return;
  if (versionTime(current) <= versionTime(ours)) announceChange(dataDir, repoId);
}

function versionTime(v: string): number {
  const ms = Number(v.split('-')[0]);
  return Number.isFinite(ms) ? ms : 0;
}

function newIndexVersion(): string {
  return `${Date.now()}-${randomBytes(6).toString('hex')}`;
}

/**
 * Tells searchers that repository `repoId`'s manifest or mark changed: the change journal
 * (index-journal.ts) names it, then index-version is bumped.
 */
export function announceChange(dataDir: string, repoId: number): void {
  const version = newIndexVersion();
  journalChange(dataDir, repoId, version);
  bumpIndexVersion(dataDir, version);
}

/**
 * Tells searchers (in this and other processes) that some manifest changed (index-stamp.ts).
 * A bump whose version the change journal does not name makes every view read every
 * manifest again: changes of known repositories go through announceChange or commitManifest.
 */
export function bumpIndexVersion(dataDir: string, version = newIndexVersion()): void {
  writeFileAtomic(join(dataDir, INDEX_VERSION_FILE), `${version}\n`);
  signalIndexChange(dataDir);
  forgetStamp(dataDir);
}

/** index-version's content; '' when there is none or it cannot be read (then the next bump, which replaces it, is seen). */
export function readIndexVersion(dataDir: string): string {
  try {
    return readBoundedText(join(dataDir, INDEX_VERSION_FILE), INDEX_VERSION_MAX_BYTES);
  } catch {
    return '';
  }
}
