// The keywords the C scanner knows, and what each is to it.

import { S } from './cstate';

// Keyword ids (0: an ordinary identifier).
export const K_TYPEDEF: u32 = 1;
export const K_STRUCT: u32 = 2;
export const K_UNION: u32 = 3;
export const K_ENUM: u32 = 4;
export const K_EXTERN: u32 = 5;
export const K_ATTR: u32 = 6; // __attribute__ and friends: the parenthesised group after it is not a declarator
export const K_TYPE: u32 = 7; // a specifier or qualifier: never a declared name
export const K_CXX: u32 = 8; // C++ only: a header holding it goes to ctags
export const K_STATIC: u32 = 9;
export const K_BASE: u32 = 10; // a type by itself: int, char, long, ... (K_TYPE otherwise: const, inline, ...)

/**
 * The keyword id of src[a, a + len) (0: an ordinary identifier): its bytes as two
 * little-endian words against each keyword of its length (16 bytes are read; the glue
 * pads the file). Generated from the table in c-definitions.ts (the oracle test checks
 * that the two agree on every keyword).
 */
export function keyword(a: u32, len: u32): u32 {
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
