// Language name → lexer. Names are GitHub linguist names matched case-insensitively, or
// the aliases in languages.ts (Markdown fences say ```ts, ```sh). Lexers are built on
// first use and cached, so a page that shows one C file compiles one grammar.
import { CodeLexer } from './code.ts';
import { diffLexer } from './diff.ts';
import { compile } from './grammar.ts';
import { htmlLexer } from './html.ts';
import { ALIASES, GRAMMARS } from './languages.ts';
import { markdownLexer } from './markdown.ts';
import type { Lexer } from './out.ts';
import { yamlLexer } from './yaml.ts';

const html = (): Lexer => htmlLexer((tag) => (tag === 'script' ? lexerFor('typescript') : tag === 'style' ? lexerFor('css') : undefined));
const xml = (): Lexer => htmlLexer(() => undefined);

/** Languages with a hand-written lexer instead of a Grammar. */
const CUSTOM: Record<string, () => Lexer> = {
  markdown: () => markdownLexer(lexerFor),
  diff: () => diffLexer,
  yaml: () => yamlLexer,
  html,
  vue: html,
  svelte: html,
  xml,
  svg: xml,
};

const cache = new Map<string, Lexer | undefined>();

/** The lexer for a language name or alias, or undefined (plain text). */
export function lexerFor(language: string): Lexer | undefined {
  let key = language.toLowerCase();
  // Own properties only: a language called "constructor" must not find Object.prototype's.
  if (Object.hasOwn(ALIASES, key)) key = ALIASES[key]!;
  if (cache.has(key)) return cache.get(key);
  const lexer = Object.hasOwn(CUSTOM, key) ? CUSTOM[key]!() : Object.hasOwn(GRAMMARS, key) ? new CodeLexer(compile(GRAMMARS[key]!)) : undefined;
  cache.set(key, lexer);
  return lexer;
}

/** Every language with a lexer (lower-case linguist names), for tests and docs. */
export function languages(): string[] {
  return [...Object.keys(GRAMMARS), ...Object.keys(CUSTOM)].sort();
}
