// The C scanner as it was written in JavaScript before it moved into the core
// (core/assembly/cscan.ts), kept as the oracle of test/symbols/c-scan.test.ts: the core's
// definitions must be these, field for field, on any input. The rules it follows are
// documented in daemon/symbols/c-definitions.ts. Function bodies are read by the core's
// body reader here too (core/assembly/cbody.ts, which test/core/cbody.test.ts checks
// against its own JavaScript oracle).

import { CBodyReader, C_BODY_DIRECTIVE, C_BODY_END, C_BODY_EOF } from '../../core/index.ts';
import type { SymbolDef } from '../../daemon/symbols/ctags.ts';
import { bufferView } from '../../daemon/runtime/buffer-view.ts';
import { pathHash } from '../../daemon/symbols/c-definitions.ts';

// Token types.
const EOF = 0;
const IDENT = 1;
const PUNCT = 2;
const OTHER = 3; // numbers, strings, character constants, operators of no interest
const AGG = 4; // a struct/union/enum specifier with its body, already read

// Keyword ids (0: an ordinary identifier).
const K_TYPEDEF = 1;
const K_STRUCT = 2;
const K_UNION = 3;
const K_ENUM = 4;
const K_EXTERN = 5;
const K_ATTR = 6; // __attribute__ and friends: the parenthesised group after it is not a declarator
const K_TYPE = 7; // a specifier or qualifier: never a declared name
const K_CXX = 8; // C++ only: a header holding it goes to ctags
const K_STATIC = 9;
const K_BASE = 10; // a type by itself: int, char, long, ... (K_TYPE otherwise: const, inline, ...)

const KEYWORDS: Array<[string, number]> = [
  ['typedef', K_TYPEDEF],
  ['struct', K_STRUCT],
  ['union', K_UNION],
  ['enum', K_ENUM],
  ['extern', K_EXTERN],
  ['static', K_STATIC],
  ...[
    '__attribute__',
    '__attribute',
    '__declspec',
    'asm',
    '__asm__',
    '__asm',
    '__typeof__',
    '__typeof',
    'typeof',
    'sizeof',
    '_Alignas',
    'alignas',
    '_Static_assert',
    'static_assert',
    '__extension__',
  ].map((k): [string, number] => [k, K_ATTR]),
  ...['unsigned', 'signed', '__signed__', 'int', 'char', 'short', 'long', 'float', 'double', 'void', '_Bool', '_Complex'].map((k): [string, number] => [
    k,
    K_BASE,
  ]),
  ...[
    'const',
    'volatile',
    'inline',
    'register',
    'auto',
    'restrict',
    '_Noreturn',
    '_Thread_local',
    '__thread',
    '__inline',
    '__inline__',
    '__const',
    '__volatile__',
    '__volatile',
    '__restrict',
    '__restrict__',
    '_Atomic',
    'return',
    'if',
    'else',
    'while',
    'for',
    'do',
    'switch',
    'case',
    'default',
    'goto',
    'break',
    'continue',
  ].map((k): [string, number] => [k, K_TYPE]),
  ...['class', 'namespace', 'template', 'operator'].map((k): [string, number] => [k, K_CXX]),
];

// Keywords by (length, first byte, last byte); the bytes are compared in full on a hit.
const keywordTable = new Map<number, Array<{ bytes: Uint8Array; id: number }>>();
/**
 * Bit (last byte & 31) of KEYWORD_ENDS[(length << 7) | first byte]: some keyword may have
 * that length, first byte and last byte (the low 5 bits of it; the Map decides): most
 * identifiers are told apart by one read of this array, without the Map (a lookup per
 * identifier was a tenth of the scanner's time).
 */
const KEYWORD_MAX = 15;
const KEYWORD_ENDS = new Uint32Array((KEYWORD_MAX + 1) << 7);
for (const [k, id] of KEYWORDS) {
  const key = (k.length << 16) | (k.charCodeAt(0) << 8) | k.charCodeAt(k.length - 1);
  let list = keywordTable.get(key);
  if (!list) keywordTable.set(key, (list = []));
  list.push({ bytes: Buffer.from(k, 'latin1'), id });
  if (k.length > KEYWORD_MAX) throw new Error(`keyword ${k} is longer than KEYWORD_MAX`);
  KEYWORD_ENDS[(k.length << 7) | k.charCodeAt(0)]! |= 1 << (k.charCodeAt(k.length - 1) & 31);
}

const CH_TAB = 9,
  CH_LF = 10,
  CH_VT = 11,
  CH_FF = 12,
  CH_CR = 13,
  CH_SP = 32;

// Byte classes: 1 starts an identifier, 2 continues one.
const CLASS = new Uint8Array(256);
for (let c = 0; c < 256; c++) {
  const start = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24 || c >= 0x80;
  CLASS[c] = (start ? 1 : 0) | (start || (c >= 0x30 && c <= 0x39) ? 2 : 0);
}
function isIdentStart(c: number): boolean {
  return (CLASS[c]! & 1) !== 0;
}
function isIdentPart(c: number): boolean {
  return (CLASS[c]! & 2) !== 0;
}

/** Thrown inside the scanner when a header turns out not to be C. */
class NotC extends Error {}

type Parent = { name: string; kind: string };

class Scanner {
  readonly src: Uint8Array;
  readonly text: Buffer;
  readonly n: number;
  readonly header: boolean;
  readonly path: string;
  pos = 0;
  line = 1;
  /** Only whitespace (and comments) since the last newline: a `#` starts a directive. */
  bol = true;
  /** Braces plus parentheses open, for the #if/#else rule. */
  depth = 0;
  /** The depth at each open #if: a later branch is read only when the one before ends there. */
  conds: number[] = [];
  defs: SymbolDef[] = [];
  anonCount = 0;
  pathHash: string;
  /** Reads function bodies (Parser.functionBody), made at the first one. */
  body: CBodyReader | undefined;

  // The current token.
  type = EOF;
  start = 0;
  end = 0;
  tokLine = 0;
  ch = 0;
  kw = 0;

  constructor(path: string, src: Uint8Array) {
    this.src = src;
    this.text = bufferView(src);
    this.n = src.length;
    this.path = path;
    this.header = path.endsWith('.h');
    this.pathHash = pathHash(path);
    // A UTF-8 byte order mark is not a token: a directive on the first line stays one.
    if (src.length >= 3 && src[0] === 0xef && src[1] === 0xbb && src[2] === 0xbf) this.pos = 3;
  }

  name(start: number, end: number): string {
    const s = this.src;
    for (let i = start; i < end; i++) if (s[i]! >= 0x80) return this.text.toString('utf8', start, end);
    return this.text.toString('latin1', start, end);
  }

  anonName(kindCode: number): string {
    this.anonCount++;
    return `__anon${this.pathHash}${this.anonCount.toString(16).padStart(2, '0')}${kindCode.toString(16).padStart(2, '0')}`;
  }

  /** Skips a block comment whose `/*` is at pos; counts its lines. */
  skipBlockComment(): void {
    const s = this.src;
    let i = this.pos + 2;
    const n = this.n;
    while (i < n) {
      const c = s[i]!;
      if (c === CH_LF) this.line++;
      else if (c === 0x2a && i + 1 < n && s[i + 1] === 0x2f) {
        this.pos = i + 2;
        return;
      }
      i++;
    }
    this.pos = n;
  }

  /** At a `/`: skips the comment it starts (a line comment up to its newline, not past it); false if it starts none. */
  skipComment(): boolean {
    const s = this.src;
    const n = this.n;
    if (this.pos + 1 >= n) return false;
    const d = s[this.pos + 1];
    if (d === 0x2a) {
      this.skipBlockComment();
      return true;
    }
    if (d === 0x2f) {
      while (this.pos < n && s[this.pos] !== CH_LF) this.pos++;
      return true;
    }
    return false;
  }

  /** Skips a string or character constant whose quote is at pos; stops at an unescaped newline. */
  skipQuoted(): void {
    const s = this.src;
    const q = s[this.pos]!;
    let i = this.pos + 1;
    const n = this.n;
    while (i < n) {
      const c = s[i]!;
      if (c === q) {
        i++;
        break;
      }
      if (c === 0x5c /* \ */) {
        if (i + 1 < n && s[i + 1] === CH_LF) this.line++;
        i += 2;
        continue;
      }
      if (c === CH_LF) break;
      i++;
    }
    this.pos = Math.min(i, n);
  }

  /** Skips the rest of a directive (continuation lines, comments and quotes included); pos ends on its newline. */
  skipDirectiveRest(): void {
    const s = this.src;
    const n = this.n;
    while (this.pos < n) {
      const c = s[this.pos]!;
      if (c === CH_LF) return;
      if (c === 0x5c && this.pos + 1 < n && (s[this.pos + 1] === CH_LF || (s[this.pos + 1] === CH_CR && this.pos + 2 < n && s[this.pos + 2] === CH_LF))) {
        this.pos += s[this.pos + 1] === CH_LF ? 2 : 3;
        this.line++;
        continue;
      }
      if (c === 0x2f && this.skipComment()) continue; // a line comment stops at the newline, which ends the directive
      if (c === 0x22 || c === 0x27) {
        this.skipQuoted();
        continue;
      }
      this.pos++;
    }
  }

  skipSpaces(): void {
    const s = this.src;
    while (this.pos < this.n) {
      const c = s[this.pos]!;
      if (c === CH_SP || c === CH_TAB) this.pos++;
      else if (c === 0x5c && this.pos + 1 < this.n && s[this.pos + 1] === CH_LF) {
        this.pos += 2;
        this.line++;
      } else if (c === 0x2f && this.pos + 1 < this.n && s[this.pos + 1] === 0x2a) this.skipBlockComment();
      else return;
    }
  }

  readWord(): [number, number] {
    const s = this.src;
    const a = this.pos;
    while (this.pos < this.n && isIdentPart(s[this.pos]!)) this.pos++;
    return [a, this.pos];
  }

  wordIs(a: number, b: number, w: string): boolean {
    if (b - a !== w.length) return false;
    for (let i = 0; i < w.length; i++) if (this.src[a + i] !== w.charCodeAt(i)) return false;
    return true;
  }

  /** A directive whose `#` is at pos. */
  directive(): void {
    this.pos++;
    this.skipSpaces();
    const [a, b] = this.readWord();
    if (this.wordIs(a, b, 'define')) {
      this.skipSpaces();
      const line = this.line;
      const [na, nb] = this.readWord();
      this.skipDirectiveRest();
      if (nb > na && !(this.src[na]! >= 0x30 && this.src[na]! <= 0x39)) {
        this.defs.push({ name: this.name(na, nb), kind: 'macro', line, endLine: this.line, at: na });
      }
      return;
    }
    if (this.wordIs(a, b, 'if') || this.wordIs(a, b, 'ifdef') || this.wordIs(a, b, 'ifndef')) {
      let zero = false;
      if (b - a === 2) {
        this.skipSpaces();
        const s = this.src;
        if (this.pos < this.n && s[this.pos] === 0x30 && !(this.pos + 1 < this.n && isIdentPart(s[this.pos + 1]!))) {
          this.pos++;
          this.skipSpaces();
          const c = this.pos < this.n ? s[this.pos]! : CH_LF;
          zero = c === CH_LF || c === CH_CR || (c === 0x2f && this.pos + 1 < this.n && s[this.pos + 1] === 0x2f);
        }
      }
      this.skipDirectiveRest();
      this.conds.push(this.depth);
      if (zero) this.skipBranch(true);
      return;
    }
    if (this.wordIs(a, b, 'elif') || this.wordIs(a, b, 'else')) {
      // The branch before was read: read this one too only when it starts where the #if
      // did; otherwise skip it and every later one, up to the #endif.
      this.skipDirectiveRest();
      if (this.conds[this.conds.length - 1] !== this.depth) this.skipBranch(false);
      return;
    }
    if (this.wordIs(a, b, 'endif')) {
      this.skipDirectiveRest();
      this.conds.pop();
      return;
    }
    this.skipDirectiveRest();
  }

  /**
   * Skips the lines of a branch not read, up to the #else/#elif/#endif that ends it.
   * `toElse`: an #else or #elif resumes reading (after `#if 0`); otherwise only #endif ends it.
   */
  skipBranch(toElse: boolean): void {
    const s = this.src;
    const n = this.n;
    let nest = 0;
    let bol = false;
    while (this.pos < n) {
      const c = s[this.pos]!;
      if (c === CH_LF) {
        this.line++;
        this.pos++;
        bol = true;
        continue;
      }
      if (c === CH_SP || c === CH_TAB || c === CH_CR || c === CH_FF || c === CH_VT) {
        this.pos++;
        continue;
      }
      if (c === 0x2f && this.skipComment()) continue;
      if (c === 0x5c && this.pos + 1 < n && s[this.pos + 1] === CH_LF) {
        this.pos += 2;
        this.line++;
        continue;
      }
      if (c === 0x23 && bol) {
        this.pos++;
        this.skipSpaces();
        const [a, b] = this.readWord();
        if (this.wordIs(a, b, 'if') || this.wordIs(a, b, 'ifdef') || this.wordIs(a, b, 'ifndef')) nest++;
        else if (this.wordIs(a, b, 'endif')) {
          if (nest === 0) {
            this.skipDirectiveRest();
            this.conds.pop();
            return;
          }
          nest--;
        } else if (nest === 0 && toElse && (this.wordIs(a, b, 'else') || this.wordIs(a, b, 'elif'))) {
          this.skipDirectiveRest();
          return;
        }
        this.skipDirectiveRest();
        bol = false;
        continue;
      }
      bol = false;
      if (c === 0x22 || c === 0x27) {
        this.skipQuoted();
        continue;
      }
      this.pos++;
    }
  }

  /** Reads the next token into type/start/end/tokLine/ch/kw. */
  next(): number {
    const s = this.src;
    const n = this.n;
    // Whitespace and newlines are passed over in a local; pos is written back before
    // anything that reads it.
    let p = this.pos;
    for (;;) {
      if (p >= n) {
        this.pos = p;
        this.type = EOF;
        this.tokLine = this.line;
        return EOF;
      }
      const c = s[p]!;
      if (c === CH_LF) {
        this.line++;
        p++;
        this.bol = true;
        continue;
      }
      if (c === CH_SP || c === CH_TAB || c === CH_CR || c === CH_FF || c === CH_VT) {
        p++;
        continue;
      }
      this.pos = p;
      if (c === 0x2f && this.skipComment()) {
        p = this.pos;
        continue;
      }
      if (c === 0x23 && this.bol) {
        this.directive();
        p = this.pos;
        continue;
      }
      if (c === 0x5c && p + 1 < n && (s[p + 1] === CH_LF || s[p + 1] === CH_CR)) {
        p++;
        continue;
      }
      this.bol = false;
      this.tokLine = this.line;
      this.start = this.pos;
      if (isIdentStart(c)) {
        let i = this.pos + 1;
        while (i < n && isIdentPart(s[i]!)) i++;
        this.end = this.pos = i;
        this.type = IDENT;
        this.kw = this.keyword(this.start, i);
        if (this.kw === K_CXX) {
          if (this.header) throw new NotC();
          this.kw = 0; // `int template;` is C
        }
        return IDENT;
      }
      if (c >= 0x30 && c <= 0x39) {
        let i = this.pos + 1;
        while (i < n) {
          const d = s[i]!;
          if (isIdentPart(d) || d === 0x2e) i++;
          else if ((d === 0x2b || d === 0x2d) && (s[i - 1] === 0x65 || s[i - 1] === 0x45 || s[i - 1] === 0x70 || s[i - 1] === 0x50)) i++;
          else break;
        }
        this.end = this.pos = i;
        this.type = OTHER;
        this.ch = 0;
        return OTHER;
      }
      if (c === 0x22 || c === 0x27) {
        this.skipQuoted();
        this.end = this.pos;
        this.type = OTHER;
        this.ch = 0;
        return OTHER;
      }
      this.pos++;
      this.end = this.pos;
      this.type = PUNCT;
      this.ch = c;
      if (c === 0x7b /* { */ || c === 0x28 /* ( */) this.depth++;
      else if (c === 0x7d /* } */ || c === 0x29 /* ) */) this.depth--;
      else if (c === 0x3a /* : */ && this.header && this.pos < n && s[this.pos] === 0x3a) throw new NotC();
      else if (c === 0x40 /* @ */ && this.header) throw new NotC();
      return PUNCT;
    }
  }

  keyword(a: number, b: number): number {
    const s = this.src;
    const len = b - a;
    const first = s[a]!;
    if (len > KEYWORD_MAX || first >= 0x80 || (KEYWORD_ENDS[(len << 7) | first]! & (1 << (s[b - 1]! & 31))) === 0) return 0;
    const list = keywordTable.get((len << 16) | (first << 8) | s[b - 1]!);
    if (!list) return 0;
    for (const k of list) {
      let same = true;
      for (let i = 1; i < k.bytes.length - 1; i++) {
        if (s[a + i] !== k.bytes[i]) {
          same = false;
          break;
        }
      }
      if (same) return k.id;
    }
    return 0;
  }
}

/** The tokens of one declaration being read, in parallel arrays reused between statements. */
class Stmt {
  n = 0;
  type: Uint8Array = new Uint8Array(256);
  kw: Uint8Array = new Uint8Array(256);
  ch: Uint8Array = new Uint8Array(256);
  start: Int32Array = new Int32Array(256);
  end: Int32Array = new Int32Array(256);
  line: Int32Array = new Int32Array(256);

  push(sc: Scanner): void {
    this.pushRaw(sc.type, sc.kw, sc.type === PUNCT ? sc.ch : 0, sc.start, sc.end, sc.tokLine);
  }

  pushRaw(type: number, kw: number, ch: number, start: number, end: number, line: number): void {
    if (this.n === this.type.length) this.grow();
    const i = this.n++;
    this.type[i] = type;
    this.kw[i] = type === IDENT ? kw : 0;
    this.ch[i] = ch;
    this.start[i] = start;
    this.end[i] = end;
    this.line[i] = line;
  }

  grow(): void {
    const m = this.type.length * 2;
    const g8 = (a: Uint8Array): Uint8Array => {
      const b = new Uint8Array(m);
      b.set(a);
      return b;
    };
    const g32 = (a: Int32Array): Int32Array => {
      const b = new Int32Array(m);
      b.set(a);
      return b;
    };
    this.type = g8(this.type);
    this.kw = g8(this.kw);
    this.ch = g8(this.ch);
    this.start = g32(this.start);
    this.end = g32(this.end);
    this.line = g32(this.line);
  }
}

/** Statement buffers, one per nesting level in use, kept between files (the scanner is synchronous). */
const stmtPool: Stmt[] = [];

const KIND_CODE: Record<string, number> = { struct: 0x08, union: 0x0a, enum: 0x03 };

/** member: a struct or union's members; nested: a `}` ends it (a body or `extern "C" {`). */
type Context = { member: boolean; nested: boolean; scope?: Parent };

class Parser {
  readonly sc: Scanner;
  constructor(sc: Scanner) {
    this.sc = sc;
  }

  /** Skips to the `}` closing a block whose `{` was just read; returns the line of that `}`. */
  skipBlock(): number {
    const sc = this.sc;
    let d = 1;
    for (;;) {
      const t = sc.next();
      if (t === EOF) return sc.line;
      if (t === PUNCT) {
        if (sc.ch === 0x7b) d++;
        else if (sc.ch === 0x7d && --d === 0) return sc.tokLine;
      }
    }
  }

  /**
   * Reads declarations up to the `}` that closes the body (or the end of the file at top
   * level): top level (`ctx.member` false) or the members of a struct or union.
   */
  body(ctx: Context): void {
    const st = this.acquire();
    try {
      this.bodyWith(st, ctx);
    } finally {
      this.release(st);
    }
  }

  bodyWith(st: Stmt, ctx: Context): void {
    const sc = this.sc;
    let paren = 0;
    let init = false; // after `=`: an initializer, up to `,` or `;`
    let initBraces = 0;
    for (;;) {
      const t = sc.next();
      if (t === EOF) {
        return;
      }
      if (t !== PUNCT) {
        if (!init) st.push(sc); // an initializer's tokens name nothing
        continue;
      }
      const c = sc.ch;
      if (init) {
        if (c === 0x7b) initBraces++;
        else if (c === 0x7d) {
          if (initBraces === 0) {
            // A `}` closing the enclosing body: the declaration had no `;`.
            this.declaration(st, ctx, sc.tokLine);
            return;
          }
          initBraces--;
        } else if (c === 0x28 || c === 0x5b) paren++;
        else if (c === 0x29 || c === 0x5d) paren = Math.max(0, paren - 1);
        else if (initBraces === 0 && paren === 0 && (c === 0x2c || c === 0x3b)) {
          init = false;
          if (c === 0x3b) {
            this.declaration(st, ctx, sc.tokLine);
            st.n = 0;
          } else st.push(sc);
        }
        continue;
      }
      if (c === 0x28 || c === 0x5b) {
        paren++;
        st.push(sc);
        continue;
      }
      if (c === 0x29 || c === 0x5d) {
        paren = Math.max(0, paren - 1);
        st.push(sc);
        continue;
      }
      if (c === 0x7b) {
        if (paren > 0) {
          // A statement expression or a brace group inside a macro's arguments.
          this.skipBlock();
          continue;
        }
        this.openBrace(st, ctx);
        if (st.n === 0) paren = 0;
        continue;
      }
      if (c === 0x3b) {
        if (paren > 0) {
          // Inside a macro's arguments (`TP_fast_assign(a = b;)`): part of the declaration.
          st.push(sc);
          continue;
        }
        this.declaration(st, ctx, sc.tokLine);
        st.n = 0;
        continue;
      }
      if (c === 0x7d) {
        paren = 0;
        if (ctx.nested) {
          if (st.n > 0) this.declaration(st, ctx, sc.tokLine);
          return;
        }
        // A stray `}` at top level (the end of an `extern "C" {` read elsewhere): dropped.
        st.n = 0;
        continue;
      }
      if (c === 0x3d && paren === 0) {
        st.push(sc);
        init = true;
        initBraces = 0;
        continue;
      }
      st.push(sc);
    }
  }

  /** A `{` at parenthesis depth 0 in a declaration: a struct/union/enum body, a function body, or `extern "C"`. */
  openBrace(st: Stmt, ctx: Context): void {
    const sc = this.sc;
    // struct/union/enum [attributes] [name] {
    let k = -1;
    for (let i = st.n - 1, depth = 0; i >= 0 && i >= st.n - 12; i--) {
      const ty = st.type[i]!;
      if (ty === PUNCT) {
        const ch = st.ch[i]!;
        if (ch === 0x29) depth++;
        else if (ch === 0x28) {
          // Only an attribute's group may stand there: `name(params) {` is a function.
          if (--depth === 0 && !(i > 0 && st.type[i - 1] === IDENT && st.kw[i - 1] === K_ATTR)) break;
        } else if (depth === 0) break;
        continue;
      }
      if (depth > 0) continue;
      if (ty !== IDENT) break;
      const kw = st.kw[i]!;
      if (kw === K_STRUCT || kw === K_UNION || kw === K_ENUM) {
        k = i;
        break;
      }
    }
    if (k >= 0) {
      this.aggregate(st, k, ctx);
      return;
    }
    if (st.n === 2 && st.kw[0] === K_EXTERN && st.type[1] === OTHER) {
      // extern "C" { ... }: its declarations are top-level ones.
      this.body({ member: false, nested: true });
      st.n = 0;
      return;
    }
    if (!ctx.member) {
      const f = this.functionName(st);
      if (f >= 0) {
        const line = st.line[f]!;
        const name = sc.name(st.start[f]!, st.end[f]!);
        const def: SymbolDef = { name, kind: 'function', line, endLine: line, at: st.start[f]! };
        sc.defs.push(def);
        def.endLine = this.functionBody({ name, kind: 'function' });
        st.n = 0;
        return;
      }
    }
    this.skipBlock();
    st.n = 0;
  }

  /**
   * The index of a function definition's name in `st`, or -1: the identifier before the
   * last parenthesised group that follows a name not starting with `__` (so that a macro
   * used without `;` before it, `ACPI_MODULE_NAME("x") int f(void) {`, and annotations after
   * it, `void f(void) __releases(l) {`, are passed over), else before the first group.
   */
  functionName(st: Stmt): number {
    let depth = 0;
    let first = -1;
    let last = -1;
    for (let i = 0; i < st.n; i++) {
      const ty = st.type[i]!;
      if (ty !== PUNCT) continue;
      const ch = st.ch[i]!;
      if (ch === 0x28) {
        if (depth === 0 && i > 0 && st.type[i - 1] === IDENT && st.kw[i - 1] === 0) {
          if (first < 0) first = i - 1;
          if (!this.isAnnotation(st, i - 1)) last = i - 1;
        }
        depth++;
      } else if (ch === 0x29) depth--;
      else if (ch === 0x3d && depth === 0) return -1;
    }
    const at = last >= 0 ? last : first;
    // `#ifdef A / void f(int) / #else / static void f(int) / #endif / {`: both branches were
    // read; the name is the first one's.
    for (let i = 0; i < at; i++) if (st.type[i] === IDENT && st.type[i + 1] === PUNCT && st.ch[i + 1] === 0x28 && this.sameText(st, i, at)) return i;
    return at;
  }

  sameText(st: Stmt, i: number, j: number): boolean {
    const a = st.start[i]!;
    const b = st.start[j]!;
    const len = st.end[i]! - a;
    if (st.end[j]! - b !== len) return false;
    const s = this.sc.src;
    for (let k = 0; k < len; k++) if (s[a + k] !== s[b + k]) return false;
    return true;
  }

  /**
   * A function's body, its `{` just read, up to its `}` (whose line it returns). Locals are
   * not definitions, but a struct, union or enum defined in it is, with the function as
   * its parent (as ctags gives it). Most of a C file is function bodies, so this reads
   * bytes, not tokens: only braces, comments, quotes, directives and those three keywords
   * matter here.
   */
  functionBody(fn: Parent): number {
    const sc = this.sc;
    // The body's bytes by the core (core/assembly/cbody.ts, which spells the rules), up to
    // its end or to what this parser reads itself: a local struct, union or enum, a directive.
    const body = (sc.body ??= new CBodyReader(sc.src));
    let braces = 1;
    let bol = false;
    let i = sc.pos;
    for (;;) {
      const why = body.read(i, braces, bol);
      sc.line += body.lines;
      sc.depth += body.depth;
      i = body.pos;
      braces = body.braces;
      bol = body.bol;
      if (why === C_BODY_END) {
        sc.pos = i;
        sc.bol = false;
        return sc.line;
      }
      if (why === C_BODY_EOF) {
        sc.pos = sc.n;
        return sc.line;
      }
      sc.pos = i;
      if (why === C_BODY_DIRECTIVE) sc.directive();
      else this.localAggregate(sc.keyword(body.keywordAt, i), body.keywordAt, fn);
      // After a local aggregate's body, or where the keyword ended when none follows.
      i = sc.pos;
    }
  }

  /**
   * After `struct`, `union` or `enum` (keyword `k` at byte `at`) in a function body: when a
   * body follows (`struct name {`, `enum {`), reads it as a definition and returns true,
   * with sc.pos after its `}`; otherwise false, and sc.pos is where it was.
   */
  localAggregate(k: number, at: number, fn: Parent): boolean {
    const sc = this.sc;
    const pos = sc.pos;
    const line = sc.line; // the keyword's
    let t = sc.next();
    let nameStart = -1,
      nameEnd = -1,
      nameLine = 0;
    if (t === IDENT && sc.kw === 0) {
      nameStart = sc.start;
      nameEnd = sc.end;
      nameLine = sc.tokLine;
      t = sc.next();
    }
    if (t !== PUNCT || sc.ch !== 0x7b) {
      // Not a definition: back to just after the keyword (next() moved no brace count but
      // for `{`/`(`, which are undone here).
      if (t === PUNCT && (sc.ch === 0x28 || sc.ch === 0x7b)) sc.depth--;
      else if (t === PUNCT && (sc.ch === 0x29 || sc.ch === 0x7d)) sc.depth++;
      sc.pos = pos;
      sc.line = line;
      return false;
    }
    const st = this.acquire();
    st.pushRaw(IDENT, k, 0, at, at, line);
    if (nameStart >= 0) st.pushRaw(IDENT, 0, 0, nameStart, nameEnd, nameLine);
    this.aggregate(st, 0, { member: false, nested: true, scope: fn });
    this.release(st);
    return true;
  }

  acquire(): Stmt {
    const st = stmtPool.pop() ?? new Stmt();
    st.n = 0;
    return st;
  }
  release(st: Stmt): void {
    if (stmtPool.length < 64) stmtPool.push(st);
  }

  /** A struct/union/enum keyword at st[k] with its `{` just read: the definition and its body; st keeps one AGG token for it. */
  aggregate(st: Stmt, k: number, ctx: Context): void {
    const sc = this.sc;
    const kw = st.kw[k]!;
    const kind = kw === K_STRUCT ? 'struct' : kw === K_UNION ? 'union' : 'enum';
    let nameAt = -1;
    for (let i = k + 1, depth = 0; i < st.n; i++) {
      const ty = st.type[i]!;
      if (ty === PUNCT) {
        if (st.ch[i] === 0x28) depth++;
        else if (st.ch[i] === 0x29) depth--;
      } else if (ty === IDENT && depth === 0 && st.kw[i] === 0 && !(i + 1 < st.n && st.type[i + 1] === PUNCT && st.ch[i + 1] === 0x28)) nameAt = i;
    }
    const line = nameAt >= 0 ? st.line[nameAt]! : st.line[k]!;
    const ownName = nameAt >= 0 ? sc.name(st.start[nameAt]!, st.end[nameAt]!) : sc.anonName(KIND_CODE[kind]!);
    const fullName = ctx.scope ? `${ctx.scope.name}::${ownName}` : ownName;
    const def: SymbolDef = { name: ownName, kind, line, endLine: line, at: nameAt >= 0 ? st.start[nameAt]! : -1 };
    if (ctx.scope) def.parent = ctx.scope;
    const self: Parent = { name: fullName, kind };
    let end: number;
    if (kind === 'enum') end = this.enumBody(self);
    else {
      this.body({ member: true, nested: true, scope: self });
      end = sc.tokLine;
    }
    def.endLine = end;
    if (nameAt >= 0) sc.defs.push(def);
    const aggLine = st.line[k]!;
    st.n = k;
    st.pushRaw(AGG, 0, 0, 0, 0, aggLine);
  }

  /** Enumerators up to the closing `}`; returns its line. */
  enumBody(scope: Parent): number {
    const sc = this.sc;
    let expectName = true;
    let paren = 0;
    let braces = 0;
    for (;;) {
      const t = sc.next();
      if (t === EOF) return sc.line;
      if (t === PUNCT) {
        const c = sc.ch;
        if (c === 0x28 || c === 0x5b) paren++;
        else if (c === 0x29 || c === 0x5d) paren = Math.max(0, paren - 1);
        else if (c === 0x7b) braces++;
        else if (c === 0x7d) {
          if (braces === 0) return sc.tokLine;
          braces--;
        } else if (c === 0x2c && paren === 0 && braces === 0) expectName = true;
        continue;
      }
      if (t === IDENT && expectName && paren === 0 && braces === 0 && sc.kw === 0) {
        sc.defs.push({ name: sc.name(sc.start, sc.end), kind: 'enumerator', line: sc.tokLine, endLine: sc.tokLine, at: sc.start, parent: scope });
      }
      expectName = false;
    }
  }

  /** A declaration ended by `;` (or by the `}` of its body) on line `endLine`: its declarators' names. */
  declaration(st: Stmt, ctx: Context, endLine: number): void {
    const n = st.n;
    if (n === 0) return;
    let typedef = false;
    let extern = false;
    for (let i = 0; i < n; i++) {
      if (st.type[i] !== IDENT) continue;
      const kw = st.kw[i]!;
      if (kw === K_TYPEDEF) typedef = true;
      else if (kw === K_EXTERN) extern = true;
    }
    if (extern && !typedef) return;
    const kind = typedef ? 'typedef' : ctx.member ? 'member' : 'variable';
    let segStart = 0;
    let depth = 0;
    for (let i = 0; i <= n; i++) {
      if (i < n && st.type[i] === PUNCT) {
        const ch = st.ch[i]!;
        if (ch === 0x28 || ch === 0x5b) depth++;
        else if (ch === 0x29 || ch === 0x5d) depth--;
        if (!(ch === 0x2c && depth === 0)) continue;
      } else if (i < n) continue;
      const at = this.declaratorName(st, segStart, i, segStart === 0, typedef);
      if (at >= 0) {
        const line = st.line[at]!;
        // A declarator ends at its `,` or at the `;`.
        const end = typedef ? line : i < n ? st.line[i]! : endLine;
        const def: SymbolDef = { name: this.sc.name(st.start[at]!, st.end[at]!), kind, line, endLine: end, at: st.start[at]! };
        if (ctx.scope && ctx.member) def.parent = ctx.scope;
        this.sc.defs.push(def);
      }
      segStart = i + 1;
    }
  }

  /**
   * The index of the name a declarator declares in st[a, b), or -1: a prototype (a name
   * followed by its parameters), no name at all (`struct x;`), or a keyword. `first`: the
   * segment also holds the specifiers, so a lone identifier is a type, not a name.
   */
  declaratorName(st: Stmt, a: number, b: number, first: boolean, typedef: boolean): number {
    let last = -1;
    let prev = -1; // the candidate before `last`, when adjacent to it
    let candidates = 0;
    let sawAgg = false;
    for (let i = a; i < b; i++) {
      const ty = st.type[i]!;
      if (ty === AGG) {
        sawAgg = true;
        continue;
      }
      if (ty === IDENT) {
        const kw = st.kw[i]!;
        if (kw === K_STRUCT || kw === K_UNION || kw === K_ENUM) {
          i++; // the tag name is a type
          sawAgg = true;
          continue;
        }
        if (kw === K_ATTR) {
          // Its parenthesised group, if any.
          if (i + 1 < b && st.type[i + 1] === PUNCT && st.ch[i + 1] === 0x28) i = this.closeParen(st, i + 1, b);
          continue;
        }
        if (kw !== 0) continue;
        prev = last >= 0 && last === i - 1 && this.afterType(st, a, last) ? last : -1;
        last = i;
        candidates++;
        continue;
      }
      if (ty !== PUNCT) return -1; // a string or a number: not a declarator
      const ch = st.ch[i]!;
      if (ch === 0x3d || ch === 0x3a || ch === 0x5b) break; // initializer, bit-field width, array bounds
      if (ch === 0x2a || ch === 0x26) continue;
      if (ch !== 0x28) return -1; // `a->b = c`, `a.b`, `x + y`: an expression, not a declaration
      const close = this.closeParen(st, i, b);
      if (last < 0 || last !== i - 1) {
        // Not after a name: a declarator in parentheses, (*name)(...), (*name[4]),
        // (* const name), (name)(...).
        for (let j = i + 1; j < close; j++) {
          const tj = st.type[j]!;
          if (tj === IDENT) {
            if (st.kw[j] === 0) return j;
            continue;
          }
          if (tj === PUNCT && st.ch[j] !== 0x2a && st.ch[j] !== 0x5e && st.ch[j] !== 0x28) break;
        }
        i = close;
        continue;
      }
      if (prev >= 0 && this.isAnnotation(st, last)) {
        // `int x __aligned(8)`: an annotation with arguments after the name.
        last = prev;
        prev = -1;
        i = close;
        continue;
      }
      // name(...): a prototype or a macro's use; a typedef names the function type.
      return typedef ? last : -1;
    }
    if (last < 0) return -1;
    // `int x __read_mostly;`: an annotation after the name.
    if (prev >= 0 && this.isAnnotation(st, last)) last = prev;
    if (first && candidates === 1 && !sawAgg && !this.hasTypeBefore(st, a, last)) return -1;
    return last;
  }

  /** A type keyword or a `*` before st[at] in st[a, at): `unsigned x`, `*p`. */
  hasTypeBefore(st: Stmt, a: number, at: number): boolean {
    for (let i = a; i < at; i++) {
      if (st.type[i] === IDENT && (st.kw[i] === K_BASE || st.kw[i] === K_TYPE || st.kw[i] === K_STATIC || st.kw[i] === K_TYPEDEF)) return true;
      if (st.type[i] === PUNCT && st.ch[i] === 0x2a) return true;
    }
    return false;
  }

  /**
   * Whether the identifier st[at] follows a type, so that it is a declared name and an
   * identifier after it an annotation (`int x __read_mostly`, `foo_t x __initdata`), not a
   * type followed by the name (`sigset_t __unused`, `__u32 __pad`).
   */
  afterType(st: Stmt, a: number, at: number): boolean {
    if (this.isAnnotation(st, at)) return false;
    for (let i = at - 1; i >= a; i--) {
      const ty = st.type[i]!;
      if (ty === AGG) return true;
      if (ty === PUNCT) return st.ch[i] === 0x2a || st.ch[i] === 0x29; // `*x`, or after an attribute's group
      if (ty !== IDENT) return false;
      const kw = st.kw[i]!;
      if (kw === 0 || kw === K_BASE) return true; // a typedef name, a struct's tag, int, ...
      if (kw !== K_TYPE && kw !== K_STATIC) return false;
      // const, static, inline, ...: look further back.
    }
    return false;
  }

  isAnnotation(st: Stmt, i: number): boolean {
    const s = this.sc.src;
    const a = st.start[i]!;
    return st.end[i]! - a > 2 && s[a] === 0x5f && s[a + 1] === 0x5f;
  }

  /** The index of the `)` matching the `(` at st[i], or b - 1. */
  closeParen(st: Stmt, i: number, b: number): number {
    let d = 0;
    for (let j = i; j < b; j++) {
      if (st.type[j] !== PUNCT) continue;
      if (st.ch[j] === 0x28) d++;
      else if (st.ch[j] === 0x29 && --d === 0) return j;
    }
    return b - 1;
  }
}

/**
 * The definitions of a C file (unsorted), or undefined when a header holds C++ or
 * Objective-C. Never throws on malformed C: it reads what it can.
 */
export function oracleCDefinitions(path: string, content: Uint8Array): SymbolDef[] | undefined {
  const sc = new Scanner(path, content);
  try {
    new Parser(sc).body({ member: false, nested: false });
  } catch (err) {
    // RangeError: structs nested thousands deep overflow the stack; ctags is asked then
    // (and fails on them too, counted).
    if (err instanceof NotC || err instanceof RangeError) return undefined;
    throw err;
  }
  return sc.defs;
}
