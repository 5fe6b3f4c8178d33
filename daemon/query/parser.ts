// Parser of the query language (spec: docs/http-api.md section 11; behaviour modelled on
// zoekt's query/parse.go and Sourcebot's grammar). Tokenizer: tokens.ts.
//
// Grammar as implemented (columns are 1-based, counted in code points):
//
//   query    = or EOF                          -- nothing but whitespace: "the query is empty"
//   or       = and { "or" and }                -- "or" binds looser than juxtaposition
//   and      = unary { unary }
//   unary    = [ "-" ] primary
//   primary  = "(" or ")" | filter | term
//   filter   = name ":" ( quoted | word )      -- name: one of FILTER_PREFIXES, lowercase
//   term     = quoted | word
//   quoted   = '"' { char | '\"' | '\\' } '"'  -- any other backslash is kept verbatim
//   word     = run of non-whitespace up to a group-closing ")"; "(" and ")" balanced inside
//              the word belong to it
//
// Lexical rules and corners:
// - Whitespace is any Unicode white space (space, tab, newline, ...), outside quotes.
// - "(" at the start of a token opens a group when a matching ")" exists; a ")" closes a
//   group only when a group is open and the ")" (or run of ")") is followed by whitespace
//   or the end. Otherwise parentheses are characters of the word: `foo(bar`, `foo()`,
//   `(foo`, `a)`, `(a|b)c` are single terms. `()` is the term "()"; `( )` is an error
//   (empty parentheses). Groups nest: `(a (b or c))`.
// - Quotes start a string only at the start of a token or of a filter value; a `"` inside
//   a word is a character (`say"hi"`). A quoted string ends its token: `"a"b` is two terms.
//   An unclosed quote is an error, so is an empty quoted term or value (`""`, `file:""`).
// - A quoted string is never a keyword or a filter: `"or"` and `"file:x"` are content terms.
// - `\` outside quotes is an ordinary character (`foo\bar`; in regex mode it escapes as RE2 does).
// - "-" directly followed by a word, a quoted string, a filter or a group negates it.
//   A "-" followed by whitespace, the end, ")" or another "-" is an ordinary character:
//   `-` alone is the term "-", `--foo` is the term "--foo". `-or` is the negated term "or".
// - `or` is the keyword only as a whole, unquoted, lowercase word; `OR`, `"or"`, `-or`,
//   `or:` are terms. Each side of `or` must be non-empty: `or a`, `a or`, `a or or b`,
//   `(or a)` are errors naming the column of the offending `or`.
// - `name:` where name is not a filter prefix (`http://x`, `std::vector`, `a:b`, `File:x`)
//   is an ordinary term. A filter value is a quoted string (`file:"my dir/x"`) or a word,
//   so `file:(a|b)` has the value "(a|b)"; `file:` with nothing after it is an error.
//
// Meaning:
// - A term is a content match: a literal substring, or an RE2 regex in regex mode;
//   `content:`/`c:` is the same explicitly; `regex:` is a content regex in either mode.
// - repo:/r:, file:/f:, sym: values are RE2 regexes in either mode; every regex in the query
//   is compiled once here and a syntax error is reported with the term and its column.
// - lang: a linguist name or alias, case-insensitive, resolved to the canonical name.
// - branch:/rev:/b: a glob (`*`), not validated further; a revision of an indexed history
//   (a commit id, `main~3`) is resolved by the caller. at: a time (an ISO 8601 date or
//   date-time, or a relative form: repos/history-dates.ts), checked here, kept as a branch
//   glob AT_PREFIX + the text (ast.ts) for the caller to resolve. Enumerated values (case:,
//   archived:, fork:, visibility:) are matched case-insensitively.
// - case: applies to the whole query wherever it appears (also inside a group or a
//   negated group); it is removed from the tree. Two different values are an error; so is
//   `-case:`. A query left empty by the removal is "empty". Without case: the request's
//   isCaseSensitivityEnabled decides. case:auto makes a pattern sensitive iff it has an
//   upper-case letter (Unicode Lu/Lt); in a regex, letters that belong to escapes and
//   syntax do not count: `\W \S \D \B \A \pL \p{Greek} \x4A \x{4A}`, group names
//   `(?P<Name>`, flags `(?U)`; text inside `\Q...\E` counts.
// - context: names the search context (the repositories a search is limited to; resolved
//   by the caller, not here), case-insensitive, a context name or `global` (no limit). Like
//   case: it applies to the whole query (`a or b context:x` searches both in x), so it is
//   removed from the tree; it must stand outside parentheses and is not negated, so that it
//   never reads as part of one alternative; at most one per query. A query left empty by
//   the removal is "empty".
// - history:yes asks, for a repository whose history is indexed, where in its default
//   branch's history the query's matches lived (the caller answers it: history/); like
//   context: it applies to the whole query, stands outside parentheses, is not negated,
//   and appears once. history:no is the default.
// - type: what the query searches: `file` (the default), `commit` (the commit messages of
//   the indexed histories) or `diff` (the lines commits added or removed; select: added or
//   removed narrows it), searched by the caller. Like context: it applies to the whole
//   query: outside parentheses, not negated, at most once, removed from the tree. author:,
//   committer: (RE2 regexes over "Name <email>", case-insensitive) and after:, before: (a
//   time, as at: takes it, kept as written) are valid only with type:commit; file:, lang:,
//   sym:, branch: and at: are not (a commit has no files and is no revision to search at).
// - `-archived:`, `-fork:`, `-visibility:` are errors (use the other values instead);
//   they may appear inside a negated group, where they are ordinary predicates.
// - Groups nest at most MAX_NESTING (100) deep; deeper is an error, not a stack overflow.
// - Result shape: and/or flattened, repeated children dropped, single-child and/or
//   unwrapped, `-(-x)` is x.
// - Bounds checked before anything runs: each regex's and all regexes' estimated compile
//   cost (regex-cost.ts), MAX_QUERY_TERMS search terms, MAX_QUERY_LEAVES terms and filters.

import RE2 from 're2';
import { CONTEXT_NAME, CONTEXT_NAME_RULE, GLOBAL_CONTEXT } from '../config/contexts.ts';
import { isKnownLanguage } from '../index/language-names.ts';
import { AT_PREFIX, type QueryNode, type SearchType } from './ast.ts';
import { parseHistoryDate } from '../repos/history-dates.ts';
import { MAX_QUERY_REGEX_COST, MAX_REGEX_COST, patternCost } from './regex-cost.ts';
import { fail, tokenize, type Token } from './tokens.ts';

export interface ParseOptions {
  /** Bare and content: terms are RE2 regexes (request isRegexEnabled). */
  regex: boolean;
  /** Default case sensitivity when the query has no case: (request isCaseSensitivityEnabled). */
  caseSensitive: boolean;
}

type CaseMode = 'yes' | 'no' | 'auto';
type FilterToken = Extract<Token, { kind: 'filter' }>;

/** A parsed query: its tree, and the search context it names (`context:`), if any. */
export interface ParsedQuery {
  root: QueryNode;
  /** The context's name, lower case; GLOBAL_CONTEXT for `context:global`; undefined when the query names none. */
  context?: string;
  /** `type:diff` (diff lines) or `type:commit` (commit messages); absent for files (`type:file` or no type:). */
  type?: 'diff' | 'commit';
  /** `select:` of a diff query: only added or only removed lines. */
  select?: 'added' | 'removed';
  /** `history:yes`: where in the default branch's history the matches lived (history/history-spans.ts). */
  history?: true;
}

export function parseQuery(input: string, options: ParseOptions): QueryNode {
  return parseSearchQuery(input, options).root;
}

export function parseSearchQuery(input: string, options: ParseOptions): ParsedQuery {
  const tokens = tokenize(input);
  if (tokens.length === 1) fail('the query is empty: type something to search for');
  const mode = caseMode(tokens, options.caseSensitive);
  const context = contextOf(tokens);
  const kind = resultKind(tokens);
  const type: SearchType = kind.type === 'commit' ? 'commit' : 'file';
  const parser = new Parser(tokens, options.regex, mode, type);
  const node = parser.parseOr();
  const end = parser.peek();
  if (end.kind !== 'eof') fail(`unexpected ")" at column ${end.col}`); // not produced by the tokenizer
  if (node === null) {
    const only =
      context !== undefined
        ? 'context: only chooses the repositories to search'
        : kind.type !== undefined
          ? 'type: only chooses what to search'
          : 'case: only sets case sensitivity';
    fail(`the query is empty: ${only}, add something to search for`);
  }
  checkSize(node);
  return { root: node, ...(context === undefined ? {} : { context }), ...kind };
}

/** A whole-query filter's one token (type:, select:, history:): outside parentheses, not negated, at most once. */
function wholeQueryFilter(tokens: Token[], name: 'type' | 'select' | 'history'): FilterToken | undefined {
  let found: FilterToken | undefined;
  let depth = 0;
  tokens.forEach((t, k) => {
    if (t.kind === 'lparen') depth++;
    else if (t.kind === 'rparen') depth--;
    if (t.kind !== 'filter' || t.name !== name) return;
    if (tokens[k - 1]?.kind === 'not') fail(`-${name}: cannot be negated (column ${t.col - 1})`);
    if (depth > 0) fail(`${name}: at column ${t.col} is inside parentheses; it applies to the whole query: put it outside them`);
    if (found !== undefined) fail(`a query has at most one ${name}:, at column ${found.col} and again at column ${t.col}`);
    found = t;
  });
  return found;
}

/** What the query's results are (type:, select:, history:), checked. */
function resultKind(tokens: Token[]): Pick<ParsedQuery, 'type' | 'select' | 'history'> {
  const type = wholeQueryFilter(tokens, 'type');
  const select = wholeQueryFilter(tokens, 'select');
  const history = wholeQueryFilter(tokens, 'history');
  const kind = type === undefined ? 'file' : typeValue(type);
  if (history !== undefined && enumValue(history, ['yes', 'no'] as const) === 'yes') {
    if (kind !== 'file') fail(`history:yes at column ${history.col} dates the matches of files: type:${kind} results are commits already`);
    return { history: true };
  }
  if (select === undefined) return kind === 'file' ? {} : { type: kind };
  if (kind !== 'diff') fail(`select: at column ${select.col} chooses lines of a diff: it needs type:diff`);
  return { type: 'diff', select: enumValue(select, ['added', 'removed'] as const) };
}

/** type:'s value; an unknown one may well be text (`type:string` in TypeScript): the error says how to search for it. */
function typeValue(t: FilterToken): 'file' | 'diff' | 'commit' {
  const value = t.value.toLowerCase();
  if (value === 'file' || value === 'diff' || value === 'commit') return value;
  return fail(
    `unknown value ${JSON.stringify(t.value)} for type: at column ${t.col}, expected file, diff or commit (quote it, "type:${t.value}", to search for the text)`,
  );
}

/**
 * At most this many distinct search terms (content, file: and sym:), each of which every
 * candidate document is matched against, and at most MAX_QUERY_LEAVES terms and filters
 * in all: the bound on a query's work per document and per shard, checked before it runs.
 */
export const MAX_QUERY_TERMS = 64;
export const MAX_QUERY_LEAVES = 256;

function checkSize(node: QueryNode): void {
  let terms = 0;
  let leaves = 0;
  const walk = (n: QueryNode): void => {
    if (n.type === 'and' || n.type === 'or') n.children.forEach(walk);
    else if (n.type === 'not') walk(n.child);
    else {
      leaves++;
      if (n.type === 'content' || n.type === 'file' || n.type === 'sym') terms++;
    }
  };
  walk(node);
  if (terms > MAX_QUERY_TERMS) fail(`the query has ${terms} different search terms; at most ${MAX_QUERY_TERMS} are allowed`);
  if (leaves > MAX_QUERY_LEAVES) fail(`the query has ${leaves} different terms and filters; at most ${MAX_QUERY_LEAVES} are allowed`);
}

/** The one case: value of the query (checked, negation refused), or the request's default. */
function caseMode(tokens: Token[], defaultSensitive: boolean): CaseMode {
  let found: { value: CaseMode; col: number } | undefined;
  tokens.forEach((t, k) => {
    if (t.kind !== 'filter' || t.name !== 'case') return;
    if (tokens[k - 1]?.kind === 'not') {
      fail(`-case: cannot be negated (column ${t.col - 1}); use case:yes, case:no or case:auto`);
    }
    const value = enumValue(t, ['yes', 'no', 'auto'] as const);
    if (found !== undefined && found.value !== value) {
      fail(`conflicting case:${found.value} at column ${found.col} and case:${value} at column ${t.col}: use one`);
    }
    found ??= { value, col: t.col };
  });
  return found?.value ?? (defaultSensitive ? 'yes' : 'no');
}

/**
 * The query's one context: filter, checked: outside parentheses and not negated (it limits
 * the whole search, not one part of it), at most once, a valid name.
 */
function contextOf(tokens: Token[]): string | undefined {
  let found: FilterToken | undefined;
  let depth = 0;
  tokens.forEach((t, k) => {
    if (t.kind === 'lparen') depth++;
    else if (t.kind === 'rparen') depth--;
    if (t.kind !== 'filter' || t.name !== 'context') return;
    if (tokens[k - 1]?.kind === 'not')
      fail(`-context: cannot be negated (column ${t.col - 1}); name the context to search, or context:${GLOBAL_CONTEXT} for every repository`);
    if (depth > 0) fail(`context: at column ${t.col} is inside parentheses; it chooses the repositories of the whole query: put it outside them`);
    if (found !== undefined) fail(`a query names one context; context: at column ${found.col} and again at column ${t.col}`);
    found = t;
  });
  if (found === undefined) return undefined;
  const name = found.value.toLowerCase();
  if (name !== GLOBAL_CONTEXT && !CONTEXT_NAME.test(name))
    fail(`invalid context name ${JSON.stringify(found.value)} for context: at column ${found.col}: a context's name is ${CONTEXT_NAME_RULE}`);
  return name;
}

/** Filters that make no sense for commits: a commit has no files, and is not a revision to search at. */
const NOT_FOR_COMMITS: ReadonlySet<string> = new Set(['file', 'lang', 'sym', 'branch', 'at']);

function enumValue<V extends string>(t: FilterToken, allowed: readonly V[]): V {
  const v = t.value.toLowerCase();
  const hit = allowed.find((a) => a === v);
  if (hit !== undefined) return hit;
  const list = `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}`;
  return fail(`unknown value ${JSON.stringify(t.value)} for ${t.typed}: at column ${t.col}, expected ${list}`);
}

/** Deeper nesting is refused before it can exhaust the stack. */
export const MAX_NESTING = 100;

class Parser {
  private pos = 0;
  private depth = 0;
  /** The estimated compile cost of the query's regular expressions so far (regex-cost.ts). */
  private regexCost = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly regexMode: boolean,
    private readonly mode: CaseMode,
    private readonly type: SearchType,
  ) {}

  peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    return this.tokens[this.pos++]!;
  }

  /** null: the expression consisted only of case: filters. */
  parseOr(): QueryNode | null {
    const first = this.peek();
    if (first.kind === 'or') orError(first);
    const children = [this.parseAnd()];
    while (this.peek().kind === 'or') {
      const or = this.next();
      const after = this.peek().kind;
      if (after === 'or' || after === 'rparen' || after === 'eof') orError(or);
      children.push(this.parseAnd());
    }
    return combine('or', children);
  }

  private parseAnd(): QueryNode | null {
    const children: Array<QueryNode | null> = [];
    for (let k = this.peek().kind; k !== 'or' && k !== 'rparen' && k !== 'eof'; k = this.peek().kind) {
      children.push(this.parseUnary());
    }
    return combine('and', children);
  }

  private parseUnary(): QueryNode | null {
    const t = this.peek();
    if (t.kind !== 'not') return this.parsePrimary();
    this.next();
    const operand = this.peek();
    if (operand.kind === 'filter' && (operand.name === 'archived' || operand.name === 'fork' || operand.name === 'visibility')) {
      const others = operand.name === 'visibility' ? 'public, private or any' : 'yes, no or only';
      fail(`-${operand.typed}: cannot be negated (column ${t.col}); use ${operand.typed}: with ${others}`);
    }
    const child = this.parsePrimary();
    if (child === null) return null;
    return child.type === 'not' ? child.child : { type: 'not', child };
  }

  private parsePrimary(): QueryNode | null {
    const t = this.next();
    switch (t.kind) {
      case 'lparen': {
        if (this.peek().kind === 'rparen') fail(`empty parentheses at column ${t.col}`);
        if (++this.depth > MAX_NESTING) fail(`parentheses nested more than ${MAX_NESTING} deep at column ${t.col}`);
        const inner = this.parseOr();
        this.depth--;
        const close = this.next();
        if (close.kind !== 'rparen') fail(`missing ")" for the "(" at column ${t.col}`); // not produced by the tokenizer
        return inner;
      }
      case 'term':
        return this.content(t.text, this.regexMode, '', t.col);
      case 'filter':
        return this.filter(t);
      default:
        // Unreachable: parseAnd stops at or/rparen/eof and the tokenizer emits no "-" before them.
        return fail(`unexpected token at column ${t.col}`);
    }
  }

  private filter(t: FilterToken): QueryNode | null {
    const v = t.value;
    if (this.type === 'commit' && NOT_FOR_COMMITS.has(t.name))
      fail(`${t.typed}: at column ${t.col} does not apply to type:commit: a commit's message, author, committer and time are what it searches`);
    switch (t.name) {
      case 'content':
        return this.content(v, this.regexMode, `${t.typed}:`, t.col);
      case 'regex':
        return this.content(v, true, `${t.typed}:`, t.col);
      case 'file':
      case 'sym':
        this.checkRegex(v, `${t.typed}:`, t.col);
        return { type: t.name, pattern: v, caseSensitive: this.sensitive(v, true) };
      case 'repo':
        this.checkRegex(v, `${t.typed}:`, t.col);
        return { type: 'repo', pattern: v };
      case 'lang': {
        const language = isKnownLanguage(v);
        if (language === undefined)
          fail(`unknown language ${JSON.stringify(v)} for lang: at column ${t.col}; use a GitHub linguist name such as Go, C++ or Python`);
        return { type: 'lang', language };
      }
      case 'branch':
        return { type: 'branch', glob: v };
      case 'at':
        try {
          parseHistoryDate(v, 'at:', Date.now());
        } catch (err) {
          fail(`${(err as Error).message} (at column ${t.col})`);
        }
        return { type: 'branch', glob: `${AT_PREFIX}${v}` };
      case 'case':
        return null; // already applied (caseMode)
      case 'context':
        return null; // the caller's to resolve (contextOf)
      case 'type':
      case 'select':
      case 'history':
        return null; // already applied (resultKind)
      case 'author':
      case 'committer':
        this.commitsOnly(t);
        this.checkRegex(v, `${t.typed}:`, t.col);
        return { type: t.name, pattern: v };
      case 'after':
      case 'before':
        this.commitsOnly(t);
        try {
          parseHistoryDate(v, `${t.typed}:`, Date.now());
        } catch (err) {
          fail(`${(err as Error).message} (at column ${t.col})`);
        }
        return { type: t.name, time: v };
      case 'archived':
      case 'fork':
        return { type: t.name, value: enumValue(t, ['yes', 'no', 'only'] as const) };
      case 'visibility':
        return { type: 'visibility', value: enumValue(t, ['public', 'private', 'any'] as const) };
    }
  }

  private commitsOnly(t: FilterToken): void {
    if (this.type !== 'commit')
      fail(
        `${t.typed}: at column ${t.col} applies to commits only: add type:commit to search commit messages, or quote it ("${t.typed}:${t.value}") to search for the text`,
      );
  }

  private content(pattern: string, regex: boolean, what: string, col: number): QueryNode {
    if (regex) this.checkRegex(pattern, what, col);
    return { type: 'content', pattern, regex, caseSensitive: this.sensitive(pattern, regex) };
  }

  /**
   * A regular expression of the query: refused when compiling it, or all of the query's
   * together, would cost more than the bounds (regex-cost.ts), before RE2 compiles it;
   * then compiled once to check its syntax.
   */
  private checkRegex(pattern: string, what: string, col: number): void {
    const where = what === '' ? '' : `in ${what} `;
    const cost = patternCost(pattern);
    if (cost > MAX_REGEX_COST) {
      fail(
        `regular expression ${where}at column ${col} is too large to compile: its repetitions and classes expand to about ${cost.toLocaleString('en-US')} steps, at most ${MAX_REGEX_COST.toLocaleString('en-US')} are allowed`,
      );
    }
    this.regexCost += cost;
    if (this.regexCost > MAX_QUERY_REGEX_COST) {
      fail(
        `the query's regular expressions are too large to compile together (column ${col}): they expand to more than ${MAX_QUERY_REGEX_COST.toLocaleString('en-US')} steps`,
      );
    }
    compileToCheck(pattern, where, col);
  }

  private sensitive(pattern: string, regex: boolean): boolean {
    if (this.mode !== 'auto') return this.mode === 'yes';
    return regex ? regexHasUpper(pattern) : hasUpper(pattern);
  }
}

function orError(t: Token): never {
  return fail(`"or" needs an expression on both sides (column ${t.col})`);
}

/**
 * and/or of the non-null children: flattened, a child equal to an earlier one dropped
 * (`a or a` is `a`: it matches and highlights the same), unwrapped when single, null when none.
 */
function combine(type: 'and' | 'or', items: Array<QueryNode | null>): QueryNode | null {
  const children: QueryNode[] = [];
  const seen = new Set<string>();
  const add = (c: QueryNode): void => {
    const key = JSON.stringify(c);
    if (seen.has(key)) return;
    seen.add(key);
    children.push(c);
  };
  for (const c of items) {
    if (c === null) continue;
    if (c.type === type) c.children.forEach(add);
    else add(c);
  }
  if (children.length === 0) return null;
  return children.length === 1 ? children[0]! : { type, children };
}

function compileToCheck(pattern: string, where: string, col: number): void {
  try {
    new RE2(pattern, 'u');
  } catch (err) {
    let reason = err instanceof Error ? err.message : String(err);
    // re2 ends its message with the offending fragment; drop it when it is the whole pattern.
    if (reason.endsWith(`: ${pattern}`)) reason = reason.slice(0, -pattern.length - 2);
    fail(`invalid regular expression ${where}${JSON.stringify(pattern)} at column ${col}: ${reason}`);
  }
}

const UPPER = /[\p{Lu}\p{Lt}]/u;

export function hasUpper(s: string): boolean {
  return UPPER.test(s);
}

/** Whether an RE2 pattern has an upper-case letter that is text, not syntax (see header). */
export function regexHasUpper(pattern: string): boolean {
  const cs = Array.from(pattern);
  const skipBraces = (k: number): number => {
    // k: index of "{"; returns the index of the matching "}" (or the end).
    while (k < cs.length && cs[k] !== '}') k++;
    return k;
  };
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (c === '\\') {
      const e = cs[i + 1];
      if (e === 'Q') {
        let j = i + 2;
        for (; j < cs.length && !(cs[j] === '\\' && cs[j + 1] === 'E'); j++) if (UPPER.test(cs[j]!)) return true;
        i = j + 1;
      } else if ((e === 'p' || e === 'P' || e === 'x') && cs[i + 2] === '{') {
        i = skipBraces(i + 2);
      } else if (e === 'p' || e === 'P') {
        i += 2; // one-letter class name: \pL
      } else if (e === 'x') {
        i += 3; // two hex digits: \x4A
      } else {
        i += 1; // \W, \A, \., ...
      }
    } else if (c === '(' && cs[i + 1] === '?') {
      let j = i + 2;
      if (cs[j] === 'P' || cs[j] === '<') {
        while (j < cs.length && cs[j] !== '>') j++; // group name
      } else {
        while (j < cs.length && cs[j] !== ')' && cs[j] !== ':') j++; // flags
      }
      i = j;
    } else if (UPPER.test(c)) {
      return true;
    }
  }
  return false;
}
