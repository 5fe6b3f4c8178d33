// The plan: a parsed query with every pattern compiled once (RE2 syntax checked, n-gram
// prefilter derived), ready to be sent to the search workers and specialised per shard
// (daemon/search/match-tree.ts).
//
// Soundness rule of the n-gram plans (docs/design.md): the prefilter of every
// node matches every document the node matches. Content and file-name terms get theirs
// from regex-ngrams.ts; AND intersects, OR unites, and NOT can rule nothing out, so it is
// "all" (match-tree.ts).

import RE2 from 're2';
import { ServiceError } from '../errors.ts';
import { analysisBudget, withinBudget, type AnalysisBudget } from './analysis-budget.ts';
import { ALL } from './ngram-query.ts';
import type { QueryNode } from './ast.ts';
import { parseSearchQuery } from './parser.ts';
import { literalNgramQuery, regexNgramQueryOf } from './regex-ngrams.ts';
import { lineLocalOf } from './regex-line-local.ts';
import { requiredLiteralOf } from './regex-required.ts';
import { requiredSequenceOf } from './regex-sequence.ts';
import { parseForAnalysis } from './re2-syntax.ts';
import { re2Reason, regexFlags, type Plan, type PlanNode, type Term } from './terms.ts';

export type { Plan, PlanNode, Term } from './terms.ts';

export interface QueryRequest {
  query: string;
  isRegexEnabled?: boolean;
  isCaseSensitivityEnabled?: boolean;
}

/**
 * What the prefilter analyses of one query may spend together (analysis-budget.ts): past
 * it the remaining terms get the filters that claim nothing (sound, slower to search).
 * Ordinary queries take a few hundred steps, 64 case-insensitive identifiers about 5,000;
 * thousands of alternatives take a hundred thousand.
 */
export const ANALYSIS_STEPS = 16_000;
export const ANALYSIS_MS = 250;

export function planQuery(req: QueryRequest): Plan {
  const parsed = parseSearchQuery(req.query, { regex: req.isRegexEnabled === true, caseSensitive: req.isCaseSensitivityEnabled === true });
  const ast = parsed.root;
  const budget = analysisBudget(ANALYSIS_STEPS, ANALYSIS_MS);
  let terms = 0;
  const branches: string[] = [];
  const build = (n: QueryNode): PlanNode => {
    switch (n.type) {
      case 'and':
      case 'or':
        return { op: n.type, children: n.children.map(build) };
      case 'not':
        return { op: 'not', child: build(n.child) };
      case 'content':
        return { op: 'content', term: compileTerm(n.pattern, n.regex, n.caseSensitive, budget), id: terms++ };
      case 'file':
        return { op: 'file', term: compileTerm(n.pattern, true, n.caseSensitive, budget), id: terms++ };
      case 'sym':
        return { op: 'sym', term: compileTerm(n.pattern, true, n.caseSensitive, budget), id: terms++ };
      case 'repo':
        return { op: 'repo', pattern: n.pattern };
      case 'lang':
        return { op: 'lang', language: n.language };
      case 'branch':
        branches.push(n.glob);
        return { op: 'branch', glob: n.glob };
      case 'archived':
      case 'fork':
        return { op: n.type, value: n.value };
      case 'visibility':
        return { op: 'visibility', value: n.value };
      case 'author':
      case 'committer':
        return { op: n.type, pattern: n.pattern };
      case 'after':
      case 'before':
        return { op: n.type, time: n.time };
    }
  };
  const root = build(ast);
  if (!mayMatch(root)) throw new ServiceError('FAILED_TO_PARSE_QUERY', 'the query can never match anything');
  return {
    root,
    terms,
    branches,
    ...(parsed.context === undefined ? {} : { context: parsed.context }),
    ...(parsed.type === undefined ? {} : { type: parsed.type }),
    ...(parsed.select === undefined ? {} : { select: parsed.select }),
    ...(parsed.history === undefined ? {} : { history: parsed.history }),
  };
}

/**
 * Compiles one pattern the parser has checked (its compile cost bounded: regex-cost.ts):
 * checks a regex with RE2 as the searchers will compile it and derives its prefilters
 * (n-grams, required literal, whether matches stay within a line), each within what is left
 * of the query's analysis budget, or claiming nothing.
 */
export function compileTerm(
  pattern: string,
  regex: boolean,
  caseSensitive: boolean,
  budget: AnalysisBudget = analysisBudget(ANALYSIS_STEPS, ANALYSIS_MS),
): Term {
  if (!regex)
    return {
      kind: 'literal',
      pattern,
      caseSensitive,
      ngrams: withinBudget(budget, () => literalNgramQuery(pattern, { caseInsensitive: !caseSensitive }), ALL),
      required: null,
      lineLocal: false,
      sequence: null,
    };
  try {
    new RE2(pattern, regexFlags(caseSensitive));
  } catch (err) {
    throw new ServiceError('FAILED_TO_PARSE_QUERY', `invalid regular expression ${JSON.stringify(pattern)}: ${re2Reason(err as Error)}`);
  }
  // Parsed once for all analyses.
  const ast = parseForAnalysis(pattern, { caseInsensitive: !caseSensitive });
  const lineLocal = withinBudget(budget, () => lineLocalOf(ast), false);
  return {
    kind: 'regex',
    pattern,
    caseSensitive,
    ngrams: withinBudget(budget, () => regexNgramQueryOf(ast), ALL),
    required: withinBudget(budget, () => requiredLiteralOf(ast), null),
    lineLocal,
    sequence: withinBudget(budget, () => requiredSequenceOf(ast, lineLocal), null),
  };
}

/** False only when a node provably matches nothing (a regex that can never match). */
function mayMatch(n: PlanNode): boolean {
  switch (n.op) {
    case 'and':
      return n.children.every(mayMatch);
    case 'or':
      return n.children.some(mayMatch);
    case 'content':
    case 'file':
    case 'sym':
      return n.term.ngrams.op !== 'none';
    case 'const':
      return n.value;
    default:
      return true;
  }
}
