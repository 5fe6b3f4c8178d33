// The rules of a search context's definition, wherever it comes from: the configuration
// file's `contexts` (load.ts, with the shapes of trawl.schema.json's searchContext) and
// the API's PUT /api/contexts/{name} (http/handlers/contexts.ts), so that a context the API
// accepts is one the file could hold and the other way round. Which repositories a
// definition selects is the search's to work out (search/context-scope.ts).

import type { ContextSelection, SearchContextDefinition } from './types.ts';

/** A context's name: what `context:` takes (trawl.schema.json contextName holds the same pattern). */
export const CONTEXT_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The name that means no context at all: every repository the caller may see. Never a context's. */
export const GLOBAL_CONTEXT = 'global';

/** The longest description (trawl.schema.json searchContext). */
export const CONTEXT_DESCRIPTION_MAX = 1000;
/** The longest repository glob, and topic (contextGlob, contextTopic). */
export const CONTEXT_GLOB_MAX = 1024;
export const CONTEXT_TOPIC_MAX = 100;

/** What a name must be, in words (for the errors of the API; the file's come from the schema). */
export const CONTEXT_NAME_RULE = 'a lower-case letter or digit followed by up to 63 lower-case letters, digits, ".", "_" or "-"';

/** Why `name` cannot name a context, or undefined when it can. */
export function contextNameProblem(name: string): string | undefined {
  if (name === GLOBAL_CONTEXT) return `"${GLOBAL_CONTEXT}" is reserved: context:${GLOBAL_CONTEXT} searches every repository`;
  if (!CONTEXT_NAME.test(name)) return `a context's name must be ${CONTEXT_NAME_RULE}`;
  return undefined;
}

/** A selection as written (file or request body): each list optional. */
export interface WrittenSelection {
  repos?: string[];
  connections?: string[];
  topics?: string[];
}

/** A definition as written: the file's and the request's shape. */
export interface WrittenContext {
  description?: string;
  include?: WrittenSelection;
  exclude?: WrittenSelection;
}

/**
 * A validated definition as trawl keeps it: every list present (empty when not given),
 * topics in lower case (hosts report them so: repos/hosts/types.ts HostRepo.topics).
 */
export function completeContext(written: WrittenContext): SearchContextDefinition {
  const out: SearchContextDefinition = {};
  if (written.description !== undefined) out.description = written.description;
  if (written.include !== undefined) out.include = completeSelection(written.include);
  if (written.exclude !== undefined) out.exclude = completeSelection(written.exclude);
  return out;
}

function completeSelection(s: WrittenSelection): ContextSelection {
  return {
    repos: [...(s.repos ?? [])],
    connections: [...(s.connections ?? [])],
    topics: [...new Set((s.topics ?? []).map((t) => t.toLowerCase()))],
  };
}

/** Every connection the definition names that `known` does not hold, with where it is named ("include/connections/0"). */
export function unknownConnections(def: WrittenContext, known: (name: string) => boolean): Array<{ at: string; name: string }> {
  const out: Array<{ at: string; name: string }> = [];
  for (const side of ['include', 'exclude'] as const) {
    const list = def[side]?.connections;
    if (!Array.isArray(list)) continue;
    list.forEach((name, i) => {
      if (typeof name === 'string' && !known(name)) out.push({ at: `${side}/connections/${i}`, name });
    });
  }
  return out;
}
