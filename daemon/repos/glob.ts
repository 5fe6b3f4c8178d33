// The globs of the configuration and the query language, read by the one glob parser
// (daemon/glob/syntax.ts, which documents the syntax and why each of these differs from
// the glob tool's):
// - ref globs (configuration `revisions`, the query's `branch:`): `*` alone, and it crosses
//   `/`, so `release/*` selects `release/1.2/hotfix`;
// - repository-name globs (excludes, Gerrit projects): `*`, `?` and `**` anywhere,
//   case-insensitive, as code hosts treat repository names;
// - a directory name of a local repository path: the same, case-sensitive as file
//   systems are.
// Compiled globs are kept in a small table: the search tests a query's `branch:` globs
// once per shard.

import type { GlobMatcher } from '../glob/matcher.ts';
import { compilePattern, hasOperator, type GlobSyntax } from '../glob/syntax.ts';

const REF_GLOBS: GlobSyntax = { operators: 'star', starCrossesSlash: true };
const REPOSITORY_NAME_GLOBS: GlobSyntax = { operators: 'wildcards', globstar: 'anywhere', foldCase: true };
const DIRECTORY_NAME_GLOBS: GlobSyntax = { operators: 'wildcards', globstar: 'anywhere' };

/** A ref glob's matcher: `*` any run of characters, everything else literal, case-sensitive. */
export function compileRefGlob(glob: string): GlobMatcher {
  return remember(refGlobs, glob, () => compilePattern(glob, REF_GLOBS));
}

/**
 * A repository-name glob's matcher, case-insensitive: `*` within one path segment, `**`
 * across segments (`a/**` + `/b` also matches "a/b"), `?` one character other than '/'.
 */
export function compilePathGlob(glob: string): GlobMatcher {
  return remember(pathGlobs, glob, () => compilePattern(glob, REPOSITORY_NAME_GLOBS));
}

/** A directory name's matcher for a local repository path (`*` any run, `?` one character), case-sensitive. */
export function compileNameGlob(glob: string): GlobMatcher {
  return compilePattern(glob, DIRECTORY_NAME_GLOBS);
}

/** Whether a local repository path (or one of its directory names) has globs in it. */
export function hasNameGlob(text: string): boolean {
  return hasOperator(text, DIRECTORY_NAME_GLOBS);
}

/** Compiled globs kept per dialect, at most (the table starts over when full). */
const REMEMBERED = 64;
const refGlobs = new Map<string, GlobMatcher>();
const pathGlobs = new Map<string, GlobMatcher>();

function remember(table: Map<string, GlobMatcher>, glob: string, compile: () => GlobMatcher): GlobMatcher {
  let m = table.get(glob);
  if (m === undefined) {
    if (table.size >= REMEMBERED) table.clear();
    m = compile();
    table.set(glob, m);
  }
  return m;
}
