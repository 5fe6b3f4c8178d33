// What every lexer shares: the token classes, the lexer interface and the per-line HTML
// builder. Lexers never produce HTML themselves; they report "text[a, b) is class X" in
// left-to-right order and the builder escapes and wraps it, so escaping cannot be
// forgotten in one language and spans cannot overlap or cross a line.
import { escapeRange } from './escape.ts';

/**
 * Token classes; each becomes the CSS class `hl-<cls>`, '' is plain text (no span).
 * com  comment
 * str  string or char literal; also heredoc bodies, regex literals, Markdown code spans and link targets, HTML attribute values
 * num  number; also CSS hex colours
 * kw   keyword; also HTML tag names, assembly mnemonics, Markdown list and quote markers
 * typ  built-in type; PascalCase names (Foo, HttpServer, not MAX or T) in languages where that marks types; assembly %registers; YAML !tags
 * pre  preprocessor directive, attribute, decorator, annotation; Make $(VAR) expansions, YAML anchors, diff file headers
 * lit  true/false/null/nil/None...; Ruby symbols and Elixir atoms; HTML entities
 * key  key in JSON, YAML, TOML, INI; CSS property, HTML attribute name, Device Tree property, HCL attribute
 * hd   Markdown heading, diff hunk header, TOML/INI [table] header
 * add, del  added / removed diff line
 * fn   identifier directly followed by "(" (a call or definition); Rust macros `name!`, labels, Make targets
 */
export type Cls = '' | 'com' | 'str' | 'num' | 'kw' | 'typ' | 'pre' | 'lit' | 'key' | 'hd' | 'add' | 'del' | 'fn';

/**
 * A line lexer. `start()` makes the state carried from line to line (inside a block
 * comment, a multi-line string, a fenced code block...); `line()` highlights
 * `text[from, to)` into `out` and updates the state in place. The range lets one lexer
 * run another over part of a line (HTML <script>, Markdown fences). `line` is declared
 * as a method so that a Lexer<S> can be held as a Lexer<unknown> by the lexers that nest.
 */
export interface Lexer<S = unknown> {
  start(): S;
  line(text: string, from: number, to: number, st: S, out: Out): void;
}

const OPEN: Record<string, string> = {};
for (const c of ['com', 'str', 'num', 'kw', 'typ', 'pre', 'lit', 'key', 'hd', 'add', 'del', 'fn']) OPEN[c] = `<span class="hl-${c}">`;

/**
 * Builds one line's HTML from tokens reported in order; text between tokens is plain.
 * Pieces go to a reused array joined once per line, so each line is one flat string:
 * measured with the code view's final join included, this beat `+=` ropes of a dozen
 * short pieces per token (which the GC then has to trace and the join to flatten).
 */
export class Out {
  text = '';
  private parts: string[] = [];
  /** End of the part of `text` already written. */
  private at = 0;

  reset(text: string): void {
    this.text = text;
    this.parts.length = 0;
    this.at = 0;
  }

  /** Marks text[a, b) as `cls`. Empty and plain tokens write nothing yet (the gap is flushed later). */
  tok(cls: Cls, a: number, b: number): void {
    if (b <= a || cls === '') return;
    const p = this.parts;
    if (a > this.at) p.push(escapeRange(this.text, this.at, a));
    p.push(OPEN[cls]!, escapeRange(this.text, a, b), '</span>');
    this.at = b;
  }

  /** The finished line: everything after the last token is plain. */
  finish(): string {
    const n = this.text.length;
    if (this.parts.length === 0) return escapeRange(this.text, 0, n);
    if (this.at < n) this.parts.push(escapeRange(this.text, this.at, n));
    return this.parts.join('');
  }
}
