// Which distinct diff lines (diff-store.ts `text`) a content term matches, and where in a
// line. A line matches as `git log -G` matches it: the pattern is searched in the line's
// text after its sign, with a line end (so `^$` matches every line, as in git); a literal is a fixed string (git: the literal with its regex syntax escaped).
//
// The text is scanned whole, not line by line: a case-sensitive literal with
// Buffer.indexOf, a case-insensitive ASCII literal with indexOf in an ASCII-lowered copy
// (kept with the records), anything else with RE2's global search in multi-line mode. Each
// line is followed by "\n\n" there, so every match of a line with its end is also a match
// of the whole text starting inside that line's text and its two line ends (the anchors
// and word boundaries hold at the same places). A match of the whole text may run over into
// the next line (`a\sb`): the line it starts in is then tested alone, and the scan goes on
// at the next line; a line no match starts in has none of its own. `\A` and `\z` hold at
// other places in the whole text: a pattern naming them is tested line by line.

import RE2 from 're2';
import { escapeRegex, regexFlags, type Term } from '../query/terms.ts';
import { lineAsMatched, type DiffRecords } from './diff-store.ts';

export interface LineMatcher {
  /** Per distinct line of the records: 1 when the term matches it. */
  scan(r: DiffRecords): Uint8Array;
  /** The [start, end) byte ranges of the term in one line as matched (diff-store.ts lineAsMatched), cut to its first `length` bytes (its text). */
  ranges(line: Buffer, length: number): Array<[number, number]>;
}

const lowered = new WeakMap<DiffRecords, Buffer>();

/** The records' text with ASCII upper-case letters lowered (made once per records). */
function lowerText(r: DiffRecords): Buffer {
  let out = lowered.get(r);
  if (out === undefined) {
    out = asciiLower(r.text);
    lowered.set(r, out);
  }
  return out;
}

/**
 * `b` with ASCII letters lowered, for finding an ASCII needle: read as Latin-1, each byte is
 * one character, and lowering maps bytes from 0x80 up to bytes from 0x80 up, so positions
 * are kept and no byte becomes part of an ASCII match it was not before.
 */
function asciiLower(b: Buffer): Buffer {
  return Buffer.from(b.toString('latin1').toLowerCase(), 'latin1');
}

/** The line holding byte `at` of the text: the last line whose start is at or before it. */
function lineAt(starts: Uint32Array, at: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

export function lineMatcher(term: Term): LineMatcher {
  const ascii = !/[^\x00-\x7f]/.test(term.pattern);
  if (term.kind === 'literal' && term.pattern !== '' && !term.pattern.includes('\n') && (term.caseSensitive || ascii)) {
    const needle = Buffer.from(term.caseSensitive ? term.pattern : term.pattern.toLowerCase(), 'utf8');
    const hay = (r: DiffRecords): Buffer => (term.caseSensitive ? r.text : lowerText(r));
    return {
      scan(r) {
        const hit = new Uint8Array(r.lineStarts.length - 1);
        const text = hay(r);
        let at = text.indexOf(needle, 0);
        while (at >= 0) {
          const line = lineAt(r.lineStarts, at);
          const next = r.lineStarts[line + 1]!;
          // A literal holds no line end, so a match found lies within its line's text.
          if (at + needle.length <= next - 2) {
            hit[line] = 1;
            at = text.indexOf(needle, next);
          } else at = text.indexOf(needle, at + 1);
        }
        return hit;
      },
      ranges(line, length) {
        const text = term.caseSensitive ? line : asciiLower(line);
        const out: Array<[number, number]> = [];
        for (let at = text.indexOf(needle); at >= 0 && at + needle.length <= length; at = text.indexOf(needle, at + needle.length))
          out.push([at, at + needle.length]);
        return out;
      },
    };
  }
  const source = term.kind === 'literal' ? escapeRegex(term.pattern) : term.pattern;
  const whole = new RE2(source, regexFlags(term.caseSensitive));
  const alone = new RE2(source, regexFlags(term.caseSensitive).replace('g', ''));
  const lineByLine = /\\[Az]/.test(source);
  return {
    scan(r) {
      const lines = r.lineStarts.length - 1;
      const hit = new Uint8Array(lines);
      if (lineByLine) {
        for (let id = 0; id < lines; id++) if (alone.test(lineAsMatched(r, id))) hit[id] = 1;
        return hit;
      }
      const text = r.text;
      whole.lastIndex = 0;
      while (whole.lastIndex < text.length) {
        const m = whole.exec(text);
        if (m === null) break;
        const line = lineAt(r.lineStarts, m.index);
        if (alone.test(lineAsMatched(r, line))) hit[line] = 1;
        whole.lastIndex = r.lineStarts[line + 1]!;
      }
      return hit;
    },
    ranges(line, length) {
      const out: Array<[number, number]> = [];
      whole.lastIndex = 0;
      while (whole.lastIndex <= line.length) {
        const m = whole.exec(line);
        if (m === null) break;
        const n = (m[0] as unknown as Buffer).length;
        if (m.index <= length) out.push([m.index, Math.min(m.index + n, length)]);
        whole.lastIndex = n === 0 ? m.index + 1 : m.index + n;
      }
      return out;
    },
  };
}
