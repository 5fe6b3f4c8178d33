// The match counts of every version of a repository's history for a query that is one
// literal of word bytes, read from its word counts (word-counts.ts) instead of searched:
// what `history:yes` (history-spans.ts) asks of the first of its two searches.
//
// Why the count is exact. A literal q made only of ASCII word bytes [A-Za-z0-9_] matches,
// case-sensitively, only word bytes, so every match lies inside one maximal run of them (a
// word), and the leftmost non-overlapping matches of q in a version are, word after word,
// those of q in each word (a match ends inside the word it started in, so the scan enters
// each word afresh). The version's count (search/version-matches.ts: its ranges) is
// therefore the sum over its distinct words w of count(w) × occ(q, w), occ being q's
// matches in w found by the search's own Matcher and counted by the same versionMatches.
// Case-insensitively the search folds as RE2 does, and the only characters outside ASCII
// whose folding is an ASCII word character are K (k) and ſ (s): a match may hold them, never
// anything else outside the class, which is why the words hold them too (word-counts.ts).
// The Matcher, given a word's bytes, decides as it does for the whole version: ASCII
// folding, or RE2 where a K or ſ is in the bytes (and q holds a k or an s); either gives,
// within a word, the matches the version's scan gives there. Words shorter than q hold none
// of it, so leaving out those under MIN_WORD bytes loses nothing for a q of at least that
// many.
//
// Which words hold q: those of the dictionary's words listed under q's rarest trigram that
// hold q (dictionary-trigrams.ts); case-insensitively, of q lowercased in a copy of the
// dictionary with its ASCII lowercased, and for a q with a k or an s in a history holding K
// or ſ, in a copy where those are k and s too (another length: each word's place in it is
// kept).
// Their lists' entries (a chain's first version: the full count; a later one: the change)
// times occ go to a difference array over the documents, and one pass of sums restarted at
// each chain's first document gives every version's count.

import type { Plan, Term } from '../query/terms.ts';
import { foldsBeyondAscii, Matcher } from '../search/matcher.ts';
import { versionMatches } from '../search/version-matches.ts';
import { DictionaryTrigrams } from './dictionary-trigrams.ts';
import { MIN_WORD, OID_BYTES, readList, type WordCounts } from './word-counts.ts';

/** A query the word counts answer: one literal of at least MIN_WORD ASCII word bytes, and nothing else. */
export function wordTerm(plan: Plan): Term | undefined {
  const n = plan.root;
  if (n.op !== 'content' || n.term.kind !== 'literal' || plan.terms !== 1) return undefined;
  if (plan.branches.length > 0 || plan.context !== undefined || plan.type !== undefined || plan.versions) return undefined;
  return WORD_LITERAL.test(n.term.pattern) ? n.term : undefined;
}

const WORD_LITERAL = new RegExp(`^[A-Za-z0-9_]{${MIN_WORD},}$`);

/** What a query may read of the files, on the thread serving requests; past it the search answers (undefined). */
export interface WordBudget {
  /** List entries left to read. */
  entries: number;
  /** Words left to match (a Matcher call each). */
  words: number;
}

/** Per query: list entries and candidate words, all repositories together (about 2 ms of work). */
export function wordBudget(): WordBudget {
  return { entries: 300_000, words: 20_000 };
}

/**
 * A repository's versions holding matches: per path, per blob id, its matches and the
 * documents holding that version (numbered as the file numbers them: word-counts.ts
 * docsByShard); and `found`, what the search would count of them.
 */
export interface WordVersions {
  paths: Map<string, Map<string, { count: number; docs: number[] }>>;
  /**
   * At least what a search of these versions counts towards its limit (its content
   * matches, and at most every path's matches of q besides): the search is cut past its
   * limit, which the caller compares with this.
   */
  found: number;
}

/** Each file's dictionary as a case-insensitive literal is looked for in it: ASCII lowercased, and K and ſ folded too. */
const lowered = new WeakMap<WordCounts, { dict: Buffer; starts: Uint32Array }>();
const folded = new WeakMap<WordCounts, { dict: Buffer; starts: Uint32Array }>();

/**
 * The versions of `c` holding matches of `term` (wordTerm's), with their counts, each
 * word's ranges counted by versionMatches with `literalBytes` as the search of versions is
 * given it (loneLiteralBytes of its plan); undefined when the budget runs out: the caller
 * then searches.
 */
export function wordVersions(c: WordCounts, term: Term, literalBytes: number, budget: WordBudget): WordVersions | undefined {
  const needle = Buffer.from(term.caseSensitive ? term.pattern : term.pattern.toLowerCase(), 'latin1');
  let found = { dict: c.dictionary, starts: c.wordStarts };
  if (!term.caseSensitive) {
    const fold = c.anyFolds && foldsBeyondAscii(term.pattern);
    const kept = (fold ? folded : lowered).get(c);
    found = kept ?? caseless(c, fold);
    if (kept === undefined) (fold ? folded : lowered).set(c, found);
  }
  const { dict, starts } = found;
  const matcher = new Matcher(term);
  const diff = new Float64Array(c.docs);
  let touched = false;
  for (const w of DictionaryTrigrams.of(dict, starts).holding(needle)) {
    if (--budget.words < 0) return undefined;
    // The word's own bytes: the Matcher decides on them as on the version's (asciiFoldsOnly unless they hold K or ſ).
    const word = c.dictionary.subarray(c.wordStarts[w]!, c.wordStarts[w + 1]! - 1);
    const ranges = matcher.find(word, word.length, !c.anyFolds);
    const occ = ranges.length === 0 ? 0 : versionMatches(ranges, literalBytes);
    if (occ > 0) {
      const n = readList(c, w, (doc, delta) => {
        diff[doc]! += delta * occ;
      });
      touched = true;
      budget.entries -= n;
      if (budget.entries < 0) return undefined;
    }
  }
  const out: WordVersions = { paths: new Map(), found: 0 };
  if (!touched) return out;
  let run = 0;
  for (let d = 0; d < c.docs; d++) {
    run = (c.starts[d] === 1 ? 0 : run) + diff[d]!;
    if (run === 0) continue;
    if (run < 0 || !Number.isSafeInteger(run)) throw new Error(`the word counts file is damaged: document ${d} holds ${run} matches`);
    const path = c.paths[c.docPath[d]!]!;
    let blobs = out.paths.get(path);
    if (blobs === undefined) out.paths.set(path, (blobs = new Map()));
    // (A path whose content went back to an earlier blob holds it in several documents.)
    const blob = blobId(c, d);
    const seen = blobs.get(blob);
    if (seen === undefined) blobs.set(blob, { count: run, docs: [d] });
    else seen.docs.push(d);
    out.found += run + Math.floor(Buffer.byteLength(path) / needle.length);
  }
  return out;
}

/**
 * The dictionary as a case-insensitive literal is looked for in it: ASCII letters
 * lowercased, and with `fold` K and ſ made k and s (each word's start kept, the lengths
 * changing); no literal of word bytes matches across a word's "\n".
 */
function caseless(c: WordCounts, fold: boolean): { dict: Buffer; starts: Uint32Array } {
  const src = c.dictionary;
  const dict = Buffer.allocUnsafe(src.length);
  const starts = new Uint32Array(c.wordStarts.length);
  let o = 0;
  let w = 0;
  for (let i = 0; i < src.length; ) {
    if (i === c.wordStarts[w]) starts[w++] = o;
    const b = src[i]!;
    if (fold && b === 0xe2 && src[i + 1] === 0x84 && src[i + 2] === 0xaa) {
      dict[o++] = 0x6b; // K: k
      i += 3;
    } else if (fold && b === 0xc5 && src[i + 1] === 0xbf) {
      dict[o++] = 0x73; // ſ: s
      i += 2;
    } else {
      dict[o++] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
      i++;
    }
  }
  starts[w] = o;
  return { dict: dict.subarray(0, o), starts };
}

/** A document's blob id as a search of versions writes it (search/file-json.ts: '' for none). */
function blobId(c: WordCounts, d: number): string {
  const from = d * OID_BYTES;
  for (let i = from; i < from + OID_BYTES; i++) if (c.blobs[i] !== 0) return c.blobs.toString('hex', from, from + OID_BYTES);
  return '';
}
