// The C scanner's output: definitions, scopes that may be parents, and the names that are
// not the file's bytes (the records' layout: cscan.ts).

import { ANON_COUNT, DEFS, DEFS_CAP, DEF_N, LF, N, NAMES, NAMES_CAP, NAME_N, PARENTS, PARENTS_CAP, PARENT_N, PATH_HASH, S, STOP_ROOM, WB, at, stop } from './cstate';

// Definition kinds (core/cscan.ts C_KINDS names them).
export const KIND_MACRO: u32 = 0;
export const KIND_FUNCTION: u32 = 1;
export const KIND_STRUCT: u32 = 2;
export const KIND_UNION: u32 = 3;
export const KIND_ENUM: u32 = 4;
export const KIND_ENUMERATOR: u32 = 5;
export const KIND_MEMBER: u32 = 6;
export const KIND_TYPEDEF: u32 = 7;
export const KIND_VARIABLE: u32 = 8;

/**
 * Appends a definition named src[off, off + len), ending on its line `line` (setEndLine
 * moves its end); returns its number. A definition's name is always the file's bytes
 * (byte 1 of its record is 0): only scopes' names are made up in `names`.
 */
export function addDef(kind: u32, off: u32, len: u32, line: u32, parent: i32): u32 {
  if (DEF_N == DEFS_CAP) stop(STOP_ROOM);
  const d = DEFS + (<usize>DEF_N << 5);
  store<u32>(d, kind);
  store<u32>(d, off, 4);
  store<u32>(d, len, 8);
  store<u32>(d, line, 12);
  store<u32>(d, line, 16);
  store<u32>(d, off, 20);
  store<i32>(d, parent, 24);
  store<u32>(d, wholeWordStart(off, len), 28);
  return DEF_N++;
}

/** Where definition `def` ends: line `endLine`. */
export function setEndLine(def: u32, endLine: u32): void {
  store<u32>(DEFS + (<usize>def << 5), endLine, 16);
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
export function addParent(kind: u32, inNames: bool, off: u32, len: u32): i32 {
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
export function nameRoom(len: u32): void {
  if (NAME_N + len > NAMES_CAP) stop(STOP_ROOM);
}

export function putNameByte(b: u32): void {
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
export function anonName(kindCode: u32): u32 {
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
export function putBytes(p: usize, len: u32): void {
  nameRoom(len);
  for (let k: u32 = 0; k < len; k++) store<u8>(NAMES + <usize>(NAME_N + k), load<u8>(p + <usize>k));
  NAME_N += len;
}

/** Where a scope's or name's bytes are. */
// @ts-ignore: decorator
@inline
export function bytesOf(inNames: bool, off: u32): usize {
  return (inNames ? NAMES : S) + <usize>off;
}
