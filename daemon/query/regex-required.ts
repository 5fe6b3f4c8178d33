// The required literal of an RE2 pattern: a string that every match of the pattern
// contains, exactly (case-sensitively, as UTF-8 bytes). The matcher looks for it with
// Buffer.indexOf (several times faster than RE2) and skips RE2 on a document without it.
// The trigram prefilter (regex-ngrams.ts) cannot do this job: the index's trigrams are case
// folded, so `[A-Z]\w+Exception` keeps every file that says "exception" in any case.
//
// SOUNDNESS RULE: a string is claimed only when every match contains it; when unsure the
// analysis claims nothing (a document without the string is rejected unverified). Strings
// are kept as sequences of whole code points; a literal is exact only when it matches one
// code point: outside (?i), or under (?i) when its case-folding orbit (RE2's, case-fold.ts)
// has no other member (digits, '_', '(').
//
// Per node, bottom up (one walk of the tree: regex-fold.ts): `exact` is the single string
// the node matches (null: none or many), `required` the strings each of its matches
// contains.
// - concat: adjacent exact children form one run (foo(bar)baz requires "foobarbaz"); a
//   non-exact child ends the run and adds its own required strings.
// - repeat: with min >= 1 a match holds at least one match of the child (min copies of an
//   exact child); min 0 requires nothing.
// - alternate: only what every branch requires, as common substrings of their strings.
// - empty-width assertions end the run and require nothing (kept simple: `a\bb` can never
//   match anyway); classes, '.', \C and unmodelled constructs are "some character(s)".

import { caseFoldOrbit, isSurrogate } from './case-fold.ts';
import { parseForAnalysis, type Re2Node } from './re2-syntax.ts';
import { foldRegex, type RegexFold, type Re2NodeOf } from './regex-fold.ts';

interface Need {
  /** The one string the node matches, as code points; null when it may match several. */
  exact: number[] | null;
  /** Strings (code points) contained in every match of the node; holds `exact` when non-empty. */
  required: number[][];
}

/** Bound on exact strings (x{1000}{1000}, long literal runs): longer ones are cut into required pieces. */
const MAX_EXACT = 1024;
/** Work budget (character comparisons) of one alternation's common-substring search. */
const MAX_COMMON_WORK = 1 << 20;

const NOTHING: Need = { exact: null, required: [] };

/** Whether the literal cp matches only itself (no case variant under (?i)). */
function singleCp(cp: number, foldCase: boolean): boolean {
  if (isSurrogate(cp)) return false;
  return !foldCase || caseFoldOrbit(cp).length === 1;
}

function exactNeed(exact: number[]): Need {
  return { exact, required: exact.length > 0 ? [exact] : [] };
}

/** The class's single member, when it has exactly one and no case variant. */
function singleClassMember(node: Re2NodeOf<'class'>): number | null {
  if (node.negated || node.items.length === 0) return null;
  let cp: number | null = null;
  for (const item of node.items) {
    if (item.kind !== 'range' || item.lo !== item.hi) return null;
    if (cp !== null && cp !== item.lo) return null;
    cp = item.lo;
  }
  return cp !== null && singleCp(cp, node.foldCase) ? cp : null;
}

function concatNeed(items: readonly Re2Node[], sub: (item: Re2Node) => Need): Need {
  const required: number[][] = [];
  let run: number[] = [];
  let allExact = true;
  const flush = (): void => {
    if (run.length > 0) required.push(run);
    run = [];
  };
  for (const item of items) {
    const n = sub(item);
    if (n.exact !== null) {
      for (const c of n.exact) run.push(c);
      if (run.length > MAX_EXACT) {
        // Too long to carry as exact: keep it as a required string and start a new run.
        allExact = false;
        flush();
      }
      continue;
    }
    allExact = false;
    flush();
    required.push(...n.required);
  }
  if (allExact) return exactNeed(run);
  flush();
  return { exact: null, required };
}

function repeatNeed(sub: Need, min: number, max: number): Need {
  if (max === 0) return exactNeed([]);
  if (min === 0) return sub.exact !== null && sub.exact.length === 0 ? exactNeed([]) : NOTHING;
  if (sub.exact === null) return { exact: null, required: sub.required };
  // min >= 1 copies of one string, one after the other.
  const times = Math.min(min, Math.floor(MAX_EXACT / Math.max(1, sub.exact.length)));
  const atLeast = times >= 1 ? repeatCps(sub.exact, times) : sub.exact;
  if (min === max && times === min) return exactNeed(atLeast);
  return { exact: null, required: atLeast.length > 0 ? [atLeast] : [] };
}

function repeatCps(s: number[], times: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push(...s);
  return out;
}

function sameCps(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

/** Longest common substring of a and b (empty when none). */
function longestCommon(a: number[], b: number[]): number[] {
  let best = 0;
  let bestEnd = 0;
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1]! + 1 : 0;
      if (cur[j]! > best) {
        best = cur[j]!;
        bestEnd = i;
      }
    }
    [prev, cur] = [cur, prev];
  }
  return a.slice(bestEnd - best, bestEnd);
}

function alternateNeed(branches: Need[]): Need {
  const first = branches[0]!;
  if (first.exact !== null && branches.every((b) => b.exact !== null && sameCps(b.exact, first.exact!))) return first;
  // A string every branch requires is required by the alternation. Each candidate is cut
  // down, branch by branch, to its longest common substring with some string that branch
  // requires: it stays a substring of a required string of every branch seen so far.
  let candidates = first.required;
  let work = 0;
  for (const branch of branches.slice(1)) {
    const theirs = branch.required;
    const next: number[][] = [];
    for (const c of candidates) {
      let best: number[] = [];
      for (const s of theirs) {
        work += c.length * s.length;
        if (work > MAX_COMMON_WORK) return NOTHING;
        const common = longestCommon(c, s);
        if (common.length > best.length) best = common;
      }
      if (best.length > 0 && !next.some((x) => sameCps(x, best))) next.push(best);
    }
    candidates = next;
    if (candidates.length === 0) return NOTHING;
  }
  return { exact: null, required: candidates };
}

/** Every node's Need (see the header). */
const NEED: RegexFold<Need> = {
  empty: () => exactNeed([]),
  literal: (node) => (singleCp(node.cp, node.foldCase) ? exactNeed([node.cp]) : NOTHING),
  class(node) {
    const cp = singleClassMember(node);
    return cp === null ? NOTHING : exactNeed([cp]);
  },
  assert: () => NOTHING,
  dot: () => NOTHING,
  anyByte: () => NOTHING,
  opaque: () => NOTHING,
  concat: concatNeed,
  alternate: (items, sub) => alternateNeed(items.map(sub)),
  repeat: (node, sub) => repeatNeed(sub(), node.min, node.max),
};

const utf8Bytes = (cps: number[]): number => Buffer.byteLength(String.fromCodePoint(...cps), 'utf8');

/**
 * The longest string (by UTF-8 length) that every match of the pattern contains, as RE2
 * compiles it with the daemon's flags (terms.ts regexFlags: "gm", plus "i" when
 * caseInsensitive); null when no such string is known. Compare it to bytes as UTF-8.
 */
export function requiredLiteral(pattern: string, options: { caseInsensitive: boolean }): string | null {
  return requiredLiteralOf(parseForAnalysis(pattern, options));
}

/** requiredLiteral of a pattern parsed by parseForAnalysis (null: nothing claimed, always sound). */
export function requiredLiteralOf(ast: Re2Node | null): string | null {
  if (!ast) return null;
  let best: number[] | null = null;
  let bestBytes = 0;
  for (const whole of foldRegex(ast, NEED).required) {
    // A prefix of a required string is required too; the cap bounds the spread below.
    const s = whole.length > MAX_EXACT ? whole.slice(0, MAX_EXACT) : whole;
    const bytes = utf8Bytes(s);
    if (bytes > bestBytes) {
      best = s;
      bestBytes = bytes;
    }
  }
  return best === null ? null : String.fromCodePoint(...best);
}
