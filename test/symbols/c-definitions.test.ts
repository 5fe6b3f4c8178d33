// The C scanner (symbols/c-definitions.ts): a table of C shapes with the definitions each
// must give, and the same table against ctags itself wherever the two are meant to agree
// (every case but those marked with why they differ).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cDefinitions, isCPath } from '../../daemon/symbols/c-definitions.ts';
import { ctagsAvailable, sortSymbolDefs, type SymbolDef } from '../../daemon/symbols/ctags.ts';
import { checkAgainstCtags, inScannerOrder, randomInputs, showDef, type ScannerCase } from '../helpers/symbols.ts';
import { extractSymbols, scannedSymbols } from '../../daemon/symbols/extract.ts';
import { nameStarts } from '../../daemon/symbols/name-range.ts';

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A definition as the table writes it: "kind name line[-end] [parentKind:parent]"; an anonymous parent is `__anon`. */
const show = (d: SymbolDef): string => showDef(d, /__anon[0-9a-f]+/g, '__anon');

function scan(src: string, path = 'a.c'): string[] {
  const defs = cDefinitions(path, bytes(src));
  assert.ok(defs, 'read as C');
  return sortSymbolDefs(defs).map(show);
}

type Case = ScannerCase & { path?: string };

const CASES: Case[] = [
  {
    name: 'macros, one line and continued, and #if 0',
    src: '#define A 1\n#define B(x) \\\n  ((x) + 1)\n#if 0\n#define HIDDEN 2\nint hidden;\n#endif\n  #  define C /* a comment\n over two lines */ 3\n',
    want: ['macro A 1', 'macro B 2-3', 'macro C 8-9'],
  },
  {
    name: 'struct members: declarator lists, bit-fields, arrays, pointers to functions, nested anonymous union',
    src: 'struct point {\n\tint x, y;\n\tunsigned flag:1;\n\tchar name[16];\n\tvoid (*cb)(int);\n\tunion { int u1; long u2; };\n\tstruct { int a; } anon;\n};\n',
    want: [
      'struct point 1-8',
      'member x 2 struct:point',
      'member y 2 struct:point',
      'member flag 3 struct:point',
      'member name 4 struct:point',
      'member cb 5 struct:point',
      'member u1 6 union:point::__anon',
      'member u2 6 union:point::__anon',
      'member a 7 struct:point::__anon',
      'member anon 7 struct:point',
    ],
  },
  {
    name: 'a member declarator list over lines ends at its comma',
    src: 'struct s {\n\tunsigned char offset,\n\t\tlength;\n};\n',
    want: ['struct s 1-4', 'member offset 2 struct:s', 'member length 3 struct:s'],
  },
  {
    name: 'typedefs: of an anonymous struct, of a pointer to function, of a function type',
    src: 'typedef struct { int q; } qt;\ntypedef int (*fnp)(int);\ntypedef void (fn_t)(void *);\ntypedef unsigned long ulong;\n',
    want: ['member q 1 struct:__anon', 'typedef qt 1', 'typedef fnp 2', 'typedef fn_t 3', 'typedef ulong 4'],
  },
  {
    name: 'enums, named and anonymous, with values and expressions',
    src: 'enum color { RED, GREEN = 2, BLUE = (1 << 3) | GREEN };\nenum {\n\tANON_E,\n};\n',
    want: ['enum color 1', 'enumerator BLUE 1 enum:color', 'enumerator GREEN 1 enum:color', 'enumerator RED 1 enum:color', 'enumerator ANON_E 3 enum:__anon'],
  },
  {
    name: 'variables: several declarators, initializers in braces, no prototypes, no externs',
    src: 'static int counter = 3, other;\nextern int ext;\nint proto(int);\nstatic const struct point pts[] = {\n\t{ 1, 2 },\n};\nint (*handler)(int) = 0;\n',
    want: ['variable counter 1', 'variable other 1', 'variable pts 4-6', 'variable handler 7'],
  },
  {
    name: 'functions: attributes, a macro-named definition, one line, and a struct forward declaration',
    src: 'static int __init foo_init(void)\n{\n\tint local;\n\treturn 0;\n}\nSYSCALL_DEFINE3(open, const char __user *, filename, int, flags, umode_t, mode)\n{\n\treturn 0;\n}\nint main(int argc, char **argv) { return 0; }\nstruct fwd;\nstatic inline __attribute__((always_inline)) int g(void) { return 1; }\n',
    want: ['function foo_init 1-5', 'function SYSCALL_DEFINE3 6-9', 'function main 10', 'function g 12'],
  },
  {
    name: 'comments, strings and character constants hide braces, quotes and directives',
    src: 'static const char *s = "}{ \\" /* #define NOT";\nstatic char c = \'{\';\n// int not_a_var;\n/* int neither; */\nint after;\n',
    want: ['variable s 1', 'variable c 2', 'variable after 5'],
  },
  {
    name: 'a struct, union or enum defined in a function has the function as parent',
    src: 'static void f(void)\n{\n\tstruct local { int a; } v;\n\tenum { L1, L2 } e;\n\tstruct local *p = &v;\n}\n',
    want: ['function f 1-6', 'struct local 3 function:f', 'member a 3 struct:f::local', 'enumerator L1 4 enum:f::__anon', 'enumerator L2 4 enum:f::__anon'],
  },
  {
    name: 'both branches of a top-level #ifdef; one function header written per branch',
    src: '#ifdef A\nint v1;\n#else\nint v2;\n#endif\n#ifdef B\nvoid handle(int x)\n#else\nstatic inline void handle(int x)\n#endif\n{\n}\n',
    want: ['variable v1 2', 'variable v2 4', 'function handle 7-12'],
  },
  {
    name: 'a branch that would unbalance the braces is skipped',
    src: 'void f(int a)\n{\n#ifdef A\n\tif (a) {\n#else\n\tif (!a) {\n#endif\n\t\ta++;\n\t}\n}\nint after;\n',
    want: ['function f 1-10', 'variable after 11'],
  },
  {
    name: 'a header that holds C++ is left to ctags; `class` in a .c file is a name',
    src: 'int class;\n',
    want: ['variable class 1'],
  },
  {
    name: 'extern "C" blocks are transparent',
    path: 'a.h',
    src: '#ifdef __cplusplus\nextern "C" {\n#endif\nint api_call(int x) { return x; }\n#ifdef __cplusplus\n}\n#endif\n',
    want: ['function api_call 4'],
  },
  // Below, the cases with `differs` are where ctags is wrong or reads less: checked against
  // the table only.
  {
    name: 'an annotation after the name is not the name',
    src: 'static int enabled __read_mostly = 1;\nstruct kvm_caps kvm_caps __read_mostly = {\n\t.x = 1,\n};\nchar buf[64] __aligned(8);\n',
    want: ['variable enabled 1', 'variable kvm_caps 2-4', 'variable buf 5'],
    differs: 'ctags names both variables `__read_mostly`',
  },
  {
    name: 'a type then a name that starts with __ is a member named so',
    src: 'struct st {\n\tsigset_t __unused;\n\t__u32 __pad;\n};\n',
    want: ['struct st 1-4', 'member __unused 2 struct:st', 'member __pad 3 struct:st'],
  },
  {
    name: 'a macro used without `;` before a function does not name it',
    src: 'MODULE_NAME("x")\n\nint acpi_create(void)\n{\n\treturn 0;\n}\n',
    want: ['function acpi_create 3-6'],
  },
  {
    name: 'members of every branch of an #ifdef in a struct',
    src: 'struct t {\n#ifdef X86_32\n\tu32 start;\n#else\n\tu64 start;\n#endif\n};\n',
    want: ['struct t 1-7', 'member start 3 struct:t', 'member start 5 struct:t'],
    differs: 'ctags reads only the first branch inside braces',
  },
  {
    name: 'statements inside macro arguments are not declarations',
    src: 'TRACE_EVENT(x,\n\tTP_fast_assign(\n\t\t__entry->rip = rip;\n\t\t__entry->exit = 1;\n\t)\n);\nint after;\n',
    want: ['variable after 7'],
  },
];

for (const c of CASES) {
  test(`C scanner: ${c.name}`, () => {
    assert.deepEqual(scan(c.src, c.path), inScannerOrder(c.want, show), c.src);
  });
}

test('C scanner: ctags gives the same definitions wherever the table says it does, and others where it says why', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, () => {
  checkAgainstCtags(
    CASES,
    (c) => c.path ?? 'a.c',
    (c) => scan(c.src, c.path),
    show,
  );
});

test('C scanner: headers with C++ or Objective-C are not read; malformed C is read as far as it goes', () => {
  assert.equal(cDefinitions('a.h', bytes('class A { int x; };\n')), undefined);
  assert.equal(cDefinitions('a.h', bytes('namespace n { int x; }\n')), undefined);
  assert.equal(cDefinitions('a.h', bytes('int a = b::c;\n')), undefined);
  assert.equal(cDefinitions('a.h', bytes('@interface Foo\n@end\n')), undefined);
  // Unbalanced, cut short, nested deep: no throw.
  for (const src of ['struct s { int a;', 'int f(void) {', '}}}} int x; ((((', '"unterminated\nint y;\n', 'struct a {'.repeat(100_000)]) {
    const defs = cDefinitions('a.c', bytes(src));
    assert.ok(defs === undefined || Array.isArray(defs));
  }
  assert.deepEqual(scan('}}}} int x;\n'), ['variable x 1']);
  // A byte order mark, CRLF line ends.
  assert.deepEqual(scan('\ufeff#define FIRST 1\r\nint second;\r\n'), ['macro FIRST 1', 'variable second 2']);
});

test('C scanner: which paths it reads', () => {
  assert.equal(isCPath('a/b.c'), true);
  assert.equal(isCPath('b.h'), true);
  assert.equal(isCPath('b.cc'), false);
  assert.equal(isCPath('b.hpp'), false);
  assert.equal(isCPath('.c'), false);
  assert.equal(isCPath('Makefile'), false);
});

test('C scanner: each definition says where its name is, and the name ranges are those of the line rule', () => {
  const src = 'struct foo foo;\nint bar(void) { return 0; }\n#define BAZ bar\nenum e { E1 };\n';
  const content = bytes(src);
  const defs = scannedSymbols('a.c', content)!;
  for (const d of defs) assert.equal(content.toString('utf8', d.at!, d.at! + d.name.length), d.name);
  const lines = defs.map((d) => d.line);
  const names = defs.map((d) => d.name);
  // With the offsets (the first whole word on the line wins: `foo` the variable is spelled
  // first as the struct's tag) and without them, the same starts.
  assert.deepEqual(
    [
      ...nameStarts(
        content,
        lines,
        names,
        defs.map((d) => d.at),
      ),
    ],
    [...nameStarts(content, lines, names)],
  );
  const foo = defs.findIndex((d) => d.name === 'foo');
  assert.equal(
    nameStarts(
      content,
      lines,
      names,
      defs.map((d) => d.at),
    )[foo],
    src.indexOf('foo'),
  );
});

test('extractSymbols: C files by the scanner, other files and C++ headers by ctags, in input order', {
  skip: !ctagsAvailable() && 'universal-ctags is not installed',
}, () => {
  const r = extractSymbols([
    { path: 'x.py', content: bytes('def hello():\n    pass\n') },
    { path: 'a.c', content: bytes('int one(void) { return 1; }\n') },
    { path: 'b.h', content: bytes('class Widget { int w; };\n') },
    { path: 'big.c', content: bytes('int x;\n'.repeat(200_000)) },
  ]);
  assert.deepEqual(r.symbols[0]!.map(show), ['function hello 1-2']);
  assert.deepEqual(r.symbols[1]!.map(show), ['function one 1']);
  assert.ok(r.symbols[1]![0]!.at === 4);
  assert.ok(
    r.symbols[2]!.some((d) => d.kind === 'class' && d.name === 'Widget'),
    JSON.stringify(r.symbols[2]),
  );
  assert.deepEqual(r.symbols[3], [], 'over the size limit: none, as with ctags');
  assert.equal(r.failed + r.timedOut, 0);
});

test('C scanner: random bytes and random C-ish token soup end, and every definition is well formed', () => {
  const frags = [
    'struct',
    'union',
    'enum',
    'typedef',
    'extern',
    '"C"',
    'static',
    'int',
    'x',
    'y',
    '__attribute__',
    '((',
    '))',
    '(',
    ')',
    '{',
    '}',
    '[',
    ']',
    ';',
    ',',
    '=',
    '*',
    ':',
    '#define A',
    '#if 0',
    '#ifdef X',
    '#else',
    '#elif',
    '#endif',
    '\n',
    ' ',
    '/*',
    '*/',
    '//',
    '"',
    "'",
    '\\\n',
    '\\',
    '::',
    'class',
    '@',
    '\r\n',
    '0x1f',
    '1e+5',
    '->',
    '#',
    'f(',
    '__read_mostly',
  ];
  let i = 0;
  for (const src of randomInputs(7, frags, 600, 2000)) {
    for (const path of ['a.c', 'a.h']) {
      const defs = cDefinitions(path, src);
      for (const d of defs ?? []) {
        assert.ok(d.name !== '' && d.line >= 1 && d.endLine >= d.line && d.at! >= 0 && d.at! < src.length, `case ${i}: ${JSON.stringify(d)}`);
        // The identifier there (letters, digits, _, $ and any byte >= 0x80), decoded as UTF-8.
        let end = d.at!;
        while ((end < src.length && /[A-Za-z0-9_$]/.test(String.fromCharCode(src[end]!))) || src[end]! >= 0x80) end++;
        assert.equal(src.toString('utf8', d.at!, end), d.name, `case ${i}: the name is where it says`);
      }
    }
    i++;
  }
});
