// The trigram queries the planner builds and the shard search evaluates: a tree of 'and' /
// 'or' over "this folded trigram occurs in the document". qAnd and qOr keep it in a
// canonical form (arguments flattened, deduplicated and sorted; absorbed and factored
// branches) so that equal queries have equal keys and redundant branches are dropped.
//
// A trigram taken from a string may also say which bytes follow it there (`next`, the
// bits b & 7 of those folded bytes): then the document must hold it followed by each of
// them, which a shard with follow masks checks in its posting lists (shard-reader.ts,
// content-follow). Every other part of the planning treats such a trigram as the trigram:
// dropping `next` only weakens the filter.

import { trigramId } from '../../core/index.ts';
import { spend } from './analysis-budget.ts';

export type NgramQuery =
  | { op: 'all' } // no filtering possible: every document is a candidate
  | { op: 'none' } // the regex can match nothing (e.g. [^\x00-\x{10FFFF}])
  | { op: 'and'; args: NgramQuery[] } // all must hold
  | { op: 'or'; args: NgramQuery[] } // at least one must hold
  | { op: 'tri'; id: number; next?: number }; // the document contains this folded trigram (followed by bytes of each `next` bit)

/** Max branches of one 'or'; a wider 'or' is weakened to the trigrams all branches share. */
const MAX_OR_BRANCHES = 64;

export const ALL: NgramQuery = Object.freeze({ op: 'all' });
export const NONE: NgramQuery = Object.freeze({ op: 'none' });

export function tri(id: number, next = 0): NgramQuery {
  return next === 0 ? { op: 'tri', id } : { op: 'tri', id, next };
}

const keyCache = new WeakMap<NgramQuery, string>();

/** Canonical key (args are kept sorted, so equal queries have equal keys). */
function qkey(q: NgramQuery): string {
  spend();
  switch (q.op) {
    case 'all':
      return 'A';
    case 'none':
      return 'N';
    case 'tri':
      return q.next ? `t${q.id}/${q.next}` : `t${q.id}`;
    default: {
      let k = keyCache.get(q);
      if (k === undefined) {
        k = `${(q.op === 'and' ? '&(' : '|(') + q.args.map(qkey).join(',')})`;
        keyCache.set(q, k);
      }
      return k;
    }
  }
}

function compareQueries(a: NgramQuery, b: NgramQuery): number {
  if (a.op === 'tri' && b.op === 'tri') return a.id - b.id || (a.next ?? 0) - (b.next ?? 0);
  if (a.op === 'tri') return -1;
  if (b.op === 'tri') return 1;
  const ka = qkey(a);
  const kb = qkey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function dedupe(list: NgramQuery[]): NgramQuery[] {
  const seen = new Map<string, NgramQuery>();
  for (const q of list) seen.set(qkey(q), q);
  return [...seen.values()];
}

/** The conjuncts with one trigram's several `next` requirements merged into one (all must hold). */
function mergeNext(list: NgramQuery[]): NgramQuery[] {
  const at = new Map<number, number>();
  const out: NgramQuery[] = [];
  for (const q of list) {
    if (q.op !== 'tri') {
      out.push(q);
      continue;
    }
    const i = at.get(q.id);
    if (i === undefined) {
      at.set(q.id, out.length);
      out.push(q);
    } else {
      const had = out[i] as { id: number; next?: number };
      out[i] = tri(q.id, (had.next ?? 0) | (q.next ?? 0));
    }
  }
  return out;
}

/** Removes the trigrams in `known` from q, where q sits in an 'and' that already requires them. */
function withoutKnown(q: NgramQuery, known: ReadonlySet<number>): NgramQuery {
  if (q.op === 'tri') return known.has(q.id) ? ALL : q;
  if (q.op === 'and') return qAnd(q.args.map((a) => withoutKnown(a, known)));
  if (q.op === 'or') return qOr(q.args.map((a) => withoutKnown(a, known)));
  return q;
}

export function qAnd(args: readonly NgramQuery[]): NgramQuery {
  spend();
  let list: NgramQuery[] = [];
  for (const a of args) {
    if (a.op === 'none') return NONE;
    if (a.op === 'and') list.push(...a.args);
    else if (a.op !== 'all') list.push(a);
  }
  list = mergeNext(dedupe(list));
  // Inside and(T..., or(B...)), the trigrams T are known to hold: drop them from the branches.
  for (let round = 0; round < 2; round++) {
    const known = new Set<number>();
    for (const a of list) if (a.op === 'tri') known.add(a.id);
    if (known.size === 0 || !list.some((a) => a.op === 'or')) break;
    const next: NgramQuery[] = [];
    for (const a of list) {
      const r = a.op === 'or' ? withoutKnown(a, known) : a;
      if (r.op === 'none') return NONE;
      if (r.op === 'and') next.push(...r.args);
      else if (r.op !== 'all') next.push(r);
    }
    list = mergeNext(dedupe(next));
  }
  if (list.length === 0) return ALL;
  if (list.length === 1) return list[0];
  list.sort(compareQueries);
  return { op: 'and', args: list };
}

/** The conjuncts of q, by key; a trigram by its id alone (its `next` is compared apart: implies()). */
function conjuncts(q: NgramQuery): Map<string, NgramQuery> {
  const m = new Map<string, NgramQuery>();
  for (const a of q.op === 'and' ? q.args : [q]) m.set(a.op === 'tri' ? `t${a.id}` : qkey(a), a);
  return m;
}

/** The follow bits of a trigram query (0 for anything else). */
function nextOf(q: NgramQuery): number {
  return q.op === 'tri' ? (q.next ?? 0) : 0;
}

/** Whether conjunct `a` implies `b`, two conjuncts under one key (conjuncts()). */
function implies(a: NgramQuery, b: NgramQuery): boolean {
  return (nextOf(b) & ~nextOf(a)) === 0;
}

/** Trigrams q implies (every document satisfying q contains them). */
function impliedTrigrams(q: NgramQuery): Set<number> {
  switch (q.op) {
    case 'tri':
      return new Set([q.id]);
    case 'and': {
      const s = new Set<number>();
      for (const a of q.args) for (const id of impliedTrigrams(a)) s.add(id);
      return s;
    }
    case 'or':
      return sharedTrigrams(q.args);
    default:
      return new Set();
  }
}

/** Trigrams implied by every one of the queries. */
function sharedTrigrams(list: readonly NgramQuery[]): Set<number> {
  if (list.length === 0) return new Set();
  let shared = impliedTrigrams(list[0]);
  for (let i = 1; i < list.length && shared.size > 0; i++) {
    const t = impliedTrigrams(list[i]);
    shared = new Set([...shared].filter((id) => t.has(id)));
  }
  return shared;
}

export function qOr(args: readonly NgramQuery[]): NgramQuery {
  spend();
  let list: NgramQuery[] = [];
  for (const a of args) {
    if (a.op === 'all') return ALL;
    if (a.op === 'or') list.push(...a.args);
    else if (a.op !== 'none') list.push(a);
  }
  list = dedupe(list);
  if (list.length === 0) return NONE;
  if (list.length === 1) return list[0];
  // Far too wide to be kept whatever absorption achieves: skip the quadratic steps.
  if (list.length > 4 * MAX_OR_BRANCHES) return qAnd([...sharedTrigrams(list)].map(tri));
  // Absorption: a branch implied by a weaker branch is redundant (or(A, and(A,B)) = A).
  const conj = list.map(conjuncts);
  const order = list.map((_, i) => i).sort((i, j) => conj[i].size - conj[j].size);
  const kept: number[] = [];
  for (const i of order) {
    spend();
    const ci = conj[i];
    const absorbed = kept.some((j) => {
      for (const [k, q] of conj[j]) if (!ci.has(k) || !implies(ci.get(k)!, q)) return false;
      return true;
    });
    if (!absorbed) kept.push(i);
  }
  list = kept.map((i) => list[i]);
  const conjKept = kept.map((i) => conj[i]);
  if (list.length === 1) return list[0];
  // Factor out the conjuncts every branch shares: or(and(A,B), and(A,C)) = and(A, or(B,C)).
  // A trigram every branch requires is factored out with the follow bits they all want (a
  // branch wanting more of it gives that up: kept, it would be factored out again).
  const common = [...conjKept[0].entries()]
    .filter(([k]) => conjKept.every((c) => c.has(k)))
    .map(([k, q]): [string, NgramQuery] =>
      q.op === 'tri'
        ? [
            k,
            tri(
              q.id,
              conjKept.reduce((bits, c) => bits & nextOf(c.get(k)!), 0xff),
            ),
          ]
        : [k, q],
    );
  if (common.length > 0) {
    const commonKeys = new Set(common.map(([k]) => k));
    const rests = conjKept.map((c) => qAnd([...c.entries()].filter(([k]) => !commonKeys.has(k)).map(([, q]) => q)));
    const rest = rests.some((r) => r.op === 'all') ? ALL : qOr(rests);
    return qAnd([...common.map(([, q]) => q), rest]);
  }
  if (list.length > MAX_OR_BRANCHES) {
    return qAnd([...sharedTrigrams(list)].map(tri));
  }
  list.sort(compareQueries);
  return { op: 'or', args: list };
}

function leafCount(q: NgramQuery): number {
  if (q.op === 'tri') return 1;
  if (q.op === 'and' || q.op === 'or') return q.args.reduce((n, a) => n + leafCount(a), 0);
  return 0;
}

/** A query implied by q with at most `budget` trigram leaves. */
export function prune(q: NgramQuery, budget: number): NgramQuery {
  if (leafCount(q) <= budget) return q;
  if (q.op === 'and') {
    const out: NgramQuery[] = [];
    let left = budget;
    for (const a of q.args) {
      if (left <= 0) break;
      const p = prune(a, left);
      if (p.op === 'all') continue;
      out.push(p);
      left -= leafCount(p);
    }
    return qAnd(out);
  }
  if (q.op === 'or') {
    const ids = [...impliedTrigrams(q)].sort((a, b) => a - b).slice(0, budget);
    return qAnd(ids.map(tri));
  }
  return budget > 0 ? q : ALL;
}

/**
 * The 'and' of all trigrams of a folded byte string, each with the bytes that follow it in
 * the string (`next`); 'all' when it is shorter than 3 bytes.
 */
export function stringQuery(s: string): NgramQuery {
  if (s.length < 3) return ALL;
  const next = new Map<number, number>();
  for (let i = 0; i + 3 <= s.length; i++) {
    const id = trigramId(s.charCodeAt(i), s.charCodeAt(i + 1), s.charCodeAt(i + 2));
    next.set(id, (next.get(id) ?? 0) | (i + 3 < s.length ? 1 << (s.charCodeAt(i + 3) & 7) : 0));
  }
  // Distinct trigrams with their follow bits merged: qAnd's canonical form is them sorted
  // (nothing to flatten, deduplicate or factor), made here without its keys.
  const args = [...next].sort((a, b) => a[0] - b[0]).map(([id, bits]) => tri(id, bits));
  spend();
  return args.length === 1 ? args[0]! : { op: 'and', args };
}

/** At least one of the strings occurs. */
export function stringsQuery(set: ReadonlySet<string>): NgramQuery {
  const branches: NgramQuery[] = [];
  for (const s of set) {
    if (s.length < 3) return ALL;
    branches.push(stringQuery(s));
  }
  return qOr(branches);
}

/**
 * Reference evaluator: does a document satisfy q, given `has(id, next)`: whether it holds
 * the trigram followed by bytes of every bit of `next` (0: anywhere)?
 */
export function evalNgramQuery(q: NgramQuery, has: (id: number, next: number) => boolean): boolean {
  switch (q.op) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'tri':
      return has(q.id, q.next ?? 0);
    case 'and':
      return q.args.every((a) => evalNgramQuery(a, has));
    case 'or':
      return q.args.some((a) => evalNgramQuery(a, has));
  }
}

function trigramText(id: number): string {
  let s = '"';
  for (const b of [(id >> 16) & 0xff, (id >> 8) & 0xff, id & 0xff]) {
    if (b === 0x22 || b === 0x5c) s += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b < 0x7f) s += String.fromCharCode(b);
    else s += `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return `${s}"`;
}

/** Readable form, e.g. and("abc","bcd") or or("foo",and("bar","baz")). */
export function ngramQueryToString(q: NgramQuery): string {
  switch (q.op) {
    case 'all':
      return 'all';
    case 'none':
      return 'none';
    case 'tri':
      return trigramText(q.id);
    default:
      return `${q.op}(${q.args.map(ngramQueryToString).join(',')})`;
  }
}
