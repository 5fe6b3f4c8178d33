// Finds the match ranges of one term of a query in a document's bytes (or a path).
//
// Two implementations of the same semantics:
// - "indexed": the production path. Literals are verified by the WebAssembly core (SIMD);
//   case-insensitive literals fall back to RE2 only where ASCII folding is not enough; a
//   regex with a required literal (Term.required) runs RE2 only on documents holding it.
// - "reference": the brute-force oracle. Plain Buffer.indexOf and RE2, never the core, so
//   the differential test compares two independent matchers.
//
// Semantics: leftmost, non-overlapping matches, as RE2's global search finds them. A
// case-insensitive literal matches as RE2's (?i) does: Unicode simple case folding. Byte
// offsets, end exclusive.

import RE2 from 're2';
import { findLiteral } from '../../core/index.ts';
import { escapeRegex, regexFlags, type Term } from '../query/terms.ts';

/**
 * The last document asked about in foldsToAscii and the answer: the terms of a query ask
 * about the same document one after the other (a document object is one document's
 * read-only bytes).
 */
let foldedDoc: Buffer | undefined;
let foldedAnswer = false;

const KELVIN = Buffer.from('\u212A');
const LONG_S = Buffer.from('\u017F');

/** Whether the document holds one of the two non-ASCII code points that fold to ASCII letters (K, s). */
function foldsToAscii(buf: Buffer): boolean {
  if (buf !== foldedDoc) {
    // Two native scans for rare lead bytes (memchr speed) beat one pass in the core.
    foldedAnswer = buf.indexOf(KELVIN) !== -1 || buf.indexOf(LONG_S) !== -1;
    foldedDoc = buf;
  }
  return foldedAnswer;
}

export class Matcher {
  /** RE2 executions, one per document searched with a regular expression (not those the required literal ruled out). */
  regexpsConsidered = 0;
  private readonly query: Term;
  private readonly needle: Buffer;
  private readonly regex: RE2 | undefined;
  /** Bytes every match of the regex contains; indexed mode only. */
  private readonly required: Buffer | undefined;
  private readonly asciiNeedle: boolean;
  private readonly needleHasKS: boolean;
  private readonly reference: boolean;

  constructor(query: Term, mode: 'indexed' | 'reference' = 'indexed') {
    this.query = query;
    this.reference = mode === 'reference';
    this.needle = Buffer.from(query.pattern, 'utf8');
    this.asciiNeedle = this.needle.every((b) => b < 0x80);
    this.needleHasKS = /[ks]/i.test(query.pattern);
    if (query.kind === 'regex') {
      this.regex = new RE2(query.pattern, regexFlags(query.caseSensitive));
      if (!this.reference && query.required) this.required = Buffer.from(query.required, 'utf8');
    } else if (!query.caseSensitive && (this.reference || !this.asciiNeedle || this.needleHasKS)) {
      this.regex = new RE2(escapeRegex(query.pattern), 'gi');
    }
  }

  /** Flat [start, end, start, end, ...] of at most `max` matches. */
  find(buf: Buffer, max: number): number[] {
    const q = this.query;
    if (q.kind === 'regex') {
      // The trigram prefilter is case-folded, so a case-sensitive regex's candidates are
      // often documents without its literal part in the right case (`[A-Z]\w+Exception`
      // keeps every "exception"). Buffer.indexOf scans several times faster than RE2, and a
      // document without the required bytes cannot match (regex-required.ts: sound).
      if (this.required !== undefined && buf.indexOf(this.required) === -1) return [];
      return this.findRegex(buf, max);
    }
    if (q.caseSensitive) {
      return this.reference ? findBuffer(buf, this.needle, max) : this.fromStarts(findLiteral(buf, this.needle, false, max));
    }
    if (this.reference || !this.asciiNeedle) return this.findRegex(buf, max);
    // ASCII folding equals Unicode folding for an ASCII needle unless the document holds
    // one of the two non-ASCII code points that fold to ASCII letters (K, s).
    if (this.needleHasKS && foldsToAscii(buf)) return this.findRegex(buf, max);
    return this.fromStarts(findLiteral(buf, this.needle, true, max));
  }

  /** Whether the term matches at all: stops at the first match. */
  exists(buf: Buffer): boolean {
    const q = this.query;
    // A case-sensitive literal: the native search stops at the first occurrence and
    // copies nothing (the core copies the whole document into wasm memory first).
    if (q.kind === 'literal' && q.caseSensitive && !this.reference) return this.needle.length === 0 ? false : buf.indexOf(this.needle) !== -1;
    return this.find(buf, 1).length > 0;
  }

  private fromStarts(starts: Uint32Array): number[] {
    const out: number[] = new Array(starts.length * 2);
    const n = this.needle.length;
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
