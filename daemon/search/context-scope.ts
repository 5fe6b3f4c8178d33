// Which repositories a search context holds (docs/identity.md "Search contexts"): those
// that match an entry of its `include` (every repository when it has none) and no entry of
// its `exclude`. An entry is a repository-name glob (repos/glob.ts compilePathGlob: `*`
// within a `/`-separated part, `**` across, without regard to case, as code hosts treat
// names), a connection, or a code-host topic (compared in lower case, as hosts give them).
//
// A search resolves its context once, against the repository list, into a set of ids; the
// search then asks the set, one probe per repository, never a glob per shard or file. What
// the caller may see is another question, asked beside it (http/contexts.ts): a context
// narrows a search, it never widens what the caller sees.

import type { ContextSelection, SearchContextDefinition } from '../config/types.ts';
import type { GlobMatcher } from '../glob/matcher.ts';
import { compilePathGlob } from '../repos/glob.ts';

/** A repository as a context selects it: name, the connection that found it (by id), the host's topics. */
export interface ScopedRepo {
  repoId: number;
  name: string;
  connectionId?: number;
  topics: readonly string[];
}

/** A selection ready to test repositories: its globs compiled, its connections as ids. */
interface Compiled {
  globs: GlobMatcher[];
  connections: ReadonlySet<number>;
  topics: ReadonlySet<string>;
}

/**
 * The ids of the repositories of `repos` that the context holds. `connectionId` gives the
 * id of a connection by name; a name it does not know (a connection that no longer exists)
 * selects nothing.
 */
export function contextRepoIds(
  definition: SearchContextDefinition,
  repos: Iterable<ScopedRepo>,
  connectionId: (name: string) => number | undefined,
): Set<number> {
  const include = definition.include && compile(definition.include, connectionId);
  const exclude = definition.exclude && compile(definition.exclude, connectionId);
  const out = new Set<number>();
  for (const repo of repos) {
    if (include && !matches(include, repo)) continue;
    if (exclude && matches(exclude, repo)) continue;
    out.add(repo.repoId);
  }
  return out;
}

/** Whether the definition names a connection (resolving it needs the connections' ids). */
export function namesConnections(definition: SearchContextDefinition): boolean {
  return (definition.include?.connections.length ?? 0) > 0 || (definition.exclude?.connections.length ?? 0) > 0;
}

function compile(selection: ContextSelection, connectionId: (name: string) => number | undefined): Compiled {
  const connections = new Set<number>();
  for (const name of selection.connections) {
    const id = connectionId(name);
    if (id !== undefined) connections.add(id);
  }
  return {
    globs: selection.repos.map(compilePathGlob),
    connections,
    topics: new Set(selection.topics.map((t) => t.toLowerCase())),
  };
}

function matches(c: Compiled, repo: ScopedRepo): boolean {
  if (repo.connectionId !== undefined && c.connections.has(repo.connectionId)) return true;
  if (c.topics.size > 0 && repo.topics.some((t) => c.topics.has(t.toLowerCase()))) return true;
  return c.globs.some((g) => g.test(repo.name));
}
