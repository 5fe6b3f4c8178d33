// Evaluates a compiled query on one shard: the n-gram prefilter over the posting lists
// (cheap, may over-approximate), then verification of each candidate document's content
// (exact). Runs in a search worker; the main thread only merges and shapes.

import { intersectSorted, unionSorted } from '../../core/index.ts';
import type { NgramTable, Shard } from '../index/shard-reader.ts';
import type { CompiledQuery } from '../query/compile.ts';
import type { NgramQuery } from '../query/regex-ngrams.ts';
import type { Matcher } from './matcher.ts';
import { emptyCounters, type ShardCounters } from './types.ts';

export interface ShardHit {
  doc: number;
  /** Flat [start, end, ...] byte ranges in the content. */
  ranges: number[];
  /** Flat byte ranges in the path. */
  nameRanges: number[];
}

export interface ShardSearchResult {
  hits: ShardHit[];
  counters: ShardCounters;
  /** Ruled out by the index before any document was examined. */
  filtered: boolean;
  /** Matches may exist beyond the ones returned (limit reached or cancelled). */
  more: boolean;
  /** Match ranges found (content and file name), including any beyond the limit. */
  found: number;
}

const CANCEL_CHECK_EVERY = 32;

/**
 * @param limit  match ranges wanted; the search stops once it has more than this many,
 *               so that `more` tells whether the answer is exhaustive.
 * @param useIndex  false: every document is a candidate (the brute-force oracle).
 */
export function searchShard(
  shard: Shard,
  query: CompiledQuery,
  matcher: Matcher,
  limit: number,
  isCancelled: () => boolean,
  useIndex = true,
): ShardSearchResult {
  const counters = emptyCounters();
  counters.shardFilesConsidered = shard.docCount;
  const t0 = process.hrtime.bigint();
  const candidates = useIndex ? evalNgrams(shard.content, query.ngrams, counters) : null;
  const t1 = process.hrtime.bigint();
  counters.matchTreeConstruction = Number(t1 - t0);
  const total = candidates === null ? shard.docCount : candidates.length;
  counters.ngramMatches = useIndex ? total : 0;
  const result: ShardSearchResult = { hits: [], counters, filtered: false, more: false, found: 0 };
  if (total === 0) {
    result.filtered = shard.docCount > 0;
    return result;
  }

  const regexBefore = matcher.regexpsConsidered;
  for (let i = 0; i < total; i++) {
    if (result.found > limit || (i % CANCEL_CHECK_EVERY === 0 && i > 0 && isCancelled())) {
      counters.filesSkipped = total - i;
      result.more = true;
      break;
    }
    const doc = candidates === null ? i : candidates[i]!;
    counters.filesConsidered++;
    const content = shard.contentOf(doc);
    counters.filesLoaded++;
    counters.contentBytesLoaded += content.length;
    const ranges = matcher.find(content, limit - result.found + 1);
    if (ranges.length === 0) continue;
    const nameRanges = matcher.find(shard.nameBuffer(doc), limit + 1);
    result.hits.push({ doc, ranges, nameRanges });
    result.found += (ranges.length + nameRanges.length) / 2;
  }
  if (result.found > limit) result.more = true;
  counters.regexpsConsidered = matcher.regexpsConsidered - regexBefore;
  counters.matchTreeSearch = Number(process.hrtime.bigint() - t1);
  return result;
}

/**
 * The documents that may match `q`, ascending, or null for "every document".
 * Sound by construction: each node returns a superset of the documents its query matches.
 */
export function evalNgrams(table: NgramTable, q: NgramQuery, counters: ShardCounters): Uint32Array | null {
  switch (q.op) {
    case 'all':
      return null;
    case 'none':
      return new Uint32Array(0);
    case 'tri':
      return postings(table, q.id, counters);
    case 'and': {
      // Rarest trigrams first: the running intersection shrinks fastest, and an absent
      // trigram ends the evaluation before any long list is decoded.
      const tris = q.args.filter((a): a is { op: 'tri'; id: number } => a.op === 'tri');
      const counts = new Map<number, number>();
      for (const t of tris) {
        counters.ngramLookups++;
        counts.set(t.id, table.count(t.id));
      }
      tris.sort((a, b) => counts.get(a.id)! - counts.get(b.id)!);
      let acc: Uint32Array | null = null;
      for (const t of tris) {
        if (counts.get(t.id) === 0) return new Uint32Array(0);
        const list = postings(table, t.id, counters, false);
        acc = acc === null ? list : intersectSorted(acc, list);
        if (acc.length === 0) return acc;
      }
      for (const a of q.args) {
        if (a.op === 'tri') continue;
        const sub = evalNgrams(table, a, counters);
        if (sub === null) continue;
        acc = acc === null ? sub : intersectSorted(acc, sub);
        if (acc.length === 0) return acc;
      }
      return acc;
    }
    case 'or': {
      let acc: Uint32Array = new Uint32Array(0);
      for (const a of q.args) {
        const sub = evalNgrams(table, a, counters);
        if (sub === null) return null;
        acc = acc.length === 0 ? sub : unionSorted(acc, sub);
      }
      return acc;
    }
  }
}

function postings(table: NgramTable, id: number, counters: ShardCounters, countLookup = true): Uint32Array {
  if (countLookup) counters.ngramLookups++;
  const { docs, bytes } = table.postingList(id);
  counters.indexBytesLoaded += bytes;
  return docs;
}
