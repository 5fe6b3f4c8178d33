// Which repositories a member may read (settings.permissions). With "all", every one; with
// "code-host", those public on their host, those the configuration's grants give them (by
// email, directly or through a group; repository-name globs, case-insensitive as hosts
// treat names), and, once permission sync exists, those their code host lets them read.
// A member's set is resolved once against the catalog and kept until the catalog or the
// grants change (a generation), so a request pays one lookup and a repository one Set probe,
// never a glob match per shard or per file.

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

/** The most members whose resolved sets are kept; past it the oldest are resolved again when next asked. */
const KEPT_MEMBERS = 10_000;

export class RepositoryPermissions {
  readonly #mode: PermissionsMode;
  readonly #config: PermissionsConfig;
  readonly #catalog: RepositoryNames;
  /** Email → the repositories granted, as resolved at #generation. */
  readonly #granted = new Map<string, ReadonlySet<number>>();
  #generation = Number.NaN;

  constructor(mode: PermissionsMode, config: PermissionsConfig, catalog: RepositoryNames) {
    this.#mode = mode;
    this.#config = config;
    this.#catalog = catalog;
  }

  /** What the member with this email may see, for their identity's canSee. */
  canSeeFor(email: string): CanSee {
    if (this.#mode === 'all') return EVERYTHING;
    const granted = this.granted(email);
    return (repo) => repo.visibility === 'public' || granted.has(repo.repoId);
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
