// Evaluates a plan on one shard: specialise it to the shard (match-tree.ts), derive the
// candidate documents from the posting lists (cheap, may over-approximate), then decide
// each candidate exactly, cheapest test first, collecting the match ranges of the
// positive terms, and score the hits. Runs in a search worker, which then shapes the hits
// into file results (search-worker.ts, shape-file.ts); the main thread merges them.

import { intersectPostings, intersectSorted, locateLines, shapeChunks, unionSorted, type CoreChunks } from '../../core/index.ts';
import type { RepoFacts, Shard, ShardFacts } from '../index/shard-reader.ts';
import type { NgramTable } from '../index/ngram-table.ts';
import type { Plan, Term } from '../query/terms.ts';
import type { NgramQuery } from '../query/ngram-query.ts';
import { repoAtom, repoAtoms, specialize, type RepoAtom, type Tree } from './match-tree.ts';
import type { Matcher } from './matcher.ts';
import { symbolNameRange } from '../symbols/name-range.ts';
import { symbolHits, type SymbolHits } from './symbol-search.ts';
import { planMaxDocs, planReadsContent, termDocFrequencies } from './term-stats.ts';
import { scoreHits } from './hit-score.ts';
import { hasWholeWord } from './rank.ts';
import { definingDocs, definitionsConfined, definitionsFirst, positiveLiterals } from './definition-first.ts';
import { emptyCounters, type ShardCounters } from './types.ts';
import { ReadAhead } from './read-ahead.ts';
import { bySegments, ruledOut } from './segment-windows.ts';

export interface ShardHit {
  doc: number;
  /** The shard's repository holding it (shard-reader.ts members): 0 but in a compound shard. */
  member: number;
  /** Flat [start, end, ...] byte ranges in the content, ascending, not overlapping. */
  ranges: number[];
  /**
   * Where `ranges` lie (shape.ts LineTable), located as the document is decided, while it is
   * in the core's memory: shaping then does not copy it there again to count its lines.
   * Only when the caller asked (searchShard's `locate`), the document was read (not ranges
   * from the symbol index) and ranges were found.
   */
  lines?: number[];
  /**
   * The file result's chunks as JSON (core shapeChunks), written with `lines` as the
   * document is decided, while it is in the core's memory: for a caller that shapes every
   * hit whole (a stream; searchShard's `locate`). shape-file.ts inserts the symbols.
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

/** A repository of a shard to search (shard-reader.ts members), with its current record. */
export interface SearchMember {
  member: number;
  /** Its flags as listed now (the manifest's): they override those the shard stored. */
  repo?: RepoFacts | undefined;
}

/** Branches of the shard's repositories whose versions the same tree decides (see branchClasses). */
interface BranchClass {
  /** Its branches (indexes into the shard's branch lists) by member, members ascending. */
  byMember: Map<number, number[]>;
  tree: Tree;
  /** Its documents (classDocs), when known before the search. */
  docs?: Uint32Array | null;
}

const NEVER = (): boolean => false;

/** Thrown out of a document's evaluation that is interrupted (DocContext.between). */
const INTERRUPTED = new Error('interrupted');

/** Per-document evaluation state: the content is read at most once. */
class DocContext {
  content: Buffer | undefined;
  /**
   * Asked between two terms of the document: true interrupts its evaluation (the search
   * yields or was cancelled); it is then evaluated again from its start, uninterrupted.
   */
  interrupt: (() => boolean) | undefined;
  constructor(
    readonly shard: Shard,
    readonly doc: number,
    readonly counters: ShardCounters,
    /** False for the brute-force oracle: no posting and no symbol index is read. */
    readonly useIndex: boolean,
  ) {}

  bytes(): Buffer {
    if (!this.content) {
      this.content = this.shard.contentOf(this.doc);
      this.counters.filesLoaded++;
      this.counters.contentBytesLoaded += this.content.length;
    }
    return this.content;
  }

  /** Between two terms: ends the evaluation when it is to be interrupted. */
  between(): void {
    if (this.interrupt?.() === true) throw INTERRUPTED;
  }

  /** The shard's word that the document holds no code point folding to ASCII (Matcher.find); never taken by the oracle. */
  asciiFoldsOnly(): boolean {
    return this.useIndex && this.shard.asciiFoldsOnly(this.doc);
  }
}

interface Found {
  content: number[];
  names: number[];
  /** The term id of each content range (one per pair in `content`). */
  terms: number[];
}

/**
 * A shard searched speculatively whose trigram tables bound its matching documents to at
 * most this many (or whose plan reads no content: term-stats.ts planReadsContent) has its
 * candidates found first (posting lists read and intersected): when they are few, it is
 * searched whole after all. The tables bound each trigram alone: over Linux a rare
 * identifier's bound was 83 to 698 documents a shard for 0 or 1 candidate, and a `file:`
 * filter's name trigrams bound just as loosely. Above it the lists cost more to read than
 * the bet saves (common words: thousands).
 */
const SPECULATE_PROBE_DOCS = 2048;

/** How a shard is searched (searchShard). */
export interface ShardSearchOptions {
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
}

/** Searches a shard to its end (searchShardSteps, never suspended). `matchers`: one per term id of the plan (matcher.ts). */
export function searchShard(shard: Shard, plan: Plan, matchers: Matcher[], options: ShardSearchOptions): ShardSearchResult {
  const steps = searchShardSteps(shard, plan, matchers, { ...options, shouldYield: undefined });
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Searches a shard, suspending (yielding) before a document whenever `shouldYield` says
 * so: its result is the generator's return value. `matchers`: one per term id of the plan
 * (matcher.ts).
 */
export function* searchShardSteps(shard: Shard, plan: Plan, matchers: Matcher[], options: ShardSearchOptions): Generator<undefined, ShardSearchResult, undefined> {
  const { limit, definitionsOnly, locate, partial, speculate, shouldYield } = options;
  const isCancelled = options.isCancelled ?? NEVER;
  const useIndex = options.useIndex ?? true;
  const counters = emptyCounters();
  const result: ShardSearchResult = { hits: [], counters, filtered: false, more: false, found: 0, termDocs: [], speculative: false };
  const t0 = process.hrtime.bigint();
  const classes = branchClasses(plan, shard, options.members ?? everyMember(shard));
  let construction = Number(process.hrtime.bigint() - t0);
  if (classes.length === 0) {
    result.filtered = true;
    counters.matchTreeConstruction = Number(process.hrtime.bigint() - t0);
    return result;
  }
  counters.shardFilesConsidered = shard.docCount;
  const regexBefore = matchers.reduce((n, m) => n + m.regexpsConsidered, 0);
  // Several branch classes: a document may match in more than one (then one hit gains the
  // branches), so hits are kept by document. One class (the common case): in a list, and
  // handed over to `partial` from it.
  const byDoc = classes.length > 1 ? new Map<number, ShardHit>() : undefined;
  /** With one class, the hits not yet handed over to `partial`; and the shard's term statistics once needed. */
  let kept: ShardHit[] = [];
  let termDocs: number[] | undefined;
  let examined = 0;
  let search = 0;
  /** Documents examined before the others (definition-first.ts), found once per shard. */
  let first: Uint32Array | undefined;
  for (const cls of classes) {
    /** Per member, the names of its one branch in the class (one list for all its hits). */
    const clsNames = new Map<number, string[]>();
    const single = cls.byMember.size === 1 ? cls.byMember.keys().next().value! : -1;
    const tc = process.hrtime.bigint();
    // Documents on none of the class's branches are other branches' versions (or dead),
    // or another repository's.
    const onBranches = cls.docs !== undefined ? cls.docs : classDocs(shard, cls.byMember);
    first ??= definingDocs(shard, positiveLiterals(plan), useIndex);
    const examine: Examine = { cap: Math.min(EXAMINE_PER_LIMIT * (limit + 1), PRIOR_MAX_CANDIDATES), capped: false };
    const candidatesOf = (): Uint32Array | null => intersectAll(onBranches, [cls.tree], (t) => candidateDocs(t, shard, counters, matchers, examine));
    let known: Uint32Array | null | undefined;
    // Decided once per shard, before its first class: every class is searched alike.
    if (speculate !== undefined && useIndex && cls === classes[0] && definitionsOnly?.() !== true) {
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
    const candidates = onlyDefinitions ? (onBranches === null ? first : intersectSorted(onBranches, first)) : useIndex ? (known !== undefined ? known : candidatesOf()) : onBranches;
    // The rest of the shard is left unexamined: its answer is not exhaustive.
    if (onlyDefinitions) result.more = true;
    let t1 = process.hrtime.bigint();
    construction += Number(t1 - tc);
    let { order: ordered, front } = definitionsFirst(candidates, first, shard.docCount);
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
      if (examine.capped && tried >= REFINE_AFTER && matched < tried * REFINE_HIT_RATE && ordered !== null && total - i > REFINE_AFTER) {
        examine.capped = false;
        ordered = refine(ordered, i, intersectAll(onBranches, [cls.tree], (t) => candidateDocs(t, shard, counters, matchers)), shard.docCount, counters);
        total = ordered.length;
        readAhead = new ReadAhead(shard, ordered, total);
        if (i >= total) break;
      }
      if (shouldYield?.() === true) {
        search += Number(process.hrtime.bigint() - t1);
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
        if (err !== INTERRUPTED) throw err;
        // Yield or stop (above) before this document, then evaluate it again.
        interrupted = ctx;
        i--;
        continue;
      }
      examined++;
      counters.filesConsidered++;
      tried++;
      if (!matches) continue;
      matched++;
      const member = single >= 0 ? single : shard.memberOf(doc);
      const memberBranches = cls.byMember.get(member)!;
      const branches = memberBranches.length === 1 ? memberBranches : memberBranches.filter((b) => shard.branches.has(b, doc));
      // One class, a member's one branch: every hit's branch list is the same, and nothing
      // changes it (only several classes add to and sort a hit's): one list for all of them.
      let branchNames: string[];
      if (byDoc === undefined && memberBranches.length === 1) {
        let names = clsNames.get(member);
        if (!names) clsNames.set(member, (names = [shard.branches.names[memberBranches[0]!]!]));
        branchNames = names;
      } else branchNames = branches.map((b) => shard.branches.names[b]!);
      const seen = byDoc?.get(doc);
      if (seen) {
        // Matched on branches of an earlier class too: one result, every branch.
        seen.branches.push(...branches.map((b) => shard.branches.names[b]!));
        continue;
      }
      // (Pushed, not new Array(n).fill(0): fill on a fresh array is a slow builtin.)
      const termFreqs: number[] = [];
      for (let t = 0; t < plan.terms; t++) termFreqs.push(0);
      for (const id of found.terms) termFreqs[id]!++;
      const ranges = normalize(found.content);
      // Whether a match is a whole word is decided now, while the document's bytes around
      // it are in the CPU's caches: scoring comes a few hundred documents later.
      const hit: ShardHit = { doc, member, content: ctx.content, ranges, nameRanges: normalize(found.names), branches: branchNames, termFreqs, score: 0, definition: i < front, wholeWord: ctx.content !== undefined && hasWholeWord(ctx.content, ranges) };
      if (locate && ctx.content && hit.ranges.length > 0) {
        const chunks = shapeChunks(ctx.content, hit.ranges, locate.contextLines, locate.keep);
        if (chunks) hit.chunks = chunks;
        hit.lines = chunks ? chunks.lines : locateLines(ctx.content, hit.ranges);
      }
      result.found += rangeCount(hit.ranges, hit.nameRanges);
      if (byDoc) {
        byDoc.set(doc, hit);
        continue;
      }
      kept.push(hit);
      // One class only: a hit handed over can no longer gain another class's branches.
      if (partial && partial.due(kept.length)) {
        termDocs ??= termDocFrequencies(shard, plan);
        handOver(shard, kept, termDocs, definitionsConfined(plan), partial);
        kept = [];
      }
    }
    search += Number(process.hrtime.bigint() - t1);
    if (result.more) break;
  }
  counters.matchTreeConstruction = construction;
  counters.matchTreeSearch = search;
  result.hits = (byDoc ? [...byDoc.values()] : kept).sort((a, b) => a.doc - b.doc);
  if (classes.length > 1) {
    // In the shard's order of the member's branches (names are unique within a member).
    const orders = new Map<number, Map<string, number>>();
    for (const h of result.hits) {
      let order = orders.get(h.member);
      if (!order) {
        const m = shard.members[h.member]!;
        orders.set(h.member, (order = new Map(shard.branches.names.slice(m.branchFirst, m.branchEnd).map((n, i) => [n, i]))));
      }
      h.branches.sort((a, b) => order.get(a)! - order.get(b)!);
    }
  }
  if (result.found > limit) result.more = true;
  if (result.hits.length > 0) {
    result.termDocs = termDocs ?? termDocFrequencies(shard, plan);
    const scores = scoreHits(shard, result.hits, result.termDocs, definitionsConfined(plan));
    result.hits.forEach((h, i) => (h.score = scores[i]!));
  }
  if (examined === 0) result.filtered = shard.docCount > 0;
  counters.regexpsConsidered = matchers.reduce((n, m) => n + m.regexpsConsidered, 0) - regexBefore;
  return result;
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

/** Every repository of the shard, as it stored them (one list per shard). */
function everyMember(shard: Shard): SearchMember[] {
  let all = allMembers.get(shard);
  if (!all) allMembers.set(shard, (all = shard.members.map((_, member) => ({ member }))));
  return all;
}

const allMembers = new WeakMap<Shard, SearchMember[]>();

/**
 * Per shard, the class of its members' default branches for the last members list a
 * search gave (a worker gives the same list while the index does not change): a query
 * without a repository or branch filter puts every member there, and a compound shard's
 * hundreds of members are then grouped once, not once per query.
 */
const plainClasses = new WeakMap<Shard, { members: readonly SearchMember[]; byMember: Map<number, number[]>; docs: Uint32Array | null; first: number }>();

/** The repository and ref filters of each plan (kept while the plan is). */
const atomsOfPlan = new WeakMap<Plan, RepoAtom[]>();

/**
 * Groups the branches of the repositories searched by the tree the plan becomes on them.
 * Without a `branch:` filter only each repository's default branch is searched. The
 * repository and ref filters (repoAtoms) are decided per repository and branch; those
 * that come out the same share a tree (usually one or two classes however many
 * repositories and branches there are: a compound shard's hundreds of repositories cost
 * one specialisation, not one each), and classes whose tree is false are dropped.
 */
function branchClasses(plan: Plan, shard: Shard, members: readonly SearchMember[]): BranchClass[] {
  let atoms = atomsOfPlan.get(plan);
  if (!atoms) atomsOfPlan.set(plan, (atoms = repoAtoms(plan.root)));
  const names = shard.branches.names;
  if (atoms.length === 0 && plan.branches.length === 0) {
    let plain = plainClasses.get(shard);
    if (plain?.members !== members) {
      const byMember = new Map<number, number[]>();
      for (const { member } of members) {
        const m = shard.members[member]!;
        if (m.end !== m.first) byMember.set(member, [m.branchFirst]);
      }
      plain = { members, byMember, docs: byMember.size === 0 ? null : classDocs(shard, byMember), first: byMember.size === 0 ? -1 : byMember.keys().next().value! };
      plainClasses.set(shard, plain);
    }
    if (plain.first < 0) return [];
    const first = plain.first;
    const repo = members.find((m) => m.member === first)?.repo;
    const tree = specialize(plan.root, shard.facts(first, repo), names[shard.members[first]!.branchFirst]!);
    return tree.op === 'const' && !tree.value ? [] : [{ byMember: plain.byMember, tree, docs: plain.docs }];
  }
  const classes = new Map<string, BranchClass>();
  for (const { member, repo } of members) {
    const m = shard.members[member]!;
    if (m.end === m.first) continue;
    // (Facts only when a filter or the tree needs them: one object less per repository.)
    let facts: ShardFacts | undefined;
    const last = plan.branches.length === 0 ? m.branchFirst + 1 : m.branchEnd;
    for (let b = m.branchFirst; b < last; b++) {
      let key = '';
      if (atoms.length > 0) {
        facts ??= shard.facts(member, repo);
        for (const a of atoms) key += repoAtom(a, facts, names[b]!) ? '1' : '0';
      }
      let cls = classes.get(key);
      if (!cls) {
        facts ??= shard.facts(member, repo);
        cls = { byMember: new Map(), tree: specialize(plan.root, facts, names[b]!) };
        classes.set(key, cls);
      }
      const list = cls.byMember.get(member);
      if (list) list.push(b);
      else cls.byMember.set(member, [b]);
    }
  }
  return [...classes.values()].filter((c) => !(c.tree.op === 'const' && !c.tree.value));
}

/**
 * The documents on at least one of a class's branches, ascending; null when that is every
 * document of the shard. Members hold ascending ranges of documents, so their lists follow
 * one another.
 */
function classDocs(shard: Shard, byMember: BranchClass['byMember']): Uint32Array | null {
  const lists: Uint32Array[] = [];
  let total = 0;
  for (const branches of byMember.values()) {
    const docs = branches.length === 1 ? shard.branches.docs(branches[0]!) : shard.branches.docsOnAny(branches, shard.docCount);
    lists.push(docs);
    total += docs.length;
  }
  if (total === shard.docCount) return null;
  if (lists.length === 1) return lists[0]!;
  const out = new Uint32Array(total);
  let at = 0;
  for (const l of lists) {
    out.set(l, at);
    at += l.length;
  }
  return out;
}

/**
 * Appends `src` to `dst` one by one: a document can hold hundreds of thousands of ranges
 * (`x*` on a 250 KB file), too many to spread as arguments (the main thread's smaller
 * stack overflows first: a search in this thread failed where a worker's did not).
 */
function append(dst: number[], src: ArrayLike<number>): void {
  for (let i = 0; i < src.length; i++) dst.push(src[i]!);
}

/**
 * Decides one document. Positive terms append their ranges to `out`; an AND that fails
 * takes back what its children appended; nothing under a NOT is recorded.
 */
function evaluate(t: Tree, ctx: DocContext, matchers: Matcher[], max: number, out: Found | null): boolean {
  switch (t.op) {
    case 'const':
      return t.value;
    case 'lang':
      return ctx.shard.languageIndex(ctx.doc) === t.lang;
    case 'content': {
      const m = matchers[t.id]!;
      // Only the windows its segment masks leave can hold a match (segment-windows.ts).
      if (ctx.useIndex && ruledOut(t, ctx.shard, ctx.doc, ctx.bytes(), m, ctx.asciiFoldsOnly())) return false;
      if (!out) return m.exists(ctx.bytes(), ctx.asciiFoldsOnly()); // under a NOT: whether it matches at all
      const ranges = m.find(ctx.bytes(), max, ctx.asciiFoldsOnly());
      if (ranges.length === 0) return false;
      if (out) {
        append(out.content, ranges);
        for (let i = 0; i < ranges.length; i += 2) out.terms.push(t.id);
        // The term is also highlighted where it occurs in the path (it matches on content).
        append(out.names, m.find(ctx.shard.nameBuffer(ctx.doc), max));
      }
      return true;
    }
    case 'file': {
      const ranges = matchers[t.id]!.find(ctx.shard.nameBuffer(ctx.doc), max);
      if (ranges.length === 0) return false;
      if (out) append(out.names, ranges);
      return true;
    }
    case 'sym': {
      const ranges = ctx.useIndex && ctx.shard.symbolIndex
        ? (indexedSymbols(t, ctx.shard, matchers[t.id]!, ctx.counters).ranges.get(ctx.doc) ?? []).slice(0, 2 * max)
        : symbolRanges(ctx, matchers[t.id]!, max);
      if (ranges.length === 0) return false;
      if (out) {
        append(out.content, ranges);
        for (let i = 0; i < ranges.length; i += 2) out.terms.push(t.id);
      }
      return true;
    }
    case 'not':
      ctx.between();
      // Only whether the child matches counts (one match will do). A document outside the
      // child's candidates cannot match it, and one the content-words index lists under
      // the child's word does: both are decided without reading it.
      // (Only from checked sections: damage in a posting list or the word lists must not
      // let a document that holds the negated term through.)
      if (ctx.useIndex && readsContent(t.child) && ctx.shard.sectionsChecked()) {
        if (!mayMatch(t.child, ctx, matchers)) return true;
        if (surelyMatches(t.child, ctx, matchers)) return false;
      }
      return !evaluate(t.child, ctx, matchers, 1, null);
    case 'and': {
      // Negations first: one match of the negated term rules the document out, where the
      // positive terms would collect every match first (`mutex_lock -mutex_unlock` reads a
      // few hundred bytes of most of its candidates, not all of them). A negation writes
      // nothing to `out`, so the order changes no answer.
      for (const child of t.children) if (child.op === 'not' && !evaluate(child, ctx, matchers, max, null)) return false;
      const c = out?.content.length ?? 0;
      const n = out?.names.length ?? 0;
      const k = out?.terms.length ?? 0;
      for (const child of t.children) {
        if (child.op === 'not') continue;
        ctx.between();
        if (!evaluate(child, ctx, matchers, max, out)) {
          if (out) {
            out.content.length = c;
            out.names.length = n;
            out.terms.length = k;
          }
          return false;
        }
      }
      return true;
    }
    case 'or': {
      // Every alternative is evaluated, so that all of them are highlighted.
      let any = false;
      for (const child of t.children) {
        ctx.between();
        if (evaluate(child, ctx, matchers, max, out)) any = true;
      }
      return any;
    }
  }
}

/** Candidates of the trees under a NOT, per tree (a tree is specialised to one shard). */
const negatedCandidates = new WeakMap<Tree, Uint32Array | null>();

/**
 * Whether deciding `t` reads the document: only then is the NOT's candidate list worth its
 * postings (a path or a language is decided without reading anything).
 */
function readsContent(t: Tree): boolean {
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

/** False when the document is not among `t`'s candidates (so `t` does not match it). */
function mayMatch(t: Tree, ctx: DocContext, matchers: Matcher[]): boolean {
  let docs = negatedCandidates.get(t);
  if (docs === undefined) {
    docs = candidateDocs(t, ctx.shard, ctx.counters, matchers, NEGATED);
    negatedCandidates.set(t, docs);
  }
  return docs === null || holds(docs, ctx.doc);
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

/** Whether `t` matches the document for certain without reading it (listedDocs). */
function surelyMatches(t: Tree, ctx: DocContext, matchers: Matcher[]): boolean {
  const docs = listedDocs(t, ctx.shard, matchers);
  return docs !== null && holds(docs, ctx.doc);
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

/** Whether ascending `docs` holds `doc` (bisection). */
function holds(docs: Uint32Array, doc: number): boolean {
  let lo = 0;
  let hi = docs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = docs[mid]!;
    if (v < doc) lo = mid + 1;
    else if (v > doc) hi = mid - 1;
    else return true;
  }
  return false;
}

/** A sym: term's definitions from the shard's symbol index (symbol-search.ts). */
function indexedSymbols(t: { term: Term }, shard: Shard, matcher: Matcher, counters: ShardCounters): SymbolHits {
  return symbolHits(shard, shard.symbolIndex!, t.term, matcher, (q) => evalNgrams(shard.symbolNames, q, counters));
}

/** The name of each symbol definition whose name matches, as a range on its line (shards without a symbol index, and the oracle). */
function symbolRanges(ctx: DocContext, matcher: Matcher, max: number): number[] {
  const out: number[] = [];
  for (const s of ctx.shard.symbolsOf(ctx.doc)) {
    if (out.length / 2 >= max) break;
    if (matcher.find(Buffer.from(s.name), 1).length === 0) continue;
    const range = symbolNameRange(ctx.bytes(), s.line, s.name);
    if (range) out.push(range[0], range[1]);
  }
  return out;
}

/** Sorts flat ranges and merges the ones that overlap (terms of an AND may overlap). */
export function normalize(flat: number[]): number[] {
  if (flat.length <= 2) return flat;
  // One term's matches come ascending and apart: nothing to sort or merge.
  let apart = true;
  for (let i = 2; i < flat.length && apart; i += 2) apart = flat[i]! > flat[i - 2]! && flat[i]! >= flat[i - 1]!;
  if (apart) return flat;
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: number[] = [];
  for (const [s, e] of pairs) {
    const last = out.length - 1;
    if (out.length > 0 && s < out[last]!) out[last] = Math.max(out[last]!, e);
    else if (out.length > 0 && s === out[last - 1] && e === out[last]) continue; // the same empty or equal range twice
    else out.push(s, e);
  }
  return out;
}

/**
 * `ordered` with the documents from `from` on that are not among `refined` (ascending;
 * null: all are) left out, the candidate count lowered to match. Out of searchShard's
 * loop, as handOver: what its loop body holds decides what V8 inlines into it.
 */
function refine(ordered: Uint32Array, from: number, refined: Uint32Array | null, docCount: number, counters: ShardCounters): Uint32Array {
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

/** Scores `hits` (found since the last hand-over) and hands them to `partial`, ascending. */
function handOver(shard: Shard, hits: ShardHit[], termDocs: number[], confined: boolean, partial: PartialHits): void {
  hits.sort((a, b) => a.doc - b.doc);
  const scores = scoreHits(shard, hits, termDocs, confined);
  hits.forEach((h, k) => (h.score = scores[k]!));
  partial.send(hits);
}

/**
 * The documents that may match `t`, ascending, or null for "every document".
 * Sound: each node returns a superset of the documents it matches.
 */
export function candidateDocs(t: Tree, shard: Shard, counters: ShardCounters, matchers: Matcher[], examine: Examine = UNCAPPED): Uint32Array | null {
  switch (t.op) {
    case 'const':
      return t.value ? null : new Uint32Array(0);
    case 'not':
      return null;
    case 'lang':
      return shard.docsWithLanguage(t.lang);
    case 'content': {
      const docs = evalNgrams(shard.content, t.term.ngrams, counters, examine);
      return docs === null || shard.contentSegments === undefined || examine.segments === false ? docs : bySegments(t, shard, docs, counters, DECODE_VS_SCAN, examine);
    }
    case 'file':
      return evalNgrams(shard.names, t.term.ngrams, counters);
    case 'sym':
      // With a symbol index the candidates are exact: the documents of the matching definitions.
      if (shard.symbolIndex) return indexedSymbols(t, shard, matchers[t.id]!, counters).docs;
      return evalNgrams(shard.symbolNames, t.term.ngrams, counters);
    case 'and': {
      // A negated child rules out the documents it surely matches (listedDocs) before any
      // is read: `mutex_lock -mutex_unlock` keeps 135 of Linux's 5,512 candidates.
      let docs = intersectAll(null, t.children, (c) => candidateDocs(c, shard, counters, matchers, examine));
      for (const c of t.children) {
        if (docs === null || docs.length === 0) break;
        const out = c.op === 'not' && readsContent(c.child) ? listedDocs(c.child, shard, matchers) : null;
        if (out !== null) docs = without(docs, out);
      }
      return docs;
    }
    case 'or':
      return uniteAll(t.children, (c) => candidateDocs(c, shard, counters, matchers, examine));
  }
}

/**
 * Intersection of `start` and every item's documents (null: every document), stopping at
 * the first empty set: later items are not evaluated, so no more postings are read.
 */
function intersectAll<T>(start: Uint32Array | null, items: readonly T[], docsOf: (item: T) => Uint32Array | null): Uint32Array | null {
  let acc = start;
  for (const item of items) {
    const docs = docsOf(item);
    if (docs === null) continue;
    acc = acc === null ? docs : intersectSorted(acc, docs);
    if (acc.length === 0) return acc;
  }
  return acc;
}

/**
 * A share of the candidates that an intersection must rule out for the next, larger list
 * to be worth decoding: once a list took fewer than this, the rest (each at least as long
 * and, being commoner, less telling) are left to the verification, which checks every
 * candidate anyway, unless the next list is cheap next to what it may save
 * (DECODE_VS_SCAN). Measured on Linux 6.1: the eight trigrams of `mutex_lock` take a
 * shard's candidates 1,380 → 1,009 → 969 → 968 → 965 → …; the last five lists (the
 * longest) cost more to decode and intersect than the few candidates they remove.
 */
const MIN_SHRINK = 0.02;

/**
 * Merging a posting byte costs about this many times scanning a document byte (the core's
 * LEB128 decoding against its 64-byte-a-round literal scan). Past MIN_SHRINK a list is
 * still read when it pays for itself by ruling out as many candidates as the last list did
 * (at least one): with few candidates left a few KB of postings save a document read each
 * (`amdgpu_vm_bo_update` on Linux: 141 -> 27 documents read); with many, a list that took
 * almost none is not worth its bytes (`mutex_lock`).
 */
const DECODE_VS_SCAN = 10;

/**
 * What share of the candidates a list with follow bits to check is assumed to rule out
 * (past MIN_SHRINK, in the DECODE_VS_SCAN rule), instead of the share the last list took:
 * a literal's false candidates hold all its trigrams and fail at one junction of them,
 * which only that trigram's masks catch, so the last list's share says little about the
 * next one's. Measured on Linux 6.1, one thread over the ten shards (documents read, CPU):
 * `btrfs_extent_same_range` 27 -> 5, 0.57 -> 0.36 ms; `tcp_rack_detect_loss` 21 -> 6;
 * `sock_sendmsg` 306 -> 237, 2.8 -> 2.1 ms; `kfree_skb` 2.6 -> 1.9 ms. 1.0 read more lists
 * for no fewer documents.
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
 * removed (`"return -EINVAL"` on Linux 6.1: 9.5 → 3.7 ms of CPU over the shards for the
 * same documents examined). Where the candidates turn out mostly false the shard refines
 * them with the prior after all (REFINE_AFTER).
 */
const EXAMINE_PER_LIMIT = 4;

/**
 * Nor past this many candidates, whatever the limit: a larger set is refined after
 * REFINE_AFTER examined documents if it turns out mostly false, which wastes at most half
 * of it; decoding every list of a long literal up front cost `list_for_each_entry_safe`
 * (~200 candidates per Linux shard, most of them true) 3.5 → 6 ms.
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

/** Evaluates an n-gram query on one trigram table (rarest trigrams first). */
export function evalNgrams(table: NgramTable, q: NgramQuery, counters: ShardCounters, examine: Examine = UNCAPPED): Uint32Array | null {
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
      return intersectAll(acc, q.args.filter((a) => a.op !== 'tri'), (a) => evalNgrams(table, a, counters, examine));
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
