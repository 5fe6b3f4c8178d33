// Glob patterns for the `glob` tool: a pattern is matched against a file's whole path in
// the repository (no leading `/`). Syntax:
//   *       any run of characters except `/` (so `*.ts` is only the top level)
//   **      as a whole segment (`**/x`, `a/**/b`, `a/**`): any number of segments, zero
//           included; inside a segment (`a**b`) it is the same as `*`
//   ?       one character except `/`
//   [abc]   one of the characters (ranges `a-z`; `[!...]` or `[^...]` negates); never `/`
//   {a,b}   alternatives, nested allowed; braces without a top-level comma are literal
//   \x      the character x literally
// A leading `/` or `./` is ignored: paths are relative to the repository's root.
// Dot files are not special: `*` matches `.eslintrc`. Matching is case-sensitive, as git
// paths are. Braces are expanded first (as a shell does) and each expansion becomes one
// alternative of the matcher, so `**` keeps its segment meaning inside braces.
// Matching is linear in the path's length (daemon/glob/matcher.ts): no pattern can make it
// backtrack.

import { compileTokens, type GlobMatcher, type GlobToken } from '../glob/matcher.ts';

/** Expansions of one pattern, at most: `{a,b}{c,d}...` grows exponentially. */
export const MAX_GLOB_EXPANSIONS = 256;
/** Characters of a pattern, at most. */
export const MAX_GLOB_LENGTH = 1024;
/**
 * Characters of all the expansions together, at most: what a match costs per character of
 * a path in the worst case grows with it (the matcher is linear in path × pattern).
 */
export const MAX_GLOB_EXPANDED_LENGTH = 2 * MAX_GLOB_LENGTH;

export class GlobError extends Error {}

/** The matcher of a glob (whole paths, case-sensitive); a GlobError when the pattern cannot be used. */
export function compileGlob(pattern: string): GlobMatcher {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobError(`the pattern is longer than ${MAX_GLOB_LENGTH} characters`);
  const relative = pattern.replace(/^\.?\/+/, '');
  if (relative.length === 0) throw new GlobError('the pattern is empty');
  const expansions = expandBraces(relative);
  const size = expansions.reduce((sum, e) => sum + e.length, 0);
  if (size > MAX_GLOB_EXPANDED_LENGTH) throw new GlobError(`the pattern's braces expand to more than ${MAX_GLOB_EXPANDED_LENGTH} characters`);
  return compileTokens(pattern, expansions.map((e) => tokenize(e, pattern)));
}

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

/** A brace-free pattern as tokens. */
function tokenize(p: string, pattern: string): GlobToken[] {
  const chars = Array.from(p); // code points: `?` and classes are about characters
  const out: GlobToken[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const atSegmentStart = i === 0 || chars[i - 1] === '/';
    if (c === '*') {
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
      i = j - 1;
    } else if (c === '?') {
      out.push(ONE);
    } else if (c === '[') {
      const cls = classToken(chars, i, pattern);
      if (cls) {
        out.push(cls.token);
        i = cls.end;
      } else {
        out.push(char('['));
      }
    } else if (c === '\\') {
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

const EVERYTHING: GlobToken = { kind: 'star', slash: true };
const SEGMENTS: GlobToken = { kind: 'segments' };
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
