// Ranking: the files of a response, best first (API-DETAILS section 2.3).
//
// A file's score is a BM25 text score over the query's positive terms plus file signals
// (the formula and its weights are documented in docs/query-language.md, "Ranking"):
//
//   text = 500 × Σ over the query's positive terms t (content and sym: terms, not negated):
//            w(t) × tf(t) × (k1 + 1) / (tf(t) + k1 × (1 − b + b × length / avgLength))
//          w(t) = idf(t) / Σ idf over the query's positive terms   (the weights sum to 1)
//          idf(t) = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5)),  k1 = 1.2, b = 0.75
//     tf: the term's matches in the file; N: documents in the shard; df: documents of the
//     shard that may hold the term (its rarest trigram's posting list, an upper bound);
//     length: the file's bytes, avgLength: a fixed 10,000 bytes (about a source file's
//     typical size, in C and TypeScript trees alike), not the shard's mean, so that
//     files of different shards and repositories are measured alike. The text score
//     saturates below 500 × (k1 + 1) = 1100: more matches help less and less, and a long
//     file needs more of them. The idf only weighs a query's terms against each other: the statistics
//     are per shard, and a term that is rare in one shard (a common kernel function in a
//     shard of user-space tools) must not lift that shard's files above the others.
//
//   +5000  a match is the name of a symbol at its definition (ctags), the symbol being a
//          function, method, class, type, struct, union, enum, interface, trait, macro,
//          namespace or module (PRIMARY_KINDS),
//   +2500  else a match is the name of another definition (a variable, constant, field,
//          property, enumerator, a JSON key, a document heading)
//   +2000  a match is the whole base name before its extension (`mutex` in mutex.c),
//   +1000  else a match in the file's base name,
//    +500  else a match elsewhere in the path
//    +300  a whole-word match in the content (no word character on either side)
//     −20  per directory above the file, at most 10 counted
//    −800  a test file (test/, tests/, __tests__/, *_test.*, *.test.*, *.spec.*, test_*.py)
//   −1200  vendored code (vendor/, third_party/, node_modules/, external/)
//   −1500  generated code (*.min.js, *.pb.go, *_pb2.py, *.generated.*, generated/, lock files)
//
// The weights are so that a definition outranks any text score of one term, a file named
// for the query outranks all but large text differences, and path depth only decides
// between otherwise equal files. Ties break by repository name, then path (byte order),
// so the order is deterministic.
//
// score() is a pure function of one file's facts (RankInput), so that it can run wherever
// the file's hit is shaped.

import { classifyPath, pathDepth } from '../index/file-class.ts';
import { isWord } from '../symbols/name-range.ts';

/** BM25's average document length, fixed (see the top of the file). */
export const REFERENCE_LENGTH = 10_000;

export const WEIGHTS = {
  text: 500,
  k1: 1.2,
  b: 0.75,
  symbolDefinition: 5000,
  otherDefinition: 2500,
  baseNameExact: 2000,
  baseNameMatch: 1000,
  pathMatch: 500,
  wholeWord: 300,
  perDirectory: -20,
  maxCountedDirectories: 10,
  test: -800,
  vendored: -1200,
  generated: -1500,
} as const;

/**
 * ctags kinds (across its languages) of the definitions a name search is usually after.
 * Other kinds are counted lower: ctags also reports fields, object keys and data keys
 * (JSON, YAML), and its TypeScript parser takes some object-literal keys for constants.
 */
export const PRIMARY_KINDS: ReadonlySet<string> = new Set([
  'function',
  'func',
  'method',
  'procedure',
  'subroutine',
  'class',
  'interface',
  'struct',
  'union',
  'enum',
  'typedef',
  'type',
  'alias',
  'trait',
  'implementation',
  'macro',
  'namespace',
  'module',
  'generator',
]);

/** A positive term of the query as one file and its shard see it. */
export interface TermStat {
  /** The term's matches in this file's content (symbol names count for sym: terms); 0 when it has none. */
  tf: number;
  /** Documents of the shard that may hold the term (at most docCount). */
  df: number;
}

export interface RankInput {
  path: string;
  content: Buffer;
  /** Flat byte ranges in the content. */
  ranges: number[];
  /** Flat byte ranges in the path. */
  nameRanges: number[];
  /**
   * The kinds of the definitions (ctags) whose name, at the definition, is one of the
   * content ranges: the name matched where it is defined.
   */
  definitions: string[];
  /**
   * Every positive term of the query (content and sym: terms outside a negation), whether
   * it matched in this file or not. Default: one term with tf = the content ranges.
   */
  terms?: TermStat[];
  /** Documents in the file's shard: N of the idf. Default: no idf (1 for every term). */
  docCount?: number;
  /** The reference length of BM25's length normalisation, in bytes. Default: REFERENCE_LENGTH. */
  avgDocLength?: number;
  /** pathSignals(path), when the caller has it at hand (hit-score.ts keeps it per document). */
  pathScore?: number;
  /** hasWholeWord(content, ranges), when the caller decided it already (shard-search.ts, with the bytes in cache). */
  wholeWord?: boolean | undefined;
  /** termWeights(terms, docCount), when the caller has them at hand (the same for a shard's files). */
  weights?: number[] | null;
}

export function score(f: RankInput): number {
  let s = textScore(f);
  if (f.nameRanges.length > 0) {
    const baseStart = Buffer.byteLength(f.path.slice(0, f.path.lastIndexOf('/') + 1));
    const pathBytes = Buffer.from(f.path, 'utf8');
    let inBase = false;
    let exact = false;
    for (let i = 0; i < f.nameRanges.length; i += 2) {
      const start = f.nameRanges[i]!;
      const end = f.nameRanges[i + 1]!;
      if (start < baseStart) continue;
      inBase = true;
      // The whole base name, or all of it before its first dot.
      if (start === baseStart && end > start && (end === pathBytes.length || (pathBytes[end] === 0x2e && pathBytes.indexOf(0x2e, baseStart) === end)))
        exact = true;
    }
    s += exact ? WEIGHTS.baseNameExact : inBase ? WEIGHTS.baseNameMatch : WEIGHTS.pathMatch;
  }
  const wholeWord = f.wholeWord ?? hasWholeWord(f.content, f.ranges);
  if (f.definitions.length > 0) {
    let primary = false;
    for (const k of f.definitions) primary ||= PRIMARY_KINDS.has(k);
    s += primary ? WEIGHTS.symbolDefinition : WEIGHTS.otherDefinition;
  }
  if (wholeWord) s += WEIGHTS.wholeWord;
  return s + (f.pathScore ?? pathSignals(f.path));
}

/** Whether one of the flat content ranges is a whole word: not empty, no word byte on either side. */
export function hasWholeWord(content: Uint8Array, ranges: number[]): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    const start = ranges[i]!;
    const end = ranges[i + 1]!;
    if (end > start && !isWord(content[start - 1]) && !isWord(content[end])) return true;
  }
  return false;
}

/** The signals of the path alone, whatever the query: its depth and its test, vendored and generated classes. */
export function pathSignals(path: string): number {
  let s = WEIGHTS.perDirectory * Math.min(WEIGHTS.maxCountedDirectories, pathDepth(path));
  const c = classifyPath(path);
  if (c.test) s += WEIGHTS.test;
  if (c.vendored) s += WEIGHTS.vendored;
  if (c.generated) s += WEIGHTS.generated;
  return s;
}

/** The BM25 part (see the top of the file). */
export function textScore(f: Pick<RankInput, 'ranges' | 'content' | 'terms' | 'docCount' | 'avgDocLength' | 'weights'>): number {
  const terms = f.terms ?? [{ tf: f.ranges.length / 2, df: -1 }];
  const length = f.content.length;
  const avg = f.avgDocLength !== undefined && f.avgDocLength > 0 ? f.avgDocLength : REFERENCE_LENGTH;
  const norm = 1 - WEIGHTS.b + (WEIGHTS.b * length) / avg;
  const weights = f.weights !== undefined ? f.weights : termWeights(terms, f.docCount);
  if (weights === null) return 0;
  let s = 0;
  for (let i = 0; i < terms.length; i++) {
    // The weight first: a single term's is exactly 1 whatever its shard's idf, so equal
    // files of different shards tie exactly (and then break the tie by path).
    const tf = terms[i]!.tf;
    if (tf > 0) s += weights[i]! * ((tf * (WEIGHTS.k1 + 1)) / (tf + WEIGHTS.k1 * norm));
  }
  return WEIGHTS.text * s;
}

/**
 * Each term's weight, idf(t) / Σ idf: a function of the document frequencies alone, the
 * same for every file of a shard (hit-score.ts computes them once a shard). Null when the
 * idfs sum to nothing (no text score).
 */
export function termWeights(terms: ReadonlyArray<Pick<TermStat, 'df'>>, docCount: number | undefined): number[] | null {
  let idfSum = 0;
  for (const t of terms) idfSum += idf(t.df, docCount);
  if (idfSum <= 0) return null;
  const out: number[] = new Array(terms.length);
  for (let i = 0; i < terms.length; i++) out[i] = idf(terms[i]!.df, docCount) / idfSum;
  return out;
}

/**
 * BM25's idf (positive: a term in every document still weighs a little); 1 when the
 * document frequency or count is unknown.
 */
export function idf(df: number, docCount: number | undefined): number {
  if (docCount === undefined || df < 0) return 1;
  const n = Math.max(docCount, df);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** A byte of an identifier (the rule lives with the symbol name ranges, which use it too). */
export { isWord };

/** The order of ranked files (its own module, so that the web page compares as the searcher does). */
export { byteCompare, compareRanked, type RankKey } from './rank-order.ts';
