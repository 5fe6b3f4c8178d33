// The glob dialects as they were compiled before daemon/glob/matcher.ts: to V8 regular
// expressions, which backtrack. Kept only as the oracle of glob-redos.test.ts ("the same
// answers as before on ordinary patterns"); never run on a pathological pattern.
// Copied unchanged from daemon/mcp/glob.ts, daemon/repos/glob.ts and
// daemon/repos/hosts/git.ts (segmentRegExp) at 4fc939b.

const MAX_GLOB_EXPANSIONS = 256;
const MAX_GLOB_LENGTH = 1024;

export class OldGlobError extends Error {}

export function oldMcpGlob(pattern: string): RegExp {
  if (pattern.length > MAX_GLOB_LENGTH) throw new OldGlobError(`the pattern is longer than ${MAX_GLOB_LENGTH} characters`);
  const relative = pattern.replace(/^\.?\/+/, '');
  if (relative.length === 0) throw new OldGlobError('the pattern is empty');
  const alternatives = expandBraces(relative).map(compile);
  try {
    return new RegExp(`^(?:${alternatives.join('|')})$`, 'u');
  } catch (err) {
    // Only a character class can be invalid here (a reversed range such as `[z-a]`).
    throw new OldGlobError(`invalid pattern "${pattern}": ${(err as Error).message}`);
  }
}

/** The patterns a pattern's braces stand for, escapes kept for compile(). */
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
        if (out.length > MAX_GLOB_EXPANSIONS) throw new OldGlobError(`the pattern's braces expand to more than ${MAX_GLOB_EXPANSIONS} patterns`);
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

const SEGMENT_CHAR = '[^/]';

/** A brace-free pattern as a regular expression source. */
function compile(p: string): string {
  const chars = Array.from(p); // code points: `?` and classes are about characters
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    const atSegmentStart = i === 0 || chars[i - 1] === '/';
    if (c === '*' && chars[i + 1] === '*') {
      let j = i;
      while (chars[j] === '*') j++;
      const atSegmentEnd = j === chars.length || chars[j] === '/';
      if (atSegmentStart && atSegmentEnd) {
        if (j === chars.length) {
          out += '[\\s\\S]*'; // `a/**` and `**`: everything below
        } else {
          out += `(?:${SEGMENT_CHAR}+/)*`; // `**/`: zero or more whole segments
          j++; // the `/` is part of what was just matched
        }
        i = j - 1;
        continue;
      }
      out += `${SEGMENT_CHAR}*`;
      i = j - 1;
    } else if (c === '*') {
      out += `${SEGMENT_CHAR}*`;
    } else if (c === '?') {
      out += SEGMENT_CHAR;
    } else if (c === '[') {
      const cls = compileClass(chars, i);
      if (cls) {
        out += cls.source;
        i = cls.end;
      } else {
        out += escapeChar('[');
      }
    } else if (c === '\\') {
      // A trailing `\` stands for itself.
      const next = chars[i + 1];
      out += escapeChar(next ?? '\\');
      if (next !== undefined) i++;
    } else {
      out += escapeChar(c);
    }
  }
  return out;
}

function compileClass(chars: string[], open: number): { source: string; end: number } | undefined {
  let i = open + 1;
  let negated = false;
  if (chars[i] === '!' || chars[i] === '^') {
    negated = true;
    i++;
  }
  let body = '';
  let first = true;
  for (; i < chars.length; i++) {
    let c = chars[i]!;
    if (c === ']' && !first) {
      if (body === '') return undefined;
      // A class never matches `/`: a path separator is not a character of a name.
      return { source: negated ? `[^/${body}]` : `(?!/)[${body}]`, end: i };
    }
    first = false;
    if (c === '\\' && i + 1 < chars.length) c = chars[++i]!;
    else if (c === '-' && body !== '' && chars[i + 1] !== ']') {
      body += '-'; // a range between the previous and the next character
      continue;
    }
    body += /[\\\][^-]/.test(c) ? `\\${c}` : c;
  }
  return undefined;
}

function escapeChar(c: string): string {
  return /[.*+?^${}()|[\]\\/]/.test(c) ? `\\${c}` : c;
}

/** Ref globs (`branch:`, configured revisions). */
export function oldRefGlob(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((s) => s.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`);
}

/** Repository-name globs (excludes), case-insensitive. */
export function oldPathGlob(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i]!;
    if (ch === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?'; // "**/": zero or more whole segments
      } else re += '.*';
    } else if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`, 'i');
}

/** One directory name of a local repository path. */
export function oldNameGlob(seg: string): RegExp {
  let re = '';
  for (const ch of seg) {
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else re += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}
