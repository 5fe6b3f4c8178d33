// The plan: a parsed query with every pattern compiled once (RE2 syntax checked, n-gram
// prefilter derived), ready to be sent to the search workers and specialised per shard
// (daemon/search/match-tree.ts).
//
// Soundness rule of the n-gram plans (ARCHITECTURE.md section 3): the prefilter of every
// node matches every document the node matches. Content and file-name terms get theirs
// from regex-ngrams.ts; AND intersects, OR unites, and NOT can rule nothing out, so it is
// "all" (match-tree.ts).

import RE2 from 're2';
import { ServiceError } from '../errors.ts';
import type { QueryNode } from './ast.ts';
import { parseQuery } from './parser.ts';
import { literalNgramQuery, regexNgramQuery, type NgramQuery } from './regex-ngrams.ts';

/** One pattern to find: in content, in file paths, or in symbol names. */
export interface Term {
  kind: 'literal' | 'regex';
  /** The literal text, or the regular expression's source. */
  pattern: string;
  caseSensitive: boolean;
  /** Sound n-gram prefilter: matches every text the term matches. */
  ngrams: NgramQuery;
}

export type PlanNode =
  | { op: 'and' | 'or'; children: PlanNode[] }
  | { op: 'not'; child: PlanNode }
  | { op: 'const'; value: boolean }
  | { op: 'content'; term: Term; id: number }
  | { op: 'file'; term: Term; id: number }
  | { op: 'sym'; term: Term; id: number }
  | { op: 'repo'; pattern: string }
  | { op: 'lang'; language: string }
  | { op: 'branch'; glob: string }
  | { op: 'archived' | 'fork'; value: 'yes' | 'no' | 'only' }
  | { op: 'visibility'; value: 'public' | 'private' | 'any' };

export interface Plan {
  root: PlanNode;
  /** Number of term nodes (their ids are 0 .. terms-1). */
  terms: number;
  /** Branch globs the query names; empty: the default branch only. */
  branches: string[];
}

export interface QueryRequest {
  query: string;
  isRegexEnabled?: boolean;
  isCaseSensitivityEnabled?: boolean;
}

export function planQuery(req: QueryRequest): Plan {
  const ast = parseQuery(req.query, { regex: req.isRegexEnabled === true, caseSensitive: req.isCaseSensitivityEnabled === true });
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
        return { op: 'content', term: compileTerm(n.pattern, n.regex, n.caseSensitive), id: terms++ };
      case 'file':
        return { op: 'file', term: compileTerm(n.pattern, true, n.caseSensitive), id: terms++ };
      case 'sym':
        return { op: 'sym', term: compileTerm(n.pattern, true, n.caseSensitive), id: terms++ };
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
    }
  };
  const root = build(ast);
  if (!mayMatch(root)) throw new ServiceError('FAILED_TO_PARSE_QUERY', 'the query can never match anything');
  return { root, terms, branches };
}

/** The plan's terms, indexed by id. */
export function planTerms(plan: Plan): Term[] {
  const terms: Term[] = new Array(plan.terms);
  const walk = (n: PlanNode): void => {
    if (n.op === 'and' || n.op === 'or') n.children.forEach(walk);
    else if (n.op === 'not') walk(n.child);
    else if (n.op === 'content' || n.op === 'file' || n.op === 'sym') terms[n.id] = n.term;
  };
  walk(plan.root);
  return terms;
}

/** Compiles one pattern: checks a regex with RE2 and derives its n-gram prefilter. */
export function compileTerm(pattern: string, regex: boolean, caseSensitive: boolean): Term {
  if (!regex) return { kind: 'literal', pattern, caseSensitive, ngrams: literalNgramQuery(pattern, { caseInsensitive: !caseSensitive }) };
  try {
    new RE2(pattern, regexFlags(caseSensitive));
  } catch (err) {
    throw new ServiceError('FAILED_TO_PARSE_QUERY', `invalid regular expression ${JSON.stringify(pattern)}: ${re2Reason(err as Error)}`);
  }
  return { kind: 'regex', pattern, caseSensitive, ngrams: regexNgramQuery(pattern, { caseInsensitive: !caseSensitive }) };
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

/**
 * RE2's reason without the pattern it appends (node-re2 shows the pattern as it compiled
 * it, with its own (?m) prefix: "missing ): (?m)foo(").
 */
export function re2Reason(err: Error): string {
  const i = err.message.lastIndexOf(': ');
  return i > 0 ? err.message.slice(0, i) : err.message;
}

/**
 * RE2 flags for matching: global, multi-line (^ and $ at line boundaries), and
 * case-insensitive unless asked otherwise. `.` never matches "\n" (no `s` flag).
 */
export function regexFlags(caseSensitive: boolean): string {
  return caseSensitive ? 'gm' : 'gmi';
}

/** An RE2 pattern matching `literal` exactly. */
export function escapeRegex(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}
