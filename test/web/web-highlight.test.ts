import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasGrammar, highlightLines } from '../../web/highlight/highlight.ts';
import { highlightWith, MAX_LINE } from '../../web/highlight/lines.ts';
import { languages, lexerFor } from '../../web/highlight/registry.ts';

// ---- helpers ---------------------------------------------------------------------------

/** A token as the tables write it: [class without "hl-", text]; '' is plain text. */
type Tok = [string, string];

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
const unescape = (s: string): string => s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);

// One piece of a line's HTML: a span we generate, or plain text. Text may hold no markup
// character except '&' starting one of the five entities.
const PIECE = /<span class="hl-(com|str|num|kw|typ|pre|lit|key|hd|add|del|fn)">((?:[^<>&"']|&(?:amp|lt|gt|quot|#39);)+)<\/span>|((?:[^<>&"']|&(?:amp|lt|gt|quot|#39);)+)/y;

/** Parses one output line back into tokens, failing on anything that is not well formed. */
function tokens(html: string): Tok[] {
  const toks: Tok[] = [];
  PIECE.lastIndex = 0;
  while (PIECE.lastIndex < html.length) {
    const at = PIECE.lastIndex;
    const m = PIECE.exec(html);
    assert.ok(m, `malformed output at ${at}: ${JSON.stringify(html.slice(at, at + 60))} in ${JSON.stringify(html)}`);
    const [cls, text] = m[1] !== undefined ? [m[1], unescape(m[2]!)] : ['', unescape(m[3]!)];
    const last = toks[toks.length - 1];
    if (cls === '' && last !== undefined && last[0] === '') last[1] += text;
    else toks.push([cls, text]);
  }
  return toks;
}

/** Highlights `text` and returns each line's tokens. */
function lex(language: string, text: string): Tok[][] {
  return highlightWith(lexerFor(language), text, false).map(tokens);
}

// ---- tables ----------------------------------------------------------------------------

// [input (lines joined with \n), expected tokens: one list per line, or one list for a one-line input]
type Case = [string, Tok[] | Tok[][]];

const TABLES: Record<string, Case[]> = {
  C: [
    ['#include <stdio.h>', [['pre', '#include'], ['', ' '], ['str', '<stdio.h>']]],
    ['int x = 0x1F + 1e-9 + 3.14f + 10ULL;', [['typ', 'int'], ['', ' x = '], ['num', '0x1F'], ['', ' + '], ['num', '1e-9'], ['', ' + '], ['num', '3.14f'], ['', ' + '], ['num', '10ULL'], ['', ';']]],
    ['x86 = sizeof(a) + i386;', [['', 'x86 = '], ['kw', 'sizeof'], ['', '(a) + i386;']]],
    ['s = "a // b \\" c"; // real', [['', 's = '], ['str', '"a // b \\" c"'], ['', '; '], ['com', '// real']]],
    ["char c = '\\''; if (p == NULL) return;", [['typ', 'char'], ['', ' c = '], ['str', "'\\''"], ['', '; '], ['kw', 'if'], ['', ' (p == '], ['lit', 'NULL'], ['', ') '], ['kw', 'return'], ['', ';']]],
    ['#define MAX(a, b) ((a) > (b) ? (a) : (b))', [['pre', '#define'], ['', ' '], ['fn', 'MAX'], ['', '(a, b) ((a) > (b) ? (a) : (b))']]],
    ['  #  if defined(X) /* c */', [['', '  '], ['pre', '#  if'], ['', ' '], ['fn', 'defined'], ['', '(X) '], ['com', '/* c */']]],
    ['a /* one\ntwo */ b\n', [[['', 'a '], ['com', '/* one']], [['com', 'two */'], ['', ' b']], []]],
    // An unterminated string ends with its line.
    ['s = "abc\nint y;', [[['', 's = '], ['str', '"abc']], [['typ', 'int'], ['', ' y;']]]],
    ['ifdef_x = if_x + intx;', [['', 'ifdef_x = if_x + intx;']]],
  ],
  'C++': [
    ['auto s = R"x(a "quoted" )" b)x";', [['kw', 'auto'], ['', ' s = '], ['str', 'R"x(a "quoted" )" b)x"'], ['', ';']]],
    ['auto r = R"(one\ntwo)";', [[['kw', 'auto'], ['', ' r = '], ['str', 'R"(one']], [['str', 'two)"'], ['', ';']]]],
    ["std::vector<int> v{1'000'000};", [['', 'std::vector<'], ['typ', 'int'], ['', '> v{'], ['num', "1'000'000"], ['', '};']]],
    ['auto w = L"wide" u8"utf";', [['kw', 'auto'], ['', ' w = '], ['str', 'L"wide"'], ['', ' '], ['str', 'u8"utf"'], ['', ';']]],
    ['class Foo final : public Bar {};', [['kw', 'class'], ['', ' Foo '], ['kw', 'final'], ['', ' : '], ['kw', 'public'], ['', ' Bar {};']]],
  ],
  Go: [
    ['func main() {', [['kw', 'func'], ['', ' '], ['fn', 'main'], ['', '() {']]],
    ['s := `raw\nstill raw` + "x"', [[['', 's := '], ['str', '`raw']], [['str', 'still raw`'], ['', ' + '], ['str', '"x"']]]],
    ["var r rune = 'x'; n := 1_000_000; p := nil", [['kw', 'var'], ['', ' r '], ['typ', 'rune'], ['', ' = '], ['str', "'x'"], ['', '; n := '], ['num', '1_000_000'], ['', '; p := '], ['lit', 'nil']]],
    ['if err != nil { return fmt.Errorf("e: %w", err) }', [['kw', 'if'], ['', ' err != '], ['lit', 'nil'], ['', ' { '], ['kw', 'return'], ['', ' fmt.'], ['fn', 'Errorf'], ['', '('], ['str', '"e: %w"'], ['', ', err) }']]],
  ],
  Rust: [
    ["fn f<'a>(x: &'a str) -> Option<&'static str> {", [['kw', 'fn'], ['', " f<'a>(x: &'a "], ['typ', 'str'], ['', ') -> '], ['typ', 'Option'], ['', "<&'static "], ['typ', 'str'], ['', '> {']]],
    ["let c = 'x'; let n = '\\n'; let b = b'y';", [['kw', 'let'], ['', ' c = '], ['str', "'x'"], ['', '; '], ['kw', 'let'], ['', ' n = '], ['str', "'\\n'"], ['', '; '], ['kw', 'let'], ['', ' b = '], ['str', "b'y'"], ['', ';']]],
    ['let r = r#"a "b" c"#;', [['kw', 'let'], ['', ' r = '], ['str', 'r#"a "b" c"#'], ['', ';']]],
    ['let s = r##"one\ntwo"# still\nthree"##;', [[['kw', 'let'], ['', ' s = '], ['str', 'r##"one']], [['str', 'two"# still']], [['str', 'three"##'], ['', ';']]]],
    ['#[derive(Debug, Clone)]', [['pre', '#[derive(Debug, Clone)]']]],
    ['#![no_std]', [['pre', '#![no_std]']]],
    ['println!("{}", x); vec![1, 2];', [['fn', 'println!'], ['', '('], ['str', '"{}"'], ['', ', x); '], ['fn', 'vec!'], ['', '['], ['num', '1'], ['', ', '], ['num', '2'], ['', '];']]],
    ['/* outer /* inner */ still */ x', [['com', '/* outer /* inner */ still */'], ['', ' x']]],
    ['let s = "multi\nline";', [[['kw', 'let'], ['', ' s = '], ['str', '"multi']], [['str', 'line"'], ['', ';']]]],
    // A string inside an attribute may continue on the next line; the quotes after it still pair up.
    ['#[doc = "a\nb"] fn x() {}', [[['pre', '#[doc = '], ['str', '"a']], [['str', 'b"'], ['', '] '], ['kw', 'fn'], ['', ' '], ['fn', 'x'], ['', '() {}']]]],
    ['for i in 0..10 { x.0 += 1u8; }', [['kw', 'for'], ['', ' i '], ['kw', 'in'], ['', ' '], ['num', '0'], ['', '..'], ['num', '10'], ['', ' { x.'], ['num', '0'], ['', ' += '], ['num', '1u8'], ['', '; }']]],
  ],
  TypeScript: [
    ['const re = /a\\/b[/]/g, d = a / b / c;', [['kw', 'const'], ['', ' re = '], ['str', '/a\\/b[/]/g'], ['', ', d = a / b / c;']]],
    ['const t = `x ${y}\nz`;', [[['kw', 'const'], ['', ' t = '], ['str', '`x ${y}']], [['str', 'z`'], ['', ';']]]],
    ["@Component({ selector: 'app' })", [['pre', '@Component'], ['', '({ selector: '], ['str', "'app'"], ['', ' })']]],
    ['export interface Foo<T> extends Bar { x?: number | undefined }', [['kw', 'export'], ['', ' '], ['kw', 'interface'], ['', ' '], ['typ', 'Foo'], ['', '<T> '], ['kw', 'extends'], ['', ' '], ['typ', 'Bar'], ['', ' { x?: '], ['typ', 'number'], ['', ' | '], ['lit', 'undefined'], ['', ' }']]],
    ['return /re/.test(s) ? 1n : .5;', [['kw', 'return'], ['', ' '], ['str', '/re/'], ['', '.'], ['fn', 'test'], ['', '(s) ? '], ['num', '1n'], ['', ' : '], ['num', '.5'], ['', ';']]],
    ['#!/usr/bin/env node\nthis.#x = $y;', [[['com', '#!/usr/bin/env node']], [['kw', 'this'], ['', '.#x = $y;']]]],
    ['y = (1) / 2 / x[0] / 3;', [['', 'y = ('], ['num', '1'], ['', ') / '], ['num', '2'], ['', ' / x['], ['num', '0'], ['', '] / '], ['num', '3'], ['', ';']]],
  ],
  Python: [
    ['def f(x: int) -> str:', [['kw', 'def'], ['', ' '], ['fn', 'f'], ['', '(x: '], ['typ', 'int'], ['', ') -> '], ['typ', 'str'], ['', ':']]],
    ['    """Doc\n    more."""', [[['', '    '], ['str', '"""Doc']], [['str', '    more."""']]]],
    ["s = f\"{x!r}\" + rb'\\x00' + 'it\\'s'  # note", [['', 's = '], ['str', 'f"{x!r}"'], ['', ' + '], ['str', "rb'\\x00'"], ['', ' + '], ['str', "'it\\'s'"], ['', '  '], ['com', '# note']]],
    ['@app.route("/")', [['pre', '@app.route'], ['', '('], ['str', '"/"'], ['', ')']]],
    ['x = None if y is True else 1_000.5e3j', [['', 'x = '], ['lit', 'None'], ['', ' '], ['kw', 'if'], ['', ' y '], ['kw', 'is'], ['', ' '], ['lit', 'True'], ['', ' '], ['kw', 'else'], ['', ' '], ['num', '1_000.5e3j']]],
    ['m = a @ b; raise ValueError', [['', 'm = a @ b; '], ['kw', 'raise'], ['', ' '], ['typ', 'ValueError']]],
    ["s = 'unterminated\nx = 1", [[['', 's = '], ['str', "'unterminated"]], [['', 'x = '], ['num', '1']]]],
  ],
  Shell: [
    ['echo "$HOME" \'$x\' $# ${#arr[@]} # comment', [['', 'echo '], ['str', '"$HOME"'], ['', ' '], ['str', "'$x'"], ['', ' $# ${#arr[@]} '], ['com', '# comment']]],
    ['if [ -f x ]; then exit 1; fi', [['kw', 'if'], ['', ' [ -f x ]; '], ['kw', 'then'], ['', ' '], ['kw', 'exit'], ['', ' '], ['num', '1'], ['', '; '], ['kw', 'fi']]],
    ["cat <<-EOF\n\tit's $x\n\tEOF\nfi", [[['', 'cat '], ['str', '<<-EOF']], [['str', "\tit's $x"]], [['', '\t'], ['str', 'EOF']], [['kw', 'fi']]]],
    ["cat << 'END' > f\nif x\nEND", [[['', 'cat '], ['str', "<< 'END'"], ['', ' > f']], [['str', 'if x']], [['str', 'END']]]],
    ['apt-get install --if-missing foo', [['', 'apt-get install --if-missing foo']]],
    ["echo don\\'t stop", [['', "echo don\\'t stop"]]],
    ["f() { local x='a\nb'; }", [[['fn', 'f'], ['', '() { '], ['kw', 'local'], ['', ' x='], ['str', "'a"]], [['str', "b'"], ['', '; }']]]],
  ],
  JSON: [
    ['{"a": 1, "b": [true, null, -2.5e3], "c": "x\\"y"}', [['', '{'], ['key', '"a"'], ['', ': '], ['num', '1'], ['', ', '], ['key', '"b"'], ['', ': ['], ['lit', 'true'], ['', ', '], ['lit', 'null'], ['', ', -'], ['num', '2.5e3'], ['', '], '], ['key', '"c"'], ['', ': '], ['str', '"x\\"y"'], ['', '}']]],
  ],
  YAML: [
    ['name: my-app # comment', [['key', 'name'], ['', ': my-app '], ['com', '# comment']]],
    ['- port: 8080', [['', '- '], ['key', 'port'], ['', ': '], ['num', '8080']]],
    ['  enabled: yes', [['', '  '], ['key', 'enabled'], ['', ': '], ['lit', 'yes']]],
    ['msg: "it\'s \\"quoted\\""', [['key', 'msg'], ['', ': '], ['str', '"it\'s \\"quoted\\""']]],
    ["note: it's fine", [['key', 'note'], ['', ": it's fine"]]],
    ['url: http://x:80/a#frag', [['key', 'url'], ['', ': http://x:80/a#frag']]],
    ['base: &base !!map', [['key', 'base'], ['', ': '], ['pre', '&base'], ['', ' '], ['typ', '!!map']]],
    ['script: |\n  echo "a: b"\n  # not a comment\n\nnext: 1', [[['key', 'script'], ['', ': |']], [['', '  '], ['str', 'echo "a: b"']], [['', '  '], ['str', '# not a comment']], [], [['key', 'next'], ['', ': '], ['num', '1']]]],
    ['list: [a, 1, "b", {k: v}]', [['key', 'list'], ['', ': [a, '], ['num', '1'], ['', ', '], ['str', '"b"'], ['', ', {'], ['key', 'k'], ['', ': v}]']]],
    ["s: 'a\n  b'\n---", [[['key', 's'], ['', ': '], ['str', "'a"]], [['str', "  b'"]], [['pre', '---']]]],
  ],
  TOML: [
    ['[package]', [['hd', '[package]']]],
    ['[[bin]]', [['hd', '[[bin]]']]],
    ['name = "trawl" # c', [['key', 'name'], ['', ' = '], ['str', '"trawl"'], ['', ' '], ['com', '# c']]],
    ['a.b."c.d" = 1_000', [['key', 'a.b."c.d"'], ['', ' = '], ['num', '1_000']]],
    ['enabled = true', [['key', 'enabled'], ['', ' = '], ['lit', 'true']]],
    ['s = """\nline = 2\n"""', [[['key', 's'], ['', ' = '], ['str', '"""']], [['str', 'line = 2']], [['str', '"""']]]],
    ["path = 'C:\\dir'", [['key', 'path'], ['', ' = '], ['str', "'C:\\dir'"]]],
  ],
  Markdown: [
    ['# Title', [['hd', '# Title']]],
    ['#hashtag', [['', '#hashtag']]],
    ['Setext\n======', [[['', 'Setext']], [['hd', '======']]]],
    ['- item with `code` and [link](http://x.y)', [['kw', '-'], ['', ' item with '], ['str', '`code`'], ['', ' and [link]('], ['str', 'http://x.y'], ['', ')']]],
    ['1. first\n> quote', [[['kw', '1.'], ['', ' first']], [['kw', '>'], ['', ' quote']]]],
    ['```python\nx = 1  # c\n```\nafter `x`', [[['pre', '```python']], [['', 'x = '], ['num', '1'], ['', '  '], ['com', '# c']], [['pre', '```']], [['', 'after '], ['str', '`x`']]]],
    ['~~~\n# not a heading\n~~~', [[['pre', '~~~']], [['', '# not a heading']], [['pre', '~~~']]]],
    ['<!-- c\nstill -->text', [[['com', '<!-- c']], [['com', 'still -->'], ['', 'text']]]],
    ['``a ` b`` \\`x`', [['str', '``a ` b``'], ['', ' \\`x`']]],
  ],
  Diff: [
    [
      'diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@ fn()\n ctx\n--- removed comment\n+added\n\\ No newline at end of file\n--- a/g',
      [
        [['pre', 'diff --git a/f b/f']],
        [['pre', 'index 1..2 100644']],
        [['pre', '--- a/f']],
        [['pre', '+++ b/f']],
        [['hd', '@@ -1,2 +1,2 @@ fn()']],
        [['', ' ctx']],
        [['del', '--- removed comment']],
        [['add', '+added']],
        [['com', '\\ No newline at end of file']],
        [['pre', '--- a/g']],
      ],
    ],
  ],
  HTML: [
    ['<!DOCTYPE html>', [['pre', '<!DOCTYPE html>']]],
    ['<a href="x?a=1&amp;b" class=btn>Tom &amp; Jerry</a>', [['', '<'], ['kw', 'a'], ['', ' '], ['key', 'href'], ['', '='], ['str', '"x?a=1&amp;b"'], ['', ' '], ['key', 'class'], ['', '='], ['str', 'btn'], ['', '>Tom '], ['lit', '&amp;'], ['', ' Jerry</'], ['kw', 'a'], ['', '>']]],
    ['<div\n  id="x">', [[['', '<'], ['kw', 'div']], [['', '  '], ['key', 'id'], ['', '='], ['str', '"x"'], ['', '>']]]],
    ['<!-- a\nb --> c', [[['com', '<!-- a']], [['com', 'b -->'], ['', ' c']]]],
    ['<a title="one\ntwo" x>', [[['', '<'], ['kw', 'a'], ['', ' '], ['key', 'title'], ['', '='], ['str', '"one']], [['str', 'two"'], ['', ' '], ['key', 'x'], ['', '>']]]],
    ["<a 'b>' c>", [['', '<'], ['kw', 'a'], ['', ' '], ['str', "'b>'"], ['', ' '], ['key', 'c'], ['', '>']]],
    ['<script>if (a < b) x = "</p>";</script>', [['', '<'], ['kw', 'script'], ['', '>'], ['kw', 'if'], ['', ' (a < b) x = '], ['str', '"</p>"'], ['', ';</'], ['kw', 'script'], ['', '>']]],
    ['<style>\np { color: red; }\n</style>', [[['', '<'], ['kw', 'style'], ['', '>']], [['', 'p { '], ['key', 'color'], ['', ': red; }']], [['', '</'], ['kw', 'style'], ['', '>']]]],
  ],
  SQL: [
    ["SELECT id, COUNT(*) FROM users WHERE name = 'O''Brien' -- c", [['kw', 'SELECT'], ['', ' id, '], ['fn', 'COUNT'], ['', '(*) '], ['kw', 'FROM'], ['', ' users '], ['kw', 'WHERE'], ['', ' name = '], ['str', "'O''Brien'"], ['', ' '], ['com', '-- c']]],
    ['create table t (id bigint primary key, ok boolean default true);', [['kw', 'create'], ['', ' '], ['kw', 'table'], ['', ' t (id '], ['typ', 'bigint'], ['', ' '], ['kw', 'primary'], ['', ' '], ['kw', 'key'], ['', ', ok '], ['typ', 'boolean'], ['', ' '], ['kw', 'default'], ['', ' '], ['lit', 'true'], ['', ');']]],
  ],
  CSS: [
    ['a:hover { color: #fff; margin: -1px 0 !important; }', [['', 'a:hover { '], ['key', 'color'], ['', ': '], ['num', '#fff'], ['', '; '], ['key', 'margin'], ['', ': -'], ['num', '1px'], ['', ' '], ['num', '0'], ['', ' '], ['kw', '!important'], ['', '; }']]],
    ['@media (max-width: 600px) {\n  #id { --x: rgb(0 0 0) }', [[['pre', '@media'], ['', ' (max-width: '], ['num', '600px'], ['', ') {']], [['', '  #id { '], ['key', '--x'], ['', ': '], ['fn', 'rgb'], ['', '('], ['num', '0'], ['', ' '], ['num', '0'], ['', ' '], ['num', '0'], ['', ') }']]]],
  ],
  Makefile: [
    ['CC := gcc', [['', 'CC := gcc']]],
    ['all: main.o $(OBJS)', [['fn', 'all'], ['', ': main.o '], ['pre', '$(OBJS'], ['', ')']]],
    ['\t$(CC) -o $@ $^ # link', [['', '\t'], ['pre', '$(CC'], ['', ') -o '], ['pre', '$@'], ['', ' '], ['pre', '$^'], ['', ' '], ['com', '# link']]],
    ['ifeq ($(X),1)', [['kw', 'ifeq'], ['', ' ('], ['pre', '$(X'], ['', '),'], ['num', '1'], ['', ')']]],
  ],
  Kconfig: [
    [
      'config FOO\n\tbool "Foo support"\n\tdefault y\n\thelp\n\t  Say Y if it\'s needed.\n\n\t  More.\nconfig BAR',
      [
        [['kw', 'config'], ['', ' FOO']],
        [['', '\t'], ['typ', 'bool'], ['', ' '], ['str', '"Foo support"']],
        [['', '\t'], ['kw', 'default'], ['', ' '], ['lit', 'y']],
        [['', '\t'], ['kw', 'help']],
        [['', '\t  '], ['com', "Say Y if it's needed."]],
        [],
        [['', '\t  '], ['com', 'More.']],
        [['kw', 'config'], ['', ' BAR']],
      ],
    ],
  ],
  Lua: [
    ['local s = [[a\nb]] -- c', [[['kw', 'local'], ['', ' s = '], ['str', '[[a']], [['str', 'b]]'], ['', ' '], ['com', '-- c']]]],
    ['--[==[ long\ncomment ]==] x = t[1]', [[['com', '--[==[ long']], [['com', 'comment ]==]'], ['', ' x = t['], ['num', '1'], ['', ']']]]],
  ],
  Haskell: [
    ["foldl' f x = {- c {- n -} -} Just 'a'", [['', "foldl' f x = "], ['com', '{- c {- n -} -}'], ['', ' '], ['typ', 'Just'], ['', ' '], ['str', "'a'"]]],
    ['{-# LANGUAGE GADTs #-}', [['pre', '{-# LANGUAGE GADTs #-}']]],
  ],
  Ruby: [
    ['def ok?(x) = :sym', [['kw', 'def'], ['', ' '], ['fn', 'ok?'], ['', '(x) = '], ['lit', ':sym']]],
    ['puts <<~EOS\n  text\n  EOS\n@x = nil', [[['', 'puts '], ['str', '<<~EOS']], [['str', '  text']], [['', '  '], ['str', 'EOS']], [['', '@x = '], ['lit', 'nil']]]],
    ['=begin\ndoc\n=end\nFoo::Bar', [[['com', '=begin']], [['com', 'doc']], [['com', '=end']], [['typ', 'Foo'], ['', '::'], ['typ', 'Bar']]]],
    // Ruby strings end with their line (regex and %-literals are not lexed, so a stray quote must not leak).
    ['x = "a\ny = 1', [[['', 'x = '], ['str', '"a']], [['', 'y = '], ['num', '1']]]],
  ],
  Perl: [
    ['my $n = $#arr; # c', [['kw', 'my'], ['', ' $n = $#arr; '], ['com', '# c']]],
    ['=pod\n\nText\n\n=cut\n1;', [[['com', '=pod']], [], [['com', 'Text']], [], [['com', '=cut']], [['num', '1'], ['', ';']]]],
  ],
  'Unix Assembly': [
    ['_start:\n  mov eax, 1 ; not a comment here', [[['fn', '_start'], ['', ':']], [['', '  '], ['kw', 'mov'], ['', ' eax, '], ['num', '1'], ['', ' ; not a comment here']]]],
    ['main:', [['fn', 'main'], ['', ':']]],
    ['\tmovl $0x10, %eax  # c', [['', '\t'], ['kw', 'movl'], ['', ' $'], ['num', '0x10'], ['', ', '], ['typ', '%eax'], ['', '  '], ['com', '# c']]],
    ['.globl main', [['pre', '.globl'], ['', ' main']]],
    ['#include <asm/unistd.h>', [['pre', '#include'], ['', ' '], ['str', '<asm/unistd.h>']]],
  ],
  Assembly: [
    ['%define X 0FFh', [['pre', '%define'], ['', ' X '], ['num', '0FFh']]],
    ['_start:\n  mov eax, 1 ; exit', [[['fn', '_start'], ['', ':']], [['', '  '], ['kw', 'mov'], ['', ' eax, '], ['num', '1'], ['', ' '], ['com', '; exit']]]],
  ],
  'Device Tree': [
    ['/dts-v1/;', [['kw', '/dts-v1/'], ['', ';']]],
    ['\t#address-cells = <1>;', [['', '\t'], ['key', '#address-cells'], ['', ' = <'], ['num', '1'], ['', '>;']]],
    ['\tcompatible = "vendor,chip"; // c', [['', '\t'], ['key', 'compatible'], ['', ' = '], ['str', '"vendor,chip"'], ['', '; '], ['com', '// c']]],
  ],
  Dockerfile: [
    ['FROM node:20 AS build', [['kw', 'FROM'], ['', ' node:'], ['num', '20'], ['', ' AS build']]],
    ['RUN apt-get update && echo from # not a comment', [['kw', 'RUN'], ['', ' apt-get update && echo from # not a comment']]],
    ['# syntax=docker/dockerfile:1', [['com', '# syntax=docker/dockerfile:1']]],
  ],
};

for (const [language, cases] of Object.entries(TABLES)) {
  test(`highlight table: ${language}`, () => {
    for (const [input, expected] of cases) {
      const lines = input.split('\n').length;
      const want = lines === 1 && (expected.length === 0 || typeof expected[0]![0] === 'string') ? [expected as Tok[]] : (expected as Tok[][]);
      assert.deepEqual(lex(language, input), want, `${language}: ${JSON.stringify(input)}`);
    }
  });
}

// One or two lines for each remaining listed language: [language, input, expected].
const MORE: Array<[string, string, Tok[] | Tok[][]]> = [
  ['Java', '@Override public String toString() { return "x" + 100L; }', [['pre', '@Override'], ['', ' '], ['kw', 'public'], ['', ' '], ['typ', 'String'], ['', ' '], ['fn', 'toString'], ['', '() { '], ['kw', 'return'], ['', ' '], ['str', '"x"'], ['', ' + '], ['num', '100L'], ['', '; }']]],
  ['Kotlin', 'val s = """raw \\n""" ; fun f(x: Int) = null', [['kw', 'val'], ['', ' s = '], ['str', '"""raw \\n"""'], ['', ' ; '], ['kw', 'fun'], ['', ' '], ['fn', 'f'], ['', '(x: '], ['typ', 'Int'], ['', ') = '], ['lit', 'null']]],
  ['C#', 'var s = @"c:\\dir ""q"""; string t = $"{a}";', [['kw', 'var'], ['', ' s = '], ['str', '@"c:\\dir ""q"""'], ['', '; '], ['typ', 'string'], ['', ' t = '], ['str', '$"{a}"'], ['', ';']]],
  ['PHP', '$x = "hi $name"; # comment', [['', '$x = '], ['str', '"hi $name"'], ['', '; '], ['com', '# comment']]],
  ['Swift', '@objc func f() -> Int { return nil ?? 0 }', [['pre', '@objc'], ['', ' '], ['kw', 'func'], ['', ' '], ['fn', 'f'], ['', '() -> '], ['typ', 'Int'], ['', ' { '], ['kw', 'return'], ['', ' '], ['lit', 'nil'], ['', ' ?? '], ['num', '0'], ['', ' }']]],
  ['Scala', "val c = 'c'; val sym = 'sym; val s = s\"x $y\"", [['kw', 'val'], ['', ' c = '], ['str', "'c'"], ['', '; '], ['kw', 'val'], ['', " sym = 'sym; "], ['kw', 'val'], ['', ' s = '], ['str', 's"x $y"']]],
  ['Elixir', 'def f(?a), do: :ok', [['kw', 'def'], ['', ' '], ['fn', 'f'], ['', '('], ['str', '?a'], ['', '), '], ['kw', 'do'], ['', ': '], ['lit', ':ok']]],
  ['Erlang', '-module(foo). f(X) -> $a. % c', [['pre', '-module'], ['', '(foo). '], ['fn', 'f'], ['', '(X) -> '], ['str', '$a'], ['', '. '], ['com', '% c']]],
  ['Zig', 'const std = @import("std");', [['kw', 'const'], ['', ' std = '], ['pre', '@import'], ['', '('], ['str', '"std"'], ['', ');']]],
  ['Dart', "final s = r'\\n'; return Text('a');", [['kw', 'final'], ['', ' s = '], ['str', "r'\\n'"], ['', '; '], ['kw', 'return'], ['', ' '], ['fn', 'Text'], ['', '('], ['str', "'a'"], ['', ');']]],
  ['R', 'f <- function(x) { `my var` <- NA_real_; is.null(x) } # c', [['', 'f <- '], ['kw', 'function'], ['', '(x) { `my var` <- '], ['lit', 'NA_real_'], ['', '; '], ['fn', 'is.null'], ['', '(x) } '], ['com', '# c']]],
  ['Objective-C', '@interface Foo : NSObject\nNSString *s = @"hi"; BOOL b = YES;', [[['kw', '@interface'], ['', ' '], ['typ', 'Foo'], ['', ' : '], ['typ', 'NSObject']], [['typ', 'NSString'], ['', ' *s = '], ['str', '@"hi"'], ['', '; '], ['typ', 'BOOL'], ['', ' b = '], ['lit', 'YES'], ['', ';']]]],
  ['Vim Script', '" comment\nlet g:x = "str"', [[['com', '" comment']], [['kw', 'let'], ['', ' g:x = '], ['str', '"str"']]]],
  ['Protocol Buffer', 'message Foo { repeated string names = 1; }', [['kw', 'message'], ['', ' '], ['typ', 'Foo'], ['', ' { '], ['kw', 'repeated'], ['', ' '], ['typ', 'string'], ['', ' names = '], ['num', '1'], ['', '; }']]],
  ['JavaScript', "import x from 'y'; const $el = document.querySelector('#a');", [['kw', 'import'], ['', ' x '], ['kw', 'from'], ['', ' '], ['str', "'y'"], ['', '; '], ['kw', 'const'], ['', ' $el = document.'], ['fn', 'querySelector'], ['', '('], ['str', "'#a'"], ['', ');']]],
];

test('highlight table: the other listed languages', () => {
  for (const [language, input, expected] of MORE) {
    const want = input.includes('\n') ? (expected as Tok[][]) : [expected as Tok[]];
    assert.deepEqual(lex(language, input), want, `${language}: ${JSON.stringify(input)}`);
  }
});

// ---- API behaviour ---------------------------------------------------------------------

const LISTED = ['C', 'C++', 'Go', 'TypeScript', 'TSX', 'JavaScript', 'Python', 'Rust', 'Java', 'Kotlin', 'C#', 'Ruby', 'PHP', 'Shell', 'Makefile', 'JSON', 'YAML', 'TOML', 'Markdown', 'SQL', 'Swift', 'Scala', 'Assembly', 'Unix Assembly', 'Perl', 'Lua', 'HTML', 'CSS', 'Dockerfile', 'Diff', 'Kconfig', 'Device Tree', 'Protocol Buffer', 'Haskell', 'Elixir', 'Erlang', 'Zig', 'Dart', 'R', 'Objective-C', 'Vim Script'];

test('hasGrammar: every listed linguist name, case-insensitively; not Text, unknown or empty names', () => {
  for (const name of LISTED) {
    assert.equal(hasGrammar(name), true, name);
    assert.equal(hasGrammar(name.toUpperCase()), true, name.toUpperCase());
    assert.equal(hasGrammar(name.toLowerCase()), true, name.toLowerCase());
  }
  for (const name of ['Text', '', 'Brainfuck', 'constructor', '__proto__', 'toString', 'hasOwnProperty']) assert.equal(hasGrammar(name), false, name);
});

test('unknown languages give escaped plain lines', () => {
  assert.deepEqual(highlightLines('Text', 'a < b && "c"\nint x;'), ['a &lt; b &amp;&amp; &quot;c&quot;', 'int x;']);
  assert.deepEqual(highlightLines('', "it's"), ['it&#39;s']);
  assert.deepEqual(highlightLines('Nope', ''), ['']);
});

test('one string per line; a trailing \\r is dropped, other \\r kept', () => {
  assert.deepEqual(highlightLines('C', ''), ['']);
  assert.deepEqual(highlightLines('C', '\n'), ['', '']);
  assert.deepEqual(highlightLines('C', 'int a;\r\nint b;\r\n'), ['<span class="hl-typ">int</span> a;', '<span class="hl-typ">int</span> b;', '']);
  assert.deepEqual(highlightLines('C', 'a\rb\r\r'), ['a\rb\r']);
});

test('spans never cross a line: a block comment is closed and reopened on every line', () => {
  assert.deepEqual(highlightLines('C', '/* a\n\nb */ x'), ['<span class="hl-com">/* a</span>', '', '<span class="hl-com">b */</span> x']);
});

test('lines over the length limit are escaped, not highlighted, and reset the state', () => {
  const long = '"' + 'x<'.repeat(MAX_LINE) + '/*';
  const out = highlightLines('C', `/* open\n${long}\nint y; /* c */`);
  assert.equal(out[0], '<span class="hl-com">/* open</span>');
  assert.equal(out[1], '&quot;' + 'x&lt;'.repeat(MAX_LINE) + '/*');
  assert.equal(out[2], '<span class="hl-typ">int</span> y; <span class="hl-com">/* c */</span>');
  const edge = 'int ' + 'a'.repeat(MAX_LINE - 4);
  assert.match(highlightLines('C', edge)[0]!, /^<span class="hl-typ">int<\/span> a+$/);
});

test('fenced code in Markdown keeps its own state across lines', () => {
  assert.deepEqual(lex('Markdown', '```c\n/* a\nb */ int\n```\n# h'), [
    [['pre', '```c']],
    [['com', '/* a']],
    [['com', 'b */'], ['', ' '], ['typ', 'int']],
    [['pre', '```']],
    [['hd', '# h']],
  ]);
});

// ---- escaping --------------------------------------------------------------------------

const ADVERSARIAL = [
  '</span><script>alert(1)</script>',
  '&amp; &lt; &#39; &quot; &',
  '"onload="alert(1)" \'x\'',
  '<span class="hl-kw">fake</span>',
  '<!-- </script> --> <![CDATA[ ]]> <? ?>',
  '`<img src=x onerror=alert(1)>` "a</span>b" \'</span>\' /* </span> */ // </span>',
  '# <b>&nbsp;</b>',
  '<<EOF </x> & "',
  '@@ -1 +1 @@ <x>',
  '- "<" : \'>\'',
  '[<a>](<b>) `<c>`',
  'key = "&" # <x>',
];

test('escaping is airtight: tags and entities in the input never survive as markup', () => {
  const langs = [...languages(), 'Text', 'nonexistent'];
  for (const language of langs) {
    const text = ADVERSARIAL.join('\n');
    const out = highlightWith(lexerFor(language), text, false);
    assert.equal(out.length, ADVERSARIAL.length);
    out.forEach((html, n) => {
      // tokens() accepts only our spans and entity-escaped text (no raw < > " ' and no bare &).
      const back = tokens(html).map((t) => t[1]).join('');
      assert.equal(back, ADVERSARIAL[n], `${language} line ${n}: ${html}`);
    });
  }
});

// ---- property test: random input in every language ----------------------------------------

/** Deterministic PRNG (mulberry32) so failures reproduce. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Fragments that open and close the constructs the lexers care about, mixed with single
// printable ASCII characters, so random text reaches the multi-line states often.
const CHUNKS = [
  '"', "'", '`', '"""', "'''", '/*', '*/', '//', '#', '--', '{-', '-}', '--[[', ']]', '[[', '<!--', '-->', '<<EOF', 'EOF', '<<-X', 'X',
  '\\', '\\"', 'r#"', '"#', 'R"(', ')"', '@@ -1,2 +1,2 @@', '+', '-', ' ', '  ', '\t', '```', '~~~', '<script>', '</script>', '<style>', '</style>',
  '<a b="c">', '&amp;', '&', '<', '>', 'key: ', '- ', ': |', '[x]', 'a = 1', '0x1F', '1e-9', '3.14f', 'x86', 'int', 'if', 'def', 'fn', 'help',
  '=begin', '=end', '=pod', '=cut', '$#', '${', '$(', '@x', '#[', '#include', '\r', 'é', '😀', '\u0000',
];

function randomText(next: () => number, lines: number): string {
  const out: string[] = [];
  for (let l = 0; l < lines; l++) {
    let s = '';
    const len = Math.floor(next() * 12);
    for (let k = 0; k < len; k++) {
      s += next() < 0.5 ? CHUNKS[Math.floor(next() * CHUNKS.length)] : String.fromCharCode(32 + Math.floor(next() * 95));
    }
    out.push(s);
  }
  return out.join('\n');
}

test('property: random input round-trips in every language, with well-formed spans on every line', () => {
  const next = rng(0x7a11);
  const langs = [...languages(), 'Text'];
  for (let round = 0; round < 60; round++) {
    for (const language of langs) {
      const text = randomText(next, 1 + Math.floor(next() * 12));
      const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
      const out = highlightWith(lexerFor(language), text, false);
      assert.equal(out.length, lines.length, `${language}: ${JSON.stringify(text)}`);
      out.forEach((html, n) => {
        // tokens() fails unless every span opened on the line is closed on it, unnested.
        const back = tokens(html).map((t) => t[1]).join('');
        assert.equal(back, lines[n], `${language} line ${n} of ${JSON.stringify(text)}: ${html}`);
      });
    }
  }
});

// ---- speed (measured, not asserted) ---------------------------------------------------------

function synthC(lines: number): string {
  const body = [
    '/*',
    ' * Copyright (C) 2024 Example. Licensed under the GPL.',
    ' */',
    '#include <linux/kernel.h>',
    '#define MAX_ENTRIES 0x1F',
    'static int probe(struct device *dev, const char *name, unsigned long flags)',
    '{',
    '\tstruct foo *p = kzalloc(sizeof(*p), GFP_KERNEL); // allocate',
    '\tif (!p)',
    '\t\treturn -ENOMEM;',
    '\tfor (int i = 0; i < MAX_ENTRIES; i++) {',
    '\t\tp->table[i] = (u32)(i * 3.14f) ^ 0xdeadbeef;',
    '\t\tpr_info("entry %d: %s\\n", i, name ? name : "<none>");',
    "\t\tif (name[i] == '\\0') break;",
    '\t}',
    '\treturn 0;',
    '}',
    '',
  ];
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) out.push(body[i % body.length]!);
  return out.join('\n');
}

function synthTs(lines: number): string {
  const body = [
    "import { readFile } from 'node:fs/promises';",
    '/** A documented interface. */',
    'export interface Options<T> { name: string; limit?: number; map: (x: T) => T }',
    'export async function load(path: string, opts: Options<number>): Promise<string[]> {',
    "  const text = await readFile(path, 'utf8');",
    '  const re = /^\\s*(\\w+)=(.*)$/gm; // key=value',
    '  const out: string[] = [];',
    '  for (const m of text.matchAll(re)) out.push(`${m[1]} -> ${opts.map(Number(m[2]))}`);',
    '  if (out.length > opts.limit ?? 1_000) throw new Error("too many: " + out.length);',
    '  return out.filter((x) => x !== null && x !== undefined);',
    '}',
    '',
  ];
  const out: string[] = [];
  for (let i = 0; out.length < lines; i++) out.push(body[i % body.length]!);
  return out.join('\n');
}

test('speed: 20,000 lines of C and of TypeScript complete (time is logged, not asserted)', (t) => {
  for (const [language, text] of [['C', synthC(20_000)], ['TypeScript', synthTs(20_000)]] as const) {
    highlightLines(language, text); // warm-up
    const t0 = performance.now();
    const out = highlightLines(language, text);
    const ms = performance.now() - t0;
    assert.equal(out.length, 20_000);
    // Still highlighted at the end: no state leaked from line to line (an unclosed string
    // or comment would leave the last thousand lines without keywords).
    assert.ok(out.slice(-1000).filter((l) => l.includes('<span class="hl-kw">')).length > 100, `${language}: keywords in the last 1000 lines`);
    t.diagnostic(`${language}: 20000 lines in ${ms.toFixed(1)} ms (${(20_000 / ms).toFixed(0)} lines/ms)`);
  }
});
