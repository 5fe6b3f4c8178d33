// Folding for the planner: the index's folding of the bytes a pattern stands for, and the
// case-folding orbits of RE2's (?i), which say which characters a case-insensitive
// pattern stands for in the first place.

import RE2 from 're2';
import { foldBytes } from '../../core/index.ts';
import { complementRanges, MAX_RUNE, normalizeRanges, rangesMembers } from './code-ranges.ts';
import type { CodeRange } from './re2-syntax.ts';

const utf8 = new TextEncoder();

// Index folding is the core's own: core/index.ts foldBytes runs the wasm `fold` that
// PostingsBuilder applies to every document before taking its trigrams, so the planner's
// strings are folded exactly as the documents they must find. A second copy of the rule
// here could drift from it and make the prefilter drop documents that match.

/** Index folding of the UTF-8 bytes of s (lone surrogates encode as U+FFFD). */
export function foldString(s: string): Uint8Array {
  return foldBytes(utf8.encode(s));
}

export function bytesToBinary(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 4096) s += String.fromCharCode(...bytes.subarray(i, i + 4096));
  return s;
}

/** ASCII folded in one call of the core: each ASCII byte is one character and folds to one byte. */
let asciiFolded: string | null = null;
const foldCache = new Map<number, string>();

function asciiTable(): string {
  asciiFolded ??= bytesToBinary(foldBytes(Uint8Array.from({ length: 0x80 }, (_, b) => b)));
  return asciiFolded;
}

/**
 * bytesToBinary(foldString(s)): the index folding of s as a byte string. An ASCII string
 * (most queries' literals) is folded through the core's own ASCII table, sparing the
 * encoder and a call of the core per literal.
 */
export function foldedBinary(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return bytesToBinary(foldString(s));
  const table = asciiTable();
  let out = '';
  for (let i = 0; i < s.length; i++) out += table.charAt(s.charCodeAt(i));
  return out;
}

/** The folded UTF-8 encoding of one code point, as a byte string. */
export function foldCp(cp: number): string {
  if (cp < 0x80) return asciiTable().charAt(cp);
  let s = foldCache.get(cp);
  if (s === undefined) {
    s = bytesToBinary(foldBytes(utf8.encode(String.fromCodePoint(cp))));
    if (foldCache.size < 65536) foldCache.set(cp, s);
  }
  return s;
}

export const isSurrogate = (cp: number): boolean => cp >= 0xd800 && cp <= 0xdfff;

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

const hexCp = (cp: number): string => `\\x{${cp.toString(16)}}`;

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
    let candidates = cp < 0x80 ? asciiCandidates(cp) : (jsOrbits().get(cp) ?? [cp]);
    const outside = outsideRanges(candidates);
    const leaks = outside.length > 0 && re2Matches(`(?i)[${outside.map(([lo, hi]) => `${hexCp(lo)}-${hexCp(hi)}`).join('')}]`, cp);
    if (leaks) {
      // RE2 knows a variant JavaScript does not: find the whole orbit by bisection.
      const found: number[] = [];
      const search = (lo: number, hi: number): void => {
        if (!re2Matches(`(?i)[${hexCp(lo)}-${hexCp(hi)}]`, cp)) return;
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
    const literal = new RE2(`(?i)${hexCp(cp)}`, 'u');
    orbit = candidates.filter((c) => c === cp || literal.test(String.fromCodePoint(c)));
    if (!orbit.includes(cp)) orbit = [...orbit, cp].sort((a, b) => a - b);
  }
  orbitCache.set(cp, orbit);
  return orbit;
}

/** The ranges closed under RE2's case folding: every member's whole orbit. */
export function foldClosure(rs: readonly CodeRange[]): CodeRange[] {
  const out: CodeRange[] = [];
  for (const c of rangesMembers(rs)) for (const o of caseFoldOrbit(c)) out.push([o, o]);
  return normalizeRanges(out);
}
