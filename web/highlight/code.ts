// The generic line lexer that interprets a compiled Grammar (grammar.ts). One pass per
// line over char codes: blanks are skipped, spans are looked up by their first character,
// identifiers and numbers are consumed whole (so `x86` is one identifier and keywords
// only ever match whole words), everything else is plain. Identifiers are sliced out of
// the line for the word lookup only when a word of that first letter and length exists.
import { type Compiled, type Span, PART, START } from './grammar.ts';
import type { Cls, Lexer, Out } from './out.ts';
import { indentWidth, isAlpha, isBlank, isDigit, isHex, restBlank, scanNumber, skipBlanks } from './text.ts';

/** What is carried from one line to the next. */
export interface CodeState {
  /** An unclosed multi-line span (block comment, triple-quoted string...), its close text and nesting depth. */
  span: Span | null;
  close: string;
  depth: number;
  /** Inside a heredoc body: its terminator, and whether the terminator may be indented. */
  doc: string;
  docIndent: boolean;
  /** A heredoc opened on the current line; its body starts on the next line. */
  pend: string;
  pendIndent: boolean;
  /** Kconfig help text: indentation width of the `help` line, or -1. */
  blk: number;
  /** CSS brace depth, to tell `prop: value` from `a:hover`. */
  braces: number;
  /** Lines seen, for the #! line. */
  n: number;
}

// Words after which '/' starts a regular expression rather than a division.
const REGEX_AFTER = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);
const INCLUDES = new Set(['include', 'import', 'include_next']);

export class CodeLexer implements Lexer<CodeState> {
  constructor(private readonly c: Compiled) {}

  start(): CodeState {
    return { span: null, close: '', depth: 0, doc: '', docIndent: false, pend: '', pendIndent: false, blk: -1, braces: 0, n: 0 };
  }

  line(text: string, from: number, to: number, st: CodeState, out: Out): void {
    this.body(text, from, to, st, out);
    // A heredoc's body starts on the line after its `<<EOF`.
    if (st.pend !== '') {
      st.doc = st.pend;
      st.docIndent = st.pendIndent;
      st.pend = '';
    }
  }

  private body(text: string, from: number, to: number, st: CodeState, out: Out): void {
    const c = this.c;
    const g = c.g;
    const chars = c.chars;
    const lineNo = st.n++;
    const first = skipBlanks(text, from, to);
    let i = from;

    if (st.doc !== '') {
      const k = st.docIndent ? first : from;
      const end = k + st.doc.length;
      if (!text.startsWith(st.doc, k) || end > to || (end < to && this.isPart(text.charCodeAt(end)))) {
        out.tok('str', from, to);
        return;
      }
      out.tok('str', k, end);
      st.doc = '';
      i = end;
    } else if (st.blk >= 0) {
      if (first === to) return;
      if (indentWidth(text, from, first) > st.blk) {
        out.tok('com', first, to);
        return;
      }
      st.blk = -1;
    }

    if (st.span !== null) {
      const s = st.span;
      const end = this.closeSpan(text, from, to, s, st.close, st);
      if (end < 0) {
        out.tok(s.cls, from, to);
        return;
      }
      out.tok(s.cls, from, end);
      st.span = null;
      i = end;
    } else if (i === from) {
      // `#!/usr/bin/env node`, but not Rust's `#![no_std]`.
      if (lineNo === 0 && from === 0 && text.startsWith('#!') && text.charCodeAt(2) !== 91) {
        out.tok('com', 0, to);
        return;
      }
      if (g.mode !== undefined) i = this.lineStart(text, from, first, to, out);
    }

    // asm: the first word of a statement (after any labels) is the mnemonic.
    let lead = true;
    while (i < to) {
      const ch = text.charCodeAt(i);
      if (ch === 32 || ch === 9) {
        i++;
        continue;
      }
      if (ch < 128) {
        const rules = c.table[ch];
        if (rules !== undefined) {
          const j = this.tryRules(rules, text, i, i, from, first, to, st, out);
          if (j >= 0) {
            i = j;
            lead = false;
            continue;
          }
        }
        if ((chars[ch]! & START) === 0 || (ch === 45 && !this.dashIdent(text, i, to))) {
          if (isDigit(ch) || (ch === 46 && i + 1 < to && isDigit(text.charCodeAt(i + 1)) && !this.afterOperand(text, from, i))) {
            const j = scanNumber(text, i, to);
            out.tok('num', i, j);
            i = j;
          } else if (ch === 47 && g.regex === true && this.regexAllowed(text, from, i)) {
            const j = scanRegex(text, i, to);
            if (j > 0) out.tok('str', i, j);
            i = j > 0 ? j : i + 1;
          } else {
            if (g.mode === 'css') {
              if (ch === 123) st.braces++;
              else if (ch === 125 && st.braces > 0) st.braces--;
            }
            i++;
          }
          continue;
        }
      }
      // An identifier (non-ASCII characters count as identifier characters).
      let j = i + 1;
      while (j < to) {
        const d = text.charCodeAt(j);
        if (d < 128 && (chars[d]! & PART) === 0) break;
        j++;
      }
      // String prefixes (r"…", u8"…") and raw strings (r#"…"#): only when a quote or '#' follows.
      const q = j < to ? text.charCodeAt(j) : 0;
      if (q === 34 || q === 39 || q === 35) {
        const word = text.slice(i, j);
        if (q !== 35 && c.prefixes !== null && c.prefixes.has(word)) {
          const rules = c.table[q];
          if (rules !== undefined) {
            const k = this.tryRules(rules, text, j, i, from, first, to, st, out);
            if (k >= 0) {
              i = k;
              continue;
            }
          }
        }
        if (g.raw !== undefined) {
          const k = g.raw === 'rust' ? this.rustRaw(word, text, i, j, to, st, out) : this.cppRaw(word, text, i, j, to, st, out);
          if (k >= 0) {
            i = k;
            continue;
          }
        }
      }
      let cls: Cls | undefined;
      if (ch < 128 && (c.lens[ch]! & (1 << Math.min(j - i, 31))) !== 0) {
        const word = text.slice(i, j);
        cls = c.words.get(g.ci === true ? word.toLowerCase() : word);
      }
      if (cls === 'kw' && g.kwBol === true && i !== first) cls = undefined;
      if (cls === undefined) {
        const next = j < to ? text.charCodeAt(j) : 0;
        if (g.mode === 'asm' && (lead || ch === 37)) {
          if (next === 58) cls = 'fn';
          else if (ch === 37) cls = 'typ';
          else {
            cls = ch === 46 ? 'pre' : 'kw';
            lead = false;
          }
        } else if ((g.mode === 'css' && st.braces > 0 && isCssKey(text, j, to)) || (g.mode === 'assign' && isAssign(text, j, to))) {
          cls = 'key';
        } else if (next === 40 && g.fn === true) {
          cls = 'fn';
        } else if (next === 33 && g.bang === true && j + 1 < to && isOpenBracket(text.charCodeAt(j + 1))) {
          cls = 'fn';
          j++;
        } else if (g.pascal === true && ch >= 65 && ch <= 90 && hasLower(text, i + 1, j)) {
          cls = 'typ';
        }
      } else if (g.mode === 'asm') lead = false;
      if (cls !== undefined) out.tok(cls, i, j);
      i = j;
    }

    if (g.mode === 'kconfig' && (text.startsWith('help', first) || text.startsWith('---help---', first))) {
      const e = first + (text.charCodeAt(first) === 45 ? 10 : 4);
      if (restBlank(text, e, to)) st.blk = indentWidth(text, from, first);
    }
  }

  private isPart(ch: number): boolean {
    return ch >= 128 || (this.c.chars[ch]! & PART) !== 0;
  }

  /** A '-' starts an identifier (CSS -webkit-x, --var) only before a letter or '-', so -1px is a number. */
  private dashIdent(text: string, i: number, to: number): boolean {
    if (i + 1 >= to) return false;
    const d = text.charCodeAt(i + 1);
    return isAlpha(d) || d === 45 || d === 95;
  }

  /** Whether the previous character ends an operand (x.0 is a field, not the number .0). */
  private afterOperand(text: string, from: number, i: number): boolean {
    if (i === from) return false;
    const p = text.charCodeAt(i - 1);
    return this.isPart(p) || p === 41 || p === 93 || p === 46;
  }

  /** Spans that may start at i; the token starts at `tok` (< i after a string prefix). Returns the end, or -1. */
  private tryRules(rules: Span[], text: string, i: number, tok: number, from: number, first: number, to: number, st: CodeState, out: Out): number {
    for (const r of rules) {
      const o = r.open;
      if (i + o.length > to || !text.startsWith(o, i)) continue;
      // After a prefix (tok < i) only a string may follow: Python `f#x` is no f-comment.
      if (tok !== i && r.cls !== 'str') continue;
      if (r.bol === true && i !== first) continue;
      if (r.col0 === true && i !== from) continue;
      if (r.ws === true && i > from) {
        const p = text.charCodeAt(i - 1);
        if (!isBlank(p) && p !== 59) continue;
      }
      if (r.wsAfter === true && i + o.length < to && !isBlank(text.charCodeAt(i + o.length))) continue;
      const j = this.open(r, text, i, tok, from, to, st, out);
      if (j >= 0) return j;
    }
    return -1;
  }

  private open(r: Span, text: string, i: number, tok: number, from: number, to: number, st: CodeState, out: Out): number {
    let j = i + r.open.length; // where the body starts
    let close = r.close ?? '';
    switch (r.kind) {
      case undefined:
        break;
      case 'tok':
        out.tok(r.cls, tok, j);
        return j;
      case 'word': {
        if (r.sp === true) j = skipBlanks(text, j, to);
        const s = j;
        while (j < to && (this.isPart(text.charCodeAt(j)) || (text.charCodeAt(j) === 46 && j > s))) j++;
        if (j === s) return -1;
        const names = this.c.names.get(r);
        if (names !== undefined && !names.has(text.slice(s, j))) return -1;
        out.tok(r.cls, tok, j);
        if (this.c.g.include === true && INCLUDES.has(text.slice(s, j))) {
          const a = skipBlanks(text, j, to);
          const b = text.charCodeAt(a) === 60 ? text.indexOf('>', a) : -1;
          if (b >= 0 && b < to) {
            out.tok('str', a, b + 1);
            return b + 1;
          }
        }
        return j;
      }
      case 'attr': {
        let depth = 1;
        while (j < to && depth > 0) {
          const ch = text.charCodeAt(j++);
          if (ch === 91) depth++;
          else if (ch === 93) depth--;
          else if (ch === 34) {
            const q = j - 1;
            while (j < to && text.charCodeAt(j) !== 34) j += text.charCodeAt(j) === 92 ? 2 : 1;
            if (j >= to) {
              // A string continuing on the next line (#[doc = "…\): carry it over as the
              // language's string, or every later quote would pair up wrongly.
              const dq = this.c.table[34]?.find((s) => s.open === '"' && s.cls === 'str');
              if (dq?.close === undefined) break;
              out.tok(r.cls, tok, q);
              return this.delimited(dq, dq.close, text, q, q + 1, to, st, out);
            }
            j++;
          }
        }
        j = Math.min(j, to);
        out.tok(r.cls, tok, j);
        return j;
      }
      case 'char': {
        if (j >= to) return -1;
        const ch = text.charCodeAt(j);
        let k: number;
        if (ch === 92) {
          k = j + 2;
          while (k < to && k - j < 12 && text.charCodeAt(k) !== 39) k++;
        } else k = ch >= 0xd800 && ch <= 0xdbff ? j + 2 : j + 1;
        if (ch === 39 || k >= to || text.charCodeAt(k) !== 39) {
          // Not a literal: a lifetime or label ('a, 'static) stays plain with its name, so 'static is no keyword.
          if (ch >= 128 || (this.c.chars[ch]! & START) === 0) return -1;
          k = j + 1;
          while (k < to && this.isPart(text.charCodeAt(k))) k++;
          return k;
        }
        out.tok(r.cls, tok, k + 1);
        return k + 1;
      }
      case 'lua': {
        const s = j;
        while (j < to && text.charCodeAt(j) === 61) j++;
        if (j >= to || text.charCodeAt(j) !== 91) return -1;
        close = ']' + '='.repeat(j - s) + ']';
        j++;
        break;
      }
      case 'heredoc': {
        let k = j;
        let indent = r.open === '<<<';
        const m = text.charCodeAt(k);
        if (m === 45 || m === 126) {
          indent = true;
          k++;
        }
        if (r.sp === true) k = skipBlanks(text, k, to);
        const q = text.charCodeAt(k);
        const quoted = q === 39 || q === 34;
        if (quoted) k++;
        const s = k;
        if (k >= to || (this.c.chars[text.charCodeAt(k)]! & START) === 0 || isDigit(text.charCodeAt(k))) return -1;
        while (k < to && this.isPart(text.charCodeAt(k))) k++;
        const name = text.slice(s, k);
        if (quoted) {
          if (text.charCodeAt(k) !== q) return -1;
          k++;
        }
        st.pend = name;
        st.pendIndent = indent;
        out.tok(r.cls, tok, k);
        return k;
      }
      case 'esc':
        j = Math.min(j + 1, to);
        out.tok(r.cls, tok, j);
        return j;
      case 'cp': {
        if ((i > from && this.isPart(text.charCodeAt(i - 1))) || j >= to) return -1;
        const ch = text.charCodeAt(j);
        const k = ch === 92 ? Math.min(j + 2, to) : ch >= 0xd800 && ch <= 0xdbff ? Math.min(j + 2, to) : j + 1;
        out.tok(r.cls, tok, k);
        return k;
      }
      case 'sym': {
        if (i > from) {
          const p = text.charCodeAt(i - 1);
          if (this.isPart(p) || p === 58) return -1;
        }
        if (j >= to) return -1;
        const ch = text.charCodeAt(j);
        if (ch < 128 && ((this.c.chars[ch]! & START) === 0 || isDigit(ch))) return -1;
        let k = j + 1;
        while (k < to && this.isPart(text.charCodeAt(k))) k++;
        out.tok(r.cls, tok, k);
        return k;
      }
      case 'hex': {
        if (st.braces === 0) return -1;
        let k = j;
        while (k < to && isHex(text.charCodeAt(k))) k++;
        const n = k - j;
        if ((n !== 3 && n !== 4 && n !== 6 && n !== 8) || (k < to && this.isPart(text.charCodeAt(k)))) return -1;
        out.tok(r.cls, tok, k);
        return k;
      }
    }
    if (close === '') {
      out.tok(r.cls, tok, to);
      return to;
    }
    return this.delimited(r, close, text, tok, j, to, st, out);
  }

  /** A span with a close: the token runs to the close, or to the line end (and carries over if `ml`). */
  private delimited(r: Span, close: string, text: string, tok: number, body: number, to: number, st: CodeState, out: Out): number {
    st.depth = 0;
    const end = this.closeSpan(text, body, to, r, close, st);
    if (end >= 0) {
      let cls = r.cls;
      if (this.c.g.mode === 'json' && cls === 'str') {
        const k = skipBlanks(text, end, to);
        if (k < to && text.charCodeAt(k) === 58) cls = 'key';
      }
      out.tok(cls, tok, end);
      return end;
    }
    out.tok(r.cls, tok, to);
    if (r.ml === true) {
      st.span = r;
      st.close = close;
    }
    return to;
  }

  /** Index just past the close of span r in text[i, to), or -1. Updates st.depth for nesting spans. */
  private closeSpan(text: string, i: number, to: number, r: Span, close: string, st: CodeState): number {
    const len = close.length;
    if (r.esc === undefined && r.nest !== true) {
      const k = text.indexOf(close, i);
      return k >= 0 && k + len <= to ? k + len : -1;
    }
    const c0 = close.charCodeAt(0);
    const open = r.nest === true ? r.open : '';
    const o0 = open.charCodeAt(0);
    for (; i < to; i++) {
      const ch = text.charCodeAt(i);
      if (ch === 92 && r.esc === 1) {
        i++;
      } else if (ch === c0 && i + len <= to && text.startsWith(close, i)) {
        if (r.esc === 2 && i + 2 * len <= to && text.startsWith(close, i + len)) {
          i += 2 * len - 1;
        } else if (st.depth > 0) {
          st.depth--;
          i += len - 1;
        } else return i + len;
      } else if (ch === o0 && open !== '' && i + open.length <= to && text.startsWith(open, i)) {
        st.depth++;
        i += open.length - 1;
      }
    }
    return -1;
  }

  /** Rust r"…", r#"…"#, br##"…"##: `word` is the identifier before text[j]. */
  private rustRaw(word: string, text: string, i: number, j: number, to: number, st: CodeState, out: Out): number {
    if (word !== 'r' && word !== 'br' && word !== 'cr') return -1;
    let k = j;
    while (k < to && text.charCodeAt(k) === 35) k++;
    if (k >= to || text.charCodeAt(k) !== 34) return -1;
    return this.delimited(RAW, '"' + '#'.repeat(k - j), text, i, k + 1, to, st, out);
  }

  /** C++ R"delim(…)delim" with the prefixes R, LR, uR, UR, u8R. */
  private cppRaw(word: string, text: string, i: number, j: number, to: number, st: CodeState, out: Out): number {
    if (text.charCodeAt(j) !== 34 || !(word === 'R' || word === 'LR' || word === 'uR' || word === 'UR' || word === 'u8R')) return -1;
    const p = text.indexOf('(', j + 1);
    if (p < 0 || p >= to || p - j > 17) return -1;
    return this.delimited(RAW, ')' + text.slice(j + 1, p) + '"', text, i, p + 1, to, st, out);
  }

  private regexAllowed(text: string, from: number, i: number): boolean {
    let k = i - 1;
    while (k >= from && isBlank(text.charCodeAt(k))) k--;
    if (k < from) return true;
    const p = text.charCodeAt(k);
    if (this.isPart(p)) {
      let s = k;
      while (s > from && this.isPart(text.charCodeAt(s - 1))) s--;
      return REGEX_AFTER.has(text.slice(s, k + 1));
    }
    // After a closing bracket or a string it is a division; '<' is for JSX's </tag>.
    return !(p === 41 || p === 93 || p === 125 || p === 34 || p === 39 || p === 96 || p === 60);
  }

  /** Line-start behaviour of the modes that have one. Returns where the main loop starts. */
  private lineStart(text: string, from: number, first: number, to: number, out: Out): number {
    const mode = this.c.g.mode;
    const ch = text.charCodeAt(first);
    if (mode === 'toml' || mode === 'ini') {
      if (ch === 91) {
        const k = text.indexOf(']', first);
        if (k < 0 || k >= to) return from;
        const e = text.charCodeAt(k + 1) === 93 && k + 1 < to ? k + 2 : k + 1;
        out.tok('hd', first, e);
        return e;
      }
      const e = mode === 'toml' ? tomlKey(text, first, to) : iniKey(text, first, to);
      if (e > first) out.tok('key', first, e);
      return Math.max(e, from);
    }
    if (mode === 'make' && first === from && ch !== 35 && ch !== 9) {
      // `target: prereqs`, not `VAR := x`, `VAR = a:b` or a recipe line.
      for (let k = from; k < to; k++) {
        const d = text.charCodeAt(k);
        if (d === 61 || d === 35) break;
        if (d === 58) {
          if (text.charCodeAt(k + 1) === 61 || (text.charCodeAt(k + 1) === 58 && text.charCodeAt(k + 2) === 61)) break;
          out.tok('fn', from, k);
          return k;
        }
      }
    }
    return from;
  }
}

/** Rust/C++ raw string: no escapes, may span lines. */
const RAW: Span = { open: '', cls: 'str', ml: true };

function isOpenBracket(c: number): boolean {
  return c === 40 || c === 91 || c === 123;
}

function hasLower(text: string, i: number, j: number): boolean {
  for (; i < j; i++) {
    const c = text.charCodeAt(i);
    if (c >= 97 && c <= 122) return true;
  }
  return false;
}

/** `/re/flags` from text[i] = '/', or -1 when no closing '/' on the line (then it is a division). */
function scanRegex(text: string, i: number, to: number): number {
  let inClass = false;
  for (let j = i + 1; j < to; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) j++;
    else if (c === 91) inClass = true;
    else if (c === 93) inClass = false;
    else if (c === 47 && !inClass) {
      j++;
      while (j < to && isAlpha(text.charCodeAt(j))) j++;
      return j;
    }
  }
  return -1;
}

/** CSS: an identifier followed by ':' is a property unless a '{' follows before ';' (a selector like a:hover). */
function isCssKey(text: string, j: number, to: number): boolean {
  const k = skipBlanks(text, j, to);
  if (k >= to || text.charCodeAt(k) !== 58 || text.charCodeAt(k + 1) === 58) return false;
  const brace = text.indexOf('{', k);
  if (brace < 0 || brace >= to) return true;
  const semi = text.indexOf(';', k);
  return semi >= 0 && semi < brace;
}

/** `name =` but not `name ==`. */
function isAssign(text: string, j: number, to: number): boolean {
  const k = skipBlanks(text, j, to);
  return k < to && text.charCodeAt(k) === 61 && text.charCodeAt(k + 1) !== 61;
}

/** TOML: end of a (dotted, possibly quoted) key followed by '=', or `first` if there is none. */
function tomlKey(text: string, first: number, to: number): number {
  let k = first;
  let end = first;
  for (;;) {
    const c = text.charCodeAt(k);
    if (c === 34 || c === 39) {
      k++;
      while (k < to && text.charCodeAt(k) !== c) k += c === 34 && text.charCodeAt(k) === 92 ? 2 : 1;
      if (k >= to) return first;
      k++;
    } else {
      const s = k;
      while (k < to) {
        const d = text.charCodeAt(k);
        if (isAlpha(d) || isDigit(d) || d === 95 || d === 45) k++;
        else break;
      }
      if (k === s) return first;
    }
    end = k;
    k = skipBlanks(text, k, to);
    if (text.charCodeAt(k) !== 46) break;
    k = skipBlanks(text, k + 1, to);
  }
  return k < to && text.charCodeAt(k) === 61 ? end : first;
}

/** INI: `name = value` (the name trimmed), or `first` if the line has no such key. */
function iniKey(text: string, first: number, to: number): number {
  const c = text.charCodeAt(first);
  if (c === 59 || c === 35 || c === 61) return first;
  let k = first;
  while (k < to && text.charCodeAt(k) !== 61) {
    const d = text.charCodeAt(k);
    if (d === 34 || d === 39 || d === 91) return first;
    k++;
  }
  if (k >= to) return first;
  while (k > first && isBlank(text.charCodeAt(k - 1))) k--;
  return k;
}
