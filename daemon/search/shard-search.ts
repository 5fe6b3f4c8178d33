// Evaluates a plan on one shard: specialise it to the shard per class of branches
// (branch-classes.ts, match-tree.ts), select the candidate documents from the index
// (candidates.ts: cheap, may over-approximate), then examine each candidate exactly
// (examine-doc.ts), collecting the match ranges of the positive terms, and score the hits.
// Runs in a search worker, which then shapes the hits into file results (search-worker.ts,
// file-json.ts); the main thread merges them.

import { intersectSorted, locateLines, shapeChunks, unionSorted, type CoreChunks } from '../../core/index.ts';
import type { Shard } from '../index/shard-reader.ts';
import type { Plan } from '../query/terms.ts';
import type { Matcher } from './matcher.ts';
import { planMaxDocs, planReadsContent, termDocFrequencies } from './term-stats.ts';
import { scoreHits } from './hit-score.ts';
import { hasWholeWord } from './rank.ts';
import { definingDocs, definitionsConfined, definitionsFirst, positiveLiterals } from './definition-first.ts';
import { emptyCounters, type ShardCounters } from './types.ts';
import { ReadAhead } from './read-ahead.ts';
import { branchClasses, classDocs, everyMember, sortBranches, type BranchClass, type SearchMember } from './branch-classes.ts';
import { candidatesWithin, examineFor, refine, refineDue, uncappedWithin, type Examine } from './candidates.ts';
import { DocContext, evaluate, isInterruption, normalize, type Found } from './examine-doc.ts';

export interface ShardHit {
  doc: number;
  /** The shard's repository holding it (shard-reader.ts members): 0 but in a compound shard. */
  member: number;
  /** Flat [start, end, ...] byte ranges in the content, ascending, not overlapping. */
  ranges: number[];
  /**
   * Where `ranges` lie (range-locations.ts LineTable), located as the document is decided,
   * while it is in the core's memory: shaping then does not copy it there again to count
   * its lines.
   * Only when the caller asked (searchShard's `locate`), the document was read (not ranges
   * from the symbol index) and ranges were found.
   */
  lines?: number[];
  /**
   * The file result's chunks as JSON (core shapeChunks), written with `lines` as the
   * document is decided, while it is in the core's memory: for a caller that shapes every
   * hit whole (a stream; searchShard's `locate`). file-json.ts inserts the symbols.
   */
  chunks?: CoreChunks;
  /**
   * The document's bytes when the search read them (a view of the shard's mapping, checked):
   * scoring and shaping read them again without another view and check. Never sent.
   */
  content?: Buffer | undefined;
  /** Flat byte ranges in the path. */
  nameRanges: number[];
  /** The searched branches and tags on which this document matched, in the shard's order. */
  branches: string[];
  /** Per term id of the plan: its content matches in this document (the ranking's tf). */
  termFreqs: number[];
  /** The ranking's score (rank.ts), computed here where the document is at hand (hit-score.ts). */
  score: number;
  /** The document defines a symbol named like one of the query's literals (definition-first.ts). */
  definition: boolean;
  /** A content match is a whole word (rank.ts hasWholeWord), when decided as the document was read. */
  wholeWord?: boolean;
}

/** Match ranges counted for flat content and name ranges: a matching document without ranges counts one. */
export function rangeCount(ranges: number[], nameRanges: number[]): number {
  return Math.max(1, (ranges.length + nameRanges.length) / 2);
}

export interface ShardSearchResult {
  hits: ShardHit[];
  counters: ShardCounters;
  /** Ruled out before any document was examined (by its metadata or its postings). */
  filtered: boolean;
  /** Matches may exist beyond the ones returned (limit reached or cancelled). */
  more: boolean;
  /** Match ranges found, including any beyond the limit; a matching document without ranges counts one. */
  found: number;
  /** Per term id of the plan: documents of the shard that may hold it (the ranking's df; term-stats.ts). Empty when there is no hit. */
  termDocs: number[];
  /**
   * Searched speculatively for its definitions only (`speculate`): the hits are what the
   * shard gives a search past its cut, and a search before its cut must ask the shard
   * again, whole. False when the shard was searched whole (or past the cut as told).
   */
  speculative: boolean;
}

/**
 * A stream's early delivery of a shard's hits (search-worker.ts): after each new hit
 * `due(count)` says whether to hand over the `count` hits not yet handed over; `send` gets
 * them ascending by document and scored, and they are left out of the shard's result
 * (whose `found` and counters still cover the whole shard). A shard searched for several
 * branch classes hands over nothing early: a hit may still gain another class's branches.
 */
export interface PartialHits {
  due(count: number): boolean;
  send(hits: ShardHit[]): void;
}

/**
 * A shard searched speculatively whose trigram tables bound its matching documents to at
 * most this many (or whose plan reads no content: term-stats.ts planReadsContent) has its
 * candidates found first (posting lists read and intersected): when they are few, it is
 * searched whole after all. The tables bound each trigram alone: a rare identifier's
 * bound is often hundreds of documents a shard for none or one candidate, and a `file:`
 * filter's name trigrams bound just as loosely. Above it the lists cost more to read than
 * the bet saves (a common word's run to thousands).
 */
const SPECULATE_PROBE_DOCS = 2048;

/** What a shard is searched for and how the search runs (searchShard). */
export interface ShardSearchOptions {
  plan: Plan;
  /** One per term id of the plan (matcher.ts). */
  matchers: Matcher[];
  /**
   * Match ranges wanted; the search stops once it has more than this many, so that `more`
   * tells whether the answer is exhaustive.
   */
  limit: number;
  /**
   * Whether the search was stopped (it had enough, its time was up, its client left):
   * asked before each document past the definitions; default never.
   */
  isCancelled?: () => boolean;
  /** False: every document is a candidate (the brute-force oracle). Default true. */
  useIndex?: boolean;
  /**
   * The shard's repositories to search, ascending, with their current records; default:
   * every one, as the shard stored it. A compound shard's members left out (replaced since,
   * or hidden from the caller) are never examined.
   */
  members?: readonly SearchMember[] | undefined;
  /**
   * Becomes true when the search wants only the documents defining a name of the query
   * from here on (it is past its cut, searcher.ts): the rest of the shard is skipped. The
   * definitions, examined first, are always examined whole (no cancel check among them), so
   * which of them a shard returns does not depend on when the flag was seen.
   */
  definitionsOnly?: () => boolean;
  /**
   * Locate each hit's lines and write its chunks as it is found (ShardHit.lines, chunks),
   * with these context lines: for a caller that shapes every hit (a stream). A blocking
   * search shapes a few of its hits, long after they were found, and holding line tables
   * for all of them cost more memory than the copies they save. `keep`: where the chunks'
   * JSON is copied out of the core (core shapeChunks).
   */
  locate?: { contextLines: number; keep?: (json: Uint8Array) => Uint8Array } | undefined;
  /** A stream's hits handed over while the shard runs (PartialHits); the result holds the rest. */
  partial?: PartialHits | undefined;
  /**
   * A bet that the search will be past its cut before this shard (cluster/fan-out.ts): the
   * shard is searched for its definitions only, as past the cut, unless at most this many
   * of its documents can match (planMaxDocs; or its candidates, when the tables' bound is
   * loose: SPECULATE_PROBE_DOCS), which costs little enough to search whole.
   * The result says which it did (`speculative`).
   */
  speculate?: number | undefined;
  /**
   * Asked before each document: true suspends the search there (searchShardSteps yields),
   * to be resumed where it stopped; the worker's scheduler uses it to let another caller's
   * search run (search-worker.ts). Its answers change no result.
   */
  shouldYield?: () => boolean;
  /**
   * Only these documents (ascending) may be examined: a caller that already knows which
   * documents hold matches (a history's word counts: history/history-spans.ts) spares the
   * posting lists and every other candidate. Each is still examined whole, so the answer
   * is exact whatever the list holds.
   */
  docs?: Uint32Array | undefined;
}

const NEVER = (): boolean => false;

/** Searches a shard to its end (searchShardSteps, never suspended). */
export function searchShard(shard: Shard, options: ShardSearchOptions): ShardSearchResult {
  const steps = searchShardSteps(shard, { ...options, shouldYield: undefined });
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** One shard's search under way (searchShardSteps): what its branch classes share. */
interface ShardScan {
  shard: Shard;
  options: ShardSearchOptions;
  isCancelled: () => boolean;
  useIndex: boolean;
  counters: ShardCounters;
  result: ShardSearchResult;
  /**
   * Several branch classes: a document may match in more than one (then one hit gains the
   * branches), so hits are kept by document. One class (the common case): in `kept`, and
   * handed over to `partial` from there.
   */
  byDoc: Map<number, ShardHit> | undefined;
  /** With one class, the hits not yet handed over to `partial`. */
  kept: ShardHit[];
  /** The shard's term statistics, once needed. */
  termDocs: number[] | undefined;
  /** Documents examined (decided), in every class. */
  examined: number;
  /** Documents examined before the others (definition-first.ts), found once per shard. */
  first: Uint32Array | undefined;
  /** Nanoseconds spent specialising the tree and selecting candidates, and examining them. */
  construction: number;
  search: number;
}

/**
 * Searches a shard, suspending (yielding) before a document whenever `shouldYield` says
 * so: its result is the generator's return value.
 */
export function* searchShardSteps(shard: Shard, options: ShardSearchOptions): Generator<undefined, ShardSearchResult, undefined> {
  const counters = emptyCounters();
  const result: ShardSearchResult = { hits: [], counters, filtered: false, more: false, found: 0, termDocs: [], speculative: false };
  const t0 = process.hrtime.bigint();
  const classes = branchClasses(options.plan, shard, options.members ?? everyMember(shard));
  const construction = Number(process.hrtime.bigint() - t0);
  if (classes.length === 0) {
    result.filtered = true;
    counters.matchTreeConstruction = Number(process.hrtime.bigint() - t0);
    return result;
  }
  // Documents named, none of them this shard's (a search at a commit whose candidates lie
  // in another of the history's shards): nothing to examine, and nothing to look up.
  if (options.docs !== undefined && !(options.docs.length > 0 && options.docs[0]! < shard.docCount)) {
    counters.matchTreeConstruction = construction;
    result.filtered = ruledOutByDocs(shard);
    return result;
  }
  counters.shardFilesConsidered = shard.docCount;
  const regexBefore = regexpsConsidered(options.matchers);
  const scan: ShardScan = {
    shard,
    options,
    isCancelled: options.isCancelled ?? NEVER,
    useIndex: options.useIndex ?? true,
    counters,
    result,
    byDoc: classes.length > 1 ? new Map<number, ShardHit>() : undefined,
    kept: [],
    termDocs: undefined,
    examined: 0,
    first: undefined,
    construction,
    search: 0,
  };
  for (const cls of classes) {
    yield* searchClass(scan, cls, cls === classes[0]);
    if (result.more) break;
  }
  finish(scan, classes.length > 1);
  counters.regexpsConsidered = regexpsConsidered(options.matchers) - regexBefore;
  return result;
}

/**
 * Whether a shard named documents to examine, none of them its own, counts as ruled out by
 * the filters (as one its branch filters rule out): unless it has no documents at all.
 */
export function ruledOutByDocs(shard: Shard): boolean {
  return shard.docCount > 0;
}

function regexpsConsidered(matchers: Matcher[]): number {
  return matchers.reduce((n, m) => n + m.regexpsConsidered, 0);
}

/** A class's candidates, as selectCandidates finds them. */
interface ClassCandidates {
  /** The class's documents (classDocs; null: every document). */
  onBranches: Uint32Array | null;
  candidates: Uint32Array | null;
  examine: Examine;
}

/**
 * The documents of a class to examine: its candidates, or its documents that define a
 * name of the query when only those are wanted (past the cut, or speculatively: decided
 * before the first class, for every class alike).
 */
function selectCandidates(scan: ShardScan, cls: BranchClass, firstClass: boolean): ClassCandidates {
  const { shard, counters, result, useIndex } = scan;
  const { plan, matchers, limit, definitionsOnly, speculate } = scan.options;
  // Documents on none of the class's branches are other branches' versions (or dead),
  // or another repository's. (Kept in the class: a class decided once may be searched
  // twice, branch-classes.ts.)
  const onBranches = (cls.docs ??= classDocs(shard, cls.byMember));
  const docs = scan.options.docs && inShard(scan.options.docs, shard.docCount);
  // (Documents named: only those are examined, definitions included.)
  const first = (scan.first ??= definingDocs(shard, positiveLiterals(plan), useIndex, docs));
  const examine = examineFor(limit);
  const candidatesOf = (): Uint32Array | null =>
    docs !== undefined
      ? onBranches === null
        ? docs
        : intersectSorted(onBranches, docs)
      : candidatesWithin(onBranches, cls.tree, { shard, counters, matchers, examine });
  let known: Uint32Array | null | undefined;
  if (speculate !== undefined && useIndex && firstClass && definitionsOnly?.() !== true) {
    const bound = planMaxDocs(shard, plan);
    if (bound > speculate && (bound <= SPECULATE_PROBE_DOCS || !planReadsContent(plan))) {
      // The tables bound loosely (each trigram alone): the candidates themselves, which a
      // whole search needs first anyway, say whether it is cheap.
      known = candidatesOf();
      result.speculative = known === null || known.length > speculate || examine.capped;
    } else result.speculative = bound > speculate;
  }
  // Only the definitions wanted from the start: no posting list is read (a definition
  // that is not a candidate fails its check as it would have).
  const onlyDefinitions = result.speculative || definitionsOnly?.() === true;
  const candidates = onlyDefinitions
    ? onBranches === null
      ? first
      : intersectSorted(onBranches, first)
    : useIndex
      ? known !== undefined
        ? known
        : candidatesOf()
      : onBranches;
  // The rest of the shard is left unexamined: its answer is not exhaustive.
  if (onlyDefinitions) result.more = true;
  return { onBranches, candidates, examine };
}

/** `docs` (ascending) without those past the shard's last document: a list made for another version of the file names nothing there. */
function inShard(docs: Uint32Array, docCount: number): Uint32Array {
  let n = docs.length;
  while (n > 0 && docs[n - 1]! >= docCount) n--;
  return n === docs.length ? docs : docs.subarray(0, n);
}

/**
 * Every document a search of `plan` would examine in `shard` for `members`, ascending: the
 * union of its branch classes' candidates, each as a whole search's refinement leaves them
 * (every list that pays is read); undefined when the index rules out none in a class (each
 * of its documents is then a candidate). Given back as ShardSearchOptions.docs, the search
 * examines those documents only and answers as it would have (searcher.ts: a search that
 * finds its candidates in the thread that asks, and keeps a few documents there). Null
 * when the plan's filters leave the shard no branch class: its search would examine
 * nothing and count it as skipped by the filters (searchShardSteps).
 */
export function shardCandidates(shard: Shard, plan: Plan, matchers: Matcher[], members: readonly SearchMember[]): Uint32Array | null | undefined {
  const counters = emptyCounters();
  let out: Uint32Array = new Uint32Array(0);
  const classes = branchClasses(plan, shard, members);
  if (classes.length === 0) return null;
  for (const cls of classes) {
    // (Kept in the class: a class decided once may be searched twice, branch-classes.ts.)
    const onBranches = (cls.docs ??= classDocs(shard, cls.byMember));
    const found = uncappedWithin(onBranches, cls.tree, shard, counters, matchers);
    if (found === null) return undefined;
    out = unionSorted(out, found);
  }
  return out;
}

/** A class being examined, as recordHit needs it. */
interface ClassHits {
  cls: BranchClass;
  /** The class's one member, when it has one; else -1. */
  single: number;
  /** Per member, the names of its one branch in the class (one list for all its hits). */
  names: Map<number, string[]>;
}

/**
 * Examines a class's candidates, definitions first, until they run out, the search has
 * enough, or it is stopped; yields before a document whenever `shouldYield` says so.
 */
function* searchClass(scan: ShardScan, cls: BranchClass, firstClass: boolean): Generator<undefined, void, undefined> {
  const { shard, counters, result, useIndex, isCancelled } = scan;
  const { matchers, limit, definitionsOnly, shouldYield } = scan.options;
  const tc = process.hrtime.bigint();
  const { onBranches, candidates, examine } = selectCandidates(scan, cls, firstClass);
  let t1 = process.hrtime.bigint();
  scan.construction += Number(t1 - tc);
  const at: ClassHits = { cls, single: cls.byMember.size === 1 ? cls.byMember.keys().next().value! : -1, names: new Map() };
  let { order: ordered, front } = definitionsFirst(candidates, scan.first!, shard.docCount);
  let total = ordered === null ? shard.docCount : ordered.length;
  let readAhead = new ReadAhead(shard, ordered, total);
  if (useIndex) counters.ngramMatches += total;
  let tried = 0;
  let matched = 0;
  // A document whose evaluation was interrupted (a costly one: many terms, a large file)
  // and its context, kept for the second evaluation, which is not interrupted. A
  // definition (examined first, whole) is interrupted only to yield, never stopped.
  let interrupted: DocContext | undefined;
  let definition = false;
  const interruptNow = (): boolean => shouldYield?.() === true || (!definition && isCancelled());
  for (let i = 0; i < total; i++) {
    if (ordered !== null && refineDue(examine, tried, matched, total - i)) {
      examine.capped = false;
      ordered = refine(ordered, i, uncappedWithin(onBranches, cls.tree, shard, counters, matchers), shard.docCount, counters);
      total = ordered.length;
      readAhead = new ReadAhead(shard, ordered, total);
      if (i >= total) break;
    }
    if (shouldYield?.() === true) {
      scan.search += Number(process.hrtime.bigint() - t1);
      yield;
      t1 = process.hrtime.bigint();
    }
    const stop = result.found > limit || (i >= front && (isCancelled() || definitionsOnly?.() === true));
    if (stop) {
      counters.filesSkipped += total - i;
      result.more = true;
      break;
    }
    const doc = ordered === null ? i : ordered[i]!;
    readAhead.at(i);
    const again = interrupted?.doc === doc ? interrupted : undefined;
    interrupted = undefined;
    const ctx = again ?? new DocContext(shard, doc, counters, useIndex);
    definition = i < front;
    ctx.interrupt = again ? undefined : interruptNow;
    const found: Found = { content: [], names: [], terms: [] };
    let matches: boolean;
    try {
      matches = evaluate(cls.tree, ctx, matchers, limit - result.found + 1, found);
    } catch (err) {
      if (!isInterruption(err)) throw err;
      // Yield or stop (above) before this document, then evaluate it again.
      interrupted = ctx;
      i--;
      continue;
    }
    scan.examined++;
    counters.filesConsidered++;
    tried++;
    if (!matches) continue;
    matched++;
    recordHit(scan, at, ctx, found, i < front);
  }
  scan.search += Number(process.hrtime.bigint() - t1);
}

/** Makes a matching document a hit of the class (or adds the class's branches to its hit), handing hits over to `partial` when due. */
function recordHit(scan: ShardScan, at: ClassHits, ctx: DocContext, found: Found, definition: boolean): void {
  const { shard, result, byDoc } = scan;
  const { plan, locate, partial } = scan.options;
  const doc = ctx.doc;
  const member = at.single >= 0 ? at.single : shard.memberOf(doc);
  const memberBranches = at.cls.byMember.get(member)!;
  // A search of versions names no branch (Plan.versions): none is tested.
  const branches = plan.versions ? [] : memberBranches.length === 1 ? memberBranches : memberBranches.filter((b) => shard.branches.has(b, doc));
  // One class, a member's one branch: every hit's branch list is the same, and nothing
  // changes it (only several classes add to and sort a hit's): one list for all of them.
  let branchNames: string[];
  if (plan.versions) branchNames = [];
  else if (byDoc === undefined && memberBranches.length === 1) {
    let names = at.names.get(member);
    if (!names) at.names.set(member, (names = [shard.branches.names[memberBranches[0]!]!]));
    branchNames = names;
  } else branchNames = branches.map((b) => shard.branches.names[b]!);
  const seen = byDoc?.get(doc);
  if (seen) {
    // Matched on branches of an earlier class too: one result, every branch.
    seen.branches.push(...branches.map((b) => shard.branches.names[b]!));
    return;
  }
  // (Pushed, not new Array(n).fill(0): fill on a fresh array is a slow builtin.)
  const termFreqs: number[] = [];
  for (let t = 0; t < plan.terms; t++) termFreqs.push(0);
  for (const id of found.terms) termFreqs[id]!++;
  const ranges = normalize(found.content);
  // Whether a match is a whole word is decided now, while the document's bytes around
  // it are in the CPU's caches: scoring comes a few hundred documents later.
  const hit: ShardHit = {
    doc,
    member,
    content: ctx.content,
    ranges,
    nameRanges: normalize(found.names),
    branches: branchNames,
    termFreqs,
    score: 0,
    definition,
    wholeWord: ctx.content !== undefined && hasWholeWord(ctx.content, ranges),
  };
  if (locate && ctx.content && hit.ranges.length > 0) {
    const chunks = shapeChunks(ctx.content, hit.ranges, locate.contextLines, locate.keep);
    if (chunks) hit.chunks = chunks;
    hit.lines = chunks ? chunks.lines : locateLines(ctx.content, hit.ranges);
  }
  result.found += rangeCount(hit.ranges, hit.nameRanges);
  if (byDoc) {
    byDoc.set(doc, hit);
    return;
  }
  scan.kept.push(hit);
  // One class only: a hit handed over can no longer gain another class's branches.
  if (partial?.due(scan.kept.length)) {
    scan.termDocs ??= termDocFrequencies(shard, plan);
    handOver(shard, scan.kept, scan.termDocs, plan, partial);
    scan.kept = [];
  }
}

/** Scores `hits` (found since the last hand-over) and hands them to `partial`, ascending. */
function handOver(shard: Shard, hits: ShardHit[], termDocs: number[], plan: Plan, partial: PartialHits): void {
  hits.sort((a, b) => a.doc - b.doc);
  score(shard, hits, termDocs, plan);
  partial.send(hits);
}

/**
 * Sets each hit's score (hit-score.ts). A search of versions (Plan.versions) is not ranked:
 * its answer is every version found, which the history's spans order by their commits, and
 * scoring hundreds of versions of one file (their definitions looked up in the symbol
 * index) was a tenth of such a search.
 */
function score(shard: Shard, hits: ShardHit[], termDocs: number[], plan: Plan): void {
  if (plan.versions) {
    for (const h of hits) h.score = 0;
    return;
  }
  const scores = scoreHits(shard, hits, termDocs, definitionsConfined(plan));
  hits.forEach((h, k) => (h.score = scores[k]!));
}

/** The search's result once its classes are done: its hits in document order, scored, and its counters. */
function finish(scan: ShardScan, severalClasses: boolean): void {
  const { shard, result, counters } = scan;
  const { plan, limit } = scan.options;
  counters.matchTreeConstruction = scan.construction;
  counters.matchTreeSearch = scan.search;
  result.hits = (scan.byDoc ? [...scan.byDoc.values()] : scan.kept).sort((a, b) => a.doc - b.doc);
  if (severalClasses) sortBranches(shard, result.hits);
  if (result.found > limit) result.more = true;
  if (result.hits.length > 0) {
    result.termDocs = scan.termDocs ?? termDocFrequencies(shard, plan);
    score(shard, result.hits, result.termDocs, plan);
  }
  if (scan.examined === 0) result.filtered = shard.docCount > 0;
}
