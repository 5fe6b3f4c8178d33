// The C scanner in the core (core/assembly/cscan.ts) against the JavaScript scanner it was
// ported from (test/helpers/c-definitions-oracle.ts): the same definitions, in the same
// order, with the same names, lines, name offsets and parents, on C written to exercise
// every rule, on random C-ish token soup (every keyword among the pieces) and on random
// bytes; and the same answer (not C) for headers holding C++ or Objective-C.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cDefinitions, scanCFile } from '../../daemon/symbols/c-definitions.ts';
import { NO_NAME_START, wholeWordStart } from '../../daemon/symbols/name-range.ts';
import type { SymbolDef } from '../../daemon/symbols/ctags.ts';
import { oracleCDefinitions } from '../helpers/c-definitions-oracle.ts';
import { randomInputs } from '../helpers/symbols.ts';

/** Everything a definition says, parent included, as one string. */
const show = (d: SymbolDef): string =>
  `${d.kind} ${JSON.stringify(d.name)} ${d.line}-${d.endLine} @${d.at}${d.parent ? ` ${d.parent.kind}:${JSON.stringify(d.parent.name)}` : ''}`;

function same(path: string, src: Buffer, label: string): number {
  const want = oracleCDefinitions(path, src);
  const got = cDefinitions(path, src);
  if (want === undefined) {
    assert.equal(got, undefined, `${label}: the oracle reads ${path} as not C`);
    return 0;
  }
  assert.ok(got, `${label}: read as C`);
  assert.deepEqual(got.map(show), want.map(show), `${label}: ${JSON.stringify(src.toString('latin1').slice(0, 300))}`);
  return want.length;
}

const KEYWORDS = [
  'typedef',
  'struct',
  'union',
  'enum',
  'extern',
  'static',
  '__attribute__',
  '__attribute',
  '__declspec',
  'asm',
  '__asm__',
  '__asm',
  '__typeof__',
  '__typeof',
  'typeof',
  'sizeof',
  '_Alignas',
  'alignas',
  '_Static_assert',
  'static_assert',
  '__extension__',
  'unsigned',
  'signed',
  '__signed__',
  'int',
  'char',
  'short',
  'long',
  'float',
  'double',
  'void',
  '_Bool',
  '_Complex',
  'const',
  'volatile',
  'inline',
  'register',
  'auto',
  'restrict',
  '_Noreturn',
  '_Thread_local',
  '__thread',
  '__inline',
  '__inline__',
  '__const',
  '__volatile__',
  '__volatile',
  '__restrict',
  '__restrict__',
  '_Atomic',
  'return',
  'if',
  'else',
  'while',
  'for',
  'do',
  'switch',
  'case',
  'default',
  'goto',
  'break',
  'continue',
  'class',
  'namespace',
  'template',
  'operator',
];

const SHAPES = [
  '#define A 1\n#define B(x) \\\n  ((x) + 1)\n#if 0\n#define HIDDEN 2\nint hidden;\n#endif\n  #  define C /* a comment\n over two lines */ 3\n',
  'struct point {\n\tint x, y;\n\tunsigned flag:1;\n\tchar name[16];\n\tvoid (*cb)(int);\n\tunion { int u1; long u2; };\n\tstruct { int a; } anon;\n};\n',
  'typedef struct { int q; } qt;\ntypedef int (*fnp)(int);\ntypedef void (fn_t)(void *);\ntypedef unsigned long ulong;\n',
  'enum color { RED, GREEN = 2, BLUE = (1 << 3) | GREEN };\nenum {\n\tANON_E,\n};\n',
  'static int counter = 3, other;\nextern int ext;\nint proto(int);\nstatic const struct point pts[] = {\n\t{ 1, 2 },\n};\nint (*handler)(int) = 0;\n',
  'static int __init foo_init(void)\n{\n\tint local;\n\treturn 0;\n}\nSYSCALL_DEFINE3(open, const char __user *, filename)\n{\n\treturn 0;\n}\nint main(int argc, char **argv) { return 0; }\n',
  'static void f(void)\n{\n\tstruct local { int a; } v;\n\tenum { L1, L2 } e;\n\tstruct local *p = &v;\n\tunion { struct { int deep; } in; } u;\n}\n',
  '#ifdef A\nint v1;\n#else\nint v2;\n#endif\n#ifdef B\nvoid handle(int x)\n#else\nstatic inline void handle(int x)\n#endif\n{\n}\n',
  'void f(int a)\n{\n#ifdef A\n\tif (a) {\n#else\n\tif (!a) {\n#endif\n\t\ta++;\n\t}\n}\nint after;\n',
  '#ifdef __cplusplus\nextern "C" {\n#endif\nint api_call(int x) { return x; }\n#ifdef __cplusplus\n}\n#endif\n',
  'static int enabled __read_mostly = 1;\nstruct kvm_caps kvm_caps __read_mostly = {\n\t.x = 1,\n};\nchar buf[64] __aligned(8);\n',
  'struct t {\n#ifdef X86_32\n\tu32 start;\n#else\n\tu64 start;\n#endif\n};\n',
  'TRACE_EVENT(x,\n\tTP_fast_assign(\n\t\t__entry->rip = rip;\n\t)\n);\nint after;\n',
  '\ufeff#define BOM 1\nint caf\u00e9 = 1;\nstruct \u00fcber { int \u00e4; };\n',
  'struct caf\xe9 { struct { int x; } in; };\n',
  'int class;\nint template, namespace;\n',
  'int &ref = x;\nint * & pr, &&rr;\nstruct q { int &m; };\n',
  'struct a { struct b { struct c { int deep; } c1; } b1; } a1;\nenum { E1 = sizeof(struct { int z; }) };\n',
];

test("the core scanner gives the oracle's definitions on C shapes, as .c and as .h", () => {
  let defs = 0;
  SHAPES.forEach((src, i) => {
    for (const path of ['a.c', 'dir/b.h', 'caf\u00e9.c'])
      defs += same(path, Buffer.from(src, src.includes('\xe9') && !src.includes('\u00e9') ? 'latin1' : 'utf8'), `shape ${i} ${path}`);
  });
  assert.ok(defs > 100, `${defs} definitions compared`);
});

test("the core scanner gives the oracle's definitions on random token soup and random bytes", () => {
  const pieces = [
    ...KEYWORDS,
    '"C"',
    'x',
    'y',
    '__x',
    'name',
    '\u00e9',
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
    '&',
    '^',
    ':',
    '.',
    '+',
    '-',
    '#define A',
    '#define',
    '#if 0',
    '#if 0 // c',
    '#if 1',
    '#ifdef X',
    '#ifndef Y',
    '#else',
    '#elif',
    '#endif',
    '#include <a.h>',
    '\n',
    ' ',
    '\t',
    '/*',
    '*/',
    '//',
    '"',
    "'",
    '\\\n',
    '\\',
    '\\\r\n',
    '::',
    '@',
    '\r\n',
    '\f',
    '0x1f',
    '1e+5',
    '1.5e-3',
    '->',
    '#',
    'f(',
    '__read_mostly',
    '__aligned(8)',
    '\ufeff',
  ];
  let defs = 0;
  let i = 0;
  for (const src of randomInputs(1234, pieces, 3000, 2000, 400)) {
    for (const path of ['a.c', 'a.h']) defs += same(path, src, `case ${i}`);
    i++;
  }
  assert.ok(defs > 300, `${defs} definitions compared`);
});

/** Random C: declarations, aggregates, functions and directives of every shape the rules name, then mangled a little. */
function* randomC(seed: number, rounds: number): Generator<Buffer> {
  let s = seed;
  const rnd = (): number => (s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const names = ['a', 'b', 'foo', 'bar_baz', '__x', '__read_mostly', '__aligned', 'class', 'caf\u00e9', 'N1', 'SYSCALL_DEFINE3', 'u32'];
  const types = [
    'int',
    'unsigned long',
    'const char *',
    'struct s',
    'enum e',
    'u32',
    'static int',
    'static inline void',
    'extern int',
    'typedef int',
    '_Atomic int',
    'struct s *',
    'void (*',
  ];
  const ws = () => pick([' ', '\n', '\t', ' /* c */ ', '\\\n', ' // c\n', '\r\n']);
  const expr = (d: number): string =>
    d > 2 || rnd() < 0.4
      ? pick(['1', 'x', '"s{"', "'}'", '0x1f', 'sizeof(int)', 'a->b', '(1 << 3)'])
      : `${expr(d + 1)} ${pick(['+', '|', ',', '?', ':'])} ${expr(d + 1)}`;
  const decl = (d: number): string => {
    const t = pick(types);
    const n = pick(names);
    const r = rnd();
    if (r < 0.15) return `${t} ${n}(${pick(['void', 'int x', 'int, char *'])});`;
    if (r < 0.3) return `${t} ${n} = ${rnd() < 0.5 ? expr(0) : `{ ${expr(0)}, { ${expr(1)} } }`};`;
    if (r < 0.4) return `${t} ${n}[${expr(1)}], ${pick(['*', '&', '* const '])}${pick(names)}${ws()}${pick(['', '__read_mostly', '__aligned(8)'])};`;
    if (r < 0.5 && d < 3) return `${aggregate(d + 1)} ${pick(['', n, `*${n}`, `${n}, ${pick(names)}`])};`;
    if (r < 0.6) return `${t} (*${n})(int)${pick(['', ' = 0'])};`;
    if (r < 0.65) return `${n}(${expr(0)})`;
    return `${t}${ws()}${n}${pick([':3', '', ` = ${expr(0)}`])};`;
  };
  const aggregate = (d: number): string => {
    const kind = pick(['struct', 'union', 'enum']);
    const head = `${kind}${pick(['', ' __attribute__((packed))'])}${rnd() < 0.6 ? ` ${pick(names)}` : ''} {`;
    if (kind === 'enum')
      return `${head} ${Array.from({ length: Math.floor(rnd() * 4) }, () => `${pick(names)}${rnd() < 0.4 ? ` = ${expr(0)}` : ''}`).join(', ')}${pick(['', ','])} }`;
    return `${head}${ws()}${Array.from({ length: Math.floor(rnd() * 4) }, () => (rnd() < 0.15 ? directive() : decl(d))).join(ws())}${ws()}}`;
  };
  const body = (d: number): string =>
    Array.from({ length: Math.floor(rnd() * 5) }, () =>
      pick([
        () => `${pick(['if', 'while', 'for'])} (${expr(0)}) { ${d < 2 ? body(d + 1) : ''} }`,
        () => `${aggregate(2)} ${pick(names)};`,
        () => `${pick(['struct', 'union', 'enum'])} ${pick(names)} *p = ${expr(0)};`,
        () => directive(),
        () => `x = "${pick(['}', '{', '\\"', '/*'])}";`,
        () => `return ${expr(0)};`,
      ])(),
    ).join(ws());
  const directive = (): string =>
    `\n${pick(['#define M 1', '#define F(x) \\\n (x)', '#if 0\nint hidden;\n#endif', '#ifdef X', '#else', '#endif', '#if 0', '#elif Y', '#include <x.h>', '  #  define S /* */ 2', '#if 0 // off', '#undef M'])}\n`;
  const item = (): string =>
    pick([
      () => directive(),
      () => decl(0),
      () => aggregate(0) + pick([';', ' v;', ' *p, q;']),
      () => `typedef ${aggregate(1)} ${pick(names)}_t;`,
      () =>
        `${pick(['static ', '', 'static inline '])}${pick(['int', 'void', 'struct s *'])} ${pick(names)}(${pick(['void', 'int a', 'int a, char *b'])})${pick(['', ' __releases(l)', '\n#ifdef X\n'])}\n{\n${body(0)}\n}`,
      () => `extern "C" {\n${decl(0)}\n}`,
      () => `MACRO_CALL(${expr(0)})\n`,
    ])();
  for (let round = 0; round < rounds; round++) {
    const parts = Array.from({ length: 1 + Math.floor(rnd() * 12) }, item);
    let text = parts.join(ws());
    // Mangling: a few cuts and splices, so that braces, parentheses and directives come unbalanced.
    for (let m = Math.floor(rnd() * 3); m > 0; m--) {
      const at = Math.floor(rnd() * text.length);
      text =
        rnd() < 0.5
          ? text.slice(0, at) + text.slice(at + Math.floor(rnd() * 8))
          : text.slice(0, at) + pick(['{', '}', '(', ')', ';', '#if 0\n', '"', '/*', '\n#endif\n', '@', '::']) + text.slice(at);
    }
    yield Buffer.from(text);
  }
}

test("the core scanner gives the oracle's definitions on random C", () => {
  let defs = 0;
  let i = 0;
  for (const src of randomC(99, 4000)) {
    for (const path of ['a.c', 'a.h']) defs += same(path, src, `random C ${i}`);
    i++;
  }
  assert.ok(defs > 20_000, `${defs} definitions compared`);
});

test('comments and identifiers of every length against the 16-byte windows the core reads', () => {
  // A block comment ending at every offset of a window, with stars and newlines inside
  // and a file ending in one; identifiers of 1..40 bytes ending at every offset.
  let cases = 0;
  for (let pad = 0; pad < 20; pad++) {
    for (let len = 0; len < 40; len++) {
      const body = Array.from({ length: len }, (_, k) => (k % 7 === 3 ? '*' : k % 5 === 4 ? '\n' : 'c')).join('');
      for (const tail of [`*/ int after_${len};\n`, '*/', '*', '']) {
        same('a.c', Buffer.from(`${' '.repeat(pad)}/*${body}${tail}`), `comment ${pad} ${len} ${JSON.stringify(tail)}`);
        cases++;
      }
      const ident = `v${'x'.repeat(len)}`;
      same('a.c', Buffer.from(`${' '.repeat(pad)}int ${ident};\nstruct ${ident} { int ${ident}; };`), `ident ${pad} ${len}`);
      same('a.c', Buffer.from(`${' '.repeat(pad)}int ${ident}`), `ident at the end ${pad} ${len}`);
    }
  }
  assert.ok(cases > 3000);
});

test('each record says where its line first spells the name, as name-range.ts says it', () => {
  let checked = 0;
  for (const src of [
    ...SHAPES.map((x) => Buffer.from(x)),
    ...randomC(5, 1500),
    Buffer.from('int \u00e9t\u00e9, x\u00e9;\nint a; int b, a2, a;\n\u00e9 int c;'),
  ]) {
    const scan = scanCFile('a.c', src);
    if (!scan) continue;
    for (let i = 0; i < scan.count; i++) {
      const w = i * 8;
      if (scan.defs[w]! & 0x100) continue;
      const at: number = scan.defs[w + 5]!;
      const len: number = scan.defs[w + 2]!;
      const ascii: boolean = [...src.subarray(at, at + len)].every((b) => b < 0x80);
      const want = ascii ? wholeWordStart(src, at, len) : -1;
      assert.equal(scan.defs[w + 7], want < 0 ? NO_NAME_START : want, `${src.toString('latin1', at, at + len)} at ${at}`);
      checked++;
    }
  }
  assert.ok(checked > 5000, `${checked} records`);
});

test('a file with more definitions than the scanner first makes room for is scanned again with more', () => {
  // ~1 definition per 8 bytes; the core starts with room for one per 16.
  const src = Buffer.from(`${Array.from({ length: 20_000 }, (_, i) => `int v${i};`).join('\n')}\nstruct s {${'int m;'.repeat(5000)}};\n`);
  assert.equal(same('many.c', src, 'many'), 25_001);
});

test("structs nested deeper than the scanner's stack are left to ctags, as the oracle leaves them", () => {
  const deep = Buffer.from(`${'struct a {'.repeat(200_000)}int x;${'};'.repeat(200_000)}`);
  assert.equal(oracleCDefinitions('deep.c', deep), undefined);
  assert.equal(cDefinitions('deep.c', deep), undefined);
  // ... and the core scans the next file as usual.
  assert.equal(same('after.c', Buffer.from('int after;\n'), 'after'), 1);
});
