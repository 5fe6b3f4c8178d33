// Test helpers: a seeded PRNG, a generated corpus with the awkward cases (multi-byte
// UTF-8, the two non-ASCII code points that case-fold to ASCII, CRLF, very long lines,
// empty files, binary and oversized files), and temporary directories that clean up.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** mulberry32: small, fast, and reproducible from a seed. */
export function prng(seed: number): { next(): number; int(n: number): number; pick<T>(xs: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
    chance: (p) => next() < p,
  };
}

export function tempDir(prefix: string): { path: string; cleanup(): void } {
  const path = mkdtempSync(join(tmpdir(), `trawl-${prefix}-`));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export const WORDS = [
  'spin_lock',
  'irqsave',
  'mutex',
  'struct',
  'file_operations',
  'return',
  'static',
  'const',
  'int',
  'void',
  'kernel',
  'Kernel',
  'KERNEL',
  'key',
  'Key',
  'size',
  'Size',
  'sum',
  'café',
  'CAFÉ',
  'naïve',
  'Straße',
  '日本語',
  'données',
  'ÉLAN',
  'élan',
  '\u212Aelvin',
  'kelvin',
  'ſtream',
  'stream',
  'STREAM',
  'emoji😀',
  'foo',
  'bar',
  'baz',
  'foo_bar',
  'FooBar',
  'fooBar',
  'x',
  'y',
  'a',
  'aa',
  'aaa',
  '0x1f',
  '42',
  '3.14',
  '(',
  ')',
  '{',
  '}',
  ';',
  '->',
  '==',
  '&&',
  '||',
  '/*',
  '*/',
  '//',
  '#include',
  '<stdio.h>',
  '"str"',
  "'c'",
];

/** A line of code-like text from the vocabulary. */
function line(r: ReturnType<typeof prng>, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(r.pick(WORDS));
  const indent = r.chance(0.5) ? ' '.repeat(r.int(3) * 4) : r.chance(0.3) ? '\t' : '';
  return indent + parts.join(r.chance(0.7) ? ' ' : '');
}

export interface GeneratedCorpus {
  root: string;
  /** Files that must be recorded as skipped, with the reason. */
  skipped: Record<string, string>;
}

/**
 * Writes `files` text files under `root` in nested directories, plus the special cases.
 * Deterministic for a seed.
 */
export function generateCorpus(root: string, seed: number, files = 200): GeneratedCorpus {
  const r = prng(seed);
  const dirs = ['', 'src', 'src/net', 'src/fs', 'include', 'docs', 'tests', 'vendor/lib', 'ünïcode', '.hidden'];
  const exts = ['.c', '.h', '.go', '.ts', '.py', '.md', '.txt', ''];
  const write = (path: string, data: string | Uint8Array) => {
    const abs = join(root, path);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, data);
  };
  for (let i = 0; i < files; i++) {
    const dir = r.pick(dirs);
    const name = `${r.pick(['main', 'util', 'Kernel', 'spin', 'file', 'café', 'test_x', 'README'])}${i}${r.pick(exts)}`;
    const crlf = r.chance(0.15);
    const lines: string[] = [];
    const count = r.chance(0.1) ? 0 : 1 + r.int(60);
    for (let l = 0; l < count; l++) lines.push(r.chance(0.08) ? '' : line(r, 1 + r.int(8)));
    let text = lines.join(crlf ? '\r\n' : '\n');
    if (count > 0 && r.chance(0.7)) text += crlf ? '\r\n' : '\n';
    write(dir ? `${dir}/${name}` : name, text);
  }
  // The awkward cases, always present.
  write('empty.txt', '');
  write('only-newlines.txt', '\n\n\n');
  write('no-final-newline.c', 'int main() { return 42; }');
  write('long-line.js', `${Array.from({ length: 20000 }, (_, i) => `v${i % 97}=foo_bar;`).join(' ')}\n`);
  write('crlf.txt', 'first line\r\nKernel key\r\nlast\r\n');
  write('multibyte.txt', 'café Café CAFÉ\n日本語のテキスト foo\n😀 emoji😀 bar\n\u212Aelvin kelvin KELVIN\nſtream stream\n');
  write('bin/blob.bin', new Uint8Array([0x66, 0x6f, 0x6f, 0x00, 0x62, 0x61, 0x72]));
  write('big/huge.txt', 'foo '.repeat(600_000));
  return { root, skipped: { 'bin/blob.bin': 'binary', 'big/huge.txt': 'too-large' } };
}
