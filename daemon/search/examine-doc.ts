// Examination of one candidate document (shard-search.ts): its tree (match-tree.ts) is
// decided exactly, cheapest test first, reading the document at most once, and the match
// ranges of its positive terms are collected. What the index alone can settle (a negated
// term's candidates and the documents a word surely matches: candidates.ts, a literal's
// segment windows: segment-windows.ts) is settled without scanning the document.

import type { Shard } from '../index/shard-reader.ts';
import type { Tree } from './match-tree.ts';
import type { Matcher } from './matcher.ts';
import { symbolNameRange } from '../symbols/name-range.ts';
import type { ShardCounters } from './types.ts';
import { indexedSymbols, mayMatch, readsContent, surelyMatches } from './candidates.ts';
import { ruledOut } from './segment-windows.ts';

/** Thrown out of a document's evaluation that is interrupted (DocContext.between). */
const INTERRUPTED = new Error('interrupted');

/** Whether `err` is a document's evaluation interrupted (DocContext.between), to be evaluated again. */
export function isInterruption(err: unknown): boolean {
  return err === INTERRUPTED;
}

/** Per-document evaluation state: the content is read at most once. */
export class DocContext {
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

/** What the positive terms of a document's tree found in it. */
export interface Found {
  content: number[];
  names: number[];
  /** The term id of each content range (one per pair in `content`). */
  terms: number[];
}

/**
 * Appends `src` to `dst` one by one: a document can hold hundreds of thousands of ranges
 * (`x*` on a large file), too many to spread as arguments (the main thread's smaller
 * stack overflows first: a search in this thread failed where a worker's did not).
 */
function append(dst: number[], src: ArrayLike<number>): void {
  for (let i = 0; i < src.length; i++) dst.push(src[i]!);
}

/**
 * Decides one document. Positive terms append their ranges to `out`; an AND that fails
 * takes back what its children appended; nothing under a NOT is recorded.
 */
export function evaluate(t: Tree, ctx: DocContext, matchers: Matcher[], max: number, out: Found | null): boolean {
  switch (t.op) {
    case 'const':
      return t.value;
    case 'lang':
      return ctx.shard.languageIndex(ctx.doc) === t.lang;
    case 'content': {
      const m = matchers[t.id]!;
      // Only the windows its segment masks leave can hold a match (segment-windows.ts).
      if (ctx.useIndex && ruledOut(t, ctx, m)) return false;
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
      const ranges =
        ctx.useIndex && ctx.shard.symbolIndex
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
        if (!mayMatch(t.child, ctx.doc, ctx.shard, ctx.counters, matchers)) return true;
        if (surelyMatches(t.child, ctx.doc, ctx.shard, matchers)) return false;
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
    else if (out.length > 0 && s === out[last - 1] && e === out[last])
      continue; // the same empty or equal range twice
    else out.push(s, e);
  }
  return out;
}
