// C function bodies for the symbol scanner (daemon/symbols/c-definitions.ts, Parser
// functionBody): from just after a function's `{`, the bytes up to its matching `}`, which
// is most of a C file and holds no definition but local struct, union and enum bodies.
// They are read here rather than in JavaScript (the body loop was a large share of the
// JavaScript scanner's time); the scanner's rules, which the JavaScript loop spelled, are
// these:
//
// - a newline counts a line and starts one (`bol`: only whitespace since it, so that a `#`
//   there starts a directive); space, tab and carriage return keep `bol`, form feed and
//   vertical tab too, anything else clears it;
// - an identifier ([A-Za-z_$] or a byte >= 0x80, then those and digits) is passed over;
//   `struct`, `union` and `enum` stop the read (the scanner reads what follows);
// - a number (a digit, then identifier bytes and dots) is passed over;
// - `{` and `}` count the body's braces, and with `(` and `)` the scanner's nesting depth;
// - a string or character constant ends at its quote or at an unescaped newline (a
//   backslash escapes the next byte; an escaped newline counts its line);
// - a block comment counts its lines and keeps `bol`; a line comment stops at its newline;
// - a `#` at the start of a line stops the read (the scanner reads the directive).
//
// State (u32[8] at `state`), read and written:
//   0 pos: where to read from; then where the read stopped (after the `}`, after the
//     keyword, at the `#`, or the end)
//   1 braces open in the body (1 after the function's `{`)
//   2 bol (0 or 1)
// written:
//   3 lines counted   4 change of the nesting depth (i32)   5 the keyword's first byte
// Returns why the read stopped: BODY_END, BODY_EOF, BODY_KEYWORD or BODY_DIRECTIVE.

import { identLanes, identPart, identStart } from './cchars';

const BODY_END: u32 = 0;
const BODY_EOF: u32 = 1;
const BODY_KEYWORD: u32 = 2;
const BODY_DIRECTIVE: u32 = 3;

/** Whether src[a, a + len) is `struct`, `union` or `enum`. */
// @ts-ignore: decorator
@inline
function aggregateKeyword(p: usize, len: u32): bool {
  if (len == 6) return load<u32>(p) == 0x75727473 /* "stru" */ && load<u16>(p, 4) == 0x7463 /* "ct" */;
  if (len == 5) return load<u32>(p) == 0x6f696e75 /* "unio" */ && load<u8>(p, 4) == 0x6e /* "n" */;
  if (len == 4) return load<u32>(p) == 0x6d756e65 /* "enum" */;
  return false;
}

// The body's running state, which nextStop updates for what it passes over (wasm globals).
let lines: u32 = 0;
let depth: i32 = 0;
let bol = false;

/**
 * From i (at the start of a token or between tokens, i >= 1), the first byte at or after i
 * that the byte loop below must see, 16 bytes at a time: a brace, a quote, a slash, a `#`,
 * or an `st`, `un` or `en` that starts a token (after a byte that is not an identifier
 * byte: the keywords' first two bytes). Newlines and parentheses on the way are counted
 * here (lines, depth), and `bol` follows what is passed: true after a newline with only
 * whitespace since. Every other byte only ends or continues an identifier or a number, or
 * is an operator, none of which the loop acts on. When none is found before the last 16
 * bytes (the loop reads those itself), the start of the token there.
 */
// @ts-ignore: decorator
@inline
function nextStop(src: usize, n: u32, from: u32): u32 {
  let i = from;
  while (i + 16 <= n) {
    const v = v128.load(src + i);
    const before = v128.load(src + i - 1);
    const after = v128.load(src + i + 1);
    let stop = v128.or(v128.or(i8x16.eq(v, i8x16.splat(0x7b)), i8x16.eq(v, i8x16.splat(0x7d))), v128.or(i8x16.eq(v, i8x16.splat(0x22)), i8x16.eq(v, i8x16.splat(0x27))));
    stop = v128.or(stop, v128.or(i8x16.eq(v, i8x16.splat(0x2f)), i8x16.eq(v, i8x16.splat(0x23))));
    const st = v128.and(i8x16.eq(v, i8x16.splat(0x73)), i8x16.eq(after, i8x16.splat(0x74)));
    const un = v128.and(v128.or(i8x16.eq(v, i8x16.splat(0x75)), i8x16.eq(v, i8x16.splat(0x65))), i8x16.eq(after, i8x16.splat(0x6e)));
    stop = v128.or(stop, v128.andnot(v128.or(st, un), identLanes(before)));
    const m = <u32>i8x16.bitmask(stop);
    // What lies before the stop (all 16 bytes when there is none).
    const below: u32 = m == 0 ? 0xffff : (<u32>1 << ctz<u32>(m)) - 1;
    const nl = <u32>i8x16.bitmask(i8x16.eq(v, i8x16.splat(0x0a))) & below;
    const open = <u32>i8x16.bitmask(i8x16.eq(v, i8x16.splat(0x28))) & below;
    const close = <u32>i8x16.bitmask(i8x16.eq(v, i8x16.splat(0x29))) & below;
    // Whitespace: space, tab, newline, vertical tab, form feed, carriage return.
    const space = v128.or(i8x16.eq(v, i8x16.splat(0x20)), i8x16.lt_u(i8x16.sub(v, i8x16.splat(0x09)), i8x16.splat(5)));
    const other = ~(<u32>i8x16.bitmask(space)) & below;
    lines += <u32>popcnt<u32>(nl);
    depth += <i32>popcnt<u32>(open) - <i32>popcnt<u32>(close);
    if (nl != 0) {
      // After the last newline: a line's start while only whitespace follows it.
      const last = 31 - clz<u32>(nl);
      bol = (other >> last) == 0;
    } else if (other != 0) bol = false;
    if (m == 0) {
      i += 16;
      continue;
    }
    return i + <u32>ctz<u32>(m);
  }
  // Into the last 16 bytes without a stop: back to the start of the token i may be in (the
  // loop reads from a token's start), not before `from`.
  while (i > from) {
    const b = <u32>load<u8>(src + i - 1);
    if (!identPart(b) && b != 0x2e) break;
    i--;
  }
  return i;
}

/**
 * Whether the byte at p (after a `.`) continues a number: the token that holds p-1 starts
 * with a digit (a number takes identifier bytes and dots: `1.5e3`, `1.enum`).
 */
function inNumber(src: usize, p: u32, floor: u32): bool {
  let q = p;
  while (q > floor) {
    const b = <u32>load<u8>(src + q - 1);
    if (!identPart(b) && b != 0x2e) break;
    q--;
  }
  // Tokens from q, as the loop reads them, up to p.
  while (q < p) {
    const c = <u32>load<u8>(src + q);
    if (c - 0x30 < 10) {
      q++;
      while (q < p) {
        const b = <u32>load<u8>(src + q);
        if (!identPart(b) && b != 0x2e) break;
        q++;
      }
      if (q == p) return true;
    } else if (identStart(c)) {
      q++;
      while (q < p && identPart(<u32>load<u8>(src + q))) q++;
    } else q++;
  }
  return false;
}

export function skipCBody(src: usize, n: u32, state: usize): u32 {
  let i = load<u32>(state);
  let d = load<u32>(state, 4);
  bol = load<u32>(state, 8) != 0;
  lines = 0;
  depth = 0;
  let why = BODY_EOF;
  let keyword: u32 = 0;
  const floor = i;
  while (i < n) {
    if (i > floor && i + 16 <= n) {
      i = nextStop(src, n, i);
      if (i >= n) break;
    }
    const c = <u32>load<u8>(src + i);
    if (c == 0x0a) {
      lines++;
      bol = true;
      i++;
      continue;
    }
    if (c == 0x20 || c == 0x09 || c == 0x0d) {
      i++;
      continue;
    }
    if (c - 0x30 < 10 || (i > floor && load<u8>(src + i - 1) == 0x2e && inNumber(src, i, floor))) {
      // A number (from its first digit, or where a jump landed in it after a dot).
      i++;
      while (i < n) {
        const b = <u32>load<u8>(src + i);
        if (!identPart(b) && b != 0x2e) break;
        i++;
      }
      bol = false;
      continue;
    }
    if (identStart(c)) {
      const a = i;
      i++;
      while (i < n && identPart(<u32>load<u8>(src + i))) i++;
      bol = false;
      if (aggregateKeyword(src + a, i - a)) {
        why = BODY_KEYWORD;
        keyword = a;
        break;
      }
      continue;
    }
    const atBol = bol;
    bol = bol && (c == 0x0c || c == 0x0b);
    if (c == 0x7b) {
      d++;
      depth++;
    } else if (c == 0x7d) {
      depth--;
      if (--d == 0) {
        i++;
        why = BODY_END;
        break;
      }
    } else if (c == 0x28) depth++;
    else if (c == 0x29) depth--;
    else if (c == 0x22 || c == 0x27) {
      // A string or character constant.
      i++;
      while (i < n) {
        const q = <u32>load<u8>(src + i);
        if (q == c) {
          i++;
          break;
        }
        if (q == 0x5c) {
          if (i + 1 < n && load<u8>(src + i + 1) == 0x0a) lines++;
          i += 2;
          continue;
        }
        if (q == 0x0a) break;
        i++;
      }
      if (i > n) i = n;
      continue;
    } else if (c == 0x2f && i + 1 < n && load<u8>(src + i + 1) == 0x2a) {
      // A block comment: keeps the line's start.
      i += 2;
      let closed = false;
      while (i < n) {
        const b = load<u8>(src + i);
        if (b == 0x0a) lines++;
        else if (b == 0x2a && i + 1 < n && load<u8>(src + i + 1) == 0x2f) {
          i += 2;
          closed = true;
          break;
        }
        i++;
      }
      if (!closed) i = n;
      bol = atBol;
      continue;
    } else if (c == 0x2f && i + 1 < n && load<u8>(src + i + 1) == 0x2f) {
      while (i < n && load<u8>(src + i) != 0x0a) i++;
      continue;
    } else if (c == 0x23) {
      if (atBol) {
        why = BODY_DIRECTIVE;
        break;
      }
    }
    i++;
  }
  if (why == BODY_EOF) i = n;
  store<u32>(state, i);
  store<u32>(state, d, 4);
  store<u32>(state, bol ? 1 : 0, 8);
  store<u32>(state, lines, 12);
  store<i32>(state, depth, 16);
  store<u32>(state, keyword, 20);
  return why;
}
