// The vocabulary of a compiled query that the search workers need: terms, plan nodes,
// the RE2 flags of matching. Kept apart from the planner (plan.ts) so that a worker does
// not load the parser and its language tables (a noticeable wait per thread under tsx).

import type { NgramQuery } from './ngram-query.ts';
import type { RequiredSequence } from './regex-sequence.ts';

/** One pattern to find: in content, in file paths, or in symbol names. */
export interface Term {
  kind: 'literal' | 'regex';
  /** The literal text, or the regular expression's source. */
  pattern: string;
  caseSensitive: boolean;
  /** Sound n-gram prefilter: matches every text the term matches. */
  ngrams: NgramQuery;
  /**
   * Regex terms: a string every match contains exactly (compare as UTF-8 bytes), which the
   * indexed matcher looks for before running RE2 (regex-required.ts); null when none is
   * known, and always for literals.
   */
  required: string | null;
  /**
   * Regex terms: every match lies within one line (regex-line-local.ts), so the indexed
   * matcher may run RE2 on the lines holding `required` alone. False for literals.
   */
  lineLocal: boolean;
  /**
   * Regex terms: classes of ASCII bytes that every match holds in a row
   * (regex-sequence.ts), which the indexed matcher scans for when the pattern is that
   * sequence or `required` is missing or too short to look for; null when none is worth
   * it, and always for literals.
   */
  sequence: RequiredSequence | null;
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
  | { op: 'visibility'; value: 'public' | 'private' | 'any' }
  /** Commit filters (type:commit, history/commit-match.ts): never in a plan of files. */
  | { op: 'author' | 'committer'; pattern: string }
  | { op: 'after' | 'before'; time: string };

export interface Plan {
  root: PlanNode;
  /** Number of term nodes (their ids are 0 .. terms-1). */
  terms: number;
  /** Branch globs the query names; empty: the default branch only. */
  branches: string[];
  /**
   * The search context the query names (`context:`, parser.ts): the caller resolves it to
   * the repositories to search; the workers never read it. Absent when the query names none.
   */
  context?: string;
  /**
   * `type:diff` (parser.ts): the history's diff lines are searched (history/diff-search.ts);
   * `type:commit`: the commits of indexed histories (history/commit-search.ts). Absent: files.
   */
  type?: 'diff' | 'commit';
  /** `select:` of a diff query: only added or only removed lines. */
  select?: 'added' | 'removed';
  /** `history:yes` (parser.ts): the caller answers where the matches lived in the default branch's history (history/history-spans.ts). */
  history?: true;
  /**
   * Set only by the history's spans (history/history-spans.ts), never by a query: each file
   * found is written as its version (search/file-json.ts writeVersion: its blob id and its
   * number of matches), without chunks and without the refs holding it (a history index has
   * a ref per commit: naming thousands per hit, and writing every version's lines, was most
   * of such a search's cost); the caller finds the commits from the blob ids.
   */
  versions?: true;
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
