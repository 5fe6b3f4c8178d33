// The glob syntax of trawl: one parser for every glob (the glob tool's paths, `branch:`
// and configured revisions, repository excludes, local repository paths), matched by
// matcher.ts in time linear in the name. A glob matches a whole name.
//
//   *       any run of characters except `/`
//   **      as a whole segment (`**/x`, `a/**/b`, `a/**`): any number of segments, zero
//           included; inside a segment (`a**b`) it is the same as `*`
//   ?       one character except `/`
//   [abc]   one of the characters (ranges `a-z`; `[!...]` or `[^...]` negates); never `/`
//   {a,b}   alternatives, nested allowed; braces without a top-level comma are literal
//   \x      the character x literally
// Any other character matches itself; characters are code points (`?` is one emoji).
// Dot files are not special: `*` matches `.eslintrc`. Braces are expanded first (as a shell
// does) and each expansion becomes one alternative of the matcher, so `**` keeps its
// segment meaning inside braces.
//
// Where a caller's names or its existing configurations need another rule, it says so with
// a GlobSyntax option (each option below says which caller and why); the callers are
// daemon/mcp/glob.ts (the whole syntax) and daemon/repos/glob.ts.

import { compileTokens, type GlobMatcher, type GlobToken } from './matcher.ts';

export interface GlobSyntax {
  /**
   * The operators a pattern has; every other character matches itself.
   * - 'all' (the default): the whole syntax above.
   * - 'wildcards': `*`, `**` and `?`. Repository-name globs (excludes, Gerrit projects) and
   *   the directory names of local repository paths were configured with these alone;
   *   `[`, `{` and `\` stay literal so those configurations select what they selected
   *   (a directory name may hold any of them).
   * - 'star': `*` alone. Ref globs (configured revisions, the query's `branch:`): git
   *   forbids `?`, `[` and `\` in ref names and allows `{`, `}` and `,`, so `*` is the only
   *   operator they have ever had and anything else matches itself.
   */
  operators?: 'all' | 'wildcards' | 'star';
  /**
   * `*` matches `/` too (and `**` then means no more than `*`). For ref globs: git ref
   * names are hierarchical, and `release/*` selects `release/1.2/hotfix`, as configured
   * revisions and saved `branch:` queries rely on.
   */
  starCrossesSlash?: boolean;
  /**
   * Where `**` is special (when `*` does not cross `/`).
   * - 'segment' (the default): as described above.
   * - 'anywhere': every `**` crosses `/`, and `**` followed by `/` is "nothing, or any run
   *   of characters that ends with `/`" (so `org/**` + `/proj` matches "org/proj"), even
   *   inside a segment. Repository-name and directory-name globs were configured with this
   *   reading before the segment rule existed; it stays theirs so that they keep selecting
   *   the same repositories.
   */
  globstar?: 'segment' | 'anywhere';
  /** Letters match either case (matcher.ts canonicalize). Code hosts treat repository names so. */
  foldCase?: boolean;
}

/** A pattern that cannot be used (the whole syntax only: a class range out of order, braces that expand too far). */
export class GlobError extends Error {}

/** Expansions of one pattern, at most: `{a,b}{c,d}...` grows exponentially. */
export const MAX_GLOB_EXPANSIONS = 256;
/**
 * Characters of all the expansions together, at most: what a match costs per character of
 * a name in the worst case grows with it (the matcher is linear in name × pattern).
 */
export const MAX_GLOB_EXPANDED_LENGTH = 2048;

/**
 * The matcher of `pattern` read with `syntax`; a GlobError when it cannot be used. `shown`
 * is how messages and the matcher name the pattern (the caller may have trimmed it).
 */
export function compilePattern(pattern: string, syntax: GlobSyntax = {}, shown: string = pattern): GlobMatcher {
  const operators = OPERATORS[syntax.operators ?? 'all'];
  const expansions = operators.has('{') ? expandBraces(pattern) : [pattern];
  const size = expansions.reduce((sum, e) => sum + e.length, 0);
  if (size > MAX_GLOB_EXPANDED_LENGTH) throw new GlobError(`the pattern's braces expand to more than ${MAX_GLOB_EXPANDED_LENGTH} characters`);
  const rules: Rules = {
    operators,
    starCrossesSlash: syntax.starCrossesSlash === true,
    globstar: syntax.globstar ?? 'segment',
  };
  return compileTokens(
    shown,
    expansions.map((e) => tokenize(e, shown, rules)),
    { foldCase: syntax.foldCase === true },
  );
}

/** Whether `text` has an operator of `syntax`, i.e. is a glob rather than a plain name. */
export function hasOperator(text: string, syntax: GlobSyntax = {}): boolean {
  const operators = OPERATORS[syntax.operators ?? 'all'];
  for (const c of text) if (operators.has(c)) return true;
  return false;
}

const OPERATORS = {
  all: new Set(['*', '?', '[', '{', '\\']),
  wildcards: new Set(['*', '?']),
  star: new Set(['*']),
} as const;

interface Rules {
  operators: ReadonlySet<string>;
  starCrossesSlash: boolean;
  globstar: 'segment' | 'anywhere';
}

// ------------------------------------------------------------ braces

/** The patterns a pattern's braces stand for, escapes kept for tokenize(). */
function expandBraces(pattern: string): string[] {
  const open = findBrace(pattern);
  if (!open) return [pattern];
  const { start, end, commas } = open;
  const head = pattern.slice(0, start);
  const tails = expandBraces(pattern.slice(end + 1));
  const parts: string[] = [];
  let from = start + 1;
  for (const comma of [...commas, end]) {
    parts.push(pattern.slice(from, comma));
    from = comma + 1;
  }
  const out: string[] = [];
  for (const part of parts) {
    for (const inner of expandBraces(part)) {
      for (const tail of tails) {
        out.push(head + inner + tail);
        if (out.length > MAX_GLOB_EXPANSIONS) throw new GlobError(`the pattern's braces expand to more than ${MAX_GLOB_EXPANSIONS} patterns`);
      }
    }
  }
  return out;
}

/**
 * The first brace group that has a top-level comma: its `{` and `}` positions and the
 * commas between them. Braces inside a character class or after `\` do not count; a group
 * without a comma or without its `}` is literal text, and the search goes on after its `{`.
 */
function findBrace(p: string): { start: number; end: number; commas: number[] } | undefined {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      const close = classEnd(p, i);
      if (close !== -1) i = close;
    } else if (c === '{') {
      const group = braceGroup(p, i);
      if (group && group.commas.length > 0) return { start: i, ...group };
    }
  }
  return undefined;
}

function braceGroup(p: string, start: number): { end: number; commas: number[] } | undefined {
  const commas: number[] = [];
  let depth = 0;
  for (let i = start + 1; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') {
      i++;
    } else if (c === '[') {
      const close = classEnd(p, i);
      if (close !== -1) i = close;
    } else if (c === '{') {
      depth++;
    } else if (c === '}') {
      if (depth === 0) return { end: i, commas };
      depth--;
    } else if (c === ',' && depth === 0) {
      commas.push(i);
    }
  }
  return undefined;
}

/** The index of the `]` closing the class opened at `open`, or -1 (then `[` is literal). */
function classEnd(p: string, open: number): number {
  let i = open + 1;
  if (p[i] === '!' || p[i] === '^') i++;
  if (p[i] === ']') i++; // a `]` first in the class is a member, as in shells
  for (; i < p.length; i++) {
    if (p[i] === '\\') i++;
    else if (p[i] === ']') return i;
  }
  return -1;
}

// ------------------------------------------------------------ tokens

/** A brace-free pattern as tokens. */
function tokenize(p: string, pattern: string, rules: Rules): GlobToken[] {
  const chars = Array.from(p); // code points: `?` and classes are about characters
  const out: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '*') {
      i = star(chars, i, rules, out);
    } else if (c === '?' && rules.operators.has('?')) {
      out.push(ONE);
    } else if (c === '[' && rules.operators.has('[')) {
      const cls = classToken(chars, i, pattern);
      if (cls) {
        out.push(cls.token);
        i = cls.end;
      } else {
        out.push(char('['));
      }
    } else if (c === '\\' && rules.operators.has('\\')) {
      // A trailing `\` stands for itself.
      const next = chars[i + 1];
      out.push(char(next ?? '\\'));
      if (next !== undefined) i++;
    } else {
      out.push(char(c));
    }
  }
  return out;
}

/** The token(s) of the `*` at `i`, pushed to `out`; the index of the last character they took. */
function star(chars: readonly string[], i: number, rules: Rules, out: GlobToken[]): number {
  if (rules.starCrossesSlash) {
    out.push(EVERYTHING);
    return i;
  }
  if (rules.globstar === 'anywhere') {
    if (chars[i + 1] !== '*') {
      out.push(IN_SEGMENT);
      return i;
    }
    if (chars[i + 2] === '/') {
      out.push(DIRS); // `**/`: nothing, or a run ending with `/`
      return i + 2;
    }
    out.push(EVERYTHING);
    return i + 1;
  }
  const atSegmentStart = i === 0 || chars[i - 1] === '/';
  let j = i;
  while (chars[j] === '*') j++;
  const atSegmentEnd = j === chars.length || chars[j] === '/';
  if (j - i >= 2 && atSegmentStart && atSegmentEnd) {
    if (j === chars.length) {
      out.push(EVERYTHING); // `a/**` and `**`: everything below
    } else {
      out.push(SEGMENTS); // `**/`: zero or more whole segments
      j++; // the `/` is part of what was just matched
    }
  } else {
    out.push(IN_SEGMENT); // `*`, and `**` inside a segment
  }
  return j - 1;
}

const EVERYTHING: GlobToken = { kind: 'star', slash: true };
const SEGMENTS: GlobToken = { kind: 'segments' };
const DIRS: GlobToken = { kind: 'dirs' };
const IN_SEGMENT: GlobToken = { kind: 'star', slash: false };
const ONE: GlobToken = { kind: 'one', slash: false };
const char = (c: string): GlobToken => ({ kind: 'char', cp: c.codePointAt(0)! });

/**
 * The class opened at `open` and the index of its `]`, or undefined when it is not closed
 * (then `[` is literal). Members are read as a regular expression class reads them: `a-z`
 * is a range when `-` stands between two members (not first, not last); `\x` is x, never
 * a range's dash. A class never matches `/` (the matcher's rule).
 */
function classToken(chars: string[], open: number, pattern: string): { token: GlobToken; end: number } | undefined {
  let i = open + 1;
  let negated = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negated = true;
    i++;
  }
  const members: Array<{ cp: number; dash: boolean }> = [];
  let first = true;
  for (; i < chars.length; i++) {
    let c = chars[i]!;
    if (c === ']' && !first) return { token: { kind: 'class', ranges: classRanges(members, pattern), negated }, end: i };
    first = false;
    if (c === '\\' && i + 1 < chars.length) c = chars[++i]!;
    else if (c === '-' && members.length > 0 && chars[i + 1] !== ']') {
      members.push({ cp: 0x2d, dash: true }); // a range between the previous and the next member
      continue;
    }
    members.push({ cp: c.codePointAt(0)!, dash: false });
  }
  return undefined;
}

/** Inclusive ranges of the members: `x - y` is a range (x first, a dash between), anything else one character. */
function classRanges(members: Array<{ cp: number; dash: boolean }>, pattern: string): number[] {
  const ranges: number[] = [];
  for (let k = 0; k < members.length; ) {
    const lo = members[k]!.cp;
    if (k + 2 < members.length && members[k + 1]!.dash) {
      const hi = members[k + 2]!.cp;
      if (lo > hi) throw new GlobError(`invalid pattern "${pattern}": range out of order in character class`);
      ranges.push(lo, hi);
      k += 3;
    } else {
      ranges.push(lo, lo);
      k++;
    }
  }
  return ranges;
}
