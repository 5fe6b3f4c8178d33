// The C definitions scanner (what daemon/symbols/c-definitions.ts documents: the rules, and
// why trawl reads C itself instead of asking ctags), in the core: ~2.5x the JavaScript
// scanner's speed on Linux's C, and its definitions come out as records, not objects.
// test/helpers/c-definitions-oracle.ts keeps the JavaScript scanner it was ported from,
// and test/symbols/c-scan.test.ts compares the two on random C.
//
// A scan reads one file (src[0, n), readable to n + 16) and writes:
//
//   defs     32 bytes a definition, in the order the scanner finds them (not sorted):
//            0 kind u8 (KIND_*), 1 name in `names` (1) or in src (0) u8,
//            4 name offset u32, 8 name length u32, 12 line u32, 16 end line u32,
//            20 where the name is in src u32, 24 parent i32 (a `parents` entry, -1: none),
//            28 where its line first spells the name as a whole word (what
//            daemon/symbols/name-range.ts wholeWordStart gives; 0xffffffff: the bytes
//            read are not a whole word there, or not ASCII: the line rule decides)
//   parents  16 bytes a scope that may be a parent (a function, a struct, union or enum):
//            0 kind u8, 1 name in `names` (1) or in src (0) u8, 4 name offset u32,
//            8 name length u32
//   names    bytes of the names that are not in the file: anonymous scopes'
//            (`__anon` + the path's hash in 8 hex digits + a counter in 2 or more hex
//            digits + the kind's code in 2) and nested scopes' (`outer::inner`)
//   tokens   16 bytes a token of the declarations being read, one nesting level above
//            the other: 0 type u8, 1 keyword u8, 2 punctuation byte u8, 4 start u32,
//            8 end u32, 12 line u32
//   conds    i32 an open #if: the nesting depth where it began
//   state    u32[16]: 0 definitions, 1 parents, 2 name bytes (out); 4 why a scan gave up
//            (out: STOP_*); 8.. the body reader's state (cbody.ts)
//
// Each region's room (in its units) is given with it. A scan that runs out of room, or
// meets C++ or Objective-C in a header, stops with a trap (`unreachable`: this code has no
// exceptions), having written its reason at state[4]; the glue grows the regions and
// scans again, or asks ctags.

import { skipCBody } from './cbody';
import { identLanes, identPart, identStart } from './cchars';

// Why a scan stopped before the end (state[4]).
const STOP_NOT_C: u32 = 1;
const STOP_ROOM: u32 = 2;

// Definition kinds (core/cscan.ts C_KINDS names them).
const KIND_MACRO: u32 = 0;
const KIND_FUNCTION: u32 = 1;
const KIND_STRUCT: u32 = 2;
const KIND_UNION: u32 = 3;
const KIND_ENUM: u32 = 4;
const KIND_ENUMERATOR: u32 = 5;
const KIND_MEMBER: u32 = 6;
const KIND_TYPEDEF: u32 = 7;
const KIND_VARIABLE: u32 = 8;

// Token types.
const EOF: u32 = 0;
const IDENT: u32 = 1;
const PUNCT: u32 = 2;
const OTHER: u32 = 3; // numbers, strings, character constants, operators of no interest
const AGG: u32 = 4; // a struct/union/enum specifier with its body, already read

// Keyword ids (0: an ordinary identifier).
const K_TYPEDEF: u32 = 1;
const K_STRUCT: u32 = 2;
const K_UNION: u32 = 3;
const K_ENUM: u32 = 4;
const K_EXTERN: u32 = 5;
const K_ATTR: u32 = 6; // __attribute__ and friends: the parenthesised group after it is not a declarator
const K_TYPE: u32 = 7; // a specifier or qualifier: never a declared name
const K_CXX: u32 = 8; // C++ only: a header holding it goes to ctags
const K_STATIC: u32 = 9;
const K_BASE: u32 = 10; // a type by itself: int, char, long, ... (K_TYPE otherwise: const, inline, ...)

const LF: u32 = 10;
const CR: u32 = 13;
const SP: u32 = 32;
const TAB: u32 = 9;
const FF: u32 = 12;
const VT: u32 = 11;

// ---------------------------------------------------------------------------------------
// Regions and the scanner's state (one scan at a time per instance).

let S: usize = 0; // src
let N: u32 = 0;
let HEADER = false; // a .h file: C++ or Objective-C in it stops the scan (STOP_NOT_C)
let PATH_HASH: u32 = 0;
let DEFS: usize = 0;
let DEFS_CAP: u32 = 0;
let DEF_N: u32 = 0;
let PARENTS: usize = 0;
let PARENTS_CAP: u32 = 0;
let PARENT_N: u32 = 0;
let NAMES: usize = 0;
let NAMES_CAP: u32 = 0;
let NAME_N: u32 = 0;
let TOKENS: usize = 0;
let TOKENS_CAP: u32 = 0;
/** The first free token: the end of the innermost statement being read. */
let TOK_END: u32 = 0;
let CONDS: usize = 0;
let CONDS_CAP: u32 = 0;
let COND_N: u32 = 0;
let STATE: usize = 0;

let POS: u32 = 0;
let LINE: u32 = 1;
/** Only whitespace (and comments) since the last newline: a `#` starts a directive. */
let BOL = true;
/** Braces plus parentheses open, for the #if/#else rule. */
let DEPTH: i32 = 0;
let ANON_COUNT: u32 = 0;

// The current token.
let TYPE: u32 = EOF;
let START: u32 = 0;
let END: u32 = 0;
let TOK_LINE: u32 = 0;
let CH: u32 = 0;
let KW: u32 = 0;

// readWord's answer.
let WA: u32 = 0;
let WB: u32 = 0;

/** Stops the scan: `why` at state[4], then a trap, which the glue catches. */
function stop(why: u32): void {
  store<u32>(STATE, why, 16);
  unreachable();
}

// @ts-ignore: decorator
@inline
function at(i: u32): u32 {
  return <u32>load<u8>(S + <usize>i);
}

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

// ---------------------------------------------------------------------------------------
// Output.

/** Appends a definition; returns its number. */
function addDef(kind: u32, inNames: bool, off: u32, len: u32, line: u32, endLine: u32, nameAt: u32, parent: i32): u32 {
  if (DEF_N == DEFS_CAP) stop(STOP_ROOM);
  const d = DEFS + (<usize>DEF_N << 5);
  store<u32>(d, kind | (inNames ? 0x100 : 0));
  store<u32>(d, off, 4);
  store<u32>(d, len, 8);
  store<u32>(d, line, 12);
  store<u32>(d, endLine, 16);
  store<u32>(d, nameAt, 20);
  store<i32>(d, parent, 24);
  store<u32>(d, inNames ? NO_START : wholeWordStart(nameAt, len), 28);
  return DEF_N++;
}

const NO_START: u32 = 0xffffffff;

/** A byte of a word for the name rule (name-range.ts isWord: ASCII letters, digits, _, and any byte >= 0x80). */
// @ts-ignore: decorator
@inline
function isWordByte(c: u32): bool {
  return (c | 0x20) - 0x61 < 26 || c - 0x30 < 10 || c == 0x5f || c >= 0x80;
}

/** Whether src[i] exists and is a word byte. */
// @ts-ignore: decorator
@inline
function wordAt(i: i64): bool {
  return i >= 0 && i < <i64>N && isWordByte(at(<u32>i));
}

/**
 * name-range.ts wholeWordStart for the name src[a, a + len): the first whole-word
 * occurrence of its bytes on its line, or NO_START when they are not a whole word there
 * or not ASCII (JavaScript decides those by the line rule).
 */
function wholeWordStart(a: u32, len: u32): u32 {
  if (<u64>a + <u64>len > <u64>N || wordAt(<i64>a - 1) || wordAt(<i64>a + <i64>len)) return NO_START;
  for (let k: u32 = 0; k < len; k++) if (at(a + k) >= 0x80) return NO_START;
  const c0 = at(a);
  let first = a;
  for (let p = <i64>a - 1; p >= 0; p--) {
    const b = at(<u32>p);
    if (b == LF) break;
    if (b != c0 || wordAt(p - 1) || wordAt(p + <i64>len)) continue;
    let k: u32 = 1;
    while (k < len && at(<u32>p + k) == at(a + k)) k++;
    if (k == len) first = <u32>p;
  }
  return first;
}

/** Appends a scope; returns its number. */
function addParent(kind: u32, inNames: bool, off: u32, len: u32): i32 {
  if (PARENT_N == PARENTS_CAP) stop(STOP_ROOM);
  const q = PARENTS + (<usize>PARENT_N << 4);
  store<u32>(q, kind | (inNames ? 0x100 : 0));
  store<u32>(q, off, 4);
  store<u32>(q, len, 8);
  store<u32>(q, 0, 12);
  const id = PARENT_N;
  PARENT_N++;
  return <i32>id;
}

/** Room for `len` more name bytes. */
function nameRoom(len: u32): void {
  if (NAME_N + len > NAMES_CAP) stop(STOP_ROOM);
}

function putNameByte(b: u32): void {
  store<u8>(NAMES + <usize>NAME_N, <u8>b);
  NAME_N++;
}

/** Lowercase hex digits of v, at least `width` of them. */
function putHex(v: u32, width: u32): void {
  let digits: u32 = 1;
  while (digits < 8 && (v >>> (digits << 2)) != 0) digits++;
  if (digits < width) digits = width;
  nameRoom(digits);
  for (let k = digits; k > 0; k--) {
    const d = (v >>> ((k - 1) << 2)) & 15;
    putNameByte(d < 10 ? 0x30 + d : 0x57 + d);
  }
}

/** `__anon` + path hash + counter + kind code, in `names`; its offset (the length in WB). */
function anonName(kindCode: u32): u32 {
  ANON_COUNT++;
  const from = NAME_N;
  nameRoom(6);
  putNameByte(0x5f);
  putNameByte(0x5f);
  putNameByte(0x61);
  putNameByte(0x6e);
  putNameByte(0x6f);
  putNameByte(0x6e);
  putHex(PATH_HASH, 8);
  putHex(ANON_COUNT, 2);
  putHex(kindCode, 2);
  WB = NAME_N - from;
  return from;
}

/** Copies len bytes from p into `names`. */
function putBytes(p: usize, len: u32): void {
  nameRoom(len);
  for (let k: u32 = 0; k < len; k++) store<u8>(NAMES + <usize>(NAME_N + k), load<u8>(p + <usize>k));
  NAME_N += len;
}

/** Where a scope's or name's bytes are. */
// @ts-ignore: decorator
@inline
function bytesOf(inNames: bool, off: u32): usize {
  return (inNames ? NAMES : S) + <usize>off;
}

// ---------------------------------------------------------------------------------------
// The scanner: comments, strings, directives, tokens.

/** Skips a block comment whose `/*` is at pos; counts its lines. */
function skipBlockComment(): void {
  let i = POS + 2;
  // 16 bytes at a time to a `*` followed by `/` (comments are a fifth of Linux's C), the
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
function directive(): void {
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
    if (nb > na && !(at(na) - 0x30 < 10)) addDef(KIND_MACRO, false, na, nb - na, line, LINE, na, -1);
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
function next(): u32 {
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

/**
 * The keyword id of src[a, a + len) (0: an ordinary identifier): its bytes as two
 * little-endian words against each keyword of its length (16 bytes are read; the glue
 * pads the file). Generated from the table in c-definitions.ts (the oracle test checks
 * that the two agree on every keyword).
 */
function keyword(a: u32, len: u32): u32 {
  if (len < 2 || len > 15) return 0;
  const p = S + <usize>a;
  const lo = len >= 8 ? load<u64>(p) : load<u64>(p) & ((<u64>1 << (<u64>len << 3)) - 1);
  const hi = len <= 8 ? <u64>0 : load<u64>(p, 8) & ((<u64>1 << (<u64>(len - 8) << 3)) - 1);
  switch (len) {
    case 2:
      if (lo == 0x6669) return K_TYPE; // if
      if (lo == 0x6f64) return K_TYPE; // do
      return 0;
    case 3:
      if (lo == 0x6d7361) return K_ATTR; // asm
      if (lo == 0x746e69) return K_BASE; // int
      if (lo == 0x726f66) return K_TYPE; // for
      return 0;
    case 4:
      if (lo == 0x6d756e65) return K_ENUM; // enum
      if (lo == 0x72616863) return K_BASE; // char
      if (lo == 0x676e6f6c) return K_BASE; // long
      if (lo == 0x64696f76) return K_BASE; // void
      if (lo == 0x6f747561) return K_TYPE; // auto
      if (lo == 0x65736c65) return K_TYPE; // else
      if (lo == 0x65736163) return K_TYPE; // case
      if (lo == 0x6f746f67) return K_TYPE; // goto
      return 0;
    case 5:
      if (lo == 0x6e6f696e75) return K_UNION; // union
      if (lo == 0x6d73615f5f) return K_ATTR; // __asm
      if (lo == 0x74726f6873) return K_BASE; // short
      if (lo == 0x74616f6c66) return K_BASE; // float
      if (lo == 0x6c6f6f425f) return K_BASE; // _Bool
      if (lo == 0x74736e6f63) return K_TYPE; // const
      if (lo == 0x656c696877) return K_TYPE; // while
      if (lo == 0x6b61657262) return K_TYPE; // break
      if (lo == 0x7373616c63) return K_CXX; // class
      return 0;
    case 6:
      if (lo == 0x746375727473) return K_STRUCT; // struct
      if (lo == 0x6e7265747865) return K_EXTERN; // extern
      if (lo == 0x636974617473) return K_STATIC; // static
      if (lo == 0x666f65707974) return K_ATTR; // typeof
      if (lo == 0x666f657a6973) return K_ATTR; // sizeof
      if (lo == 0x64656e676973) return K_BASE; // signed
      if (lo == 0x656c62756f64) return K_BASE; // double
      if (lo == 0x656e696c6e69) return K_TYPE; // inline
      if (lo == 0x6e7275746572) return K_TYPE; // return
      if (lo == 0x686374697773) return K_TYPE; // switch
      return 0;
    case 7:
      if (lo == 0x66656465707974) return K_TYPEDEF; // typedef
      if (lo == 0x5f5f6d73615f5f) return K_ATTR; // __asm__
      if (lo == 0x73616e67696c61) return K_ATTR; // alignas
      if (lo == 0x74736e6f635f5f) return K_TYPE; // __const
      if (lo == 0x63696d6f74415f) return K_TYPE; // _Atomic
      if (lo == 0x746c7561666564) return K_TYPE; // default
      return 0;
    case 8:
      if (lo == 0x666f657079745f5f) return K_ATTR; // __typeof
      if (lo == 0x73616e67696c415f) return K_ATTR; // _Alignas
      if (lo == 0x64656e6769736e75) return K_BASE; // unsigned
      if (lo == 0x78656c706d6f435f) return K_BASE; // _Complex
      if (lo == 0x656c6974616c6f76) return K_TYPE; // volatile
      if (lo == 0x7265747369676572) return K_TYPE; // register
      if (lo == 0x7463697274736572) return K_TYPE; // restrict
      if (lo == 0x6461657268745f5f) return K_TYPE; // __thread
      if (lo == 0x656e696c6e695f5f) return K_TYPE; // __inline
      if (lo == 0x65756e69746e6f63) return K_TYPE; // continue
      if (lo == 0x6574616c706d6574) return K_CXX; // template
      if (lo == 0x726f74617265706f) return K_CXX; // operator
      return 0;
    case 9:
      if (lo == 0x72757465726f4e5f && hi == 0x6e) return K_TYPE; // _Noreturn
      if (lo == 0x63617073656d616e && hi == 0x65) return K_CXX; // namespace
      return 0;
    case 10:
      if (lo == 0x70736c6365645f5f && hi == 0x6365) return K_ATTR; // __declspec
      if (lo == 0x666f657079745f5f && hi == 0x5f5f) return K_ATTR; // __typeof__
      if (lo == 0x64656e6769735f5f && hi == 0x5f5f) return K_BASE; // __signed__
      if (lo == 0x656e696c6e695f5f && hi == 0x5f5f) return K_TYPE; // __inline__
      if (lo == 0x6974616c6f765f5f && hi == 0x656c) return K_TYPE; // __volatile
      if (lo == 0x6972747365725f5f && hi == 0x7463) return K_TYPE; // __restrict
      return 0;
    case 11:
      if (lo == 0x6269727474615f5f && hi == 0x657475) return K_ATTR; // __attribute
      return 0;
    case 12:
      if (lo == 0x6974616c6f765f5f && hi == 0x5f5f656c) return K_TYPE; // __volatile__
      if (lo == 0x6972747365725f5f && hi == 0x5f5f7463) return K_TYPE; // __restrict__
      return 0;
    case 13:
      if (lo == 0x6269727474615f5f && hi == 0x5f5f657475) return K_ATTR; // __attribute__
      if (lo == 0x615f636974617473 && hi == 0x7472657373) return K_ATTR; // static_assert
      if (lo == 0x736e657478655f5f && hi == 0x5f5f6e6f69) return K_ATTR; // __extension__
      if (lo == 0x5f6461657268545f && hi == 0x6c61636f6c) return K_TYPE; // _Thread_local
      return 0;
    case 14:
      if (lo == 0x5f6369746174535f && hi == 0x747265737361) return K_ATTR; // _Static_assert
      return 0;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------
// Statements: the tokens of the declarations being read, one nesting level above the
// other. A statement is known by its first token's place; the innermost one ends at
// TOK_END, and only the innermost one grows (an inner one is done before its outer one
// takes another token).

// @ts-ignore: decorator
@inline
function tok(st: u32, i: u32): usize {
  return TOKENS + (<usize>(st + i) << 4);
}
// @ts-ignore: decorator
@inline
function tType(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i));
}
// @ts-ignore: decorator
@inline
function tKw(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i), 1);
}
// @ts-ignore: decorator
@inline
function tCh(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i), 2);
}
// @ts-ignore: decorator
@inline
function tStart(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 4);
}
// @ts-ignore: decorator
@inline
function tEnd(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 8);
}
// @ts-ignore: decorator
@inline
function tLine(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 12);
}

/** Tokens in statement st (the innermost). */
// @ts-ignore: decorator
@inline
function count(st: u32): u32 {
  return TOK_END - st;
}

function pushRaw(type: u32, kw: u32, ch: u32, start: u32, end: u32, line: u32): void {
  if (TOK_END == TOKENS_CAP) stop(STOP_ROOM);
  const q = TOKENS + (<usize>TOK_END << 4);
  store<u8>(q, <u8>type);
  store<u8>(q, <u8>(type == IDENT ? kw : 0), 1);
  store<u8>(q, <u8>ch, 2);
  store<u32>(q, start, 4);
  store<u32>(q, end, 8);
  store<u32>(q, line, 12);
  TOK_END++;
}

/** The current token, onto the innermost statement. */
function push(): void {
  pushRaw(TYPE, KW, TYPE == PUNCT ? CH : 0, START, END, TOK_LINE);
}

// ---------------------------------------------------------------------------------------
// The parser. A context is (member: a struct or union's members; nested: a `}` ends it, a
// body or `extern "C" {`; scope: the parent of what it defines, -1 for none).

/** Skips to the `}` closing a block whose `{` was just read; returns the line of that `}`. */
function skipBlock(): u32 {
  let d: u32 = 1;
  for (;;) {
    const t = next();
    if (t == EOF) return LINE;
    if (t == PUNCT) {
      if (CH == 0x7b) d++;
      else if (CH == 0x7d && --d == 0) return TOK_LINE;
    }
  }
  return 0; // (never reached: the loop returns)
}

/**
 * Reads declarations up to the `}` that closes the body (or the end of the file at top
 * level): top level (`member` false) or the members of a struct or union.
 */
function body(member: bool, nested: bool, scope: i32): void {
  const st = TOK_END;
  bodyWith(st, member, nested, scope);
  TOK_END = st;
}

function bodyWith(st: u32, member: bool, nested: bool, scope: i32): void {
  let paren: u32 = 0;
  let init = false; // after `=`: an initializer, up to `,` or `;`
  let initBraces: u32 = 0;
  for (;;) {
    const t = next();
    if (t == EOF) return;
    if (t != PUNCT) {
      if (!init) push(); // an initializer's tokens name nothing
      continue;
    }
    const c = CH;
    if (init) {
      if (c == 0x7b) initBraces++;
      else if (c == 0x7d) {
        if (initBraces == 0) {
          // A `}` closing the enclosing body: the declaration had no `;`.
          declaration(st, member, scope, TOK_LINE);
          return;
        }
        initBraces--;
      } else if (c == 0x28 || c == 0x5b) paren++;
      else if (c == 0x29 || c == 0x5d) paren = paren > 0 ? paren - 1 : 0;
      else if (initBraces == 0 && paren == 0 && (c == 0x2c || c == 0x3b)) {
        init = false;
        if (c == 0x3b) {
          declaration(st, member, scope, TOK_LINE);
          TOK_END = st;
        } else push();
      }
      continue;
    }
    if (c == 0x28 || c == 0x5b) {
      paren++;
      push();
      continue;
    }
    if (c == 0x29 || c == 0x5d) {
      paren = paren > 0 ? paren - 1 : 0;
      push();
      continue;
    }
    if (c == 0x7b) {
      if (paren > 0) {
        // A statement expression or a brace group inside a macro's arguments.
        skipBlock();
        continue;
      }
      openBrace(st, member, scope);
      if (count(st) == 0) paren = 0;
      continue;
    }
    if (c == 0x3b) {
      if (paren > 0) {
        // Inside a macro's arguments (`TP_fast_assign(a = b;)`): part of the declaration.
        push();
        continue;
      }
      declaration(st, member, scope, TOK_LINE);
      TOK_END = st;
      continue;
    }
    if (c == 0x7d) {
      paren = 0;
      if (nested) {
        if (count(st) > 0) declaration(st, member, scope, TOK_LINE);
        return;
      }
      // A stray `}` at top level (the end of an `extern "C" {` read elsewhere): dropped.
      TOK_END = st;
      continue;
    }
    if (c == 0x3d && paren == 0) {
      push();
      init = true;
      initBraces = 0;
      continue;
    }
    push();
  }
}

/** A `{` at parenthesis depth 0 in a declaration: a struct/union/enum body, a function body, or `extern "C"`. */
function openBrace(st: u32, member: bool, scope: i32): void {
  const n = count(st);
  // struct/union/enum [attributes] [name] {
  let k: i32 = -1;
  let depth: i32 = 0;
  for (let i = <i32>n - 1; i >= 0 && i >= <i32>n - 12; i--) {
    const ty = tType(st, i);
    if (ty == PUNCT) {
      const ch = tCh(st, i);
      if (ch == 0x29) depth++;
      else if (ch == 0x28) {
        // Only an attribute's group may stand there: `name(params) {` is a function.
        if (--depth == 0 && !(i > 0 && tType(st, i - 1) == IDENT && tKw(st, i - 1) == K_ATTR)) break;
      } else if (depth == 0) break;
      continue;
    }
    if (depth > 0) continue;
    if (ty != IDENT) break;
    const kw = tKw(st, i);
    if (kw == K_STRUCT || kw == K_UNION || kw == K_ENUM) {
      k = i;
      break;
    }
  }
  if (k >= 0) {
    aggregate(st, <u32>k, member, scope);
    return;
  }
  if (n == 2 && tKw(st, 0) == K_EXTERN && tType(st, 1) == OTHER) {
    // extern "C" { ... }: its declarations are top-level ones.
    body(false, true, -1);
    TOK_END = st;
    return;
  }
  if (!member) {
    const f = functionName(st);
    if (f >= 0) {
      const line = tLine(st, f);
      const a = tStart(st, f);
      const len = tEnd(st, f) - a;
      const def = addDef(KIND_FUNCTION, false, a, len, line, line, a, -1);
      const fn = addParent(KIND_FUNCTION, false, a, len);
      const end = functionBody(fn);
      store<u32>(DEFS + (<usize>def << 5), end, 16);
      TOK_END = st;
      return;
    }
  }
  skipBlock();
  TOK_END = st;
}

/**
 * The index of a function definition's name in st, or -1: the identifier before the last
 * parenthesised group that follows a name not starting with `__`, else before the first
 * group (c-definitions.ts says why).
 */
function functionName(st: u32): i32 {
  const n = count(st);
  let depth: i32 = 0;
  let first: i32 = -1;
  let last: i32 = -1;
  for (let i: u32 = 0; i < n; i++) {
    if (tType(st, i) != PUNCT) continue;
    const ch = tCh(st, i);
    if (ch == 0x28) {
      if (depth == 0 && i > 0 && tType(st, i - 1) == IDENT && tKw(st, i - 1) == 0) {
        if (first < 0) first = <i32>i - 1;
        if (!isAnnotation(st, i - 1)) last = <i32>i - 1;
      }
      depth++;
    } else if (ch == 0x29) depth--;
    else if (ch == 0x3d && depth == 0) return -1;
  }
  const found = last >= 0 ? last : first;
  // Both branches of an #ifdef read: the name is the first one's.
  for (let i: i32 = 0; i < found; i++) if (tType(st, i) == IDENT && tType(st, i + 1) == PUNCT && tCh(st, i + 1) == 0x28 && sameText(st, i, found)) return i;
  return found;
}

function sameText(st: u32, i: u32, j: u32): bool {
  const a = tStart(st, i);
  const b = tStart(st, j);
  const len = tEnd(st, i) - a;
  if (tEnd(st, j) - b != len) return false;
  for (let k: u32 = 0; k < len; k++) if (at(a + k) != at(b + k)) return false;
  return true;
}

/**
 * A function's body, its `{` just read, up to its `}` (whose line it returns), by the body
 * reader (cbody.ts) but for what this parser reads itself: a local struct, union or enum
 * (a definition, with the function as parent), a directive.
 */
function functionBody(fn: i32): u32 {
  const state = STATE + 32;
  let braces: u32 = 1;
  let bol: u32 = 0;
  let i = POS;
  for (;;) {
    store<u32>(state, i);
    store<u32>(state, braces, 4);
    store<u32>(state, bol, 8);
    const why = skipCBody(S, N, state);
    LINE += load<u32>(state, 12);
    DEPTH += load<i32>(state, 16);
    i = load<u32>(state);
    braces = load<u32>(state, 4);
    bol = load<u32>(state, 8);
    if (why == 0 /* BODY_END */) {
      POS = i;
      BOL = false;
      return LINE;
    }
    if (why == 1 /* BODY_EOF */) {
      POS = N;
      return LINE;
    }
    POS = i;
    if (why == 3 /* BODY_DIRECTIVE */) directive();
    else {
      const kwAt = load<u32>(state, 20);
      localAggregate(keyword(kwAt, i - kwAt), kwAt, fn);
    }
    // After a local aggregate's body, or where the keyword ended when none follows.
    i = POS;
  }
  return 0; // (never reached: the loop returns)
}

/**
 * After `struct`, `union` or `enum` (keyword `k` at byte `kwAt`) in a function body: when a
 * body follows, reads it as a definition; otherwise pos goes back to where it was.
 */
function localAggregate(k: u32, kwAt: u32, fn: i32): void {
  const pos = POS;
  const line = LINE; // the keyword's
  let t = next();
  let nameStart: i32 = -1;
  let nameEnd: u32 = 0;
  let nameLine: u32 = 0;
  if (t == IDENT && KW == 0) {
    nameStart = <i32>START;
    nameEnd = END;
    nameLine = TOK_LINE;
    t = next();
  }
  if (t != PUNCT || CH != 0x7b) {
    // Not a definition: back to just after the keyword (next() moved no brace count but
    // for `{`/`(`, which are undone here).
    if (t == PUNCT && (CH == 0x28 || CH == 0x7b)) DEPTH--;
    else if (t == PUNCT && (CH == 0x29 || CH == 0x7d)) DEPTH++;
    POS = pos;
    LINE = line;
    return;
  }
  const st = TOK_END;
  pushRaw(IDENT, k, 0, kwAt, kwAt, line);
  if (nameStart >= 0) pushRaw(IDENT, 0, 0, <u32>nameStart, nameEnd, nameLine);
  aggregate(st, 0, false, fn);
  TOK_END = st;
}

/** A struct/union/enum keyword at st[k] with its `{` just read: the definition and its body; st keeps one AGG token for it. */
function aggregate(st: u32, k: u32, member: bool, scope: i32): void {
  const n = count(st);
  const kw = tKw(st, k);
  const kind = kw == K_STRUCT ? KIND_STRUCT : kw == K_UNION ? KIND_UNION : KIND_ENUM;
  let nameAt: i32 = -1;
  let depth: i32 = 0;
  for (let i = k + 1; i < n; i++) {
    const ty = tType(st, i);
    if (ty == PUNCT) {
      if (tCh(st, i) == 0x28) depth++;
      else if (tCh(st, i) == 0x29) depth--;
    } else if (ty == IDENT && depth == 0 && tKw(st, i) == 0 && !(i + 1 < n && tType(st, i + 1) == PUNCT && tCh(st, i + 1) == 0x28)) nameAt = <i32>i;
  }
  const line = nameAt >= 0 ? tLine(st, nameAt) : tLine(st, k);
  // Its own name: the tag's bytes, or an anonymous one.
  let ownInNames = false;
  let ownOff: u32;
  let ownLen: u32;
  if (nameAt >= 0) {
    ownOff = tStart(st, nameAt);
    ownLen = tEnd(st, nameAt) - ownOff;
  } else {
    ownOff = anonName(kind == KIND_STRUCT ? 0x08 : kind == KIND_UNION ? 0x0a : 0x03);
    ownLen = WB;
    ownInNames = true;
  }
  // As a scope: `outer::own` when in one.
  let self: i32;
  if (scope >= 0) {
    const q = PARENTS + (<usize>scope << 4);
    const sIn = (load<u32>(q) & 0x100) != 0;
    const sOff = load<u32>(q, 4);
    const sLen = load<u32>(q, 8);
    const from = NAME_N;
    putBytes(bytesOf(sIn, sOff), sLen);
    nameRoom(2);
    putNameByte(0x3a);
    putNameByte(0x3a);
    putBytes(bytesOf(ownInNames, ownOff), ownLen);
    self = addParent(kind, true, from, NAME_N - from);
  } else self = addParent(kind, ownInNames, ownOff, ownLen);
  let end: u32;
  if (kind == KIND_ENUM) end = enumBody(self);
  else {
    body(true, true, self);
    end = TOK_LINE;
  }
  if (nameAt >= 0) addDef(kind, false, ownOff, ownLen, line, end, ownOff, scope);
  const aggLine = tLine(st, k);
  TOK_END = st + k;
  pushRaw(AGG, 0, 0, 0, 0, aggLine);
}

/** Enumerators up to the closing `}`; returns its line. */
function enumBody(scope: i32): u32 {
  let expectName = true;
  let paren: u32 = 0;
  let braces: u32 = 0;
  for (;;) {
    const t = next();
    if (t == EOF) return LINE;
    if (t == PUNCT) {
      const c = CH;
      if (c == 0x28 || c == 0x5b) paren++;
      else if (c == 0x29 || c == 0x5d) paren = paren > 0 ? paren - 1 : 0;
      else if (c == 0x7b) braces++;
      else if (c == 0x7d) {
        if (braces == 0) return TOK_LINE;
        braces--;
      } else if (c == 0x2c && paren == 0 && braces == 0) expectName = true;
      continue;
    }
    if (t == IDENT && expectName && paren == 0 && braces == 0 && KW == 0) addDef(KIND_ENUMERATOR, false, START, END - START, TOK_LINE, TOK_LINE, START, scope);
    expectName = false;
  }
  return 0; // (never reached: the loop returns)
}

/** A declaration ended by `;` (or by the `}` of its body) on line `endLine`: its declarators' names. */
function declaration(st: u32, member: bool, scope: i32, endLine: u32): void {
  const n = count(st);
  if (n == 0) return;
  let typedef = false;
  let extern = false;
  for (let i: u32 = 0; i < n; i++) {
    if (tType(st, i) != IDENT) continue;
    const kw = tKw(st, i);
    if (kw == K_TYPEDEF) typedef = true;
    else if (kw == K_EXTERN) extern = true;
  }
  if (extern && !typedef) return;
  const kind = typedef ? KIND_TYPEDEF : member ? KIND_MEMBER : KIND_VARIABLE;
  const parent: i32 = scope >= 0 && member ? scope : -1;
  let segStart: u32 = 0;
  let depth: i32 = 0;
  for (let i: u32 = 0; i <= n; i++) {
    if (i < n && tType(st, i) == PUNCT) {
      const ch = tCh(st, i);
      if (ch == 0x28 || ch == 0x5b) depth++;
      else if (ch == 0x29 || ch == 0x5d) depth--;
      if (!(ch == 0x2c && depth == 0)) continue;
    } else if (i < n) continue;
    const name = declaratorName(st, segStart, i, segStart == 0, typedef);
    if (name >= 0) {
      const line = tLine(st, name);
      // A declarator ends at its `,` or at the `;`.
      const end = typedef ? line : i < n ? tLine(st, i) : endLine;
      const a = tStart(st, name);
      addDef(kind, false, a, tEnd(st, name) - a, line, end, a, parent);
    }
    segStart = i + 1;
  }
}

/**
 * The index of the name a declarator declares in st[a, b), or -1: a prototype, no name at
 * all (`struct x;`), or a keyword. `first`: the segment also holds the specifiers, so a
 * lone identifier is a type, not a name.
 */
function declaratorName(st: u32, a: u32, b: u32, first: bool, typedef: bool): i32 {
  let last: i32 = -1;
  let prev: i32 = -1; // the candidate before `last`, when adjacent to it
  let candidates: u32 = 0;
  let sawAgg = false;
  for (let i = a; i < b; i++) {
    const ty = tType(st, i);
    if (ty == AGG) {
      sawAgg = true;
      continue;
    }
    if (ty == IDENT) {
      const kw = tKw(st, i);
      if (kw == K_STRUCT || kw == K_UNION || kw == K_ENUM) {
        i++; // the tag name is a type
        sawAgg = true;
        continue;
      }
      if (kw == K_ATTR) {
        // Its parenthesised group, if any.
        if (i + 1 < b && tType(st, i + 1) == PUNCT && tCh(st, i + 1) == 0x28) i = closeParen(st, i + 1, b);
        continue;
      }
      if (kw != 0) continue;
      prev = last >= 0 && <u32>last == i - 1 && afterType(st, a, <u32>last) ? last : -1;
      last = <i32>i;
      candidates++;
      continue;
    }
    if (ty != PUNCT) return -1; // a string or a number: not a declarator
    const ch = tCh(st, i);
    if (ch == 0x3d || ch == 0x3a || ch == 0x5b) break; // initializer, bit-field width, array bounds
    if (ch == 0x2a || ch == 0x26) continue;
    if (ch != 0x28) return -1; // an expression, not a declaration
    const close = closeParen(st, i, b);
    if (last < 0 || <u32>last != i - 1) {
      // Not after a name: a declarator in parentheses.
      for (let j = i + 1; j < close; j++) {
        const tj = tType(st, j);
        if (tj == IDENT) {
          if (tKw(st, j) == 0) return <i32>j;
          continue;
        }
        if (tj == PUNCT && tCh(st, j) != 0x2a && tCh(st, j) != 0x5e && tCh(st, j) != 0x28) break;
      }
      i = close;
      continue;
    }
    if (prev >= 0 && isAnnotation(st, <u32>last)) {
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
  if (prev >= 0 && isAnnotation(st, <u32>last)) last = prev;
  if (first && candidates == 1 && !sawAgg && !hasTypeBefore(st, a, <u32>last)) return -1;
  return last;
}

/** A type keyword or a `*` before st[at] in st[a, at): `unsigned x`, `*p`. */
function hasTypeBefore(st: u32, a: u32, to: u32): bool {
  for (let i = a; i < to; i++) {
    const kw = tKw(st, i);
    if (tType(st, i) == IDENT && (kw == K_BASE || kw == K_TYPE || kw == K_STATIC || kw == K_TYPEDEF)) return true;
    if (tType(st, i) == PUNCT && tCh(st, i) == 0x2a) return true;
  }
  return false;
}

/** Whether the identifier st[to] follows a type (c-definitions.ts says why it matters). */
function afterType(st: u32, a: u32, to: u32): bool {
  if (isAnnotation(st, to)) return false;
  for (let i = <i32>to - 1; i >= <i32>a; i--) {
    const ty = tType(st, i);
    if (ty == AGG) return true;
    if (ty == PUNCT) return tCh(st, i) == 0x2a || tCh(st, i) == 0x29; // `*x`, or after an attribute's group
    if (ty != IDENT) return false;
    const kw = tKw(st, i);
    if (kw == 0 || kw == K_BASE) return true; // a typedef name, a struct's tag, int, ...
    if (kw != K_TYPE && kw != K_STATIC) return false;
    // const, static, inline, ...: look further back.
  }
  return false;
}

function isAnnotation(st: u32, i: u32): bool {
  const a = tStart(st, i);
  return tEnd(st, i) - a > 2 && at(a) == 0x5f && at(a + 1) == 0x5f;
}

/** The index of the `)` matching the `(` at st[i], or b - 1. */
function closeParen(st: u32, i: u32, b: u32): u32 {
  let d: i32 = 0;
  for (let j = i; j < b; j++) {
    if (tType(st, j) != PUNCT) continue;
    if (tCh(st, j) == 0x28) d++;
    else if (tCh(st, j) == 0x29 && --d == 0) return j;
  }
  return b - 1;
}

// ---------------------------------------------------------------------------------------

/**
 * The definitions of the C file src[0, n) (layout and regions above; `header`: a .h file;
 * `pathHash`: the path's FNV-1a, for anonymous names). Returns how many; a trap when it
 * gives up (state[4] says why).
 */
export function cScan(src: usize, n: u32, header: u32, pathHash: u32, defs: usize, defsCap: u32, parents: usize, parentsCap: u32, names: usize, namesCap: u32, tokens: usize, tokensCap: u32, conds: usize, condsCap: u32, state: usize): u32 {
  S = src;
  N = n;
  HEADER = header != 0;
  PATH_HASH = pathHash;
  DEFS = defs;
  DEFS_CAP = defsCap;
  DEF_N = 0;
  PARENTS = parents;
  PARENTS_CAP = parentsCap;
  PARENT_N = 0;
  NAMES = names;
  NAMES_CAP = namesCap;
  NAME_N = 0;
  TOKENS = tokens;
  TOKENS_CAP = tokensCap;
  TOK_END = 0;
  CONDS = conds;
  CONDS_CAP = condsCap;
  COND_N = 0;
  STATE = state;
  store<u32>(state, 0, 16);
  POS = 0;
  LINE = 1;
  BOL = true;
  DEPTH = 0;
  ANON_COUNT = 0;
  TYPE = EOF;
  // A UTF-8 byte order mark is not a token: a directive on the first line stays one.
  if (n >= 3 && at(0) == 0xef && at(1) == 0xbb && at(2) == 0xbf) POS = 3;
  body(false, false, -1);
  store<u32>(state, DEF_N);
  store<u32>(state, PARENT_N, 4);
  store<u32>(state, NAME_N, 8);
  return DEF_N;
}
