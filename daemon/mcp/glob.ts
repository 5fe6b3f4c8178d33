// Patterns of the `glob` tool: the whole glob syntax (daemon/glob/syntax.ts) matched against
// a file's whole path in the repository, case-sensitively as git paths are. A leading `/`
// or `./` is ignored: paths are relative to the repository's root. Patterns are bounded in
// length, and their braces in expansions (the parser's bounds).

import { compilePattern, GlobError } from '../glob/syntax.ts';
import type { GlobMatcher } from '../glob/matcher.ts';

export { GlobError, MAX_GLOB_EXPANDED_LENGTH, MAX_GLOB_EXPANSIONS } from '../glob/syntax.ts';

/** Characters of a pattern, at most. */
export const MAX_GLOB_LENGTH = 1024;

/** The matcher of a glob (whole paths, case-sensitive); a GlobError when the pattern cannot be used. */
export function compileGlob(pattern: string): GlobMatcher {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobError(`the pattern is longer than ${MAX_GLOB_LENGTH} characters`);
  const relative = pattern.replace(/^\.?\/+/, '');
  if (relative.length === 0) throw new GlobError('the pattern is empty');
  return compilePattern(relative, {}, pattern);
}
