// Definitions first: within a shard, the documents that define a symbol named exactly like
// one of the query's positive literals are examined before the other candidates (which keep
// their static-rank order). A shard stops at `matches` ranges, so without this the file a
// user searching for a name most often wants (its definition, ranked first by rank.ts) was
// found only if it came early in the static order, and on a large index most of the
// hand-judged definitions missed the top results. This order finds more of them; searching
// the shards past the search's cut for their definitions too (searcher.ts) finds nearly
// all.
//
// Only the order changes: the same documents are candidates, each is decided as before.
// The indexed search finds the names in the symbol index; the brute-force oracle decodes
// every document's symbols; both apply the same rule to a name (sameName), so that they
// examine documents in the same order and stop at the same ones. Shards without a symbol
// index (format 2 and 3) keep the static order in both.

import { holdsSorted } from '../../core/index.ts';
import type { Shard } from '../index/shard-reader.ts';
import { foldKey } from '../index/symbol-index.ts';
import type { Plan, PlanNode } from '../query/terms.ts';

/** A positive literal of the query, as the symbol names are compared with it. */
interface Literal {
  bytes: Buffer;
  caseSensitive: boolean;
  folded: string;
}

const literalsOf = new WeakMap<Plan, Literal[]>();

/** The literals of the plan's content terms outside any negation. */
export function positiveLiterals(plan: Plan): Literal[] {
  const known = literalsOf.get(plan);
  if (known) return known;
  const out: Literal[] = [];
  const walk = (n: PlanNode): void => {
    if (n.op === 'and' || n.op === 'or') n.children.forEach(walk);
    else if (n.op === 'content' && n.term.kind === 'literal' && n.term.pattern !== '') {
      const bytes = Buffer.from(n.term.pattern, 'utf8');
      out.push({ bytes, caseSensitive: n.term.caseSensitive, folded: foldKey(bytes) });
    }
  };
  walk(plan.root);
  literalsOf.set(plan, out);
  return out;
}

const confinedOf = new WeakMap<Plan, boolean>();

/**
 * Whether only the documents definingDocs lists can have a definition at a match (the
 * ranking's definition signal, hit-score.ts, then looks no further): every content term
 * of the plan is an ASCII literal and it has no sym: term. A match of such a literal
 * spells it up to case, and foldKey folds exactly what the matcher folds to ASCII (ASCII
 * letters, U+212A and U+017F), so a definition named as a match is named like the
 * literal. (Otherwise a stream of a common identifier looks up the symbols of every
 * file it matches, thousands of them, for it.)
 */
export function definitionsConfined(plan: Plan): boolean {
  const known = confinedOf.get(plan);
  if (known !== undefined) return known;
  let confined = true;
  const walk = (n: PlanNode): void => {
    if (n.op === 'and' || n.op === 'or') n.children.forEach(walk);
    else if (n.op === 'not') walk(n.child);
    else if (n.op === 'sym') confined = false;
    else if (n.op === 'content' && (n.term.kind !== 'literal' || !/^[\x00-\x7f]*$/.test(n.term.pattern))) confined = false;
  };
  walk(plan.root);
  confinedOf.set(plan, confined);
  return confined;
}

/** Whether a symbol's name is the literal: its bytes, or (case-insensitive) its foldKey. */
function sameName(name: Uint8Array, lit: Literal): boolean {
  return lit.caseSensitive ? Buffer.compare(name, lit.bytes) === 0 : foldKey(name) === lit.folded;
}

/**
 * The documents of the shard defining one of the literals, ascending (empty without a
 * symbol index); of `within` (ascending) only, when given: a history's name is defined in
 * every version of its file, hundreds, of which a search at a commit examines a few.
 */
export function definingDocs(shard: Shard, literals: Literal[], useIndex: boolean, within?: Uint32Array): Uint32Array {
  const index = shard.symbolIndex;
  if (!index || literals.length === 0 || within?.length === 0) return new Uint32Array(0);
  const docs = new Set<number>();
  if (useIndex) {
    for (const lit of literals) {
      const [from, to] = index.prefixRange(lit.folded);
      for (let n = from; n < to; n++) {
        if (!sameName(index.name(n), lit)) continue;
        for (const r of index.defsOf(n)) {
          const d = shard.symbolDoc(r);
          if (within === undefined || holdsSorted(within, d)) docs.add(d);
        }
      }
    }
  } else {
    const defines = (d: number) => shard.symbolsOf(d).some((s) => literals.some((lit) => sameName(Buffer.from(s.name, 'utf8'), lit)));
    if (within !== undefined) {
      for (const d of within) if (defines(d)) docs.add(d);
    } else for (let d = 0; d < shard.docCount; d++) if (defines(d)) docs.add(d);
  }
  return Uint32Array.from([...docs].sort((a, b) => a - b));
}

/**
 * The candidates in the order they are examined: those in `first` (ascending; `front` of
 * them), then the others, ascending. `candidates` null means every document of the shard;
 * `order` is null (every document, ascending) when nothing moves.
 */
export function definitionsFirst(candidates: Uint32Array | null, first: Uint32Array, docCount: number): { order: Uint32Array | null; front: number } {
  if (first.length === 0) return { order: candidates, front: 0 };
  const all = candidates ?? Uint32Array.from({ length: docCount }, (_, i) => i);
  const front = new Set<number>();
  // Both ascending: a merge walk keeps the definitions that are candidates.
  let j = 0;
  for (const d of first) {
    while (j < all.length && all[j]! < d) j++;
    if (j < all.length && all[j] === d) front.add(d);
  }
  if (front.size === 0) return { order: candidates, front: 0 };
  const out = new Uint32Array(all.length);
  let k = 0;
  for (const d of front) out[k++] = d;
  for (const d of all) if (!front.has(d)) out[k++] = d;
  return { order: out, front: front.size };
}
