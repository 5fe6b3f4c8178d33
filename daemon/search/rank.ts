// Ranking: the files of a response, best first (API-DETAILS section 2.3).
//
// A file's score is the sum of these signals (weights chosen so that one strong signal
// outranks any number of weak ones, and documented in docs/query-language.md):
//
//   +5000  a match is the name of a symbol at its definition (ctags)
//   +1000  a match in the file's base name
//    +500  a match elsewhere in the path
//    +300  a whole-word match in the content (no word character on either side)
//  +10..100  10 per content match, at most 10 counted (more evidence, slightly higher)
//    -800  a test file (test/, tests/, __tests__/, *_test.*, *.test.*, *.spec.*, test_*.py)
//   -1200  vendored code (vendor/, third_party/, node_modules/, external/)
//   -1500  generated code (*.min.js, *.pb.go, *_pb2.py, *.generated.*, generated/, lock files)
//
// Ties break by repository name, then path (byte order), so the order is deterministic.

import type { SymbolDef } from '../symbols/ctags.ts';
import { isWord } from '../symbols/name-range.ts';

export const WEIGHTS = {
  symbolDefinition: 5000,
  baseNameMatch: 1000,
  pathMatch: 500,
  wholeWord: 300,
  perMatch: 10,
  maxCountedMatches: 10,
  test: -800,
  vendored: -1200,
  generated: -1500,
} as const;

const TEST = /(^|\/)(tests?|__tests__|spec)\/|_test\.[^/]+$|\.(test|spec)\.[^/]+$|(^|\/)test_[^/]+\.py$/i;
const VENDORED = /(^|\/)(vendor|third_party|third-party|node_modules|external)\//i;
const GENERATED = /\.min\.(js|css)$|\.pb\.go$|_pb2\.py$|\.generated\.[^/]+$|(^|\/)generated\/|(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|go\.sum)$/i;

export interface RankInput {
  repository: string;
  path: string;
  content: Buffer;
  /** Flat byte ranges in the content. */
  ranges: number[];
  /** Flat byte ranges in the path. */
  nameRanges: number[];
  /** 1-based line of each content range's start, in order. */
  lines: number[];
  symbols: SymbolDef[];
}

export function score(f: RankInput): number {
  let s = 0;
  const baseStart = Buffer.byteLength(f.path.slice(0, f.path.lastIndexOf('/') + 1));
  if (f.nameRanges.length > 0) {
    let inBase = false;
    for (let i = 0; i < f.nameRanges.length; i += 2) if (f.nameRanges[i]! >= baseStart) inBase = true;
    s += inBase ? WEIGHTS.baseNameMatch : WEIGHTS.pathMatch;
  }
  let wholeWord = false;
  let definition = false;
  for (let i = 0; i < f.ranges.length; i += 2) {
    const start = f.ranges[i]!;
    const end = f.ranges[i + 1]!;
    if (end > start && !isWord(f.content[start - 1]) && !isWord(f.content[end])) wholeWord = true;
    if (!definition && f.symbols.length > 0) {
      const line = f.lines[i / 2]!;
      const text = f.content.toString('utf8', start, end);
      definition = f.symbols.some((sym) => sym.line === line && sym.name === text);
    }
  }
  if (definition) s += WEIGHTS.symbolDefinition;
  if (wholeWord) s += WEIGHTS.wholeWord;
  s += WEIGHTS.perMatch * Math.min(WEIGHTS.maxCountedMatches, f.ranges.length / 2);
  if (TEST.test(f.path)) s += WEIGHTS.test;
  if (VENDORED.test(f.path)) s += WEIGHTS.vendored;
  if (GENERATED.test(f.path)) s += WEIGHTS.generated;
  return s;
}

/** A byte of an identifier (the rule lives with the symbol name ranges, which use it too). */
export { isWord };

/** Best first; ties by repository, then path, in byte order. */
export function compareRanked(a: { score: number; repository: string; path: string }, b: { score: number; repository: string; path: string }): number {
  return b.score - a.score || byteCompare(a.repository, b.repository) || byteCompare(a.path, b.path);
}

function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
