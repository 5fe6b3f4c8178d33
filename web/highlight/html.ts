// HTML and XML: tag names (kw), attribute names (key) and values (str), comments,
// doctype/processing instructions (pre), entities (lit). Tags, attribute values and
// comments may span lines, so the mode is carried in the state. In HTML the content of
// <script> and <style> is handed to the JavaScript/CSS lexer up to the closing tag,
// whose state then lives inside this one.
import type { Lexer, Out } from './out.ts';
import { isAlpha, isBlank, isDigit, skipBlanks } from './text.ts';

const TEXT = 0;
const TAG = 1;
const COMMENT = 2;
const CDATA = 3;
const RAW = 4;

export interface HtmlState {
  mode: number;
  /** The current tag's lower-case name, and whether it is a closing tag. */
  tag: string;
  closing: boolean;
  /** The quote of an attribute value continuing on the next line, or 0. */
  q: number;
  /** The lexer and state for <script>/<style> content. */
  inner: Lexer | undefined;
  sub: unknown;
}

function isNameChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 45 || c === 58 || c === 95 || c === 46 || c >= 128;
}

/**
 * `embedded(tag)` gives the lexer for a raw-text element's content (script → JavaScript,
 * style → CSS), or undefined for ordinary elements; XML passes a function that always
 * returns undefined.
 */
export function htmlLexer(embedded: (tag: string) => Lexer | undefined): Lexer<HtmlState> {
  /** Text content from i: returns where the next mode starts (or `to`). */
  function content(text: string, i: number, to: number, st: HtmlState, out: Out): number {
    for (; i < to; i++) {
      const c = text.charCodeAt(i);
      if (c === 60) {
        const d = text.charCodeAt(i + 1);
        if (text.startsWith('<!--', i)) return delimited(text, i, i + 4, to, '-->', 'com', COMMENT, st, out);
        if (text.startsWith('<![CDATA[', i)) return delimited(text, i, i + 9, to, ']]>', 'str', CDATA, st, out);
        if (d === 33 || d === 63) {
          // <!DOCTYPE html>, <?xml version="1.0"?>
          const k = text.indexOf('>', i);
          const e = k < 0 || k >= to ? to : k + 1;
          out.tok('pre', i, e);
          return e;
        }
        const closing = d === 47;
        const s = closing ? i + 2 : i + 1;
        if (s < to && isAlpha(text.charCodeAt(s))) {
          let e = s + 1;
          while (e < to && isNameChar(text.charCodeAt(e))) e++;
          out.tok('kw', s, e);
          st.tag = text.slice(s, e).toLowerCase();
          st.closing = closing;
          st.mode = TAG;
          return e;
        }
      } else if (c === 38) {
        // &amp; &#39; &#x27;
        let j = i + 1;
        if (text.charCodeAt(j) === 35) j++;
        while (j < to && j - i < 32 && (isAlpha(text.charCodeAt(j)) || isDigit(text.charCodeAt(j)))) j++;
        if (j > i + 1 && j < to && text.charCodeAt(j) === 59) {
          out.tok('lit', i, j + 1);
          i = j;
        }
      }
    }
    return to;
  }

  /** A comment or CDATA section opened at `tok`, body from `body`. */
  function delimited(text: string, tok: number, body: number, to: number, close: string, cls: 'com' | 'str', mode: number, st: HtmlState, out: Out): number {
    const k = text.indexOf(close, body);
    if (k >= 0 && k + close.length <= to) {
      out.tok(cls, tok, k + close.length);
      return k + close.length;
    }
    out.tok(cls, tok, to);
    st.mode = mode;
    return to;
  }

  /**
   * A quoted value from `start` (its opening quote, or the line's start when the value goes
   * on from an earlier line) to its closing quote `st.q`, searched from `from`; a value
   * still open at `to` stays open (st.q kept) for the next line. Returns where lexing goes on.
   */
  function quoted(text: string, start: number, from: number, to: number, st: HtmlState, out: Out): number {
    const k = text.indexOf(st.q === 34 ? '"' : "'", from);
    if (k < 0 || k >= to) {
      out.tok('str', start, to);
      return to;
    }
    out.tok('str', start, k + 1);
    st.q = 0;
    return k + 1;
  }

  /** Inside a tag after its name: attributes up to '>' or '/>'. */
  function tag(text: string, i: number, to: number, st: HtmlState, out: Out): number {
    while (i < to) {
      if (st.q !== 0) {
        i = quoted(text, i, i, to, st, out);
        continue;
      }
      const c = text.charCodeAt(i);
      if (isBlank(c)) {
        i++;
      } else if (c === 62 || (c === 47 && text.charCodeAt(i + 1) === 62)) {
        const selfClosing = c === 47;
        i += selfClosing ? 2 : 1;
        st.inner = selfClosing || st.closing ? undefined : embedded(st.tag);
        st.mode = st.inner === undefined ? TEXT : RAW;
        st.sub = st.inner?.start();
        return i;
      } else if (c === 61) {
        // `=` then the value: quoted (possibly over lines) or up to a blank or '>'.
        i = skipBlanks(text, i + 1, to);
        const v = text.charCodeAt(i);
        if (v === 34 || v === 39) {
          st.q = v;
          i = quoted(text, i, i + 1, to, st, out);
        } else {
          const s = i;
          while (i < to && !isBlank(text.charCodeAt(i)) && text.charCodeAt(i) !== 62) i++;
          out.tok('str', s, i);
        }
      } else if (c === 34 || c === 39) {
        st.q = c; // a stray quote: lexed like a value so that its '>' is not the tag's end
        i = quoted(text, i, i + 1, to, st, out);
      } else {
        const s = i;
        while (i < to) {
          const d = text.charCodeAt(i);
          if (isBlank(d) || d === 61 || d === 62 || d === 34 || d === 39 || (d === 47 && text.charCodeAt(i + 1) === 62)) break;
          i++;
        }
        if (i === s) i++;
        out.tok('key', s, i);
      }
    }
    return to;
  }

  /** Start of `</tag` (any case) in text[i, to), or -1. */
  function closeTag(text: string, i: number, to: number, name: string): number {
    for (let k = text.indexOf('</', i); k >= 0 && k < to; k = text.indexOf('</', k + 2)) {
      if (text.slice(k + 2, k + 2 + name.length).toLowerCase() === name && !isNameChar(text.charCodeAt(k + 2 + name.length))) return k;
    }
    return -1;
  }

  return {
    start: () => ({ mode: TEXT, tag: '', closing: false, q: 0, inner: undefined, sub: undefined }),
    line(text: string, from: number, to: number, st: HtmlState, out: Out): void {
      let i = from;
      while (i < to) {
        const m = st.mode;
        if (m === TAG) i = tag(text, i, to, st, out);
        else if (m === COMMENT || m === CDATA) {
          const close = m === COMMENT ? '-->' : ']]>';
          const k = text.indexOf(close, i);
          const closed = k >= 0 && k + 3 <= to;
          const e = closed ? k + 3 : to;
          out.tok(m === COMMENT ? 'com' : 'str', i, e);
          if (closed) st.mode = TEXT;
          i = e;
        } else if (m === RAW) {
          // Raw text ends at its end tag wherever it appears, even inside a JS string (as in browsers).
          const k = closeTag(text, i, to, st.tag);
          const e = k < 0 ? to : k;
          st.inner?.line(text, i, e, st.sub, out);
          if (k < 0) return;
          st.mode = TEXT;
          st.inner = st.sub = undefined;
          i = k;
        } else i = content(text, i, to, st, out);
      }
    },
  };
}
