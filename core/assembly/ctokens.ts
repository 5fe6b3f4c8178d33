// Statements: the tokens of the declarations being read, one nesting level above the
// other. A statement is known by its first token's place; the innermost one ends at
// TOK_END, and only the innermost one grows (an inner one is done before its outer one
// takes another token).

import { CH, END, IDENT, KW, PUNCT, START, STOP_ROOM, TOKENS, TOKENS_CAP, TOK_END, TOK_LINE, TYPE, stop } from './cstate';

// @ts-ignore: decorator
@inline
function tok(st: u32, i: u32): usize {
  return TOKENS + (<usize>(st + i) << 4);
}
// @ts-ignore: decorator
@inline
export function tType(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i));
}
// @ts-ignore: decorator
@inline
export function tKw(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i), 1);
}
// @ts-ignore: decorator
@inline
export function tCh(st: u32, i: u32): u32 {
  return <u32>load<u8>(tok(st, i), 2);
}
// @ts-ignore: decorator
@inline
export function tStart(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 4);
}
// @ts-ignore: decorator
@inline
export function tEnd(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 8);
}
// @ts-ignore: decorator
@inline
export function tLine(st: u32, i: u32): u32 {
  return load<u32>(tok(st, i), 12);
}

/** Tokens in statement st (the innermost). */
// @ts-ignore: decorator
@inline
export function count(st: u32): u32 {
  return TOK_END - st;
}

/** A token record's first four bytes: its type, its keyword (an identifier's; 0 otherwise), its punctuation byte, 0. */
// @ts-ignore: decorator
@inline
export function tokenHead(type: u32, kw: u32, ch: u32): u32 {
  return type | ((type == IDENT ? kw : 0) << 8) | (ch << 16);
}

/** Appends a token (`head`: tokenHead) to the innermost statement. */
export function pushRaw(head: u32, start: u32, end: u32, line: u32): void {
  if (TOK_END == TOKENS_CAP) stop(STOP_ROOM);
  const q = TOKENS + (<usize>TOK_END << 4);
  store<u32>(q, head);
  store<u32>(q, start, 4);
  store<u32>(q, end, 8);
  store<u32>(q, line, 12);
  TOK_END++;
}

/** The current token, onto the innermost statement. */
export function push(): void {
  pushRaw(tokenHead(TYPE, KW, TYPE == PUNCT ? CH : 0), START, END, TOK_LINE);
}
