// What the regex analysis (regex-ngrams.ts) knows about the matches of one node of a
// pattern, and how that knowledge combines along concatenation, alternation and repetition.
// Every node gets an Info:
//   emptyable  whether the node can match the empty string;
//   exact      when small: the complete set of (folded) strings the node can match;
//   prefix     otherwise: every NON-EMPTY match starts with one of these strings;
//   suffix     likewise for the end;
//   match      a trigram query that holds for the trigrams of every match of the node
//              (hence 'all' for an emptyable node).
// Concatenation takes cross products of exact sets, or of the suffixes of the left side and
// the prefixes of the right side (the trigrams spanning the boundary); alternation takes
// unions (of the match queries: 'or'); x* keeps only affixes; x+ is x without exactness;
// x{n,m} is unrolled a few times and completed with x* (a superset). Whenever a set would
// grow past its cap it is turned into a trigram query ('or' over its strings of the 'and'
// of each string's trigrams), and the affixes are cut down to their outer 2 bytes, which is
// all a neighbour needs to form the trigrams spanning the boundary.
//
// Limits. Each one only weakens the query (never unsound); they keep the analysis fast and
// the query small enough to evaluate cheaply against posting lists.

import { ALL, NONE, prune, qAnd, qOr, stringsQuery, type NgramQuery } from './ngram-query.ts';
import { spend } from './analysis-budget.ts';

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
/** x{n,m}: at most this many copies of x are analysed; the rest becomes x* (a superset). */
const MAX_UNROLL = 4;
/** Max trigram leaves in a regex query; extra 'and' terms are dropped (each costs a posting-list read). */
export const MAX_QUERY_TRIGRAMS = 128;

export interface Info {
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

export const NONE_INFO: Info = { emptyable: false, exact: NO_STRINGS, prefix: NO_STRINGS, suffix: NO_STRINGS, match: NONE };
export const EMPTY_INFO: Info = { emptyable: true, exact: EMPTY_STRING_SET, prefix: NO_STRINGS, suffix: NO_STRINGS, match: ALL };
export const ANY_CHAR_INFO: Info = { emptyable: false, exact: null, prefix: EMPTY_STRING_SET, suffix: EMPTY_STRING_SET, match: ALL };
export const ANY_STRING_INFO: Info = { emptyable: true, exact: null, prefix: EMPTY_STRING_SET, suffix: EMPTY_STRING_SET, match: ALL };

export const isNone = (x: Info): boolean => x.exact !== null && x.exact.size === 0;
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

export function exactInfo(set: ReadonlySet<string>, match: NgramQuery = ALL): Info {
  if (set.size === 0) return NONE_INFO;
  const emptyable = set.has('');
  const info: Info = { emptyable, exact: set, prefix: NO_STRINGS, suffix: NO_STRINGS, match: emptyable ? ALL : match };
  let bytes = 0;
  for (const s of set) bytes += s.length;
  return set.size > MAX_EXACT || bytes > MAX_EXACT_BYTES ? toNonExact(info) : info;
}

export function concat(x: Info, y: Info): Info {
  spend();
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

export function alternate(infos: readonly Info[]): Info {
  spend();
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

export function repeat(x: Info, min: number, max: number): Info {
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
