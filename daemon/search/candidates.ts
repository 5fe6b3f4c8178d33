// Candidate selection: the documents of a shard that may match a tree (match-tree.ts),
// found from the index alone, before any document is read. A term's trigram posting lists
// are intersected rarest first, and no further once a list stops paying for what it costs
// to decode; a literal's segment masks rule out large candidates it cannot start anywhere
// in (segment-windows.ts); the content-words index lists the documents a word surely
// matches, which a negation rules out unread. Sound: a node's candidates are a superset of
// the documents it matches. The examination (shard-search.ts, examine-doc.ts) then decides
// each candidate exactly.

import { holdsSorted, intersectPostings, intersectSorted, unionSorted } from '../../core/index.ts';
import type { NgramTable } from '../index/ngram-table.ts';
import type { Shard } from '../index/shard-reader.ts';
import type { Term } from '../query/terms.ts';
import type { NgramQuery } from '../query/ngram-query.ts';
import type { Tree } from './match-tree.ts';
import type { Matcher } from './matcher.ts';
import { symbolHits, type SymbolHits } from './symbol-search.ts';
import type { ShardCounters } from './types.ts';
import { bySegments } from './segment-windows.ts';

/**
 * A share of the candidates that an intersection must rule out for the next, larger list
 * to be worth decoding: once a list took fewer than this, the rest (each at least as long
 * and, being commoner, less telling) are left to the verification, which checks every
 * candidate anyway, unless the next list is cheap next to what it may save
 * (DECODE_VS_SCAN). A long literal's last lists (its commonest trigrams: the longest
 * lists) typically remove a few candidates each, and cost more to decode and intersect
 * than those candidates cost to examine.
 */
const MIN_SHRINK = 0.02;

/**
 * Merging a posting byte costs about this many times scanning a document byte (the core's
 * LEB128 decoding against its 64-byte-a-round literal scan). Past MIN_SHRINK a list is
 * still read when it pays for itself by ruling out as many candidates as the last list did
 * (at least one): with few candidates left a few KB of postings save a document read each;
 * with many, a list that took almost none is not worth its bytes.
 */
const DECODE_VS_SCAN = 10;

/**
 * What share of the candidates a list with follow bits to check is assumed to rule out
 * (past MIN_SHRINK, in the DECODE_VS_SCAN rule), instead of the share the last list took:
 * a literal's false candidates hold all its trigrams and fail at one junction of them,
 * which only that trigram's masks catch, so the last list's share says little about the
 * next one's. Assuming a quarter made rare identifiers read far fewer documents, for
 * less CPU; assuming the whole share read more lists for no fewer documents.
 */
const FOLLOW_PRIOR = 0.25;

/**
 * A shard whose candidates were capped (Examine) and turn out mostly false (fewer than
 * REFINE_HIT_RATE of the first REFINE_AFTER examined matched) decodes the lists it left
 * and drops the candidates they rule out: `[A-Z][a-z]+[A-Z][a-z]+Exception` and `"out of
 * memory"` have a few true documents among thousands of candidates.
 */
const REFINE_AFTER = 64;
const REFINE_HIT_RATE = 0.5;

/**
 * How many candidates a shard is expected to examine, as a multiple of its match limit:
 * past it FOLLOW_PRIOR is not assumed. The prior pays when every candidate is examined;
 * a common literal has thousands of candidates per shard, nearly all true, and the
 * examination stops at the limit long before the candidates a prior list would have
 * removed, so decoding that list is CPU spent for nothing. Where the candidates turn out
 * mostly false the shard refines them with the prior after all (REFINE_AFTER).
 */
const EXAMINE_PER_LIMIT = 4;

/**
 * Nor past this many candidates, whatever the limit: a larger set is refined after
 * REFINE_AFTER examined documents if it turns out mostly false, which wastes at most half
 * of it, where decoding every list of a long literal up front costs more than examining
 * its candidates when most of them are true.
 */
const PRIOR_MAX_CANDIDATES = 2 * REFINE_AFTER;

/**
 * The cap on candidates for FOLLOW_PRIOR (EXAMINE_PER_LIMIT) and whether it declined a
 * list the prior would have decoded (`capped`: the candidates can still be refined).
 */
export interface Examine {
  cap: number;
  capped: boolean;
  /**
   * False where only whether a document may match counts (a term under a NOT): the
   * segment masks, which pay by the windows they leave to read, are not read.
   */
  segments?: boolean;
}

const UNCAPPED: Examine = { cap: Infinity, capped: false };
const NEGATED: Examine = { cap: Infinity, capped: false, segments: false };

/** The cap on candidates of a search of `limit` match ranges (EXAMINE_PER_LIMIT, PRIOR_MAX_CANDIDATES). */
export function examineFor(limit: number): Examine {
  return { cap: Math.min(EXAMINE_PER_LIMIT * (limit + 1), PRIOR_MAX_CANDIDATES), capped: false };
}

/**
 * Whether capped candidates are to be refined now (REFINE_AFTER, REFINE_HIT_RATE):
 * `tried` examined so far, `matched` of them matched, `left` still to examine.
 */
export function refineDue(examine: Examine, tried: number, matched: number, left: number): boolean {
  return examine.capped && tried >= REFINE_AFTER && matched < tried * REFINE_HIT_RATE && left > REFINE_AFTER;
}

/** What selecting a tree's candidates reads and counts. */
export interface Selection {
  shard: Shard;
  counters: ShardCounters;
  /** One per term id of the plan (matcher.ts). */
  matchers: Matcher[];
  examine: Examine;
}

/** `within` (ascending; null: every document) narrowed to `t`'s candidates. */
export function candidatesWithin(within: Uint32Array | null, t: Tree, s: Selection): Uint32Array | null {
  return intersectAll(within, [t], (c) => candidateDocs(c, s));
}

/** candidatesWithin with no cap on the candidates: every list that pays is read (a refinement). */
export function uncappedWithin(within: Uint32Array | null, t: Tree, shard: Shard, counters: ShardCounters, matchers: Matcher[]): Uint32Array | null {
  return candidatesWithin(within, t, { shard, counters, matchers, examine: UNCAPPED });
}

/**
 * The documents that may match `t`, ascending, or null for "every document".
 * Sound: each node returns a superset of the documents it matches.
 */
function candidateDocs(t: Tree, s: Selection): Uint32Array | null {
  const { shard, counters, examine } = s;
  switch (t.op) {
    case 'const':
      return t.value ? null : new Uint32Array(0);
    case 'not':
      return null;
    case 'lang':
      return shard.docsWithLanguage(t.lang);
    case 'content': {
      // Content postings, segment masks and their windows are by unit: a document, or in a
      // grouped shard a group of versions (shard-reader.ts unitDocs), turned into its
      // documents, ascending, once the index has said all it can.
      const units = evalNgrams(shard.content, t.term.ngrams, counters, examine);
      if (units === null) return null;
      return shard.unitDocs(shard.contentSegments === undefined || examine.segments === false ? units : bySegments(t, units, s, DECODE_VS_SCAN));
    }
    case 'file':
      return evalNgrams(shard.names, t.term.ngrams, counters);
    case 'sym':
      // With a symbol index the candidates are exact: the documents of the matching definitions.
      if (shard.symbolIndex) return indexedSymbols(t, shard, s.matchers[t.id]!, counters).docs;
      return evalNgrams(shard.symbolNames, t.term.ngrams, counters);
    case 'and': {
      // A negated child rules out the documents it surely matches (listedDocs) before any
      // is read: `mutex_lock -mutex_unlock` keeps a small share of its candidates.
      let docs = intersectAll(null, t.children, (c) => candidateDocs(c, s));
      for (const c of t.children) {
        if (docs === null || docs.length === 0) break;
        const out = c.op === 'not' && readsContent(c.child) ? listedDocs(c.child, shard, s.matchers) : null;
        if (out !== null) docs = without(docs, out);
      }
      return docs;
    }
    case 'or':
      return uniteAll(t.children, (c) => candidateDocs(c, s));
  }
}

/** Candidates of the trees under a NOT, per tree (a tree is specialised to one shard). */
const negatedCandidates = new WeakMap<Tree, Uint32Array | null>();

/** False when `doc` is not among `t`'s candidates (so `t` does not match it). */
export function mayMatch(t: Tree, doc: number, shard: Shard, counters: ShardCounters, matchers: Matcher[]): boolean {
  let docs = negatedCandidates.get(t);
  if (docs === undefined) {
    docs = candidateDocs(t, { shard, counters, matchers, examine: NEGATED });
    negatedCandidates.set(t, docs);
  }
  return docs === null || holdsSorted(docs, doc);
}

/** Whether `t` matches `doc` for certain without reading it (listedDocs). */
export function surelyMatches(t: Tree, doc: number, shard: Shard, matchers: Matcher[]): boolean {
  const docs = listedDocs(t, shard, matchers);
  return docs !== null && holdsSorted(docs, doc);
}

/**
 * Whether deciding `t` reads the document: only then is a NOT's candidate list worth its
 * postings (a path or a language is decided without reading anything).
 */
export function readsContent(t: Tree): boolean {
  switch (t.op) {
    case 'content':
      return true;
    case 'not':
      return readsContent(t.child);
    case 'and':
    case 'or':
      return t.children.some(readsContent);
    default:
      return false;
  }
}

/** What listedDocs found, per tree (a tree is specialised to one shard). */
const listed = new WeakMap<Tree, Uint32Array | null>();

/**
 * The documents `t` matches for certain, known without reading them (ascending), or null
 * when nothing is known: for a literal that is a word, the documents the shard's
 * content-words index lists under it (content-words.ts); for an AND, the documents all its
 * children surely match; for an OR, any. A negated `t` rules them out unread.
 */
function listedDocs(t: Tree, shard: Shard, matchers: Matcher[]): Uint32Array | null {
  let docs = listed.get(t);
  if (docs !== undefined) return docs;
  switch (t.op) {
    case 'content': {
      const word = matchers[t.id]!.word;
      docs = word !== undefined && shard.contentWords !== undefined ? shard.contentWords.docsWith(word) : null;
      break;
    }
    case 'and':
      docs = null;
      for (const c of t.children) {
        const d = listedDocs(c, shard, matchers);
        if (d === null) {
          docs = null;
          break;
        }
        docs = docs === null ? d : intersectSorted(docs, d);
      }
      break;
    case 'or': {
      const known = t.children.map((c) => listedDocs(c, shard, matchers)).filter((d): d is Uint32Array => d !== null);
      docs = known.length === 0 ? null : known.reduce((a, b) => unionSorted(a, b));
      break;
    }
    default:
      docs = null;
  }
  listed.set(t, docs);
  return docs;
}

/** Ascending `a` without the documents of ascending `b`. */
function without(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length);
  let k = 0;
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    const v = a[i]!;
    while (j < b.length && b[j]! < v) j++;
    if (j < b.length && b[j] === v) continue;
    out[k++] = v;
  }
  return k === a.length ? a : out.slice(0, k);
}

/** A sym: term's definitions from the shard's symbol index (symbol-search.ts). */
export function indexedSymbols(t: { term: Term }, shard: Shard, matcher: Matcher, counters: ShardCounters): SymbolHits {
  return symbolHits(shard, shard.symbolIndex!, t.term, matcher, (q) => evalNgrams(shard.symbolNames, q, counters));
}

/**
 * `ordered` with the documents from `from` on that are not among `refined` (ascending;
 * null: all are) left out, the candidate count lowered to match. Out of the examination's
 * loop (shard-search.ts): what its loop body holds decides what V8 inlines into it.
 */
export function refine(ordered: Uint32Array, from: number, refined: Uint32Array | null, docCount: number, counters: ShardCounters): Uint32Array {
  if (refined === null) return ordered;
  const keep = new Uint8Array(docCount);
  for (const d of refined) keep[d] = 1;
  const rest = ordered.subarray(from).filter((d) => keep[d] === 1);
  counters.ngramMatches -= ordered.length - from - rest.length;
  const next = new Uint32Array(from + rest.length);
  next.set(ordered.subarray(0, from));
  next.set(rest, from);
  return next;
}

/**
 * Intersection of `start` and every item's documents (null: every document), stopping at
 * the first empty set: later items are not evaluated, so no more postings are read.
 */
function intersectAll<T>(start: Uint32Array | null, items: readonly T[], docsOf: (item: T) => Uint32Array | null): Uint32Array | null {
  // Nothing to narrow: no item's documents are read (a class with no documents in the shard).
  if (start !== null && start.length === 0) return start;
  let acc = start;
  for (const item of items) {
    const docs = docsOf(item);
    if (docs === null) continue;
    acc = acc === null ? docs : intersectSorted(acc, docs);
    if (acc.length === 0) return acc;
  }
  return acc;
}

/** Union of every item's documents; null (every document) as soon as one item is null. */
function uniteAll<T>(items: readonly T[], docsOf: (item: T) => Uint32Array | null): Uint32Array | null {
  let acc: Uint32Array = new Uint32Array(0);
  for (const item of items) {
    const docs = docsOf(item);
    if (docs === null) return null;
    acc = acc.length === 0 ? docs : unionSorted(acc, docs);
  }
  return acc;
}

/**
 * Intersection of the posting lists of table rows, rarest first (the caller sorts), stopping
 * at an empty set or once a list stops paying (MIN_SHRINK, DECODE_VS_SCAN); null for no
 * list. A row's `next` bits (ngram-query.ts) are checked against its follow masks where
 * the table has them.
 */
function intersectRarest(table: NgramTable, rows: Row[], counters: ShardCounters, examine: Examine): Uint32Array | null {
  return intersectPostings(
    rows.length,
    (i) => {
      const l = table.rowList(rows[i]!.row, rows[i]!.next);
      counters.indexBytesLoaded += l.bytes.length + (l.follow?.length ?? 0);
      return l;
    },
    (next, before, after) => {
      if (before - after >= before * MIN_SHRINK) return true;
      const row = rows[next]!;
      const cost = table.rowBytes(row.row) * DECODE_VS_SCAN;
      const saves = (share: number) => Math.max(1, share * after) * table.bytesPerCandidate;
      const prior = row.next !== 0 && table.hasFollow && cost < saves(FOLLOW_PRIOR);
      if (prior && after <= examine.cap) return true;
      if (prior) examine.capped = true;
      return cost < saves((before - after) / before);
    },
  );
}

/** Evaluates an n-gram query on one trigram table (rarest trigrams first). */
function evalNgrams(table: NgramTable, q: NgramQuery, counters: ShardCounters, examine: Examine = UNCAPPED): Uint32Array | null {
  switch (q.op) {
    case 'all':
      return null;
    case 'none':
      return new Uint32Array(0);
    case 'tri':
      return postings(table, q.id, q.next ?? 0, counters, examine);
    case 'and': {
      // Rarest first: the running intersection shrinks fastest, and an absent trigram
      // ends the evaluation before any long list is decoded.
      // Each trigram is looked up once (its row in the table, -1: absent); rows sort by count.
      const rows: Row[] = [];
      let absent = false;
      for (const a of q.args) {
        if (a.op !== 'tri') continue;
        counters.ngramLookups++;
        const row = table.find(a.id);
        if (row < 0) absent = true;
        else rows.push({ row, next: a.next ?? 0 });
      }
      if (absent) return new Uint32Array(0);
      rows.sort((a, b) => table.rowCount(a.row) - table.rowCount(b.row));
      const acc = intersectRarest(table, rows, counters, examine);
      if (acc !== null && acc.length === 0) return acc;
      return intersectAll(
        acc,
        q.args.filter((a) => a.op !== 'tri'),
        (a) => evalNgrams(table, a, counters, examine),
      );
    }
    case 'or':
      return uniteAll(q.args, (a) => evalNgrams(table, a, counters, examine));
  }
}

function postings(table: NgramTable, id: number, next: number, counters: ShardCounters, examine: Examine): Uint32Array {
  counters.ngramLookups++;
  if (next !== 0 && table.hasFollow) {
    const row = table.find(id);
    if (row < 0) return new Uint32Array(0);
    return intersectRarest(table, [{ row, next }], counters, examine)!;
  }
  const { docs, bytes } = table.postingList(id);
  counters.indexBytesLoaded += bytes;
  return docs;
}

/** A trigram's row in a table and the follow bits wanted of it (0: none). */
interface Row {
  row: number;
  next: number;
}
