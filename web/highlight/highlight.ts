// Syntax highlighting for the web UI's code view: pure string functions, no DOM, no
// dependencies. Each language is a line lexer with a small state carried between lines
// (registry.ts); output is escaped HTML with <span class="hl-XXX"> tokens (out.ts lists
// the classes), one string per line, no span crossing a line.
import { highlightWith } from './lines.ts';
import { lexerFor } from './registry.ts';

/** One HTML string per line of `text` (split on "\n"; a trailing "\r" on a line is dropped). Every character of the line appears, HTML-escaped (& < > " '), and tokens are wrapped as <span class="hl-XXX">…</span>. Spans never cross a line: a block comment or string spanning lines is closed at the end of each line and reopened on the next. */
export function highlightLines(language: string, text: string): string[] {
  return highlightWith(lexerFor(language), text, true);
}

/** Whether `language` has a grammar (otherwise highlightLines returns escaped plain lines). */
export function hasGrammar(language: string): boolean {
  return lexerFor(language) !== undefined;
}
