// Which repositories a member may read (settings.permissions). With "all", every one; with
// "code-host", those public on their host, those the configuration's grants give them (by
// email, directly or through a group; repository-name globs, case-insensitive as hosts
// treat names), and those their code host lets them read (the permission sync's results in
// the store, permissions/). A member's sets are resolved once and kept: the grants until
// the catalog changes (a generation), the host's until the permission sync or a link writes
// again (`changed`, in this process) or, where other processes write the same store (a
// cluster's nodes), for at most `sharedTtlMs`; so a request pays one lookup and a
// repository one or two Set probes, never a glob match or a store read per shard or file.

import type { PermissionsConfig, PermissionsMode } from '../config/types.ts';
import { compilePathGlob } from '../repos/glob.ts';
import type { Identity } from './identity.ts';

/** The catalog as permissions read it: every repository's id and name, and a number that changes when they do. */
export interface RepositoryNames {
  generation(): number;
  list(): Iterable<{ repoId: number; name: string }>;
}

type CanSee = Identity['canSee'];

const EVERYTHING: CanSee = () => true;
const NOTHING: ReadonlySet<number> = new Set();

/** What the host permissions are read from: the store's permission part. */
export interface SyncedPermissions {
  permittedRepos(userId: string): Promise<number[]>;
}

/** The most members whose resolved sets are kept; past it the oldest are resolved again when next asked. */
const KEPT_MEMBERS = 10_000;
/**
 * In a cluster, how long a member's host permissions read from the store are trusted: the
 * delay before another node's sync takes effect here, small beside any sync interval.
 */
export const SYNCED_TTL_MS = 10_000;

export interface PermissionsOptions {
  /** What the host permissions are read from; absent: grants only. */
  synced?: SyncedPermissions;
  /** Other processes write the store too: re-read a member's host permissions after this long. Absent: only `changed` does. */
  sharedTtlMs?: number;
  now?: () => number;
}

interface Synced {
  repos: ReadonlySet<number>;
  readAt: number;
  epoch: number;
}

export class RepositoryPermissions {
  readonly #mode: PermissionsMode;
  readonly #config: PermissionsConfig;
  readonly #catalog: RepositoryNames;
  /** Email → the repositories granted, as resolved at #generation. */
  readonly #granted = new Map<string, ReadonlySet<number>>();
  #generation = Number.NaN;
  readonly #store: SyncedPermissions | undefined;
  readonly #now: () => number;
  /** User id → the repositories their code hosts let them read, as last read from the store. */
  readonly #synced = new Map<string, Synced>();
  /** Bumped by `changed()`: every set read before is stale. */
  #epoch = 0;
  /** User id → their granted and host-permitted sets merged (#union). */
  readonly #unions = new Map<string, { granted: ReadonlySet<number>; synced: ReadonlySet<number>; union: ReadonlySet<number> }>();

  readonly #ttlMs: number;

  constructor(mode: PermissionsMode, config: PermissionsConfig, catalog: RepositoryNames, options: PermissionsOptions = {}) {
    this.#mode = mode;
    this.#config = config;
    this.#catalog = catalog;
    this.#store = options.synced;
    this.#ttlMs = options.sharedTtlMs ?? Number.POSITIVE_INFINITY;
    this.#now = options.now ?? Date.now;
  }

  get mode(): PermissionsMode {
    return this.#mode;
  }

  /** What this member may see, for their identity's canSee. */
  async canSeeFor(user: { id: string; email: string }): Promise<CanSee> {
    if (this.#mode === 'all') return EVERYTHING;
    const granted = this.granted(user.email);
    const synced = await this.hostPermitted(user.id);
    const readable = synced.size === 0 ? granted : granted.size === 0 ? synced : this.#union(user.id, granted, synced);
    // A search asks this of every repository it could read: one probe each.
    return (repo) => repo.visibility === 'public' || readable.has(repo.repoId);
  }

  /** Granted and host-permitted repositories as one set, kept while both stay the sets they are. */
  #union(userId: string, granted: ReadonlySet<number>, synced: ReadonlySet<number>): ReadonlySet<number> {
    const kept = this.#unions.get(userId);
    if (kept !== undefined && kept.granted === granted && kept.synced === synced) return kept.union;
    const union = new Set([...granted, ...synced]);
    if (this.#unions.size >= KEPT_MEMBERS && kept === undefined) this.#unions.delete(this.#unions.keys().next().value!);
    this.#unions.set(userId, { granted, synced, union });
    return union;
  }

  /** The permission sync wrote: what was read from the store before is read again when next needed (one member's, or everyone's). */
  changed(userId?: string): void {
    if (userId === undefined) this.#epoch++;
    else this.#synced.delete(userId);
  }

  /** The repositories the member's code hosts let them read (the store's, kept as described above). */
  async hostPermitted(userId: string): Promise<ReadonlySet<number>> {
    if (this.#store === undefined) return NOTHING;
    const now = this.#now();
    const kept = this.#synced.get(userId);
    if (kept !== undefined && kept.epoch === this.#epoch && now - kept.readAt < this.#ttlMs) return kept.repos;
    const epoch = this.#epoch;
    const repos = new Set(await this.#store.permittedRepos(userId));
    if (this.#synced.size >= KEPT_MEMBERS && !this.#synced.has(userId)) this.#synced.delete(this.#synced.keys().next().value!);
    this.#synced.set(userId, { repos, readAt: now, epoch });
    return repos;
  }

  /** The repositories the configuration grants this member (public ones aside). */
  granted(email: string): ReadonlySet<number> {
    const generation = this.#catalog.generation();
    if (generation !== this.#generation) {
      this.#granted.clear();
      this.#generation = generation;
    }
    const key = email.toLowerCase();
    let set = this.#granted.get(key);
    if (set === undefined) {
      set = this.#resolve(key);
      if (this.#granted.size >= KEPT_MEMBERS) this.#granted.delete(this.#granted.keys().next().value!);
      this.#granted.set(key, set);
    }
    return set;
  }

  #resolve(email: string): ReadonlySet<number> {
    const groups = new Set(Object.entries(this.#config.groups).flatMap(([name, emails]) => (emails.includes(email) ? [name] : [])));
    const globs = this.#config.grants
      .filter((g) => g.users.includes(email) || g.groups.some((name) => groups.has(name)))
      .flatMap((g) => g.repos.map(compilePathGlob));
    const out = new Set<number>();
    if (globs.length === 0) return out;
    for (const { repoId, name } of this.#catalog.list()) if (globs.some((g) => g.test(name))) out.add(repoId);
    return out;
  }
}
