// The required class sequence of an RE2 pattern: classes of ASCII bytes C[0..k) such that
// every match of the pattern contains k consecutive bytes, the i-th in C[i]. `\d{10}` has
// no literal for the matcher to look for (regex-required.ts) and no trigram to filter on,
// but every match holds ten digits in a row; the core scans for them at memory speed
// (core/assembly/classes.ts) and RE2 runs only where they are.
//
// SOUNDNESS RULE, as regex-required.ts's: a sequence is claimed only when every match
// contains it; when unsure, nothing. A position's class must hold every byte a match may
// have there, so only what matches one ASCII byte is a class: an ASCII literal (under
// (?i) with its whole case-folding orbit, when that is ASCII: 'k' also folds to U+212A, so
// (?i)k is not one), a class of ASCII ranges and Perl/POSIX groups (closed under folding
// likewise). `.`, negated classes, \pL and non-ASCII characters match bytes of several
// lengths: they end a sequence. Empty-width assertions consume nothing and join the bytes
// around them (`\bfoo\b` still requires "foo").
//
// Per node, bottom up (one walk of the tree: regex-fold.ts): `exact` is the one sequence
// every match is (null: matches differ in length or shape), `prefix` and `suffix` what
// every match starts and ends with, and `required` sequences every match contains.
// Concatenation joins a child's suffix, the exact children after it and the next child's
// prefix into one run; a repetition with min >= 1 requires min copies of an exact child;
// an alternation's branches give, position by position, the union of their classes (over
// the shortest branch, from either end), which is exact when they differ in one position
// at most (`(a|b)c`, not `ab|cd`).

import { caseFoldOrbit } from './case-fold.ts';
import type { ClassItem, Re2Node } from './re2-syntax.ts';
import { foldRegex, type RegexFold, type Re2NodeOf } from './regex-fold.ts';

/** A set of ASCII bytes: bit b set when byte b is in it. */
type ByteClass = bigint;
type Seq = ByteClass[];

interface Need {
  exact: Seq | null;
  /** With `exact`: no assertion inside, so the pattern matches exactly the bytes of the sequence. */
  plain: boolean;
  prefix: Seq;
  suffix: Seq;
  required: Seq[];
}

/** The longest run kept whole: a longer one is required in parts (x{1000}{1000} stays small). */
const MAX_RUN = 64;
/** The core scans sequences of at most 32 classes (core/index.ts, compileClassSequence). */
export const MAX_SEQUENCE = 32;
/**
 * A sequence is worth scanning for when it rules out at least as much as a three-byte
 * literal would in uniformly random ASCII: the sum over its classes of log2(128 / size).
 * `\d{10}` scores 37 bits, `[A-Z]{6}_[0-9]{2}` 28; `\w{5}` (5 bits) is found everywhere.
 */
const MIN_BITS = 21;

const NOTHING: Need = { exact: null, plain: false, prefix: [], suffix: [], required: [] };
const ALL_ASCII = (1n << 128n) - 1n;
const NL = 1n << 10n;

function exactNeed(seq: Seq, plain = true): Need {
  return { exact: seq, plain, prefix: seq, suffix: seq, required: seq.length > 0 ? [seq] : [] };
}

/** The ASCII bytes of code points lo..hi, or null when one of them is not ASCII. */
function asciiRange(lo: number, hi: number): ByteClass | null {
  if (hi >= 0x80 || lo > hi) return null;
  return ((1n << BigInt(hi + 1)) - 1n) ^ ((1n << BigInt(lo)) - 1n);
}

/** The class closed under RE2's case folding, or null when a member folds outside ASCII. */
function folded(c: ByteClass): ByteClass | null {
  let out = c;
  for (let b = 0; b < 0x80; b++) {
    if (((c >> BigInt(b)) & 1n) === 0n) continue;
    for (const o of caseFoldOrbit(b)) {
      if (o >= 0x80) return null;
      out |= 1n << BigInt(o);
    }
  }
  return out;
}

function itemClass(item: ClassItem): ByteClass | null {
  if (item.kind === 'range') return asciiRange(item.lo, item.hi);
  if (item.kind === 'unicode' || item.negated) return null;
  let c = 0n;
  for (const [lo, hi] of item.ranges) {
    const r = asciiRange(lo, hi);
    if (r === null) return null;
    c |= r;
  }
  return c;
}

function classNeed(node: Re2NodeOf<'class'>): Need {
  if (node.negated) return NOTHING;
  let c = 0n;
  for (const item of node.items) {
    const r = itemClass(item);
    if (r === null) return NOTHING;
    c |= r;
  }
  const f = node.foldCase ? folded(c) : c;
  return f === null || f === 0n ? NOTHING : exactNeed([f]);
}

function literalNeed(cp: number, foldCase: boolean): Need {
  const c = asciiRange(cp, cp);
  if (c === null) return NOTHING;
  const f = foldCase ? folded(c) : c;
  return f === null ? NOTHING : exactNeed([f]);
}

function concatNeed(items: readonly Re2Node[], sub: (item: Re2Node) => Need): Need {
  const required: Seq[] = [];
  let run: Seq = [];
  let prefix: Seq | null = null; // set once a child is not exact
  let plain = true;
  const flush = (): void => {
    if (run.length > 0) required.push(run);
  };
  for (const item of items) {
    const n = sub(item);
    if (n.exact !== null) {
      plain &&= n.plain;
      run = run.concat(n.exact);
      if (run.length > MAX_RUN) {
        // Too long to carry whole: its first part is required, its last part goes on.
        if (prefix === null) prefix = run.slice(0, MAX_RUN);
        required.push(run.slice(0, MAX_RUN));
        run = run.slice(-MAX_RUN);
      }
      continue;
    }
    const joined = run.concat(n.prefix);
    if (prefix === null) prefix = joined.slice(0, MAX_RUN);
    run = joined;
    flush();
    required.push(...n.required);
    run = n.suffix;
  }
  if (prefix === null) return exactNeed(run, plain);
  flush();
  return { exact: null, plain: false, prefix, suffix: run, required };
}

function repeatNeed(sub: Need, min: number, max: number): Need {
  if (max === 0) return exactNeed([]);
  if (min === 0) return NOTHING;
  if (sub.exact === null) return { exact: null, plain: false, prefix: sub.prefix, suffix: sub.suffix, required: sub.required };
  if (sub.exact.length === 0) return exactNeed([], sub.plain);
  // min copies of the one sequence, one after the other (at most MAX_RUN classes of them).
  const times = Math.max(1, Math.min(min, Math.floor(MAX_RUN / sub.exact.length)));
  const copies: Seq = [];
  for (let i = 0; i < times; i++) copies.push(...sub.exact);
  if (min === max && times === min) return exactNeed(copies, sub.plain);
  return { exact: null, plain: false, prefix: copies, suffix: copies, required: [copies] };
}

/** Position by position, the union of the sequences' classes over the shortest one's length (from the end when `fromEnd`). */
function unionOf(seqs: Seq[], fromEnd: boolean): Seq {
  const len = Math.min(...seqs.map((s) => s.length));
  const out: Seq = [];
  for (let i = 0; i < len; i++) {
    let c = 0n;
    for (const s of seqs) c |= fromEnd ? s[s.length - len + i]! : s[i]!;
    out.push(c);
  }
  return out;
}

function alternateNeed(branches: Need[]): Need {
  const exacts = branches.map((b) => b.exact);
  if (exacts.every((e): e is Seq => e !== null && e.length === exacts[0]!.length)) {
    // The union position by position matches more than the branches (`ab|cd` also "ad")
    // unless they differ in one position at most: then it is the alternation itself.
    const union = unionOf(exacts, false);
    const differ = union.filter((c, i) => exacts.some((e) => e[i] !== c)).length;
    if (differ <= 1)
      return exactNeed(
        union,
        branches.every((b) => b.plain),
      );
    return { exact: null, plain: false, prefix: union, suffix: union, required: [union] };
  }
  const prefix = unionOf(
    branches.map((b) => b.prefix),
    false,
  );
  const suffix = unionOf(
    branches.map((b) => b.suffix),
    true,
  );
  return { exact: null, plain: false, prefix, suffix, required: [prefix, suffix].filter((s) => s.length > 0) };
}

/** Every node's Need (see the header). */
const NEED: RegexFold<Need> = {
  empty: () => exactNeed([]),
  assert: () => exactNeed([], false),
  literal: (node) => literalNeed(node.cp, node.foldCase),
  class: classNeed,
  dot: () => NOTHING,
  anyByte: () => NOTHING,
  opaque: () => NOTHING,
  concat: concatNeed,
  alternate: (items, sub) => alternateNeed(items.map(sub)),
  repeat: (node, sub) => repeatNeed(sub(), node.min, node.max),
};

function popcount(c: ByteClass): number {
  let n = 0;
  for (let x = c; x > 0n; x &= x - 1n) n++;
  return n;
}

/** What a class rules out, in bits: log2(128 / its size) (an empty class: as much as a byte). */
const classBits = (c: ByteClass): number => Math.log2(128 / Math.max(1, popcount(c)));

/** The best window of at most MAX_SEQUENCE classes of a sequence, and its bits. */
function bestWindow(seq: Seq): { seq: Seq; bits: number } {
  const bits = seq.map(classBits);
  let best = { at: 0, bits: -1 };
  const len = Math.min(MAX_SEQUENCE, seq.length);
  for (let at = 0; at + len <= seq.length; at++) {
    let sum = 0;
    for (let i = at; i < at + len; i++) sum += bits[i]!;
    if (sum > best.bits) best = { at, bits: sum };
  }
  return { seq: seq.slice(best.at, best.at + len), bits: best.bits };
}

/** A required class sequence (Term.sequence), in the form the core compiles (compileClassSequence). */
export interface RequiredSequence {
  /** 4 u32 words per class: bit b of word b >> 5 set when byte b is in it. */
  classes: number[];
  /**
   * The pattern matches exactly the sequence: its matches are the sequence's leftmost
   * non-overlapping occurrences (one length, no assertion), so no RE2 is needed.
   */
  whole: boolean;
}

const toWords = (seq: Seq): number[] => seq.flatMap((c) => [0, 1, 2, 3].map((w) => Number((c >> BigInt(32 * w)) & 0xffffffffn)));

/**
 * The class sequence worth scanning for that every match of the parsed pattern contains;
 * null when none rules out enough (MIN_BITS) and it is not the whole pattern. `lineLocal`:
 * no match crosses a "\n" (regex-line-local.ts), so "\n" is taken out of every class.
 */
export function requiredSequenceOf(ast: Re2Node | null, lineLocal: boolean): RequiredSequence | null {
  if (!ast) return null;
  const need = foldRegex(ast, NEED);
  const strip = (seq: Seq): Seq => (lineLocal ? seq.map((c) => c & ~NL & ALL_ASCII) : seq);
  // A pattern that is one sequence of classes (`\d{10}`): the scan is the whole match.
  if (need.exact !== null && need.plain && need.exact.length >= 1 && need.exact.length <= MAX_SEQUENCE)
    return { classes: toWords(strip(need.exact)), whole: true };
  let best: { seq: Seq; bits: number } | null = null;
  for (const whole of need.required) {
    const w = bestWindow(strip(whole));
    if (best === null || w.bits > best.bits) best = w;
  }
  if (best === null || best.bits < MIN_BITS) return null;
  return { classes: toWords(best.seq), whole: false };
}
