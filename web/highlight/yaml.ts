// YAML. Not a token grammar: what a character means depends on its place in the line
// (`it's` in a plain scalar is no string, `#` is a comment only after a blank, `key:` is
// a key only when a blank or the line end follows the colon). So each line is read as
// [indent] ["- "...] [key ":"] [value] [# comment], and the value is classified whole:
// a plain scalar that is a number or true/null/~ is highlighted, other text is plain.
// Carried between lines: a quoted scalar that continues, and block scalars (`key: |`)
// whose more-indented lines are string content.
import type { Lexer, Out } from './out.ts';
import { indentWidth, isBlank, skipBlanks } from './text.ts';

export interface YamlState {
  /** The quote (34 or 39) of a quoted scalar continuing on the next line, or 0. */
  q: number;
  /** Indentation of the line that opened a block scalar (`|`, `>`), or -1. */
  blk: number;
}

const NUM = /^[-+]?(?:(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|0x[\da-fA-F_]+|0o[0-7_]+|\.(?:inf|Inf|INF|nan|NaN|NAN))$/;
const LIT = new Set('true false null ~ yes no on off True False Null Yes No On Off TRUE FALSE NULL YES NO ON OFF'.split(' '));

/** Index after the closing quote q of a scalar whose body starts at i, or -1 (' doubles, " escapes). */
function closeQuote(text: string, i: number, to: number, q: number): number {
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 92 && q === 34) i++;
    else if (c === q) {
      if (q === 39 && text.charCodeAt(i + 1) === 39 && i + 1 < to) i++;
      else return i + 1;
    }
  }
  return -1;
}

/** The ':' ending a mapping key that starts at i, or -1. */
function keyColon(text: string, i: number, to: number): number {
  const c = text.charCodeAt(i);
  let j = i;
  if (c === 34 || c === 39) {
    j = closeQuote(text, i + 1, to, c);
    if (j < 0) return -1;
    j = skipBlanks(text, j, to);
    return text.charCodeAt(j) === 58 && (j + 1 === to || isBlank(text.charCodeAt(j + 1))) ? j : -1;
  }
  // Flow collections, anchors, aliases, tags, block indicators and comments are no keys.
  if (c === 91 || c === 123 || c === 38 || c === 42 || c === 33 || c === 124 || c === 62 || c === 35 || c === 96 || c === 64) return -1;
  for (; j < to; j++) {
    const d = text.charCodeAt(j);
    if (d === 58 && (j + 1 === to || isBlank(text.charCodeAt(j + 1)))) return j;
    if (d === 35 && j > i && isBlank(text.charCodeAt(j - 1))) return -1;
  }
  return -1;
}

function trimEnd(text: string, a: number, b: number): number {
  while (b > a && isBlank(text.charCodeAt(b - 1))) b--;
  return b;
}

/** A run of non-blank characters that are not flow punctuation (anchors, tags). */
function word(text: string, i: number, to: number): number {
  while (i < to) {
    const c = text.charCodeAt(i);
    if (isBlank(c) || c === 44 || c === 91 || c === 93 || c === 123 || c === 125) break;
    i++;
  }
  return i;
}

/** The value part of a line from i: scalars, flow collections, anchors, tags, comments. */
function value(text: string, i: number, to: number, indent: number, st: YamlState, out: Out): void {
  let flow = 0;
  scan: while (i < to) {
    i = skipBlanks(text, i, to);
    if (i >= to) return;
    const c = text.charCodeAt(i);
    if (c === 35 && (i === 0 || isBlank(text.charCodeAt(i - 1)))) {
      out.tok('com', i, to);
      return;
    }
    if (c === 34 || c === 39) {
      const e = closeQuote(text, i + 1, to, c);
      if (e < 0) {
        out.tok('str', i, to);
        st.q = c;
        return;
      }
      const k = skipBlanks(text, e, to);
      out.tok(flow > 0 && text.charCodeAt(k) === 58 ? 'key' : 'str', i, e);
      i = e;
      continue;
    }
    if (c === 38 || c === 42) {
      const e = word(text, i + 1, to);
      out.tok('pre', i, e);
      i = e;
      continue;
    }
    if (c === 33) {
      const e = word(text, i + 1, to);
      out.tok('typ', i, e);
      i = e;
      continue;
    }
    if ((c === 124 || c === 62) && flow === 0) {
      let j = i + 1;
      while (j < to) {
        const d = text.charCodeAt(j);
        if (d === 43 || d === 45 || (d >= 48 && d <= 57)) j++;
        else break;
      }
      if (j === to || isBlank(text.charCodeAt(j))) {
        st.blk = indent;
        i = j;
        continue;
      }
    }
    if (c === 91 || c === 123) {
      flow++;
      i++;
      continue;
    }
    if (c === 93 || c === 125 || (c === 44 && flow > 0)) {
      if (c !== 44 && flow > 0) flow--;
      i++;
      continue;
    }
    // A plain scalar: up to a comment, a flow separator, or a ': ' that makes it a key.
    let j = i;
    while (j < to) {
      const d = text.charCodeAt(j);
      if (d === 35 && isBlank(text.charCodeAt(j - 1))) break;
      if (flow > 0 && (d === 44 || d === 93 || d === 125)) break;
      if (d === 58 && (j + 1 === to || isBlank(text.charCodeAt(j + 1)) || (flow > 0 && (text.charCodeAt(j + 1) === 44 || text.charCodeAt(j + 1) === 125)))) {
        out.tok('key', i, trimEnd(text, i, j));
        i = j + 1;
        continue scan;
      }
      j++;
    }
    const e = trimEnd(text, i, j);
    const s = text.slice(i, e);
    out.tok(LIT.has(s) ? 'lit' : NUM.test(s) ? 'num' : '', i, e);
    i = j;
  }
}

export const yamlLexer: Lexer<YamlState> = {
  start: () => ({ q: 0, blk: -1 }),
  line(text: string, from: number, to: number, st: YamlState, out: Out): void {
    const first = skipBlanks(text, from, to);
    const indent = indentWidth(text, from, first);
    if (st.blk >= 0) {
      if (first === to) return;
      if (indent > st.blk) {
        out.tok('str', first, to);
        return;
      }
      st.blk = -1;
    }
    if (st.q !== 0) {
      const e = closeQuote(text, from, to, st.q);
      if (e < 0) {
        out.tok('str', from, to);
        return;
      }
      out.tok('str', from, e);
      st.q = 0;
      value(text, e, to, indent, st, out);
      return;
    }
    if (first === to) return;
    let i = first;
    if (first === from) {
      const c = text.charCodeAt(from);
      if ((text.startsWith('---', from) || text.startsWith('...', from)) && (from + 3 === to || isBlank(text.charCodeAt(from + 3)))) {
        out.tok('pre', from, from + 3);
        value(text, from + 3, to, indent, st, out);
        return;
      }
      if (c === 37) {
        out.tok('pre', from, to); // %YAML 1.2, %TAG
        return;
      }
    }
    // Sequence entries "- " and explicit keys "? ", possibly several: "- - a".
    for (;;) {
      const c = text.charCodeAt(i);
      if ((c === 45 || c === 63) && (i + 1 === to || isBlank(text.charCodeAt(i + 1)))) i = skipBlanks(text, i + 1, to);
      else break;
    }
    if (i < to) {
      const colon = keyColon(text, i, to);
      if (colon >= 0) {
        out.tok('key', i, trimEnd(text, i, colon));
        i = colon + 1;
      }
    }
    value(text, i, to, indent, st, out);
  },
};
