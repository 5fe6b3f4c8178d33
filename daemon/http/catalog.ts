// The repositories the daemon serves: every repository with an index (its manifest), with
// what the store knows besides (connection, push time, image). Manifests are re-read only
// when the data dir's index-version changes, like the Searcher's snapshots. The store's
// records are read ahead (refresh: at start, when the index changes, and every
// RECORDS_TTL_MS in the background), so that listing, which every request does, never
// waits for the store: what they add is display, and a version 2 manifest carries the
// repository's visibility itself. A repository
// whose index is broken (index-health.ts) is not listed, as if it were not indexed, until
// it is re-indexed; a shard that fails its checks while a directory's files are read here
// marks it broken.
//
// What is listed comes from a ManifestSource: this data dir's index (the IndexView) on one
// node; in a cluster, the cluster's published index (cluster/cluster-view.ts
// catalogManifests), so that every node lists every repository whichever nodes hold its
// shards. Reading a directory's files needs every shard of it here (holdsIndex); a node
// without them has the request run elsewhere (forward.ts).

import { IndexView } from '../index/index-health.ts';
import { manifestVisibility, shardFiles, symbolsPending, type LoadedManifest } from '../index/manifest.ts';
import { Shard } from '../index/shard-reader.ts';
import { ShardError } from '../index/shard-error.ts';
import type { CodeHostType } from '../repos/hosts/types.ts';
import type { GitRef } from '../repos/git.ts';
import { displayName, isWebUrl } from '../repos/web-urls.ts';
import { nextSlice, sliceUsed } from '../runtime/time-slices.ts';
import { byteCompare } from '../search/rank-order.ts';
import type { RepoRecord, Store } from '../store/store.ts';
import { ServiceError } from '../errors.ts';
import type { Identity } from '../auth/identity.ts';

/** A file of a directory's index: its path, and where to read its content. */
export interface IndexedFile {
  path: string;
  shard: Shard;
  doc: number;
}

export interface CatalogRepo {
  repoId: number;
  name: string;
  displayName: string;
  codeHostType: CodeHostType;
  externalWebUrl?: string;
  imageUrl?: string;
  /** refs[0] of the index; "HEAD" for a directory. */
  defaultBranch: string;
  kind: 'git' | 'directory';
  /** The git directory (a local repository or the mirror) or the indexed directory. */
  source?: string;
  visibility: 'public' | 'private';
  isFork: boolean;
  isArchived: boolean;
  indexedAt: string;
  pushedAt?: string;
  connectionId?: number;
  /** The code host's topics, lower case, from the store's record (what a search context may select by); empty when none. */
  topics: string[];
  /** From the store's record: the last event that asked for its sync, and when that sync ended (RepoRecord). */
  lastEventAt?: string;
  lastEventSyncedAt?: string;
  refs: GitRef[];
  /** The content is searchable; its symbols are still being added (manifest.ts symbolsPending). */
  symbolsPending: boolean;
  manifest: LoadedManifest;
}

/**
 * The manifests of the repositories to list: the same object while they do not change (a
 * new one makes the catalog derive its list again). IndexView is one.
 */
export interface ManifestSource {
  current(): { readonly manifests: readonly LoadedManifest[] };
}

/** The store's records are read again, in the background, when older than this. */
const RECORDS_TTL_MS = 2_000;

export class Catalog {
  private state: ReturnType<ManifestSource['current']> | undefined;
  /** Counts changes of the listed repositories' manifests, where their names come from: what a cache of names follows. */
  private changes = 0;
  private manifests: LoadedManifest[] = [];
  /** The store's records by id (refresh), and when they were read (performance.now()). */
  private records = new Map<number, RepoRecord>();
  private recordsAt = -Infinity;
  /** Counts reads of the records (refresh), where topics and connections come from. */
  private recordsRead = 0;
  private refreshing: Promise<void> | undefined;
  /** indexedFiles() per repository, for the current index version (shards stay mapped once). */
  private readonly files = new Map<number, Promise<IndexedFile[]>>();
  /** This data dir's index: what can be read here, and where damage found in it is reported. */
  private readonly view: IndexView;
  private readonly listing: ManifestSource;

  constructor(
    private readonly dataDir: string,
    private readonly store?: Store,
    view?: IndexView,
    /** What to list; default: `view`. */
    listing?: ManifestSource,
  ) {
    this.view = view ?? new IndexView(dataDir);
    this.listing = listing ?? this.view;
  }

  /** Every served repository, sorted by name. */
  list(): CatalogRepo[] {
    const state = this.listing.current();
    if (state !== this.state) {
      this.manifests = state.manifests.filter((m) => m.shards.length > 0);
      this.state = state;
      this.changes++;
      this.files.clear();
      // A new index may name repositories the records read before do not know yet.
      void this.refresh();
    } else if (performance.now() - this.recordsAt > RECORDS_TTL_MS) void this.refresh();
    const records = this.records;
    return this.manifests.map((m) => toRepo(m, records.get(m.repoId))).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.repoId - b.repoId));
  }

  /** A number that changes whenever list() would list other repositories or other names. */
  generation(): number {
    if (this.listing.current() !== this.state) this.list();
    return this.changes;
  }

  /**
   * A number that changes whenever list() may list other repositories, names, topics or
   * connections (a new index, or a new read of the store's records, at most every few
   * seconds): what a cache of repository sets follows.
   */
  version(): string {
    return `${this.generation()}.${this.recordsRead}`;
  }

  /** The store's record of a repository, as last read (refresh), whether it is served or not. */
  recordOf(repoId: number): RepoRecord | undefined {
    return this.records.get(repoId);
  }

  /**
   * Reads the store's records (at most one read at a time; a caller that needs them now,
   * the daemon before it listens, awaits it). A failure keeps the records read before.
   */
  refresh(): Promise<void> {
    if (!this.store) return Promise.resolve();
    this.refreshing ??= this.store.listRepos().then(
      (rows) => {
        this.records = new Map(rows.map((r) => [r.repoId, r]));
        this.recordsAt = performance.now();
        this.recordsRead++;
        this.refreshing = undefined;
      },
      () => {
        this.recordsAt = performance.now();
        this.refreshing = undefined;
      },
    );
    return this.refreshing;
  }

  /** The repository named `name` that the caller may see, else 404 REPOSITORY_NOT_FOUND (an unseen one is not revealed). */
  find(name: string, identity: Identity): CatalogRepo {
    const repo = this.list().find((r) => r.name === name);
    if (!repo || !identity.canSee(repo)) throw new ServiceError('REPOSITORY_NOT_FOUND', `no repository named "${name}" (GET /api/repos lists them)`);
    return repo;
  }

  /**
   * Whether this data dir holds every shard of the repository's listed index (always, when
   * the listing is this data dir's own): indexedFiles can read it here.
   */
  holdsIndex(repo: CatalogRepo): boolean {
    // Listed from this data dir: here by definition (even when a re-index committed since the listing).
    if (this.listing === this.view) return true;
    const local = this.view.current().manifests.find((m) => m.repoId === repo.repoId);
    if (local === repo.manifest) return true;
    if (local === undefined || local.generation !== repo.manifest.generation) return false;
    const files = new Set(local.shards.map((s) => s.file));
    return repo.manifest.shards.every((s) => files.has(s.file));
  }

  /**
   * The files of a repository's default branch as the index holds them, by path: path and
   * where to read the content. Used for directories, which have no git to read. Only when
   * this data dir holds the whole index (holdsIndex; else 503). Read once per index
   * version, in time slices (runtime/time-slices.ts): a directory may hold 10^5 files.
   */
  indexedFiles(repo: CatalogRepo): Promise<IndexedFile[]> {
    if (!this.holdsIndex(repo))
      return Promise.reject(new ServiceError('SERVICE_UNAVAILABLE', `this node does not hold every shard of ${repo.name}'s index; ask another node`));
    const known = this.files.get(repo.repoId);
    if (known && this.manifests.includes(repo.manifest)) return known;
    const reading = this.readIndexedFiles(repo);
    this.files.set(repo.repoId, reading);
    reading.catch(() => {
      if (this.files.get(repo.repoId) === reading) this.files.delete(repo.repoId);
    });
    return reading;
  }

  private async readIndexedFiles(repo: CatalogRepo): Promise<IndexedFile[]> {
    const out: IndexedFile[] = [];
    try {
      for (const s of repo.manifest.shards) {
        const files = shardFiles(this.dataDir, repo.repoId, s);
        const shard = Shard.open(files.path, files);
        // Its default branch: the first of its member's lists (a compound shard holds several repositories).
        const member = shard.members[s.member ?? 0];
        if (!member) throw new ShardError(files.path, `has no repository ${s.member ?? 0}`);
        for (const doc of shard.branches.docs(member.branchFirst)) {
          if (sliceUsed()) await nextSlice();
          out.push({ path: shard.name(doc), shard, doc });
        }
      }
    } catch (err) {
      this.damaged(repo, err);
    }
    // A directory is indexed as it is walked, in path order: the sort checks it, one comparison per file.
    out.sort((a, b) => byteCompare(a.path, b.path));
    return out;
  }

  /** A document's bytes as the index holds them (checked against its checksum). */
  indexedContent(repo: CatalogRepo, file: IndexedFile): Buffer {
    return this.checked(repo, () => file.shard.contentOf(file.doc));
  }

  /** Runs `read`; a shard that fails its checks marks the repository broken, and the caller gets a 404 (it is no longer listed). */
  private checked<T>(repo: CatalogRepo, read: () => T): T {
    try {
      return read();
    } catch (err) {
      this.damaged(repo, err);
    }
  }

  private damaged(repo: CatalogRepo, err: unknown): never {
    if (!(err instanceof ShardError)) throw err;
    this.view.report(repo.repoId, repo.manifest.generation, err.message);
    throw new ServiceError(
      'REPOSITORY_NOT_FOUND',
      `the index of ${repo.name} is damaged; it is left out until it is re-indexed (the next sync, or trawl index)`,
    );
  }
}

function toRepo(m: LoadedManifest, rec: RepoRecord | undefined): CatalogRepo {
  const name = m.version === 2 ? m.repo.name : m.repoName;
  const repo: CatalogRepo = {
    repoId: m.repoId,
    name,
    displayName: m.version === 2 ? m.repo.displayName : displayName(name),
    codeHostType: m.version === 2 ? m.repo.codeHostType : (rec?.codeHostType ?? 'genericGitHost'),
    defaultBranch: m.version === 2 ? (m.refs[0]?.name ?? 'HEAD') : (rec?.defaultBranch ?? 'HEAD'),
    kind: m.version === 2 ? m.repo.kind : 'directory',
    visibility: manifestVisibility(m, rec),
    isFork: m.version === 2 ? m.repo.fork : (rec?.isFork ?? false),
    isArchived: m.version === 2 ? m.repo.archived : (rec?.isArchived ?? false),
    indexedAt: m.indexedAt,
    topics: rec?.topics ?? [],
    refs: m.version === 2 ? m.refs : [],
    symbolsPending: symbolsPending(m),
    manifest: m,
  };
  if (m.version === 2) repo.source = m.repo.source;
  const external = m.version === 2 ? m.repo.externalWebUrl : rec?.externalWebUrl;
  // Checked here too, not only where host answers are read: an index or record written
  // before that check may hold a `javascript:` URL, which must not reach an answer.
  if (external && isWebUrl(external)) repo.externalWebUrl = external;
  if (rec?.imageUrl) repo.imageUrl = rec.imageUrl;
  // The host's push time; for plain git (no host to ask), when the default branch's tip was committed.
  const pushedAt = rec?.pushedAt ?? (m.version === 2 ? m.repo.committedAt : undefined);
  if (pushedAt) repo.pushedAt = pushedAt;
  if (rec?.connectionId !== undefined) repo.connectionId = rec.connectionId;
  if (rec?.lastEventAt !== undefined) repo.lastEventAt = rec.lastEventAt;
  if (rec?.lastEventSyncedAt !== undefined) repo.lastEventSyncedAt = rec.lastEventSyncedAt;
  return repo;
}
