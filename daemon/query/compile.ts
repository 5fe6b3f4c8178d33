// Turns a search request into the query the shards evaluate. In this version a query is
// one term: a literal substring, or an RE2 regular expression when isRegexEnabled; the
// full query language (daemon/query/parser) replaces this front end, not the back end.

import RE2 from 're2';
import { ServiceError } from '../errors.ts';
import { literalNgramQuery, regexNgramQuery, type NgramQuery } from './regex-ngrams.ts';

export interface CompiledQuery {
  kind: 'literal' | 'regex';
  /** The literal text, or the regular expression's source. */
  pattern: string;
  caseSensitive: boolean;
  /** Sound n-gram prefilter: matches every document the query matches. */
  ngrams: NgramQuery;
}

export function compileQuery(req: { query: string; isRegexEnabled?: boolean; isCaseSensitivityEnabled?: boolean }): CompiledQuery {
  // The term is taken verbatim: "const " (with its space) is a different search from "const".
  const pattern = req.query;
  if (pattern.length === 0) {
    throw new ServiceError('FAILED_TO_PARSE_QUERY', 'the query is empty: type a literal, or a regular expression with isRegexEnabled');
  }
  const caseSensitive = req.isCaseSensitivityEnabled === true;
  if (req.isRegexEnabled) {
    try {
      // Compiled here only to report syntax errors before any shard is searched.
      new RE2(pattern, regexFlags(caseSensitive));
    } catch (err) {
      throw new ServiceError('FAILED_TO_PARSE_QUERY', `invalid regular expression ${JSON.stringify(pattern)}: ${re2Reason(err as Error)}`);
    }
    const ngrams = regexNgramQuery(pattern, { caseInsensitive: !caseSensitive });
    if (ngrams.op === 'none') {
      throw new ServiceError('FAILED_TO_PARSE_QUERY', `the regular expression ${JSON.stringify(pattern)} can never match anything`);
    }
    return { kind: 'regex', pattern, caseSensitive, ngrams };
  }
  return { kind: 'literal', pattern, caseSensitive, ngrams: literalNgramQuery(pattern, { caseInsensitive: !caseSensitive }) };
}

/**
 * RE2's reason without the pattern it appends (node-re2 shows the pattern as it compiled
 * it, with its own (?m) prefix: "missing ): (?m)foo(").
 */
export function re2Reason(err: Error): string {
  const i = err.message.lastIndexOf(': ');
  return i > 0 ? err.message.slice(0, i) : err.message;
}

/**
 * RE2 flags for content matching: global, multi-line (^ and $ at line boundaries), and
 * case-insensitive unless asked otherwise. `.` never matches "\n" (no `s` flag).
 */
export function regexFlags(caseSensitive: boolean): string {
  return caseSensitive ? 'gm' : 'gmi';
}

/** An RE2 pattern matching `literal` exactly. */
export function escapeRegex(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}
