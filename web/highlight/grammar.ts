// The grammar format: a language is data (delimited spans, word lists, identifier
// characters and a few flags) that one generic line lexer (code.ts) interprets. Families
// share data: languages.ts builds C-like, hash-comment and other grammars from common
// span lists and adds per-language word lists. `compile` turns a Grammar into lookup
// tables once, when a language is first used.
import type { Cls } from './out.ts';

/**
 * A span: text that starts with `open` at a token boundary. Spans are tried before
 * identifiers and numbers, longest `open` first (definition order among equals), so
 * `"""` wins over `"` and a `//` inside a string is never seen (the string is consumed
 * whole). A span whose conditions fail, or whose `kind` does not match, is skipped and
 * the next candidate is tried; if none matches, the character is lexed normally.
 */
export interface Span {
  /** Opening text, e.g. '/*', '"', '"""', '#', '@"'. */
  open: string;
  /** Closing text. Absent: the span runs to the end of the line (line comments). */
  close?: string;
  cls: Cls;
  /** Escapes inside: 1 = backslash escapes the next character, 2 = a doubled close is content (SQL 'it''s'). */
  esc?: 1 | 2;
  /** May continue on the next line; the open span is carried in the state. Without it an unclosed span ends at the line end. */
  ml?: boolean;
  /** Nests (Rust, Swift, Haskell block comments): each inner `open` needs its own `close`. */
  nest?: boolean;
  /** Only as the first non-blank text of the line (C `#`, Vim `"` comments, Dockerfile `#`). */
  bol?: boolean;
  /** Only at column 0 (Perl =pod … =cut, Ruby =begin … =end). */
  col0?: boolean;
  /** Only at line start or after a blank or ';' (shell `#`, so `$#` and `${#a}` are not comments). */
  ws?: boolean;
  /** Only when followed by a blank or the line end (assembly `#`/`@` comments vs `#imm`, `@function`). */
  wsAfter?: boolean;
  /**
   * Openers whose extent depends on what follows; each may fail:
   * tok: just the `open` text itself (`<?php`, `/dts-v1/`).
   * word: `open` + a name (identifier characters and '.'), e.g. `@Override`, `#include`, `$(CC`; fails without a name.
   * attr: `open` through the matching ']' on the line (Rust `#[derive(Debug)]`); a string in it may continue on the next line.
   * char: a one-character literal 'x' or '\n'; otherwise (Rust lifetime 'a, Haskell 'T) it fails and the quote is plain.
   * lua: Lua long brackets, `open` + '='* + '[' … ']' + '='* + ']'.
   * heredoc: `<<EOF`, `<<-EOF`, `<<~EOF`, `<<'EOF'`; the following lines up to the terminator are a string.
   * cp: `open` + one (possibly escaped) character, not after an identifier: Erlang $a, Elixir ?a, Make $@.
   * esc: `open` + the next character, always (shell \' outside quotes is no string).
   * sym: ':' + identifier, not after an identifier or ':' (Ruby symbols, Elixir atoms).
   * hex: CSS '#' + 3/4/6/8 hex digits, inside braces only.
   */
  kind?: 'tok' | 'word' | 'attr' | 'char' | 'lua' | 'heredoc' | 'cp' | 'esc' | 'sym' | 'hex';
  /** word: blanks are allowed between `open` and the name (C `#  define`); heredoc: blanks before the name (shell `<< EOF`). */
  sp?: boolean;
  /** word: only these names (space separated), e.g. Device Tree `#include` but not `#address-cells`. */
  names?: string;
}

/** Behaviour that does not fit the span/word model, one per language at most. */
export type Mode =
  | 'json' // a string followed by ':' is a key
  | 'toml' // `[table]` headers, `a.b."c" =` keys at line start
  | 'ini' // `[section]` headers, `name =` keys at line start
  | 'make' // `target:` at column 0 is fn
  | 'asm' // first word is a mnemonic (kw) or directive (pre), `label:` is fn, `%reg` is typ
  | 'css' // `prop:` inside braces is a key; brace depth is carried in the state
  | 'kconfig' // lines indented under `help` are comment
  | 'assign'; // `name =` is a key (Device Tree properties, HCL attributes)

export interface Grammar {
  spans: Span[];
  /** Word lists, space separated. A word in several lists takes the first: kw, lit, typ. */
  kw?: string;
  lit?: string;
  typ?: string;
  /** Words match case-insensitively (SQL, Dockerfile); the lists must be lower case. */
  ci?: boolean;
  /** Keywords count only as the first word of a line (Dockerfile instructions). */
  kwBol?: boolean;
  /** Extra characters that may start / continue an identifier ('$' in JS, '-' in CSS, '?!' in Ruby). */
  idStart?: string;
  idPart?: string;
  /** Identifiers that may directly precede a string span and become part of it (Python r f b, C++ L u8). */
  prefixes?: string;
  /** Raw strings whose close is chosen by the opener: Rust r#"…"# (after r/br), C++ R"d(…)d" (after R, LR, u8R…). */
  raw?: 'rust' | 'cpp';
  /** Identifier directly followed by '(' is fn. */
  fn?: boolean;
  /** Capitalised identifiers with a lower-case letter (Foo, HttpServer; not MAX) are typ. */
  pascal?: boolean;
  /** `name!(`, `name![`, `name!{` are fn, the '!' included (Rust macros). */
  bang?: boolean;
  /** '/' where an operand is expected starts a regular expression literal (JavaScript). */
  regex?: boolean;
  /** C `#include <file>`: the <file> after an include/import directive is a string. */
  include?: boolean;
  mode?: Mode;
}

/** Character flags for identifiers. */
export const START = 1;
export const PART = 2;

/** A grammar turned into tables the lexer reads in its inner loop. */
export interface Compiled {
  /** Spans by the char code (< 128) of their first character, longest open first. */
  table: (Span[] | undefined)[];
  /** Identifier flags (START | PART) for char codes < 128; codes >= 128 count as both. */
  chars: Uint8Array;
  words: Map<string, Cls>;
  /**
   * For each first char code (< 128), bit min(length, 31) is set if some word starts with
   * that char and has that length: most identifiers are then rejected without slicing
   * them out of the line for the `words` lookup.
   */
  lens: Uint32Array;
  prefixes: Set<string> | null;
  names: Map<Span, Set<string>>;
  g: Grammar;
}

function list(s: string | undefined): string[] {
  return s ? s.split(/\s+/).filter(Boolean) : [];
}

export function compile(g: Grammar): Compiled {
  const table: (Span[] | undefined)[] = new Array(128).fill(undefined);
  const names = new Map<Span, Set<string>>();
  for (const s of g.spans) {
    const c = s.open.charCodeAt(0);
    (table[c] ??= []).push(s);
    if (s.names) names.set(s, new Set(list(s.names)));
  }
  // Array.prototype.sort is stable: equal lengths keep definition order.
  for (const b of table) b?.sort((x, y) => y.open.length - x.open.length);

  const chars = new Uint8Array(128);
  for (let c = 0; c < 128; c++) {
    const alpha = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
    const digit = c >= 48 && c <= 57;
    chars[c] = (alpha ? START | PART : 0) | (digit ? PART : 0);
  }
  for (const ch of g.idStart ?? '') chars[ch.charCodeAt(0)]! |= START | PART;
  for (const ch of g.idPart ?? '') chars[ch.charCodeAt(0)]! |= PART;

  const words = new Map<string, Cls>();
  const lens = new Uint32Array(128);
  const add = (s: string | undefined, cls: Cls) => {
    for (const w of list(s)) {
      if (!words.has(w)) words.set(w, cls);
      const bit = 1 << Math.min(w.length, 31);
      lens[w.charCodeAt(0) & 127]! |= bit;
      if (g.ci) lens[w.toUpperCase().charCodeAt(0) & 127]! |= bit;
    }
  };
  add(g.kw, 'kw');
  add(g.lit, 'lit');
  add(g.typ, 'typ');
  return { table, chars, words, lens, prefixes: g.prefixes ? new Set(list(g.prefixes)) : null, names, g };
}
