// Trigram prefilter for RE2 regular expressions and literals.
//
// SOUNDNESS RULE: the query derived for a pattern must accept every document in which the
// pattern can match. False positives are allowed (the matcher verifies every candidate),
// false negatives never. Whenever the analysis is unsure it must weaken ('all', or drop a
// term from an 'and'); it may only answer 'none' when no string at all can match.
//
// The index side: a document's trigrams are taken over its bytes after "index folding"
// (core/index.ts foldBytes: ASCII A-Z -> a-z, U+212A KELVIN SIGN -> 'k', U+017F LONG S ->
// 's', every other byte unchanged); the planner folds through that same function
// (case-fold.ts). Folding maps each UTF-8 character independently, so for any string s
// made of whole characters, fold(s) is a substring of fold(document) whenever s is a
// substring of the document; all strings below are therefore kept already folded, as byte
// strings (JS strings of char codes 0-255), and trigrams are read straight off them.
//
// How the analysis works (in the spirit of Russ Cox's codesearch, written from scratch):
// the pattern is parsed (re2-syntax.ts) and every node gets an Info (match-info.ts: whether
// it can match the empty string, its exact strings when few, else the prefixes and
// suffixes of its matches, and a trigram query every match satisfies), combined bottom up
// in one walk of the tree (regex-fold.ts).
// Empty-width assertions (^ $ \A \z \b \B) are treated as matching the empty string: the
// relaxed pattern matches a superset of what the real one does, which keeps it sound.
// Character classes and case-insensitive letters become exact sets of the folded encodings
// of their members (case-fold orbits are RE2's own, see case-fold.ts); large classes and
// '.' match "any character" (no information).

import { caseFoldOrbit, foldClosure, foldCp, foldedBinary, isSurrogate } from './case-fold.ts';
import { complementRanges, normalizeRanges, rangesMembers, rangesSize, withoutNewline } from './code-ranges.ts';
import {
  alternate,
  ANY_CHAR_INFO,
  ANY_STRING_INFO,
  concat,
  EMPTY_INFO,
  exactInfo,
  isNone,
  MAX_QUERY_TRIGRAMS,
  NONE_INFO,
  repeat,
  type Info,
} from './match-info.ts';
import { ALL, NONE, prune, qAnd, stringQuery, stringsQuery, type NgramQuery } from './ngram-query.ts';
import { parseForAnalysis, toWellFormed, type ClassItem, type CodeRange, type Re2Node } from './re2-syntax.ts';
import { foldRegex, type RegexFold, type Re2NodeOf } from './regex-fold.ts';

// Limits of the class analysis; like those of match-info.ts they only weaken the query.

/** A class with more folded members than this is "any character": or-ing 26+ single bytes buys little. */
const MAX_CLASS = 16;
/** Classes are enumerated code point by code point only up to this size (before case folding). */
const MAX_CLASS_ENUM = 256;

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
function classMembers(node: Re2NodeOf<'class'>): number[] | null {
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

function classInfo(node: Re2NodeOf<'class'>): Info {
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

/** Every node's Info (see the header). */
const INFO: RegexFold<Info> = {
  empty: () => EMPTY_INFO,
  assert: () => EMPTY_INFO,
  literal: (node) => literalInfo(node.cp, node.foldCase),
  class: classInfo,
  dot: () => ANY_CHAR_INFO,
  anyByte: () => ANY_CHAR_INFO,
  opaque: () => ANY_STRING_INFO,
  concat(items, sub) {
    // Runs of literals with a single folded form are joined first: linear in their length.
    let acc = EMPTY_INFO;
    let run = '';
    for (const item of items) {
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
      acc = concat(acc, sub(item));
      if (isNone(acc)) return NONE_INFO;
    }
    return run === '' ? acc : concat(acc, exactInfo(new Set([run])));
  },
  alternate: (items, sub) => alternate(items.map(sub)),
  repeat: (node, sub) => repeat(sub(), node.min, node.max),
};

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
  return regexNgramQueryOf(parseForAnalysis(pattern, options));
}

/** regexNgramQuery of a pattern parsed by parseForAnalysis (null: no filtering, always sound). */
export function regexNgramQueryOf(ast: Re2Node | null): NgramQuery {
  return ast ? infoQuery(foldRegex(ast, INFO)) : ALL;
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
      return infoQuery(foldRegex({ type: 'concat', items }, INFO));
    }
  }
  return stringQuery(foldedBinary(text));
}
