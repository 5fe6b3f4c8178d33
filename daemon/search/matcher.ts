// Finds the match ranges of one term of a query in a document's bytes (or a path).
//
// Two implementations of the same semantics:
// - "indexed": the production path. Literals are verified by the WebAssembly core (SIMD);
//   case-insensitive literals fall back to RE2 only where ASCII folding is not enough (the
//   shard flags documents where it is); a regex with a required literal (Term.required)
//   runs RE2 only on documents holding it, and only on the lines holding it when no match
//   can cross a line (Term.lineLocal); one without (or with a byte or two) does the same
//   with the classes every match holds in a row (Term.sequence: `\d{10}`), which the core
//   scans for.
// - "reference": the brute-force oracle. Plain Buffer.indexOf and RE2, never the core, so
//   the differential test compares two independent matchers.
//
// Semantics: leftmost, non-overlapping matches, as RE2's global search finds them. A
// case-insensitive literal matches as RE2's (?i) does: Unicode simple case folding. Byte
// offsets, end exclusive.

import RE2 from 're2';
import { compileClassSequence, containsLiteral, findClassSequence, findLiteral, type ClassSequence } from '../../core/index.ts';
import { escapeRegex, regexFlags, type Term } from '../query/terms.ts';
import { isListableWord } from '../index/content-words.ts';

/**
 * The last document asked about in foldsToAscii and the answer: the terms of a query ask
 * about the same document one after the other (a document object is one document's
 * read-only bytes).
 */
let foldedDoc: Buffer | undefined;
let foldedAnswer = false;

/**
 * Occurrences of a line-local regex's required literal located per document; past them RE2
 * reads the rest of it (a literal that common gains little from windows).
 */
const REQUIRED_SCAN_MAX = 64;
/**
 * Lines holding a line-local regex's literal that start at most this many bytes after the
 * last window's end join it (whole lines in between: still only whole lines are searched).
 * `static (int|void) [a-z0-9_]+_probe\(` requires "static ", which some C files hold on
 * most of their lines: a window per line cost more than RE2 over the whole document.
 */
const WINDOW_GAP = 2048;
/** Required literals shorter than this are checked with Buffer.indexOf (see Matcher.find). */
const LINE_SCAN_MIN_BYTES = 3;
const NL = 0x0a;

const KELVIN = Buffer.from('\u212A');
const LONG_S = Buffer.from('\u017F');

/** Whether the document holds one of the two non-ASCII code points that fold to ASCII letters (K, s). */
function foldsToAscii(buf: Buffer): boolean {
  if (buf !== foldedDoc) {
    // Two native scans for rare lead bytes (memchr speed) beat one pass in the core. A
    // short one (a path: a content term is looked for in every candidate's path too) is
    // looked at by hand for their lead bytes first: two calls into the runtime per
    // document were a noticeable share of a stream's work.
    let lead = buf.length > SHORT_SCAN;
    for (let i = 0; i < buf.length && !lead; i++) lead = buf[i] === KELVIN[0] || buf[i] === LONG_S[0];
    foldedAnswer = lead && (buf.indexOf(KELVIN) !== -1 || buf.indexOf(LONG_S) !== -1);
    foldedDoc = buf;
  }
  return foldedAnswer;
}

/**
 * Whether a case-insensitive literal may match a code point outside ASCII (U+212A, the
 * Kelvin sign, and U+017F, long s, whose folding is an ASCII letter): only one holding a k
 * or an s. Other ASCII literals match, case-insensitively, ASCII bytes alone.
 */
export function foldsBeyondAscii(pattern: string): boolean {
  return /[ks]/i.test(pattern);
}

/** Buffers up to this long are scanned by hand for foldsToAscii's lead bytes. */
const SHORT_SCAN = 256;

export class Matcher {
  /** RE2 executions, one per document searched with a regular expression (not those the required literal ruled out). */
  regexpsConsidered = 0;
  private readonly query: Term;
  private readonly needle: Buffer;
  private readonly regex: RE2 | undefined;
  /** Bytes every match of the regex contains; indexed mode only. */
  private readonly required: Buffer | undefined;
  /** Classes every match holds in a row (Term.sequence), compiled; indexed mode only. */
  private readonly sequence: ClassSequence | undefined;
  /** The pattern is the sequence (RequiredSequence.whole): its occurrences are the matches. */
  private readonly wholeSequence: boolean = false;
  private readonly asciiNeedle: boolean;
  private readonly needleHasKS: boolean;
  private readonly reference: boolean;
  /**
   * The literal's bytes when they are a word the content-words index lists (content-words.ts):
   * a document listed under them holds a match. Indexed mode only.
   */
  readonly word: Buffer | undefined;

  constructor(query: Term, mode: 'indexed' | 'reference' = 'indexed') {
    this.query = query;
    this.reference = mode === 'reference';
    this.needle = Buffer.from(query.pattern, 'utf8');
    if (!this.reference && query.kind === 'literal' && isListableWord(this.needle)) this.word = this.needle;
    this.asciiNeedle = this.needle.every((b) => b < 0x80);
    this.needleHasKS = foldsBeyondAscii(query.pattern);
    if (query.kind === 'regex') {
      this.regex = new RE2(query.pattern, regexFlags(query.caseSensitive));
      if (!this.reference && query.required) this.required = Buffer.from(query.required, 'utf8');
      // The scan replaces RE2 when the pattern is the sequence; otherwise a literal of a few
      // bytes is the better filter, found faster than classes.
      const seq = this.reference ? null : query.sequence;
      if (seq && (seq.whole || !(this.required && this.required.length >= LINE_SCAN_MIN_BYTES))) {
        this.sequence = compileClassSequence(seq.classes);
        this.wholeSequence = seq.whole;
      }
    } else if (!query.caseSensitive && (this.reference || !this.asciiNeedle || this.needleHasKS)) {
      this.regex = new RE2(escapeRegex(query.pattern), 'gi');
    }
  }

  /**
   * Flat [start, end, start, end, ...] of at most `max` matches. `asciiFoldsOnly`: the
   * caller knows the bytes hold no code point whose case folding reaches ASCII (the
   * shard's document flag), which spares a case-insensitive literal the scan for them.
   */
  find(buf: Buffer, max: number, asciiFoldsOnly = false): number[] {
    const q = this.query;
    if (q.kind === 'regex') {
      const sequence = this.sequence;
      if (sequence !== undefined) {
        // Nothing to look for but classes (`\d{10}`): the core's scan finds where they
        // are in a row (regex-sequence.ts: sound), as fast as a literal's.
        if (this.wholeSequence) {
          const at = findClassSequence(buf, sequence, max);
          // Counted as a document searched with the regex, as RE2's are; one the scan rules
          // out is not, as with a required literal.
          if (at.length > 0) this.regexpsConsidered++;
          return this.fromStarts(at, sequence.length);
        }
        const at = findClassSequence(buf, sequence, q.lineLocal ? REQUIRED_SCAN_MAX : 1);
        if (at.length === 0) return [];
        return q.lineLocal ? this.findInLines(buf, at, sequence.length, at.length === REQUIRED_SCAN_MAX, max) : this.findRegex(buf, max);
      }
      const required = this.required;
      if (required === undefined) return this.findRegex(buf, max);
      // The trigram prefilter is case-folded, so a case-sensitive regex's candidates are
      // often documents without its literal part in the right case (`[A-Z]\w+Exception`
      // keeps every "exception"); a document without the required bytes cannot match
      // (regex-required.ts: sound). A literal of a byte or two is everywhere: the native
      // search stops at its first occurrence, and RE2 reads the whole document. A longer
      // one is located by the core's scan (faster than Buffer.indexOf for several bytes),
      // and a line-local regex then runs on its lines alone.
      if (required.length < LINE_SCAN_MIN_BYTES) return buf.indexOf(required) === -1 ? [] : this.findRegex(buf, max);
      const at = findLiteral(buf, required, false, q.lineLocal ? REQUIRED_SCAN_MAX : 1);
      if (at.length === 0) return [];
      return q.lineLocal ? this.findInLines(buf, at, required.length, at.length === REQUIRED_SCAN_MAX, max) : this.findRegex(buf, max);
    }
    if (q.caseSensitive && this.reference) return findBuffer(buf, this.needle, max);
    const scan = this.literalScan(buf, asciiFoldsOnly);
    return scan === 'regex' ? this.findRegex(buf, max) : this.fromStarts(findLiteral(buf, this.needle, scan === 'ascii-folded', max));
  }

  /**
   * How an indexed literal is matched in `buf`: byte for byte (case-sensitive), by the
   * core's ASCII case folding, or by RE2 (Unicode folding).
   */
  private literalScan(buf: Buffer, asciiFoldsOnly: boolean): 'exact' | 'ascii-folded' | 'regex' {
    if (this.query.caseSensitive) return 'exact';
    if (this.reference || !this.asciiNeedle) return 'regex';
    // ASCII folding equals Unicode folding for an ASCII needle unless the document holds
    // one of the two non-ASCII code points that fold to ASCII letters (K, s).
    if (this.needleHasKS && !asciiFoldsOnly && foldsToAscii(buf)) return 'regex';
    return 'ascii-folded';
  }

  /** Whether the term matches at all (a negated term): a literal is looked for from the middle of a long document on (containsLiteral). */
  exists(buf: Buffer, asciiFoldsOnly = false): boolean {
    if (this.query.kind === 'literal' && !this.reference) {
      const scan = this.literalScan(buf, asciiFoldsOnly);
      if (scan !== 'regex') return containsLiteral(buf, this.needle, scan === 'ascii-folded');
    }
    return this.find(buf, 1, asciiFoldsOnly).length > 0;
  }

  private fromStarts(starts: number[], n = this.needle.length): number[] {
    const out: number[] = new Array(starts.length * 2);
    for (let i = 0; i < starts.length; i++) {
      out[2 * i] = starts[i]!;
      out[2 * i + 1] = starts[i]! + n;
    }
    return out;
  }

  private findRegex(buf: Buffer, max: number): number[] {
    this.regexpsConsidered++;
    return findRegex(this.regex!, buf, max);
  }

  /**
   * A line-local regex (Term.lineLocal): RE2 runs on the lines that hold the required
   * literal or class sequence (`at`: its occurrences, ascending; `step` bytes each), near
   * ones as one window, and when the scan stopped at its cap (`capped`) on everything
   * after the last window. No match crosses a "\n", so these are the document's matches
   * (regex-line-local.ts).
   */
  private findInLines(buf: Buffer, at: number[], step: number, capped: boolean, max: number): number[] {
    this.regexpsConsidered++;
    const out: number[] = [];
    let i = 0;
    let to = -1; // end of the last window (a "\n" or the end)
    while (i < at.length && out.length < 2 * max) {
      const from = buf.lastIndexOf(NL, at[i]!) + 1;
      to = lineEnd(buf, at[i]! + step);
      // Later occurrences in this line or in lines starting within WINDOW_GAP of its end
      // join the window: RE2 reads a few hundred bytes in the time a call costs.
      for (i++; i < at.length; i++) {
        if (at[i]! < to) continue;
        if (buf.lastIndexOf(NL, at[i]!) - to > WINDOW_GAP) break;
        to = lineEnd(buf, at[i]! + step);
      }
      findRegexIn(this.regex!, buf.subarray(from, to), from, max - out.length / 2, out);
    }
    if (capped && out.length < 2 * max && to + 1 < buf.length) findRegexIn(this.regex!, buf.subarray(to + 1), to + 1, max - out.length / 2, out);
    return out;
  }
}

/** Leftmost non-overlapping matches of a global RE2 over bytes; empty matches included. */
export function findRegex(re: RE2, buf: Buffer, max: number): number[] {
  const out: number[] = [];
  re.lastIndex = 0;
  while (out.length < 2 * max) {
    const m = re.exec(buf);
    if (m === null) break;
    const start = m.index;
    const end = start + (m[0] as unknown as Buffer).length;
    out.push(start, end);
    if (end === start) {
      // Step over the empty match by one whole UTF-8 character, as RE2's own global
      // iteration does, so offsets stay on character boundaries.
      if (start >= buf.length) break;
      re.lastIndex = start + utf8Length(buf[start]!);
    }
  }
  return out;
}

/** findRegex over `window`, a part of a buffer that starts at offset `from` of it, appending the buffer's offsets to out. */
function findRegexIn(re: RE2, window: Buffer, from: number, max: number, out: number[]): void {
  const found = findRegex(re, window, max);
  for (const o of found) out.push(o + from);
}

/** Offset of the "\n" ending the line that holds offset i (the length when none). */
function lineEnd(buf: Buffer, i: number): number {
  const nl = buf.indexOf(NL, i);
  return nl === -1 ? buf.length : nl;
}

function utf8Length(lead: number): number {
  return lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

function findBuffer(buf: Buffer, needle: Buffer, max: number): number[] {
  const out: number[] = [];
  if (needle.length === 0) return out;
  let from = 0;
  while (out.length < 2 * max) {
    const i = buf.indexOf(needle, from);
    if (i === -1) break;
    out.push(i, i + needle.length);
    from = i + needle.length;
  }
  return out;
}
