// Tokenizer of the query language. The grammar and every corner case are documented at
// the top of parser.ts; this file implements the lexical half of it.
//
// Positions are 0-based indices into the query's code points; `col` is that index + 1,
// the column the error messages name.
//
// Parentheses are decided in two passes. The first pass treats every `(` at a token
// start as a group opener (except `()`, which is a word). Openers still unclosed at the
// end of the input are not groups: they are marked literal and the input is scanned
// again, so `(foo` becomes the word "(foo". Marking an opener literal changes only the
// word starting at it, so one more pass settles it; the loop is bounded regardless.

import { ServiceError } from '../errors.ts';

export type FilterName =
  | 'repo'
  | 'file'
  | 'lang'
  | 'sym'
  | 'branch'
  | 'at'
  | 'history'
  | 'case'
  | 'content'
  | 'archived'
  | 'fork'
  | 'visibility'
  | 'regex'
  | 'context'
  | 'type'
  | 'select'
  | 'author'
  | 'committer'
  | 'after'
  | 'before';

/** What a user may type before the colon, and the filter it means. */
export const FILTER_PREFIXES: ReadonlyMap<string, FilterName> = new Map<string, FilterName>([
  ['repo', 'repo'],
  ['r', 'repo'],
  ['file', 'file'],
  ['f', 'file'],
  ['lang', 'lang'],
  ['sym', 'sym'],
  ['branch', 'branch'],
  ['rev', 'branch'],
  ['b', 'branch'],
  ['at', 'at'],
  ['history', 'history'],
  ['case', 'case'],
  ['content', 'content'],
  ['c', 'content'],
  ['archived', 'archived'],
  ['fork', 'fork'],
  ['visibility', 'visibility'],
  ['regex', 'regex'],
  ['context', 'context'],
  ['type', 'type'],
  ['select', 'select'],
  ['author', 'author'],
  ['committer', 'committer'],
  ['after', 'after'],
  ['before', 'before'],
]);

export type Token =
  | { kind: 'lparen' | 'rparen' | 'or' | 'not' | 'eof'; col: number }
  /** A content term: a bare word or a quoted string (quotes and escapes removed). */
  | { kind: 'term'; col: number; text: string; quoted: boolean }
  /** `name:value`; `typed` is the prefix as written (`f`), for messages. */
  | { kind: 'filter'; col: number; name: FilterName; typed: string; value: string };

export function fail(message: string): never {
  throw new ServiceError('FAILED_TO_PARSE_QUERY', message);
}

const SPACE = /^\s$/u;
/** JavaScript's whitespace (`\s`); an ASCII character decided by its code, without the regular expression. */
function isSpace(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return SPACE.test(c);
}

export function tokenize(input: string): Token[] {
  const chars = Array.from(input);
  const literal = new Set<number>();
  for (;;) {
    const { tokens, unclosed } = scan(chars, literal);
    if (unclosed.length === 0) return tokens;
    for (const p of unclosed) literal.add(p);
  }
}

function scan(chars: string[], literal: ReadonlySet<number>): { tokens: Token[]; unclosed: number[] } {
  const n = chars.length;
  const tokens: Token[] = [];
  const open: number[] = []; // positions of the group openers not yet closed
  let i = 0;

  const isOpener = (p: number): boolean => chars[p] === '(' && !literal.has(p) && chars[p + 1] !== ')';
  // A `)` closes a group only when a group is open and the run of `)` it starts ends at
  // whitespace or the end of the input: in `(a|b)c` the `)` is part of the word.
  const isCloser = (p: number): boolean => {
    if (chars[p] !== ')' || open.length === 0) return false;
    let j = p;
    while (chars[j] === ')') j++;
    return j >= n || isSpace(chars[j]);
  };
  // A word: up to whitespace or a group closer. Parentheses balanced inside it are part of it.
  const readWord = (start: number): number => {
    let depth = 0;
    let j = start;
    for (; j < n && !isSpace(chars[j]); j++) {
      const c = chars[j];
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth > 0) depth--;
        else if (isCloser(j)) break;
      }
    }
    return j;
  };
  // A quoted string starting at `start` (a `"`): its text and the index after the closing quote.
  const readQuoted = (start: number): { text: string; end: number } => {
    let text = '';
    for (let j = start + 1; j < n; j++) {
      const c = chars[j];
      if (c === '"') return { text, end: j + 1 };
      if (c === '\\' && (chars[j + 1] === '"' || chars[j + 1] === '\\')) {
        text += chars[j + 1];
        j++;
      } else {
        text += c;
      }
    }
    return fail(`unbalanced quote at column ${start + 1}: close it with ", or write \\" for a literal quote inside quotes`);
  };

  while (i < n) {
    if (isSpace(chars[i])) {
      i++;
      continue;
    }
    if (isOpener(i)) {
      tokens.push({ kind: 'lparen', col: i + 1 });
      open.push(i++);
      continue;
    }
    if (isCloser(i)) {
      tokens.push({ kind: 'rparen', col: i + 1 });
      open.pop();
      i++;
      continue;
    }
    let negated = false;
    const next = chars[i + 1];
    if (chars[i] === '-' && next !== undefined && !isSpace(next) && next !== '-' && next !== ')') {
      tokens.push({ kind: 'not', col: i + 1 });
      negated = true;
      i++;
      if (isOpener(i)) continue; // the opener is emitted by the next iteration
    }
    const start = i;
    if (chars[i] === '"') {
      const { text, end } = readQuoted(i);
      if (text === '') fail(`empty quoted string at column ${start + 1}`);
      tokens.push({ kind: 'term', col: start + 1, text, quoted: true });
      i = end;
      continue;
    }
    // name: prefix, lowercase ASCII letters only.
    let j = i;
    while (j < n && chars[j]! >= 'a' && chars[j]! <= 'z') j++;
    const typed = chars.slice(i, j).join('');
    const name = chars[j] === ':' ? FILTER_PREFIXES.get(typed) : undefined;
    if (name !== undefined) {
      const valueStart = j + 1;
      let value: string;
      if (chars[valueStart] === '"') {
        const quoted = readQuoted(valueStart);
        value = quoted.text;
        i = quoted.end;
      } else {
        i = readWord(valueStart);
        value = chars.slice(valueStart, i).join('');
      }
      if (value === '') fail(`empty value for ${typed}: at column ${start + 1}`);
      tokens.push({ kind: 'filter', col: start + 1, name, typed, value });
      continue;
    }
    i = readWord(i);
    const text = chars.slice(start, i).join('');
    if (text === 'or' && !negated) tokens.push({ kind: 'or', col: start + 1 });
    else tokens.push({ kind: 'term', col: start + 1, text, quoted: false });
  }
  tokens.push({ kind: 'eof', col: n + 1 });
  return { tokens, unclosed: open };
}
