// The C scanner's state (cscan.ts has the layout of the regions): where the file and the
// regions are, how far each is filled, where the scan is and the token it read last. One
// scan runs at a time per instance, so these are module globals, set by cScan and read and
// advanced by the scanner's files.

// Why a scan stopped before the end (state[4]).
export const STOP_NOT_C: u32 = 1;
export const STOP_ROOM: u32 = 2;

// Token types.
export const EOF: u32 = 0;
export const IDENT: u32 = 1;
export const PUNCT: u32 = 2;
export const OTHER: u32 = 3; // numbers, strings, character constants, operators of no interest
export const AGG: u32 = 4; // a struct/union/enum specifier with its body, already read

export const LF: u32 = 10;
export const CR: u32 = 13;
export const SP: u32 = 32;
export const TAB: u32 = 9;
export const FF: u32 = 12;
export const VT: u32 = 11;

// The file and the regions, and how far each region is filled.
export let S: usize = 0; // src
export let N: u32 = 0;
export let HEADER = false; // a .h file: C++ or Objective-C in it stops the scan (STOP_NOT_C)
export let PATH_HASH: u32 = 0;
export let DEFS: usize = 0;
export let DEFS_CAP: u32 = 0;
export let DEF_N: u32 = 0;
export let PARENTS: usize = 0;
export let PARENTS_CAP: u32 = 0;
export let PARENT_N: u32 = 0;
export let NAMES: usize = 0;
export let NAMES_CAP: u32 = 0;
export let NAME_N: u32 = 0;
export let TOKENS: usize = 0;
export let TOKENS_CAP: u32 = 0;
/** The first free token: the end of the innermost statement being read. */
export let TOK_END: u32 = 0;
export let CONDS: usize = 0;
export let CONDS_CAP: u32 = 0;
export let COND_N: u32 = 0;
export let STATE: usize = 0;

// Where the scan is.
export let POS: u32 = 0;
export let LINE: u32 = 1;
/** Only whitespace (and comments) since the last newline: a `#` starts a directive. */
export let BOL = true;
/** Braces plus parentheses open, for the #if/#else rule. */
export let DEPTH: i32 = 0;
export let ANON_COUNT: u32 = 0;

// The current token.
export let TYPE: u32 = EOF;
export let START: u32 = 0;
export let END: u32 = 0;
export let TOK_LINE: u32 = 0;
export let CH: u32 = 0;
export let KW: u32 = 0;

// readWord's answer.
export let WA: u32 = 0;
export let WB: u32 = 0;

/** Stops the scan: `why` at state[4], then a trap, which the glue catches. */
export function stop(why: u32): void {
  store<u32>(STATE, why, 16);
  unreachable();
}

// @ts-ignore: decorator
@inline
export function at(i: u32): u32 {
  return <u32>load<u8>(S + <usize>i);
}
