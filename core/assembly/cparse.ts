// The C scanner's parser. A context is (member: a struct or union's members; nested: a `}`
// ends it, a body or `extern "C" {`; scope: the parent of what it defines, -1 for none).

import { skipCBody } from './cbody';
import { declaration, isAnnotation } from './cdeclarations';
import { KIND_ENUM, KIND_ENUMERATOR, KIND_FUNCTION, KIND_STRUCT, KIND_UNION, addDef, addParent, anonName, bytesOf, nameRoom, putBytes, putNameByte, setEndLine } from './cdefs';
import { K_ATTR, K_ENUM, K_EXTERN, K_STRUCT, K_UNION, keyword } from './ckeywords';
import { directive, next } from './clex';
import { AGG, BOL, CH, DEPTH, END, EOF, IDENT, KW, LINE, N, NAME_N, OTHER, PARENTS, POS, PUNCT, S, START, STATE, TOK_END, TOK_LINE, WB, at } from './cstate';
import { count, push, pushRaw, tCh, tokenHead, tEnd, tKw, tLine, tStart, tType } from './ctokens';

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
export function body(member: bool, nested: bool, scope: i32): void {
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
      const def = addDef(KIND_FUNCTION, a, len, line, -1);
      const fn = addParent(KIND_FUNCTION, false, a, len);
      const end = functionBody(fn);
      setEndLine(def, end);
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
  pushRaw(tokenHead(IDENT, k, 0), kwAt, kwAt, line);
  if (nameStart >= 0) pushRaw(tokenHead(IDENT, 0, 0), <u32>nameStart, nameEnd, nameLine);
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
  if (nameAt >= 0) setEndLine(addDef(kind, ownOff, ownLen, line, scope), end);
  const aggLine = tLine(st, k);
  TOK_END = st + k;
  pushRaw(tokenHead(AGG, 0, 0), 0, 0, aggLine);
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
    if (t == IDENT && expectName && paren == 0 && braces == 0 && KW == 0) addDef(KIND_ENUMERATOR, START, END - START, TOK_LINE, scope);
    expectName = false;
  }
  return 0; // (never reached: the loop returns)
}
