// Trigram prefilter for RE2 regular expressions and literals.
//
// SOUNDNESS RULE: the query derived for a pattern must accept every document in which the
// pattern can match. False positives are allowed (the matcher verifies every candidate),
// false negatives never. Whenever the analysis is unsure it must weaken ('all', or drop a
// term from an 'and'); it may only answer 'none' when no string at all can match.
//
// The index side: a document's trigrams are taken over its bytes after "index folding"
// (ASCII A-Z -> a-z, U+212A KELVIN SIGN -> 'k', U+017F LONG S -> 's', every other byte
// unchanged). Folding maps each UTF-8 character independently, so for any string s made of
// whole characters, fold(s) is a substring of fold(document) whenever s is a substring of
// the document; all strings below are therefore kept already folded, as byte strings
// (JS strings of char codes 0-255), and trigrams are read straight off them.
//
// How the analysis works (in the spirit of Russ Cox's codesearch, written from scratch):
// the pattern is parsed (re2-syntax.ts) and every node gets an Info:
//   emptyable  whether the node can match the empty string;
//   exact      when small: the complete set of (folded) strings the node can match;
//   prefix     otherwise: every NON-EMPTY match starts with one of these strings;
//   suffix     likewise for the end;
//   match      a trigram query that holds for the trigrams of every match of the node
//              (hence 'all' for an emptyable node).
// Empty-width assertions (^ $ \A \z \b \B) are treated as matching the empty string: the
// relaxed pattern matches a superset of what the real one does, which keeps it sound.
// Concatenation takes cross products of exact sets, or of the suffixes of the left side and
// the prefixes of the right side (the trigrams spanning the boundary); alternation takes
// unions (of the match queries: 'or'); x* keeps only affixes; x+ is x without exactness;
// x{n,m} is unrolled a few times and completed with x* (a superset). Character classes and
// case-insensitive letters become exact sets of the folded encodings of their members
// (case-fold orbits are RE2's own, see caseFoldOrbit); large classes and '.' match "any
// character" (no information). Whenever a set would grow past its cap it is turned into a
// trigram query ('or' over its strings of the 'and' of each string's trigrams), and the
// affixes are cut down to their outer 2 bytes, which is all a neighbour needs to form the
// trigrams spanning the boundary.

import RE2 from 're2';
import { parseNodeRe2Pattern, Re2SyntaxError, toWellFormed, type ClassItem, type CodeRange, type Re2Node } from './re2-syntax.ts';

export type NgramQuery =
  | { op: 'all' } // no filtering possible: every document is a candidate
  | { op: 'none' } // the regex can match nothing (e.g. [^\x00-\x{10FFFF}])
  | { op: 'and'; args: NgramQuery[] } // all must hold
  | { op: 'or'; args: NgramQuery[] } // at least one must hold
  | { op: 'tri'; id: number }; // the document contains this folded trigram

// ---------------------------------------------------------------------------------------
// Limits. Each one only weakens the query (never unsound); they keep the analysis fast and
// the query small enough to evaluate cheaply against posting lists.

/** Max strings in an exact set: beyond, cross products explode (e.g. [0-9a-f]{8}). */
const MAX_EXACT = 32;
/** Max total bytes held by one exact set (a pasted 100 KB literal is turned into trigrams). */
const MAX_EXACT_BYTES = 4096;
/** Max strings in a prefix or suffix set; beyond, strings are cut to 1 byte, then dropped. */
const MAX_SET = 32;
/** Max strings produced by one cross product (exact x affix, or suffix x prefix). */
const MAX_CROSS = 64;
/** Affix strings of emptyable nodes cannot be turned into trigrams yet; cap their length. */
const MAX_AFFIX_LEN = 16;
/** A class with more folded members than this is "any character": or-ing 26+ single bytes buys little. */
const MAX_CLASS = 16;
/** Classes are enumerated code point by code point only up to this size (before case folding). */
const MAX_CLASS_ENUM = 256;
/** x{n,m}: at most this many copies of x are analysed; the rest becomes x* (a superset). */
const MAX_UNROLL = 4;
/** Max branches of one 'or'; a wider 'or' is weakened to the trigrams all branches share. */
const MAX_OR_BRANCHES = 64;
/** Max trigram leaves in a regex query; extra 'and' terms are dropped (each costs a posting-list read). */
const MAX_QUERY_TRIGRAMS = 128;

const MAX_RUNE = 0x10ffff;

// ---------------------------------------------------------------------------------------
// Queries

const ALL: NgramQuery = Object.freeze({ op: 'all' });
const NONE: NgramQuery = Object.freeze({ op: 'none' });

function tri(id: number): NgramQuery {
  return { op: 'tri', id };
}

const keyCache = new WeakMap<NgramQuery, string>();

/** Canonical key (args are kept sorted, so equal queries have equal keys). */
function qkey(q: NgramQuery): string {
  switch (q.op) {
    case 'all':
      return 'A';
    case 'none':
      return 'N';
    case 'tri':
      return 't' + q.id;
    default: {
      let k = keyCache.get(q);
      if (k === undefined) {
        k = (q.op === 'and' ? '&(' : '|(') + q.args.map(qkey).join(',') + ')';
        keyCache.set(q, k);
      }
      return k;
    }
  }
}

function compareQueries(a: NgramQuery, b: NgramQuery): number {
  if (a.op === 'tri' && b.op === 'tri') return a.id - b.id;
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

/** Removes the trigrams in `known` from q, where q sits in an 'and' that already requires them. */
function withoutKnown(q: NgramQuery, known: ReadonlySet<number>): NgramQuery {
  if (q.op === 'tri') return known.has(q.id) ? ALL : q;
  if (q.op === 'and') return qAnd(q.args.map((a) => withoutKnown(a, known)));
  if (q.op === 'or') return qOr(q.args.map((a) => withoutKnown(a, known)));
  return q;
}

function qAnd(args: readonly NgramQuery[]): NgramQuery {
  let list: NgramQuery[] = [];
  for (const a of args) {
    if (a.op === 'none') return NONE;
    if (a.op === 'and') list.push(...a.args);
    else if (a.op !== 'all') list.push(a);
  }
  list = dedupe(list);
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
    list = dedupe(next);
  }
  if (list.length === 0) return ALL;
  if (list.length === 1) return list[0];
  list.sort(compareQueries);
  return { op: 'and', args: list };
}

/** The conjuncts of q, by key. */
function conjuncts(q: NgramQuery): Map<string, NgramQuery> {
  const m = new Map<string, NgramQuery>();
  if (q.op === 'and') for (const a of q.args) m.set(qkey(a), a);
  else m.set(qkey(q), q);
  return m;
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

function qOr(args: readonly NgramQuery[]): NgramQuery {
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
    const ci = conj[i];
    const absorbed = kept.some((j) => {
      for (const k of conj[j].keys()) if (!ci.has(k)) return false;
      return true;
    });
    if (!absorbed) kept.push(i);
  }
  list = kept.map((i) => list[i]);
  const conjKept = kept.map((i) => conj[i]);
  if (list.length === 1) return list[0];
  // Factor out the conjuncts every branch shares: or(and(A,B), and(A,C)) = and(A, or(B,C)).
  const common = [...conjKept[0].entries()].filter(([k]) => conjKept.every((c) => c.has(k)));
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
function prune(q: NgramQuery, budget: number): NgramQuery {
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

/** The 'and' of all trigrams of a folded byte string; 'all' when it is shorter than 3 bytes. */
function stringQuery(s: string): NgramQuery {
  if (s.length < 3) return ALL;
  const ids = new Set<number>();
  for (let i = 0; i + 3 <= s.length; i++) {
    ids.add((s.charCodeAt(i) << 16) | (s.charCodeAt(i + 1) << 8) | s.charCodeAt(i + 2));
  }
  return qAnd([...ids].map(tri));
}

/** At least one of the strings occurs. */
function stringsQuery(set: ReadonlySet<string>): NgramQuery {
  const branches: NgramQuery[] = [];
  for (const s of set) {
    if (s.length < 3) return ALL;
    branches.push(stringQuery(s));
  }
  return qOr(branches);
}

// ---------------------------------------------------------------------------------------
// Folding

const utf8 = new TextEncoder();

/** Index folding of raw UTF-8 bytes. */
function foldBytes(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let j = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0xe2 && bytes[i + 1] === 0x84 && bytes[i + 2] === 0xaa) {
      out[j++] = 0x6b; // U+212A KELVIN SIGN -> 'k'
      i += 2;
    } else if (b === 0xc5 && bytes[i + 1] === 0xbf) {
      out[j++] = 0x73; // U+017F LATIN SMALL LETTER LONG S -> 's'
      i += 1;
    } else {
      out[j++] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
    }
  }
  return out.slice(0, j);
}

/** Index folding of the UTF-8 bytes of s (lone surrogates encode as U+FFFD). */
export function foldString(s: string): Uint8Array {
  return foldBytes(utf8.encode(s));
}

function bytesToBinary(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 4096) s += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return s;
}

const foldCache = new Map<number, string>();

/** The folded UTF-8 encoding of one code point, as a byte string. */
function foldCp(cp: number): string {
  let s = foldCache.get(cp);
  if (s === undefined) {
    if (cp < 0x80) s = String.fromCharCode(cp >= 0x41 && cp <= 0x5a ? cp + 0x20 : cp);
    else s = bytesToBinary(foldBytes(utf8.encode(String.fromCodePoint(cp))));
    if (foldCache.size < 65536) foldCache.set(cp, s);
  }
  return s;
}

const isSurrogate = (cp: number): boolean => cp >= 0xd800 && cp <= 0xdfff;

// ---------------------------------------------------------------------------------------
// Case folding: RE2's (?i) matches a letter's whole simple case-folding orbit, e.g.
// k -> {k, K, U+212A}, s -> {s, S, U+017F}, é -> {é, É}. Candidates come from JavaScript's
// case mappings (ICU's Unicode, usually newer than RE2's tables); each orbit is then checked
// against the installed RE2 itself, so a difference between the two Unicode versions can
// never make the analysis miss a variant RE2 matches.

let jsOrbitTable: Map<number, number[]> | null = null;

/** Groups of code points linked by single-code-point toLowerCase/toUpperCase (planes 0-1). */
function jsOrbits(): Map<number, number[]> {
  if (jsOrbitTable) return jsOrbitTable;
  const parent = new Map<number, number>();
  const find = (x: number): number => {
    let r = x;
    while (parent.has(r) && parent.get(r) !== r) r = parent.get(r)!;
    let y = x;
    while (y !== r) {
      const n = parent.get(y)!;
      parent.set(y, r);
      y = n;
    }
    return r;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(ra, rb);
    if (!parent.has(rb)) parent.set(rb, rb);
  };
  for (let cp = 0; cp < 0x20000; cp++) {
    if (isSurrogate(cp)) continue;
    const s = String.fromCodePoint(cp);
    const lower = s.toLowerCase();
    const upper = s.toUpperCase();
    if (lower === s && upper === s) continue;
    for (const t of [lower, upper]) {
      const o = t.codePointAt(0)!;
      if (t.length === (o > 0xffff ? 2 : 1) && o !== cp) union(cp, o);
    }
  }
  const groups = new Map<number, number[]>();
  for (const cp of parent.keys()) {
    const r = find(cp);
    let g = groups.get(r);
    if (!g) groups.set(r, (g = []));
    g.push(cp);
  }
  const table = new Map<number, number[]>();
  for (const g of groups.values()) {
    if (g.length < 2) continue;
    g.sort((a, b) => a - b);
    for (const cp of g) table.set(cp, g);
  }
  jsOrbitTable = table;
  return table;
}

/** ASCII needs no table scan: the letter's two cases, plus the two non-ASCII letters that fold to k and s. */
function asciiCandidates(cp: number): number[] {
  const lower = cp >= 0x41 && cp <= 0x5a ? cp + 0x20 : cp;
  if (lower < 0x61 || lower > 0x7a) return [cp];
  const out = [lower - 0x20, lower];
  if (lower === 0x6b) out.push(0x212a);
  if (lower === 0x73) out.push(0x17f);
  return out;
}

const hexCp = (cp: number): string => '\\x{' + cp.toString(16) + '}';

function re2Matches(pattern: string, cp: number): boolean {
  return new RE2(pattern, 'u').test(String.fromCodePoint(cp));
}

/** Ranges of all non-surrogate code points outside `members`. */
function outsideRanges(members: readonly number[]): CodeRange[] {
  const out: CodeRange[] = [];
  for (const [lo, hi] of complementRanges([...members.map((m): CodeRange => [m, m]), [0xd800, 0xdfff]])) out.push([lo, hi]);
  return out;
}

const orbitCache = new Map<number, readonly number[]>();

/** The code points RE2's (?i) matches for cp (cp included), sorted. */
export function caseFoldOrbit(cp: number): readonly number[] {
  let orbit = orbitCache.get(cp);
  if (orbit) return orbit;
  if (isSurrogate(cp) || cp < 0 || cp > MAX_RUNE) {
    orbit = [cp];
  } else {
    let candidates = cp < 0x80 ? asciiCandidates(cp) : jsOrbits().get(cp) ?? [cp];
    const outside = outsideRanges(candidates);
    const leaks = outside.length > 0 && re2Matches('(?i)[' + outside.map(([lo, hi]) => hexCp(lo) + '-' + hexCp(hi)).join('') + ']', cp);
    if (leaks) {
      // RE2 knows a variant JavaScript does not: find the whole orbit by bisection.
      const found: number[] = [];
      const search = (lo: number, hi: number): void => {
        if (!re2Matches('(?i)[' + hexCp(lo) + '-' + hexCp(hi) + ']', cp)) return;
        if (lo === hi) {
          found.push(lo);
          return;
        }
        const mid = Math.floor((lo + hi) / 2);
        search(lo, mid);
        search(mid + 1, hi);
      };
      search(0, 0xd7ff);
      search(0xe000, MAX_RUNE);
      candidates = found;
    }
    const literal = new RE2('(?i)' + hexCp(cp), 'u');
    orbit = candidates.filter((c) => c === cp || literal.test(String.fromCodePoint(c)));
    if (!orbit.includes(cp)) orbit = [...orbit, cp].sort((a, b) => a - b);
  }
  orbitCache.set(cp, orbit);
  return orbit;
}

// ---------------------------------------------------------------------------------------
// Code point range sets

function normalizeRanges(rs: readonly CodeRange[]): CodeRange[] {
  const sorted = [...rs].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complementRanges(rs: readonly CodeRange[]): CodeRange[] {
  const out: CodeRange[] = [];
  let next = 0;
  for (const [lo, hi] of normalizeRanges(rs)) {
    if (lo > next) out.push([next, lo - 1]);
    next = Math.max(next, hi + 1);
  }
  if (next <= MAX_RUNE) out.push([next, MAX_RUNE]);
  return out;
}

function withoutNewline(rs: readonly CodeRange[]): CodeRange[] {
  return complementRanges([...complementRanges(rs), [0x0a, 0x0a]]);
}

function rangesSize(rs: readonly CodeRange[]): number {
  return rs.reduce((n, [lo, hi]) => n + (hi - lo + 1), 0);
}

function rangesMembers(rs: readonly CodeRange[]): number[] {
  const out: number[] = [];
  for (const [lo, hi] of rs) for (let c = lo; c <= hi; c++) out.push(c);
  return out;
}

function foldClosure(rs: readonly CodeRange[]): CodeRange[] {
  const out: CodeRange[] = [];
  for (const c of rangesMembers(rs)) for (const o of caseFoldOrbit(c)) out.push([o, o]);
  return normalizeRanges(out);
}

// ---------------------------------------------------------------------------------------
// Analysis

interface Info {
  emptyable: boolean;
  /** All matchable folded strings, or null when not tracked. */
  exact: ReadonlySet<string> | null;
  /** When exact is null: every non-empty match starts with one of these. */
  prefix: ReadonlySet<string>;
  /** When exact is null: every non-empty match ends with one of these. */
  suffix: ReadonlySet<string>;
  /** Holds for the trigrams of every match ('all' when emptyable). */
  match: NgramQuery;
}

const NO_STRINGS: ReadonlySet<string> = new Set();
const EMPTY_STRING_SET: ReadonlySet<string> = new Set(['']);

const NONE_INFO: Info = { emptyable: false, exact: NO_STRINGS, prefix: NO_STRINGS, suffix: NO_STRINGS, match: NONE };
const EMPTY_INFO: Info = { emptyable: true, exact: EMPTY_STRING_SET, prefix: NO_STRINGS, suffix: NO_STRINGS, match: ALL };
const ANY_CHAR_INFO: Info = { emptyable: false, exact: null, prefix: EMPTY_STRING_SET, suffix: EMPTY_STRING_SET, match: ALL };
const ANY_STRING_INFO: Info = { emptyable: true, exact: null, prefix: EMPTY_STRING_SET, suffix: EMPTY_STRING_SET, match: ALL };

const isNone = (x: Info): boolean => x.exact !== null && x.exact.size === 0;
const isOnlyEmpty = (x: Info): boolean => x.exact !== null && x.exact.size === 1 && x.exact.has('');

function nonEmpty(set: ReadonlySet<string>): Set<string> {
  const out = new Set(set);
  out.delete('');
  return out;
}

function union(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> {
  const out = new Set(a);
  for (const s of b) out.add(s);
  return out;
}

function cross(a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const x of a) for (const y of b) out.add(x + y);
  return out;
}

const reverse = (s: string): string => s.split('').reverse().join('');

/** Drops strings that extend another string of the set ("one of them is a prefix" semantics). */
function minimizePrefixes(set: ReadonlySet<string>): Set<string> {
  if (set.has('')) return new Set(['']);
  const sorted = [...set].sort();
  const out = new Set<string>();
  let last: string | null = null;
  for (const s of sorted) {
    if (last !== null && s.startsWith(last)) continue;
    out.add(s);
    last = s;
  }
  return out;
}

function minimizeSuffixes(set: ReadonlySet<string>): Set<string> {
  const rev = new Set<string>();
  for (const s of set) rev.add(reverse(s));
  const out = new Set<string>();
  for (const s of minimizePrefixes(rev)) out.add(reverse(s));
  return out;
}

function trimPrefixes(set: ReadonlySet<string>, n: number): Set<string> {
  const out = new Set<string>();
  for (const s of set) out.add(s.length > n ? s.slice(0, n) : s);
  return minimizePrefixes(out);
}

function trimSuffixes(set: ReadonlySet<string>, n: number): Set<string> {
  const out = new Set<string>();
  for (const s of set) out.add(s.length > n ? s.slice(s.length - n) : s);
  return minimizeSuffixes(out);
}

function capSet(set: Set<string>, trim: (s: ReadonlySet<string>, n: number) => Set<string>): Set<string> {
  if (set.size <= MAX_SET) return set;
  const one = trim(set, 1);
  return one.size <= MAX_SET ? one : new Set(['']);
}

/** Restores the invariants of a non-exact Info: minimal, bounded affixes; trigrams captured. */
function normalize(info: Info): Info {
  let match = info.match;
  let prefix = minimizePrefixes(info.prefix);
  let suffix = minimizeSuffixes(info.suffix);
  if (!info.emptyable) {
    // Every match has one of the prefixes and one of the suffixes: record their trigrams,
    // then keep only the 2 outer bytes a neighbour needs for the boundary trigrams.
    match = qAnd([match, stringsQuery(prefix), stringsQuery(suffix)]);
    prefix = trimPrefixes(prefix, 2);
    suffix = trimSuffixes(suffix, 2);
  } else {
    match = ALL;
    prefix = trimPrefixes(prefix, MAX_AFFIX_LEN);
    suffix = trimSuffixes(suffix, MAX_AFFIX_LEN);
  }
  return {
    emptyable: info.emptyable,
    exact: null,
    prefix: capSet(prefix, trimPrefixes),
    suffix: capSet(suffix, trimSuffixes),
    match: prune(match, MAX_QUERY_TRIGRAMS),
  };
}

function toNonExact(x: Info): Info {
  const set = x.exact;
  if (set === null) return x;
  const emptyable = set.has('');
  const strings = nonEmpty(set);
  return normalize({
    emptyable,
    exact: null,
    prefix: strings,
    suffix: strings,
    match: emptyable ? ALL : qAnd([x.match, stringsQuery(set)]),
  });
}

function exactInfo(set: ReadonlySet<string>, match: NgramQuery = ALL): Info {
  if (set.size === 0) return NONE_INFO;
  const emptyable = set.has('');
  const info: Info = { emptyable, exact: set, prefix: NO_STRINGS, suffix: NO_STRINGS, match: emptyable ? ALL : match };
  let bytes = 0;
  for (const s of set) bytes += s.length;
  return set.size > MAX_EXACT || bytes > MAX_EXACT_BYTES ? toNonExact(info) : info;
}

function concat(x: Info, y: Info): Info {
  if (isNone(x) || isNone(y)) return NONE_INFO;
  if (isOnlyEmpty(x)) return y;
  if (isOnlyEmpty(y)) return x;
  if (x.exact && y.exact && x.exact.size * y.exact.size <= MAX_EXACT) {
    return exactInfo(cross(x.exact, y.exact), qAnd([x.match, y.match]));
  }
  // The result is not exact. An exact side is kept as such (its strings are crossed with the
  // other side's affixes) unless that cross product would be too large.
  if (x.exact && x.exact.size * (y.exact ? y.exact.size : y.prefix.size) > MAX_CROSS) x = toNonExact(x);
  if (y.exact && y.exact.size * (x.exact ? x.exact.size : x.suffix.size) > MAX_CROSS) y = toNonExact(y);
  if (x.exact && y.exact) x = toNonExact(x);
  const xS = x.exact ? nonEmpty(x.exact) : x.suffix;
  const yP = y.exact ? nonEmpty(y.exact) : y.prefix;
  let prefix: Set<string>;
  if (x.exact) {
    prefix = cross(x.exact, yP);
    if (y.emptyable) for (const s of nonEmpty(x.exact)) prefix.add(s);
  } else {
    prefix = new Set(x.prefix);
    if (x.emptyable) for (const s of yP) prefix.add(s);
  }
  let suffix: Set<string>;
  if (y.exact) {
    suffix = cross(xS, y.exact);
    if (x.emptyable) for (const s of nonEmpty(y.exact)) suffix.add(s);
  } else {
    suffix = new Set(y.suffix);
    if (y.emptyable) for (const s of xS) suffix.add(s);
  }
  let match = qAnd([x.match, y.match]);
  // Both sides non-empty: the match contains some suffix of x followed by some prefix of y.
  // (With an exact side this is already part of the prefix or suffix set above.)
  if (!x.exact && !y.exact && !x.emptyable && !y.emptyable && xS.size * yP.size <= MAX_CROSS) {
    match = qAnd([match, stringsQuery(cross(xS, yP))]);
  }
  return normalize({ emptyable: x.emptyable && y.emptyable, exact: null, prefix, suffix, match });
}

function alternate(infos: readonly Info[]): Info {
  const live = infos.filter((x) => !isNone(x));
  if (live.length === 0) return NONE_INFO;
  if (live.length === 1) return live[0];
  if (live.every((x) => x.exact !== null)) {
    const u = new Set<string>();
    for (const x of live) for (const s of x.exact!) u.add(s);
    if (u.size <= MAX_EXACT) return exactInfo(u, qOr(live.map((x) => x.match)));
  }
  const parts = live.map(toNonExact);
  const prefix = new Set<string>();
  const suffix = new Set<string>();
  for (const p of parts) {
    for (const s of p.prefix) prefix.add(s);
    for (const s of p.suffix) suffix.add(s);
  }
  return normalize({
    emptyable: parts.some((p) => p.emptyable),
    exact: null,
    prefix,
    suffix,
    match: qOr(parts.map((p) => p.match)),
  });
}

function quest(x: Info): Info {
  if (x.exact) return exactInfo(union(x.exact, EMPTY_STRING_SET));
  return { ...x, emptyable: true, match: ALL };
}

function star(x: Info): Info {
  if (x.exact) {
    if (x.exact.size === 0 || isOnlyEmpty(x)) return EMPTY_INFO;
    const strings = nonEmpty(x.exact);
    return normalize({ emptyable: true, exact: null, prefix: strings, suffix: strings, match: ALL });
  }
  return { ...x, emptyable: true, match: ALL };
}

/** x+: every match starts with a match of x and ends with one; it contains one. */
function plus(x: Info): Info {
  if (isNone(x) || isOnlyEmpty(x)) return x;
  return toNonExact(x);
}

function repeat(x: Info, min: number, max: number): Info {
  if (max === 0) return EMPTY_INFO;
  if (min === 0 && max === 1) return quest(x);
  if (min === 0 && max === -1) return star(x);
  if (min === 1 && max === -1) return plus(x);
  let acc = EMPTY_INFO;
  if (max !== -1 && max <= MAX_UNROLL) {
    for (let i = 0; i < min; i++) acc = concat(acc, x);
    const q = quest(x);
    for (let i = min; i < max; i++) acc = concat(acc, q);
    return acc;
  }
  // x{n,m} with a large n or m: x repeated min(n, MAX_UNROLL) times, then x* (a superset).
  for (let i = 0; i < Math.min(min, MAX_UNROLL); i++) acc = concat(acc, x);
  if (max === -1 || max > min || min > MAX_UNROLL) acc = concat(acc, star(x));
  return acc;
}

/** The folded encoding of a literal when all its (?i) variants fold alike, else null. */
function singleFolded(cp: number, foldCase: boolean): string | null {
  if (isSurrogate(cp)) return null;
  const f = foldCp(cp);
  if (foldCase) for (const c of caseFoldOrbit(cp)) if (isSurrogate(c) || foldCp(c) !== f) return null;
  return f;
}

function literalInfo(cp: number, foldCase: boolean): Info {
  if (isSurrogate(cp)) return ANY_CHAR_INFO;
  if (!foldCase) return exactInfo(new Set([foldCp(cp)]));
  const set = new Set<string>();
  for (const c of caseFoldOrbit(cp)) {
    if (isSurrogate(c)) return ANY_CHAR_INFO;
    set.add(foldCp(c));
  }
  return exactInfo(set);
}

/** Code points the class may match (a superset), or null when too many / unknown. */
function classMembers(node: Extract<Re2Node, { type: 'class' }>): number[] | null {
  const plain = (item: ClassItem): CodeRange[] | null => {
    if (item.kind === 'range') return [[item.lo, item.hi]];
    if (item.kind === 'group') return item.negated ? complementRanges(item.ranges) : [...item.ranges];
    return null;
  };
  if (!node.negated) {
    // RE2 adds each item (case-folded under (?i)); a negated group under (?i) adds at most
    // the complement of the group, so the plain complement is a superset.
    const rs: CodeRange[] = [];
    for (const item of node.items) {
      const r = plain(item);
      if (r === null) return null; // \pL: membership unknown
      rs.push(...r);
    }
    const norm = normalizeRanges(rs);
    if (rangesSize(norm) > MAX_CLASS_ENUM) return null;
    return rangesMembers(node.foldCase ? foldClosure(norm) : norm);
  }
  // [^...]: RE2 matches the complement of the items it added (case-folded under (?i)). Any
  // subset Q of what RE2 added gives a superset complement(Q); Q collects only what is
  // certainly added: explicit ranges as written, positive groups minus "\n" (RE2 drops it
  // from groups when its ClassNL option is off), negated groups minus their case-fold
  // closure and minus "\n", Unicode groups not at all.
  const q: CodeRange[] = [];
  for (const item of node.items) {
    if (item.kind === 'range') q.push([item.lo, item.hi]);
    else if (item.kind === 'group') {
      if (!item.negated) q.push(...withoutNewline(item.ranges));
      else {
        const base = normalizeRanges([...(node.foldCase ? foldClosure(item.ranges) : item.ranges), [0x0a, 0x0a]]);
        q.push(...complementRanges(base));
      }
    }
  }
  const members = complementRanges(q);
  if (rangesSize(members) > MAX_CLASS_ENUM) return null;
  return rangesMembers(members);
}

function classInfo(node: Extract<Re2Node, { type: 'class' }>): Info {
  const members = classMembers(node);
  if (members === null) return ANY_CHAR_INFO;
  const set = new Set<string>();
  for (const c of members) {
    if (isSurrogate(c)) return ANY_CHAR_INFO;
    set.add(foldCp(c));
    if (set.size > MAX_CLASS) return ANY_CHAR_INFO;
  }
  return exactInfo(set);
}

function analyze(node: Re2Node): Info {
  switch (node.type) {
    case 'empty':
    case 'assert':
      return EMPTY_INFO;
    case 'literal':
      return literalInfo(node.cp, node.foldCase);
    case 'class':
      return classInfo(node);
    case 'dot':
    case 'anyByte':
      return ANY_CHAR_INFO;
    case 'opaque':
      return ANY_STRING_INFO;
    case 'group':
      return analyze(node.sub);
    case 'concat': {
      // Runs of literals with a single folded form are joined first: linear in their length.
      let acc = EMPTY_INFO;
      let run = '';
      for (const item of node.items) {
        if (item.type === 'literal') {
          const single = singleFolded(item.cp, item.foldCase);
          if (single !== null) {
            run += single;
            continue;
          }
        }
        if (run !== '') {
          acc = concat(acc, exactInfo(new Set([run])));
          run = '';
        }
        acc = concat(acc, analyze(item));
        if (isNone(acc)) return NONE_INFO;
      }
      return run === '' ? acc : concat(acc, exactInfo(new Set([run])));
    }
    case 'alternate':
      return alternate(node.items.map(analyze));
    case 'repeat':
      return repeat(analyze(node.sub), node.min, node.max);
  }
}

/** The query every match satisfies. */
function infoQuery(info: Info): NgramQuery {
  let q: NgramQuery;
  if (info.exact) q = info.exact.size === 0 ? NONE : qAnd([info.match, stringsQuery(info.exact)]);
  else if (info.emptyable) q = ALL;
  else q = qAnd([info.match, stringsQuery(info.prefix), stringsQuery(info.suffix)]);
  return prune(q, MAX_QUERY_TRIGRAMS);
}

// ---------------------------------------------------------------------------------------
// Public API

/**
 * Trigram query for an RE2 pattern compiled by the re2 package with flags "gm" (+ "i" when
 * caseInsensitive). Sound: accepts every document the pattern matches in.
 */
export function regexNgramQuery(pattern: string, options: { caseInsensitive: boolean }): NgramQuery {
  let ast: Re2Node;
  try {
    ast = parseNodeRe2Pattern(pattern, { foldCase: options.caseInsensitive, multiLine: true });
  } catch (err) {
    if (err instanceof Re2SyntaxError) return ALL; // RE2 decides; no filtering is always sound
    throw err;
  }
  return infoQuery(analyze(ast));
}

/**
 * Trigram query for a literal substring search: the 'and' of every distinct trigram of the
 * folded literal. Case-insensitive search is RE2's (?i) (simple case folding); when some
 * character has variants that index folding does not merge (é/É), the variants are or-ed.
 */
export function literalNgramQuery(literal: string, options: { caseInsensitive: boolean }): NgramQuery {
  const text = toWellFormed(literal);
  if (options.caseInsensitive) {
    const cps = Array.from(text, (ch) => ch.codePointAt(0)!);
    if (!cps.every((cp) => singleFolded(cp, true) !== null)) {
      const items: Re2Node[] = cps.map((cp) => ({ type: 'literal', cp, foldCase: true }));
      return infoQuery(analyze({ type: 'concat', items }));
    }
  }
  return stringQuery(bytesToBinary(foldString(text)));
}

/** Reference evaluator: does a document with trigram set `has` satisfy q? */
export function evalNgramQuery(q: NgramQuery, has: (id: number) => boolean): boolean {
  switch (q.op) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'tri':
      return has(q.id);
    case 'and':
      return q.args.every((a) => evalNgramQuery(a, has));
    case 'or':
      return q.args.some((a) => evalNgramQuery(a, has));
  }
}

function trigramText(id: number): string {
  let s = '"';
  for (const b of [(id >> 16) & 0xff, (id >> 8) & 0xff, id & 0xff]) {
    if (b === 0x22 || b === 0x5c) s += '\\' + String.fromCharCode(b);
    else if (b >= 0x20 && b < 0x7f) s += String.fromCharCode(b);
    else s += '\\x' + b.toString(16).padStart(2, '0');
  }
  return s + '"';
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
      return q.op + '(' + q.args.map(ngramQueryToString).join(',') + ')';
  }
}
