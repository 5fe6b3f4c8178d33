// The glob tool's patterns (daemon/mcp/glob.ts): a table of pattern, paths that must match
// and paths that must not, covering each piece of the syntax and its corners.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileGlob, GlobError, MAX_GLOB_EXPANSIONS } from '../../daemon/mcp/glob.ts';

const TABLE: Array<[pattern: string, matches: string[], misses: string[]]> = [
  // literal text
  ['README.md', ['README.md'], ['readme.md', 'docs/README.md', 'README.mdx', 'README-md']],
  ['a.b', ['a.b'], ['axb']],
  ['a+b(c)|d$', ['a+b(c)|d$'], ['aab(c)|d$', 'a+bc']],
  // `*`: within one segment
  ['*.ts', ['index.ts', '.ts', 'a.b.ts'], ['src/index.ts', 'index.tsx', 'index.js']],
  ['src/*.ts', ['src/a.ts'], ['src/lib/a.ts', 'a.ts', 'src/a.tsx']],
  ['src/*', ['src/a', 'src/.hidden'], ['src/a/b', 'src']],
  ['*/*', ['a/b'], ['a', 'a/b/c']],
  ['a*b', ['ab', 'axxb'], ['a/b', 'axb/c']],
  // `**`: any number of segments when it is a whole segment
  ['**/*.ts', ['a.ts', 'src/a.ts', 'src/deep/er/a.ts'], ['a.js', 'src/a.tsx']],
  ['src/**', ['src/a', 'src/a/b/c.go'], ['src', 'lib/src/a', 'srcx/a']],
  ['src/**/test.go', ['src/test.go', 'src/a/test.go', 'src/a/b/test.go'], ['test.go', 'src/atest.go', 'lib/src/test.go']],
  ['**', ['a', 'a/b/c'], []],
  ['**/test/**', ['test/a', 'x/test/y/z'], ['test', 'contest/a', 'x/tests/a']],
  ['a**b', ['ab', 'axyb'], ['a/b', 'ax/yb']],
  ['**.md', ['x.md'], ['doc/x.md']],
  // `?`: one character, never `/`
  ['?.c', ['a.c', 'é.c'], ['ab.c', '.c', '/.c']],
  ['a?b', ['axb'], ['a/b', 'ab']],
  // character classes
  ['[abc].go', ['a.go', 'c.go'], ['d.go', 'ab.go']],
  ['file[0-9].txt', ['file0.txt', 'file9.txt'], ['filea.txt', 'file10.txt']],
  ['[!a-y]*', ['z', 'Zed', '_x'], ['a', 'yes', 'b/c']],
  ['[^a]', ['b'], ['a']],
  ['a[/]b', [], ['a/b']],
  ['a[!x]b', ['ayb'], ['a/b', 'axb']],
  ['[]]', [']'], ['a']],
  ['[a-]', ['a', '-'], ['b']],
  ['x[', ['x['], ['x']],
  ['[\\]]x', [']x'], ['\\x']],
  // braces
  ['*.{ts,tsx}', ['a.ts', 'a.tsx'], ['a.js', 'a.t']],
  ['{src,lib}/**/*.js', ['src/a.js', 'lib/x/y.js'], ['test/a.js', 'srclib/a.js']],
  ['a{,b}c', ['ac', 'abc'], ['abbc']],
  ['{a,{b,c}d}', ['a', 'bd', 'cd'], ['ad', 'b', 'd']],
  ['{a}', ['{a}'], ['a']],
  ['{a,b', ['{a,b'], ['a', 'b']],
  ['{**/*.md,docs/*}', ['x/y.md', 'r.md', 'docs/a'], ['docs/a/b', 'x.txt']],
  ['[{]a,b}', ['{a,b}'], ['a', 'b']],
  // escapes
  ['\\*.md', ['*.md'], ['a.md']],
  ['\\{a,b\\}', ['{a,b}'], ['a', 'b']],
  ['a\\?', ['a?'], ['ab']],
  ['trailing\\', ['trailing\\'], ['trailing']],
  // a leading `/` or `./` is the repository root
  ['/src/*.c', ['src/a.c'], ['x/src/a.c']],
  ['./Makefile', ['Makefile'], ['x/Makefile']],
  // not case-insensitive; Unicode is characters, not code units
  ['Makefile', ['Makefile'], ['makefile']],
  ['??.txt', ['😀é.txt', 'ab.txt'], ['😀.txt']],
];

test('glob patterns: table', () => {
  for (const [pattern, matches, misses] of TABLE) {
    const glob = compileGlob(pattern);
    for (const path of matches) assert.ok(glob.test(path), `${pattern} should match ${path}`);
    for (const path of misses) assert.ok(!glob.test(path), `${pattern} should not match ${path}`);
  }
});

test('glob patterns: refused', () => {
  assert.throws(() => compileGlob(''), GlobError);
  assert.throws(() => compileGlob('/'), GlobError);
  assert.throws(() => compileGlob('[z-a]'), GlobError);
  assert.throws(() => compileGlob('x'.repeat(2000)), GlobError);
  // 2^9 = 512 expansions: over the limit rather than an exponential regular expression
  assert.throws(() => compileGlob('{a,b}'.repeat(9)), /expand to more than/);
  assert.doesNotThrow(() => compileGlob('{a,b}'.repeat(8)));
  assert.ok(2 ** 8 <= MAX_GLOB_EXPANSIONS && 2 ** 9 > MAX_GLOB_EXPANSIONS);
});
