// The C scanner's tokenizer: comments, strings, directives (the #if/#else rule, and macro
// definitions), tokens.

import { identLanes, identPart, identStart } from './cchars';
import { KIND_MACRO, addDef, setEndLine } from './cdefs';
import { K_CXX, keyword } from './ckeywords';
import { BOL, CH, CONDS, CONDS_CAP, COND_N, CR, DEPTH, END, EOF, FF, HEADER, IDENT, KW, LF, LINE, N, OTHER, POS, PUNCT, S, SP, START, STOP_NOT_C, STOP_ROOM, TAB, TOK_LINE, TYPE, VT, WA, WB, at, stop } from './cstate';

/** Whether src[a, b) is the word whose bytes are `lit` (little-endian, len <= 8). */
// @ts-ignore: decorator
@inline
function wordIs(a: u32, b: u32, lit: u64, len: u32): bool {
  return b - a == len && (load<u64>(S + <usize>a) & ((<u64>1 << (<u64>len << 3)) - 1)) == lit;
}

const W_DEFINE: u64 = 0x656e69666564; // "define"
const W_IF: u64 = 0x6669; // "if"
const W_IFDEF: u64 = 0x6665646669; // "ifdef"
const W_IFNDEF: u64 = 0x6665646e6669; // "ifndef"
const W_ELIF: u64 = 0x66696c65; // "elif"
const W_ELSE: u64 = 0x65736c65; // "else"
const W_ENDIF: u64 = 0x6669646e65; // "endif"

/** Skips a block comment whose `/*` is at pos; counts its lines. */
function skipBlockComment(): void {
  let i = POS + 2;
  // 16 bytes at a time to a `*` followed by `/` (comments are a large part of C), the
  // newlines before it counted; the last bytes one at a time.
  while (i + 16 <= N) {
    const nl = <u32>i8x16.bitmask(i8x16.eq(v128.load(S + <usize>i), i8x16.splat(0x0a)));
    const close = <u32>i8x16.bitmask(v128.and(i8x16.eq(v128.load(S + <usize>i), i8x16.splat(0x2a)), i8x16.eq(v128.load(S + <usize>i + 1), i8x16.splat(0x2f))));
    if (close == 0) {
      LINE += <u32>popcnt<u32>(nl);
      i += 16;
      continue;
    }
    const k = <u32>ctz<u32>(close);
    LINE += <u32>popcnt<u32>(nl & ((<u32>1 << k) - 1));
    // (The `/` is the file's: past its end lie the glue's zeros.)
    POS = i + k + 2;
    return;
  }
  while (i < N) {
    const c = at(i);
    if (c == LF) LINE++;
    else if (c == 0x2a && i + 1 < N && at(i + 1) == 0x2f) {
      POS = i + 2;
      return;
    }
    i++;
  }
  POS = N;
}

/** At a `/`: skips the comment it starts (a line comment up to its newline, not past it); false if it starts none. */
function skipComment(): bool {
  if (POS + 1 >= N) return false;
  const d = at(POS + 1);
  if (d == 0x2a) {
    skipBlockComment();
    return true;
  }
  if (d == 0x2f) {
    while (POS < N && at(POS) != LF) POS++;
    return true;
  }
  return false;
}

/** Skips a string or character constant whose quote is at pos; stops at an unescaped newline. */
function skipQuoted(): void {
  const q = at(POS);
  let i = POS + 1;
  while (i < N) {
    const c = at(i);
    if (c == q) {
      i++;
      break;
    }
    if (c == 0x5c) {
      if (i + 1 < N && at(i + 1) == LF) LINE++;
      i += 2;
      continue;
    }
    if (c == LF) break;
    i++;
  }
  POS = i < N ? i : N;
}

/** Skips the rest of a directive (continuation lines, comments and quotes included); pos ends on its newline. */
function skipDirectiveRest(): void {
  while (POS < N) {
    const c = at(POS);
    if (c == LF) return;
    if (c == 0x5c && POS + 1 < N && (at(POS + 1) == LF || (at(POS + 1) == CR && POS + 2 < N && at(POS + 2) == LF))) {
      POS += at(POS + 1) == LF ? 2 : 3;
      LINE++;
      continue;
    }
    if (c == 0x2f && skipComment()) continue; // a line comment stops at the newline, which ends the directive
    if (c == 0x22 || c == 0x27) {
      skipQuoted();
      continue;
    }
    POS++;
  }
}

function skipSpaces(): void {
  while (POS < N) {
    const c = at(POS);
    if (c == SP || c == TAB) POS++;
    else if (c == 0x5c && POS + 1 < N && at(POS + 1) == LF) {
      POS += 2;
      LINE++;
    } else if (c == 0x2f && POS + 1 < N && at(POS + 1) == 0x2a) skipBlockComment();
    else return;
  }
}

/** The identifier bytes from pos: [WA, WB), pos after them. */
function readWord(): void {
  WA = POS;
  while (POS < N && identPart(at(POS))) POS++;
  WB = POS;
}

function condPush(d: i32): void {
  if (COND_N == CONDS_CAP) stop(STOP_ROOM);
  store<i32>(CONDS + (<usize>COND_N << 2), d);
  COND_N++;
}

function condPop(): void {
  if (COND_N > 0) COND_N--;
}

/** A directive whose `#` is at pos. */
export function directive(): void {
  POS++;
  skipSpaces();
  readWord();
  const a = WA;
  const b = WB;
  if (wordIs(a, b, W_DEFINE, 6)) {
    skipSpaces();
    const line = LINE;
    readWord();
    const na = WA;
    const nb = WB;
    skipDirectiveRest();
    if (nb > na && !(at(na) - 0x30 < 10)) setEndLine(addDef(KIND_MACRO, na, nb - na, line, -1), LINE);
    return;
  }
  if (wordIs(a, b, W_IF, 2) || wordIs(a, b, W_IFDEF, 5) || wordIs(a, b, W_IFNDEF, 6)) {
    let zero = false;
    if (b - a == 2) {
      skipSpaces();
      if (POS < N && at(POS) == 0x30 && !(POS + 1 < N && identPart(at(POS + 1)))) {
        POS++;
        skipSpaces();
        const c = POS < N ? at(POS) : LF;
        zero = c == LF || c == CR || (c == 0x2f && POS + 1 < N && at(POS + 1) == 0x2f);
      }
    }
    skipDirectiveRest();
    condPush(DEPTH);
    if (zero) skipBranch(true);
    return;
  }
  if (wordIs(a, b, W_ELIF, 4) || wordIs(a, b, W_ELSE, 4)) {
    // The branch before was read: read this one too only when it starts where the #if
    // did; otherwise skip it and every later one, up to the #endif.
    skipDirectiveRest();
    if (COND_N == 0 || load<i32>(CONDS + (<usize>(COND_N - 1) << 2)) != DEPTH) skipBranch(false);
    return;
  }
  if (wordIs(a, b, W_ENDIF, 5)) {
    skipDirectiveRest();
    condPop();
    return;
  }
  skipDirectiveRest();
}

/**
 * Skips the lines of a branch not read, up to the #else/#elif/#endif that ends it.
 * `toElse`: an #else or #elif resumes reading (after `#if 0`); otherwise only #endif ends it.
 */
function skipBranch(toElse: bool): void {
  let nest: u32 = 0;
  let bol = false;
  while (POS < N) {
    const c = at(POS);
    if (c == LF) {
      LINE++;
      POS++;
      bol = true;
      continue;
    }
    if (c == SP || c == TAB || c == CR || c == FF || c == VT) {
      POS++;
      continue;
    }
    if (c == 0x2f && skipComment()) continue;
    if (c == 0x5c && POS + 1 < N && at(POS + 1) == LF) {
      POS += 2;
      LINE++;
      continue;
    }
    if (c == 0x23 && bol) {
      POS++;
      skipSpaces();
      readWord();
      const a = WA;
      const b = WB;
      if (wordIs(a, b, W_IF, 2) || wordIs(a, b, W_IFDEF, 5) || wordIs(a, b, W_IFNDEF, 6)) nest++;
      else if (wordIs(a, b, W_ENDIF, 5)) {
        if (nest == 0) {
          skipDirectiveRest();
          condPop();
          return;
        }
        nest--;
      } else if (nest == 0 && toElse && (wordIs(a, b, W_ELSE, 4) || wordIs(a, b, W_ELIF, 4))) {
        skipDirectiveRest();
        return;
      }
      skipDirectiveRest();
      bol = false;
      continue;
    }
    bol = false;
    if (c == 0x22 || c == 0x27) {
      skipQuoted();
      continue;
    }
    POS++;
  }
}

/** Reads the next token into TYPE/START/END/TOK_LINE/CH/KW. */
export function next(): u32 {
  // Whitespace and newlines are passed over in a local; POS is written back before
  // anything that reads it.
  let p = POS;
  for (;;) {
    if (p >= N) {
      POS = p;
      TYPE = EOF;
      TOK_LINE = LINE;
      return EOF;
    }
    const c = at(p);
    if (c == LF) {
      LINE++;
      p++;
      BOL = true;
      continue;
    }
    if (c == SP || c == TAB || c == CR || c == FF || c == VT) {
      p++;
      continue;
    }
    POS = p;
    if (c == 0x2f && skipComment()) {
      p = POS;
      continue;
    }
    if (c == 0x23 && BOL) {
      directive();
      p = POS;
      continue;
    }
    if (c == 0x5c && p + 1 < N && (at(p + 1) == LF || at(p + 1) == CR)) {
      p++;
      continue;
    }
    BOL = false;
    TOK_LINE = LINE;
    START = POS;
    if (identStart(c)) {
      let i = POS + 1;
      // The identifier's end, 16 bytes at a time (the file is padded past its end with
      // zeros, which end it).
      for (;;) {
        const more = ~(<u32>i8x16.bitmask(identLanes(v128.load(S + <usize>i)))) & 0xffff;
        if (more != 0) {
          i += <u32>ctz<u32>(more);
          break;
        }
        i += 16;
      }
      if (i > N) i = N;
      END = POS = i;
      TYPE = IDENT;
      KW = keyword(START, i - START);
      if (KW == K_CXX) {
        if (HEADER) stop(STOP_NOT_C);
        KW = 0; // `int template;` is C
      }
      return IDENT;
    }
    if (c - 0x30 < 10) {
      let i = POS + 1;
      while (i < N) {
        const d = at(i);
        if (identPart(d) || d == 0x2e) i++;
        else if ((d == 0x2b || d == 0x2d) && (at(i - 1) == 0x65 || at(i - 1) == 0x45 || at(i - 1) == 0x70 || at(i - 1) == 0x50)) i++;
        else break;
      }
      END = POS = i;
      TYPE = OTHER;
      CH = 0;
      return OTHER;
    }
    if (c == 0x22 || c == 0x27) {
      skipQuoted();
      END = POS;
      TYPE = OTHER;
      CH = 0;
      return OTHER;
    }
    POS++;
    END = POS;
    TYPE = PUNCT;
    CH = c;
    if (c == 0x7b /* { */ || c == 0x28 /* ( */) DEPTH++;
    else if (c == 0x7d /* } */ || c == 0x29 /* ) */) DEPTH--;
    else if (c == 0x3a /* : */ && HEADER && POS < N && at(POS) == 0x3a) stop(STOP_NOT_C);
    else if (c == 0x40 /* @ */ && HEADER) stop(STOP_NOT_C);
    return PUNCT;
  }
}
