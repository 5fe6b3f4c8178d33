// The two glob dialects of the configuration and the query language.
//
// Ref globs (configuration `revisions`, the query's `branch:`): `*` matches any run of
// characters, `/` included, so `release/*` selects `release/1.2/hotfix` too, and everything
// else is literal. Ref names are short and operators think of `*` as "anything".
//
// Path globs (repository excludes, local repository paths): `*` stays within one path
// segment, `**` crosses segments, `?` is one character; matched case-insensitively, as code
// hosts treat repository names; local repository paths match each directory name
// case-sensitively, as file systems do.
//
// Both match through daemon/glob/matcher.ts, in time linear in the name's length whatever
// the glob (a `branch:` glob is a request's input). Compiled globs are kept in a small
// table: the search tests a query's `branch:` globs once per shard.

import { compileTokens, type GlobMatcher, type GlobToken } from '../glob/matcher.ts';

/** A ref glob's matcher: `*` any run of characters, everything else literal, case-sensitive. */
export function compileRefGlob(glob: string): GlobMatcher {
  return remember(refGlobs, glob, () => compileTokens(glob, [refTokens(glob)]));
}

/**
 * A repository-name glob's matcher, case-insensitive: `*` within one path segment, `**`
 * across segments (`a/**` + `/b` also matches "a/b"), `?` one character other than '/'.
 */
export function compilePathGlob(glob: string): GlobMatcher {
  return remember(pathGlobs, glob, () => compileTokens(glob, [pathTokens(glob)], { foldCase: true }));
}

/**
 * The path dialect for one directory name of a local repository path (`*` any run, `?` one
 * character), case-sensitive as file systems are.
 */
export function compileNameGlob(glob: string): GlobMatcher {
  return compileTokens(glob, [pathTokens(glob)]);
}

function refTokens(glob: string): GlobToken[] {
  return Array.from(glob, (ch): GlobToken => (ch === '*' ? ANY_RUN : { kind: 'char', cp: ch.codePointAt(0)! }));
}

function pathTokens(glob: string): GlobToken[] {
  const chars = Array.from(glob);
  const out: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch === '*' && chars[i + 1] === '*') {
      i++;
      if (chars[i + 1] === '/') {
        i++;
        out.push({ kind: 'dirs' }); // "**/": zero or more whole segments
      } else out.push(ANY_RUN);
    } else if (ch === '*') out.push({ kind: 'star', slash: false });
    else if (ch === '?') out.push({ kind: 'one', slash: false });
    else out.push({ kind: 'char', cp: ch.codePointAt(0)! });
  }
  return out;
}

const ANY_RUN: GlobToken = { kind: 'star', slash: true };

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
