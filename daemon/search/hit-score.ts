// A hit's ranking score, computed where the hit is found (in the search worker, with the
// document's bytes and symbols at hand), so that the searcher can pick the best hits of
// every shard before it shapes any of them (rank.ts has the formula).
//
// Finding a definition among the matches by counting lines and decoding the symbols
// around them cost more per hit than the search itself; by the names' byte offsets (shard
// format 4) it is a scan of the document's symbol records.

import type { Shard } from '../index/shard-reader.ts';
import { pathSignals, score, termWeights, type TermStat } from './rank.ts';
import { locateRanges } from './range-locations.ts';

/** What the score reads of a hit (shard-search.ts ShardHit). */
interface ScoredHit {
  doc: number;
  /** The document defines a symbol named like one of the query's literals (definition-first.ts). */
  definition: boolean;
  wholeWord?: boolean | undefined;
  content?: Buffer | undefined;
  ranges: number[];
  lines?: number[];
  nameRanges: number[];
  termFreqs: number[];
}

const NO_DEFINITIONS: string[] = [];

/**
 * The score of each hit of a shard. `termDocs`: per term id of the plan, the documents of
 * the shard that may hold it (-1: a term the text score does not count; term-stats.ts).
 * `confined`: only hits with `definition` can have a definition at a match
 * (definition-first.ts definitionsConfined).
 */
export function scoreHits(shard: Shard, hits: ScoredHit[], termDocs: number[], confined = false): number[] {
  const paths = pathScores(shard);
  const scores: number[] = new Array(hits.length);
  const stats: TermStat[] = [];
  for (const df of termDocs) if (df >= 0) stats.push({ tf: 0, df });
  const weights = termWeights(stats, shard.docCount);
  for (let h = 0; h < hits.length; h++) {
    const hit = hits[h]!;
    const content = hit.content ?? shard.contentOf(hit.doc);
    // The same term objects for every hit, their tf set per hit (score() keeps none).
    for (let id = 0, t = 0; id < termDocs.length; id++) if (termDocs[id]! >= 0) stats[t++]!.tf = hit.termFreqs[id] ?? 0;
    const terms = stats;
    const definitions =
      confined && !hit.definition
        ? NO_DEFINITIONS
        : (shard.definitionsAt(hit.doc, hit.ranges, hit.lines) ?? definitionsByLine(shard, hit.doc, content, hit.ranges, hit.lines));
    const path = shard.name(hit.doc);
    let pathScore = paths[hit.doc]!;
    if (Number.isNaN(pathScore)) pathScore = paths[hit.doc] = pathSignals(path);
    scores[h] = score({
      path,
      content,
      ranges: hit.ranges,
      nameRanges: hit.nameRanges,
      definitions,
      terms,
      docCount: shard.docCount,
      pathScore,
      weights,
      wholeWord: hit.wholeWord,
    });
  }
  return scores;
}

/**
 * Each document's path signals (rank.ts pathSignals; NaN until first needed), per shard
 * for as long as the shard is open: a stream of a common identifier otherwise runs four
 * regular expressions on every matching file's path, a noticeable share of its workers'
 * time. 8 bytes a document.
 */
const pathScoresOf = new WeakMap<Shard, Float64Array>();

function pathScores(shard: Shard): Float64Array {
  let scores = pathScoresOf.get(shard);
  if (!scores) {
    scores = new Float64Array(shard.docCount).fill(NaN);
    pathScoresOf.set(shard, scores);
  }
  return scores;
}

/** Shards before format 4 (no name offsets): a definition on a match's line whose name is the match's text. */
export function definitionsByLine(shard: Shard, doc: number, content: Buffer, ranges: number[], lines?: number[]): string[] {
  const located = locateRanges(content, ranges, lines);
  const symbols = shard.symbolsOverlapping(
    doc,
    located.map((r) => [r.start.lineNumber, r.start.lineNumber] as [number, number]),
  );
  const out: string[] = [];
  if (symbols.length === 0) return out;
  located.forEach((r) => {
    const text = content.toString('utf8', r.start.byteOffset, r.end.byteOffset);
    for (const sym of symbols) if (sym.line === r.start.lineNumber && sym.name === text) out.push(sym.kind);
  });
  return out;
}
