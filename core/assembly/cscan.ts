// The C definitions scanner (what daemon/symbols/c-definitions.ts documents: the rules, and
// why trawl reads C itself instead of asking ctags), in the core: several times the
// JavaScript scanner's speed, and its definitions come out as records, not objects.
// test/helpers/c-definitions-oracle.ts keeps the JavaScript scanner it was ported from,
// and test/symbols/c-scan.test.ts compares the two on random C. The scanner's parts:
// cstate.ts (where the scan is), clex.ts (tokens), ctokens.ts (the statements' tokens),
// cparse.ts and cdeclarations.ts (what the tokens define), cdefs.ts (the records),
// ckeywords.ts.
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

import { body } from './cparse';
import { ANON_COUNT, BOL, CONDS, CONDS_CAP, COND_N, DEFS, DEFS_CAP, DEF_N, DEPTH, EOF, HEADER, LINE, N, NAMES, NAMES_CAP, NAME_N, PARENTS, PARENTS_CAP, PARENT_N, PATH_HASH, POS, S, STATE, TOKENS, TOKENS_CAP, TOK_END, TYPE, at } from './cstate';

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
