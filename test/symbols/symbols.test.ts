import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ctagsAvailable, extractSymbols, type SymbolDef } from '../../daemon/symbols/ctags.ts';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The one definition named `name` of kind `kind` (fails when absent or repeated). */
function one(defs: SymbolDef[], name: string, kind: string): SymbolDef {
  const found = defs.filter((d) => d.name === name && d.kind === kind);
  assert.equal(found.length, 1, `${kind} ${name} in ${JSON.stringify(defs)}`);
  return found[0]!;
}

function assertSorted(defs: SymbolDef[]): void {
  for (let i = 1; i < defs.length; i++) {
    const a = defs[i - 1]!;
    const b = defs[i]!;
    assert.ok(a.line < b.line || (a.line === b.line && a.name <= b.name), `order at ${i}: ${JSON.stringify([a, b])}`);
  }
}

const C_SRC = `#define MAX 10
struct point {
  int x;
  int y;
};
static int add(int a, int b)
{
  return a + b;
}
int global_counter;
`;

const H_SRC = `#ifndef LIST_H
#define LIST_H
struct list_head {
  struct list_head *next, *prev;
};
static inline void INIT_LIST_HEAD(struct list_head *list)
{
  list->next = list;
}
#endif
`;

const GO_SRC = `package main

import "fmt"

type Server struct {
\tName string
}

func (s *Server) Start() error {
\treturn nil
}

func main() {
\tfmt.Println("hi")
}
`;

const PY_SRC = `import os

class Greeter:
    def __init__(self, name):
        self.name = name

    def greet(self):
        return "hi " + self.name

def helper():
    pass
`;

const TS_SRC = `export interface Shape {
  area(): number;
}

export class Circle implements Shape {
  constructor(private r: number) {}
  area(): number {
    return Math.PI * this.r * this.r;
  }
}

export function makeCircle(r: number): Circle {
  return new Circle(r);
}
`;

const JS_SRC = `function add(a, b) {
  return a + b;
}

class Counter {
  increment() {
    this.n++;
  }
}
`;

const JAVA_SRC = `package demo;

public class Main {
    private int count;

    public static void main(String[] args) {
        System.out.println("hi");
    }

    interface Inner {
        void run();
    }
}
`;

/** `int fn_<tag>(void) { return 0; }` on line 2 of a small C file. */
const smallC = (tag: string): Uint8Array => bytes(`/* ${tag} */\nint fn_${tag}(void) { return 0; }\n`);
const assertSmallC = (defs: SymbolDef[] | undefined, tag: string): void =>
  assert.deepEqual(defs, [{ name: `fn_${tag}`, kind: 'function', line: 2, endLine: 2 }]);

test('ctags is available', () => {
  assert.equal(ctagsAvailable(), true);
  assert.equal(ctagsAvailable(), true); // cached
});

test('definitions of C, Go, Python, TypeScript, JavaScript and Java', () => {
  const r = extractSymbols([
    { path: 'src/deep/dir/point.c', content: bytes(C_SRC) },
    { path: 'include/linux/list.h', content: bytes(H_SRC) },
    { path: 'cmd/server/main.go', content: bytes(GO_SRC) },
    { path: 'lib/greeter.py', content: bytes(PY_SRC) },
    { path: 'src/shapes.ts', content: bytes(TS_SRC) },
    { path: 'web/util.js', content: bytes(JS_SRC) },
    { path: 'src/main/java/demo/Main.java', content: bytes(JAVA_SRC) },
  ]);
  assert.equal(r.failed, 0);
  assert.equal(r.timedOut, 0);
  assert.equal(r.symbols.length, 7);
  const [c, h, go, py, ts, js, java] = r.symbols as [SymbolDef[], SymbolDef[], SymbolDef[], SymbolDef[], SymbolDef[], SymbolDef[], SymbolDef[]];
  for (const defs of r.symbols) assertSorted(defs);

  // C: file-scoped definitions (static function, macro and struct of a .c file) are kept.
  assert.deepEqual(one(c, 'MAX', 'macro'), { name: 'MAX', kind: 'macro', line: 1, endLine: 1 });
  assert.deepEqual(one(c, 'point', 'struct'), { name: 'point', kind: 'struct', line: 2, endLine: 5 });
  assert.deepEqual(one(c, 'x', 'member'), { name: 'x', kind: 'member', line: 3, endLine: 3, parent: { name: 'point', kind: 'struct' } });
  assert.deepEqual(one(c, 'y', 'member').parent, { name: 'point', kind: 'struct' });
  assert.deepEqual(one(c, 'add', 'function'), { name: 'add', kind: 'function', line: 6, endLine: 9 });
  assert.deepEqual(one(c, 'global_counter', 'variable'), { name: 'global_counter', kind: 'variable', line: 10, endLine: 10 });
  assert.deepEqual(
    c.map((d) => d.name),
    ['MAX', 'point', 'x', 'y', 'add', 'global_counter'],
  );

  // Header (a path with directories; ctags parses .h as C++ but the kinds are the same).
  assert.equal(one(h, 'LIST_H', 'macro').line, 2);
  assert.deepEqual(one(h, 'list_head', 'struct'), { name: 'list_head', kind: 'struct', line: 3, endLine: 5 });
  assert.deepEqual(one(h, 'next', 'member').parent, { name: 'list_head', kind: 'struct' });
  assert.deepEqual(one(h, 'INIT_LIST_HEAD', 'function'), { name: 'INIT_LIST_HEAD', kind: 'function', line: 6, endLine: 9 });

  // Go: scopes are package-qualified; a method's parent is its receiver type.
  assert.deepEqual(one(go, 'Server', 'struct'), { name: 'Server', kind: 'struct', line: 5, endLine: 7, parent: { name: 'main', kind: 'package' } });
  assert.deepEqual(one(go, 'Start', 'func'), { name: 'Start', kind: 'func', line: 9, endLine: 11, parent: { name: 'main.Server', kind: 'struct' } });
  assert.deepEqual(one(go, 'main', 'func'), { name: 'main', kind: 'func', line: 13, endLine: 15, parent: { name: 'main', kind: 'package' } });
  assert.equal(one(go, 'Name', 'member').parent?.name, 'main.Server');

  // Python: methods are "member"s of their class.
  assert.deepEqual(one(py, 'Greeter', 'class'), { name: 'Greeter', kind: 'class', line: 3, endLine: 8 });
  assert.deepEqual(one(py, 'greet', 'member'), { name: 'greet', kind: 'member', line: 7, endLine: 8, parent: { name: 'Greeter', kind: 'class' } });
  assert.deepEqual(one(py, '__init__', 'member').parent, { name: 'Greeter', kind: 'class' });
  assert.deepEqual(one(py, 'helper', 'function'), { name: 'helper', kind: 'function', line: 10, endLine: 11 });

  // TypeScript: ctags 5.9 gives no end lines here.
  assert.deepEqual(one(ts, 'Shape', 'interface'), { name: 'Shape', kind: 'interface', line: 1, endLine: 1 });
  assert.deepEqual(one(ts, 'Circle', 'class'), { name: 'Circle', kind: 'class', line: 5, endLine: 5 });
  const tsAreas = ts.filter((d) => d.name === 'area' && d.kind === 'method');
  assert.deepEqual(
    tsAreas.map((d) => [d.line, d.parent]),
    [
      [2, { name: 'Shape', kind: 'interface' }],
      [7, { name: 'Circle', kind: 'class' }],
    ],
  );
  assert.deepEqual(one(ts, 'makeCircle', 'function'), { name: 'makeCircle', kind: 'function', line: 12, endLine: 12 });

  // JavaScript
  assert.deepEqual(one(js, 'add', 'function'), { name: 'add', kind: 'function', line: 1, endLine: 1 });
  assert.deepEqual(one(js, 'Counter', 'class').line, 5);
  assert.deepEqual(one(js, 'increment', 'method'), { name: 'increment', kind: 'method', line: 6, endLine: 6, parent: { name: 'Counter', kind: 'class' } });

  // Java: nested scopes are dot-qualified.
  assert.deepEqual(one(java, 'Main', 'class'), { name: 'Main', kind: 'class', line: 3, endLine: 13 });
  assert.deepEqual(one(java, 'count', 'field'), { name: 'count', kind: 'field', line: 4, endLine: 4, parent: { name: 'Main', kind: 'class' } });
  assert.deepEqual(one(java, 'main', 'method'), { name: 'main', kind: 'method', line: 6, endLine: 8, parent: { name: 'Main', kind: 'class' } });
  assert.deepEqual(one(java, 'run', 'method').parent, { name: 'Main.Inner', kind: 'interface' });
});

test('files without a parser, empty and oversized files get empty lists without counting as failures', () => {
  const big = bytes(`int too_big(void) { return 0; }\n${'/* padding */\n'.repeat(100)}`);
  const r = extractSymbols(
    [
      { path: 'docs/notes.txt', content: bytes('Some notes.\nint not_code(void) { return 0; }\n') },
      { path: 'empty.c', content: new Uint8Array(0) },
      { path: 'big.c', content: big },
      { path: 'ok.c', content: smallC('ok') },
      { path: 'LICENSE', content: bytes('Permission is hereby granted, free of charge\n') },
    ],
    { maxFileBytes: 1000 },
  );
  assert.ok(big.byteLength > 1000);
  assert.deepEqual(r.symbols, [[], [], [], [{ name: 'fn_ok', kind: 'function', line: 2, endLine: 2 }], []]);
  assert.equal(r.failed, 0);
  assert.equal(r.timedOut, 0);
  assert.deepEqual(extractSymbols([]), { symbols: [], failed: 0, timedOut: 0 });
});

test('an extension-less script is parsed by its #! line', () => {
  const r = extractSymbols([{ path: 'bin/tool', content: bytes('#!/usr/bin/env python3\ndef main():\n    pass\n') }]);
  assert.deepEqual(r.symbols, [[{ name: 'main', kind: 'function', line: 2, endLine: 3 }]]);
});

test('odd paths (spaces, non-ASCII, a newline, a lone surrogate) only serve language detection', () => {
  const r = extractSymbols([
    { path: 'dir with space/été/x.c', content: smallC('a') },
    { path: 'new\nline.c', content: smallC('b') },
    { path: 'bad\ud800name.c', content: smallC('c') },
    { path: '', content: smallC('d') },
    { path: 'last.c', content: smallC('e') },
  ]);
  assert.equal(r.failed, 0);
  assertSmallC(r.symbols[0], 'a');
  assertSmallC(r.symbols[1], 'b');
  assertSmallC(r.symbols[2], 'c');
  assert.deepEqual(r.symbols[3], []); // no name, no language
  assertSmallC(r.symbols[4], 'e');
});

test('order is preserved across a batch of 300 files', () => {
  const files: Array<{ path: string; content: Uint8Array }> = [];
  for (let i = 0; i < 300; i++) {
    const pad = '\n'.repeat(i % 7);
    if (i % 3 === 0) files.push({ path: `pkg${i % 10}/m${i}.py`, content: bytes(`${pad}def py_${i}():\n    return ${i}\n`) });
    else if (i % 3 === 1) files.push({ path: `src/${i}/f.c`, content: bytes(`${pad}int c_${i}(void) { return ${i}; }\nint v_${i};\n`) });
    else files.push({ path: `doc/n${i}.txt`, content: bytes(`note ${i}\n`) });
  }
  const r = extractSymbols(files);
  assert.equal(r.failed, 0);
  assert.equal(r.timedOut, 0);
  assert.equal(r.symbols.length, 300);
  for (let i = 0; i < 300; i++) {
    const line = (i % 7) + 1;
    const want =
      i % 3 === 0
        ? [{ name: `py_${i}`, kind: 'function', line, endLine: line + 1 }]
        : i % 3 === 1
          ? [
              { name: `c_${i}`, kind: 'function', line, endLine: line },
              { name: `v_${i}`, kind: 'variable', line: line + 1, endLine: line + 1 },
            ]
          : [];
    assert.deepEqual(r.symbols[i], want, `file ${i}`);
  }
});

test('identical definitions are reported once and lists are sorted by (line, name)', () => {
  // Interactive ctags neither sorts nor deduplicates: it prints `zeta` twice for `int zeta, alpha, zeta, mid;`.
  const c = `#if A\n#define DUP 1\n#else\n#define DUP 2\n#endif\nint zeta, alpha, zeta, mid;\nstruct s { int m; int m; };\n`;
  const r = extractSymbols([
    { path: 'dup.c', content: bytes(c) },
    { path: 'dup.py', content: bytes('x = 1; x = 2\nclass A: pass\nclass A: pass\n') },
  ]);
  assert.deepEqual(
    r.symbols[0]!.map((d) => [d.name, d.kind, d.line]),
    [
      ['DUP', 'macro', 2],
      ['DUP', 'macro', 4],
      ['alpha', 'variable', 6],
      ['mid', 'variable', 6],
      ['zeta', 'variable', 6],
      ['m', 'member', 7],
      ['s', 'struct', 7],
    ],
  );
  assert.deepEqual(
    r.symbols[1]!.map((d) => [d.name, d.kind, d.line]),
    [
      ['x', 'variable', 1],
      ['A', 'class', 2],
      ['A', 'class', 3],
    ],
  );
});

// 200k nested braces overflow the stack of ctags 5.9's C parser (SIGSEGV).
const CRASHER = bytes(`int before;\n${'{'.repeat(200_000)}${'}'.repeat(200_000)}\n`);
function ctagsCrashesOnCrasher(): boolean {
  const head = `${JSON.stringify({ command: 'generate-tags', filename: 'crash.c', size: CRASHER.byteLength })}\n`;
  const r = spawnSync('ctags', ['--options=NONE', '--_interactive', '--output-format=json'], {
    input: Buffer.concat([Buffer.from(head), CRASHER]),
    stdio: ['pipe', 'pipe', 'ignore'],
    timeout: 30_000,
  });
  return r.signal !== null || r.status !== 0;
}

test('a file that crashes ctags fails alone: files before and after it keep their symbols', (t) => {
  if (!ctagsCrashesOnCrasher()) {
    t.skip('this ctags does not crash on deep nesting');
    return;
  }
  const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
  const files = tags.map((tag) => ({ path: `${tag}.c`, content: smallC(tag) }));
  files.splice(3, 0, { path: 'crash.c', content: CRASHER });
  files.push({ path: 'crash2.c', content: CRASHER }); // the last file of a batch, too
  const r = extractSymbols(files);
  assert.equal(r.failed, 2);
  assert.equal(r.timedOut, 0);
  assert.deepEqual(r.symbols[3], []);
  assert.deepEqual(r.symbols[7], []);
  for (const [k, i] of [0, 1, 2, 4, 5, 6].entries()) assertSmallC(r.symbols[i], tags[k]!);
});

test('a ctags warning (an empty key in JavaScript) fails nothing: that file and the ones after it keep their symbols', () => {
  const tags = ['a', 'b', 'c', 'd'];
  const files = tags.map((tag) => ({ path: `${tag}.c`, content: smallC(tag) }));
  // ctags says {"_type": "error", "message": "ignoring null tag ...", "warning": true} here.
  files.splice(2, 0, { path: 'warns.js', content: bytes('var table = { "": 1 };\nfunction afterWarning() {}\n') });
  const r = extractSymbols(files);
  assert.equal(r.failed, 0);
  assert.deepEqual(
    r.symbols[2]!.map((d) => d.name),
    ['table', 'afterWarning'],
  );
  for (const [k, i] of [0, 1, 3, 4].entries()) assertSmallC(r.symbols[i], tags[k]!);
});

/** ~`size` bytes of C declaring two-to-three-byte-apart variables: about 1/4 of ctags' usual speed. */
function denseC(size: number): Uint8Array {
  const parts: string[] = [];
  let len = 0;
  for (let i = 0; len < size; i++) {
    const s = `${i % 100 === 0 ? 'int ' : ''}v${i}${i % 100 === 99 ? ';\n' : ','}`;
    parts.push(s);
    len += s.length;
  }
  parts.push(';\n');
  return bytes(parts.join(''));
}

test('a file that takes too long is timed out alone: the small files around it keep their symbols', (t) => {
  // Budget of the first spawn: 400 ms * (1 + 16 MB / 40 MiB) ≈ 560 ms, while
  // ctags needs several times that for this file even on an idle, fast core.
  // The small files are parsed well inside their own 400 ms.
  const big = denseC(16 << 20);
  const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
  const files = tags.map((tag) => ({ path: `src/${tag}.c`, content: smallC(tag) }));
  files.splice(3, 0, { path: 'src/generated.c', content: big });
  const t0 = Date.now();
  const r = extractSymbols(files, { perFileTimeoutMs: 400, maxFileBytes: 64 << 20 });
  const elapsed = Date.now() - t0;
  assert.equal(r.timedOut, 1);
  assert.equal(r.failed, 0);
  assert.deepEqual(r.symbols[3], []);
  for (const [k, i] of [0, 1, 2, 4, 5, 6].entries()) assertSmallC(r.symbols[i], tags[k]!);
  // The work, not the clock: one file timed out and the six others were parsed. How long
  // it took depends on the machine (a budget of ~560 ms for the big file's process).
  t.diagnostic(`extraction took ${elapsed} ms`);
});

test('with a 1 ms budget every file may time out, but extraction ends and accounts for every file', () => {
  const big = denseC(4 << 20);
  const tags = ['a', 'b', 'c', 'd', 'e', 'f'];
  const files = tags.map((tag) => ({ path: `${tag}.c`, content: smallC(tag) }));
  files.splice(2, 0, { path: 'generated.c', content: big });
  const r = extractSymbols(files, { perFileTimeoutMs: 1, maxFileBytes: 64 << 20 });
  assert.equal(r.symbols.length, files.length);
  assert.equal(r.failed, 0);
  assert.ok(r.timedOut >= 1, 'the big file cannot be parsed in ~1 ms');
  assert.deepEqual(r.symbols[2], []);
  let completed = 0;
  for (const [k, i] of [0, 1, 3, 4, 5, 6].entries()) {
    if (r.symbols[i]!.length === 0) continue; // this one timed out too
    assertSmallC(r.symbols[i], tags[k]!);
    completed++;
  }
  assert.equal(completed + r.timedOut, files.length);
});
