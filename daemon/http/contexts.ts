// Search contexts as the API serves them (docs/identity.md "Search contexts"): those of the
// configuration file (read-only here) and those owners make through the API (the store's),
// one list by name; a context of the file hides a stored one of the same name. A search
// asks here, once per request, which repositories it may read: what the caller may see
// (Identity.canSee), narrowed to the context its query names or, when it names none, to the
// caller's default context. A context only ever narrows: a repository it names that the
// caller may not see stays unseen.
//
// Every question reads the store (stored contexts, the caller's default) as it is now, so a
// change made on another node of a cluster counts at once. Resolving a context is one pass
// over the repository list (search/context-scope.ts), a glob test per repository and entry:
// milliseconds for tens of thousands of repositories, on the thread that serves requests.
// So a context's set is kept, and made again only when its definition, the repository list
// (Catalog.version) or the connections' ids change.

import type { Identity } from '../auth/identity.ts';
import { completeContext, contextNameProblem, GLOBAL_CONTEXT, unknownConnections, type WrittenContext } from '../config/contexts.ts';
import type { Config, SearchContextDefinition } from '../config/types.ts';
import { ServiceError } from '../errors.ts';
import { contextRepoIds, namesConnections, type ScopedRepo } from '../search/context-scope.ts';
import type { SearchOptions } from '../search/search-options.ts';
import type { Store } from '../store/store.ts';

/** A context as the API shows it. */
export interface ContextView {
  name: string;
  definition: SearchContextDefinition;
  /** Where it is defined: the configuration file (read-only through the API) or the API. */
  source: 'configuration' | 'api';
  /** Of a context made through the API. */
  createdAt?: string;
  updatedAt?: string;
}

export type RepoFilter = NonNullable<SearchOptions['repoFilter']>;

/** What a search's context is taken from: the query's `context:`, and whether the caller's default applies without one. */
export interface ContextChoice {
  /** The plan's context (query/terms.ts Plan.context). */
  named: string | undefined;
  /** The caller's default applies when the query names none (the searches people and agents type; not code navigation). */
  useDefault: boolean;
}

/** The repositories contexts are resolved against (the catalog), and the version of that list. */
export interface ContextRepos {
  list(): Iterable<ScopedRepo>;
  version(): string;
}

/** Definitions whose resolved sets are kept, at most (the most recently used); a set holds an id per repository. */
const KEPT_SETS = 64;

export class SearchContexts {
  /** Resolved sets by definition, with what they were resolved against (the list's version, the connections' ids). */
  readonly #sets = new Map<string, { against: string; ids: Set<number> }>();

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly repos: ContextRepos,
  ) {}

  /** Every context, by name (byte order). */
  async list(): Promise<ContextView[]> {
    const out = new Map<string, ContextView>();
    for (const c of await this.store.contexts.list())
      out.set(c.name, { name: c.name, definition: c.definition, source: 'api', createdAt: c.createdAt, updatedAt: c.updatedAt });
    for (const [name, definition] of Object.entries(this.config.contexts)) out.set(name, { name, definition, source: 'configuration' });
    return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** The context named `name`; undefined when there is none. */
  async find(name: string): Promise<ContextView | undefined> {
    const configured = Object.hasOwn(this.config.contexts, name) ? this.config.contexts[name] : undefined;
    if (configured) return { name, definition: configured, source: 'configuration' };
    const stored = await this.store.contexts.get(name);
    return stored && { name, definition: stored.definition, source: 'api', createdAt: stored.createdAt, updatedAt: stored.updatedAt };
  }

  /** The ids of the repositories the definition holds, as the repository list is now (not to be changed: it may be kept). */
  async repoIds(definition: SearchContextDefinition): Promise<ReadonlySet<number>> {
    let ids: Map<string, number> | undefined;
    if (namesConnections(definition)) ids = new Map((await this.store.listConnections()).map((c) => [c.name, c.id]));
    const key = JSON.stringify(definition);
    const against = JSON.stringify([this.repos.version(), ids ? [...ids] : null]);
    let kept = this.#sets.get(key);
    this.#sets.delete(key);
    if (kept?.against !== against) kept = { against, ids: contextRepoIds(definition, this.repos.list(), (name) => ids?.get(name)) };
    this.#sets.set(key, kept);
    if (this.#sets.size > KEPT_SETS) this.#sets.delete(this.#sets.keys().next().value!);
    return kept.ids;
  }

  /**
   * The repositories a search of `identity` reads: what it may see, within the context the
   * query names, else (with `useDefault`) within the caller's default context. A query that
   * names an unknown context is 400 UNKNOWN_CONTEXT; a default that names a context since
   * removed from the configuration is no limit (searching must not break on it).
   */
  async searchFilter(identity: Identity, choice: ContextChoice): Promise<RepoFilter> {
    // The identity's own function (a closure, no `this`): no second call per repository.
    const visible: RepoFilter = identity.canSee;
    let name = choice.named;
    if (name === undefined && choice.useDefault && identity.userId !== undefined) name = await this.store.contexts.defaultOf(identity.userId);
    if (name === undefined || name === GLOBAL_CONTEXT) return visible;
    const context = await this.find(name);
    if (!context) {
      if (choice.named === undefined) return visible;
      throw unknownContext(name);
    }
    const ids = await this.repoIds(context.definition);
    return (r) => ids.has(r.repoId) && identity.canSee(r);
  }

  /**
   * Creates or replaces the context `name` from its written definition: 400 for a name that
   * cannot be a context's or a connection the configuration does not define, 409 for a
   * context of the configuration file. `created` says whether it is new.
   */
  async put(name: string, written: WrittenContext, now: string): Promise<{ view: ContextView; created: boolean }> {
    const problem = contextNameProblem(name);
    if (problem !== undefined) throw new ServiceError('INVALID_CONTEXT_NAME', problem);
    this.writable(name);
    const unknown = unknownConnections(written, (n) => Object.hasOwn(this.config.connections, n));
    if (unknown.length > 0) {
      const { at, name: connection } = unknown[0]!;
      throw new ServiceError(
        'INVALID_REQUEST_BODY',
        `${at.replaceAll('/', '.')}: no connection ${JSON.stringify(connection)} in the configuration (GET /api/connections lists them)`,
      );
    }
    const { context, created } = await this.store.contexts.put(name, completeContext(written), now);
    return { view: { name, definition: context.definition, source: 'api', createdAt: context.createdAt, updatedAt: context.updatedAt }, created };
  }

  /** Deletes the context made through the API (and the defaults naming it, counted): 404 when there is none, 409 for one of the configuration. */
  async delete(name: string): Promise<{ clearedDefaults: number }> {
    this.writable(name);
    const gone = await this.store.contexts.delete(name);
    if (gone === undefined) throw notFound(name);
    return gone;
  }

  /** The user's default context, when it names a context that exists. */
  async defaultOf(userId: string): Promise<string | undefined> {
    const name = await this.store.contexts.defaultOf(userId);
    return name !== undefined && (await this.find(name)) ? name : undefined;
  }

  /** Sets the user's default context (undefined or "global": none); 400 UNKNOWN_CONTEXT for a name that is no context's. */
  async setDefault(userId: string, name: string | undefined, now: string): Promise<string | undefined> {
    const chosen = name === GLOBAL_CONTEXT ? undefined : name;
    if (chosen !== undefined && !(await this.find(chosen))) throw unknownContext(chosen);
    await this.store.contexts.setDefault(userId, chosen, now);
    return chosen;
  }

  /** Every user's default context that names a context that exists, by user id. */
  async defaults(): Promise<Map<string, string>> {
    const known = new Set((await this.list()).map((c) => c.name));
    return new Map((await this.store.contexts.listDefaults()).filter((d) => known.has(d.name)).map((d) => [d.userId, d.name]));
  }

  private writable(name: string): void {
    if (Object.hasOwn(this.config.contexts, name))
      throw new ServiceError(
        'CONTEXT_READ_ONLY',
        `the context "${name}" is defined in the configuration file; change it there (the API changes only the contexts it made)`,
      );
  }
}

/** A name that is well formed, or the route's 404 without repeating what the path held (path-id.ts has the same rule). */
export function contextPathName(name: string): string {
  if (contextNameProblem(name) !== undefined && name !== GLOBAL_CONTEXT)
    throw new ServiceError(
      'CONTEXT_NOT_FOUND',
      'no search context with that name: names are lower-case letters, digits, ".", "_" and "-" (GET /api/contexts lists them)',
    );
  return name;
}

export function notFound(name: string): ServiceError {
  return new ServiceError('CONTEXT_NOT_FOUND', `no search context named "${name}" (GET /api/contexts lists them)`);
}

function unknownContext(name: string): ServiceError {
  return new ServiceError(
    'UNKNOWN_CONTEXT',
    `no search context named "${name}" (GET /api/contexts lists them; context:${GLOBAL_CONTEXT} searches every repository)`,
  );
}
