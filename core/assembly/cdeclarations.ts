// The declarators of a C declaration the parser read: which names it declares.

import { KIND_MEMBER, KIND_TYPEDEF, KIND_VARIABLE, addDef, setEndLine } from './cdefs';
import { K_ATTR, K_BASE, K_ENUM, K_EXTERN, K_STATIC, K_STRUCT, K_TYPE, K_TYPEDEF, K_UNION } from './ckeywords';
import { AGG, IDENT, PUNCT, at } from './cstate';
import { count, tCh, tEnd, tKw, tLine, tStart, tType } from './ctokens';

/** A declaration ended by `;` (or by the `}` of its body) on line `endLine`: its declarators' names. */
export function declaration(st: u32, member: bool, scope: i32, endLine: u32): void {
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
      setEndLine(addDef(kind, a, tEnd(st, name) - a, line, parent), end);
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

export function isAnnotation(st: u32, i: u32): bool {
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
