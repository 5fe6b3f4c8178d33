// Per-shard document frequencies of a plan's terms, for the ranking's idf (rank.ts).
// Read from the trigram tables alone, so the indexed search and the brute-force oracle
// (which reads no posting list) rank alike: a term's frequency is an upper bound of the
// documents holding it (a literal's rarest trigram's count), never a count of the
// documents a search happened to examine before it stopped.

import type { Shard } from '../index/shard-reader.ts';
import type { NgramTable } from '../index/ngram-table.ts';
import type { NgramQuery } from '../query/ngram-query.ts';
import type { Plan, PlanNode } from '../query/terms.ts';

/**
 * One entry per term id of the plan: for a term whose matches the text score counts (a
 * content or sym: term outside any negation), the documents of the shard that may hold it;
 * -1 for the others (file: terms, negated terms).
 */
export function termDocFrequencies(shard: Shard, plan: Plan): number[] {
  const out: number[] = new Array(plan.terms).fill(-1);
  const walk = (n: PlanNode): void => {
    if (n.op === 'and' || n.op === 'or') n.children.forEach(walk);
    else if (n.op === 'content') out[n.id] = maxDocs(shard.content, n.term.ngrams, shard.docCount, docsPerPosting(shard));
    // From shard format 4 on, the symbol-name postings list blocks of names, not documents:
    // the count is then a rougher bound (known gap: the symbol index could give the exact
    // number of defining documents).
    else if (n.op === 'sym') out[n.id] = maxDocs(shard.symbolNames, n.term.ngrams, shard.docCount);
  };
  walk(plan.root);
  return out;
}

/**
 * What a content posting of the shard stands for, in documents: 1, or in a grouped shard
 * (shard-reader.ts groups) its documents per group. A group's count is then scaled by the
 * mean: an estimate, not a bound (a bound, the largest group's size, would say "every
 * document" for most trigrams), which is what the idf and the speculation weigh.
 */
function docsPerPosting(shard: Shard): number {
  return shard.groups === undefined ? 1 : shard.docCount / Math.max(1, shard.groups.count);
}

/** An upper bound of the documents matching `q` (at most docCount); with `perPosting` (docsPerPosting), an estimate. */
export function maxDocs(table: NgramTable, q: NgramQuery, docCount: number, perPosting = 1): number {
  switch (q.op) {
    case 'all':
      return docCount;
    case 'none':
      return 0;
    case 'tri':
      return Math.min(docCount, Math.round(table.count(q.id) * perPosting));
    case 'and':
      return q.args.reduce((m, a) => Math.min(m, maxDocs(table, a, docCount, perPosting)), docCount);
    case 'or':
      return Math.min(
        docCount,
        q.args.reduce((n, a) => n + maxDocs(table, a, docCount, perPosting), 0),
      );
  }
}

/**
 * An upper bound of the documents of the shard that can match the plan, from the trigram
 * tables alone (no posting list read): what a speculative search (shard-search.ts,
 * `speculate`) weighs to decide whether searching a shard whole costs little enough. Terms
 * it cannot bound from a table (symbols, whose name postings list blocks of names;
 * negations, languages, repository and branch filters) bound nothing: every document.
 */
export function planMaxDocs(shard: Shard, plan: Plan): number {
  const all = shard.docCount;
  const walk = (n: PlanNode): number => {
    switch (n.op) {
      case 'and':
        return n.children.reduce((m, c) => Math.min(m, walk(c)), all);
      case 'or':
        return Math.min(
          all,
          n.children.reduce((s, c) => s + walk(c), 0),
        );
      case 'content':
        return maxDocs(shard.content, n.term.ngrams, all, docsPerPosting(shard));
      case 'file':
        return maxDocs(shard.names, n.term.ngrams, all);
      case 'const':
        return n.value ? all : 0;
      default:
        return all;
    }
  };
  return walk(plan.root);
}

/**
 * Whether some term of the plan outside a negation is matched against file contents: its
 * candidates are read from posting lists as long as the shard is large. The others' come
 * from the file name and symbol tables (a symbol index gives them exactly), which cost
 * little to read whatever their trigrams' counts.
 */
export function planReadsContent(plan: Plan): boolean {
  const walk = (n: PlanNode): boolean => (n.op === 'and' || n.op === 'or' ? n.children.some(walk) : n.op === 'content');
  return walk(plan.root);
}
