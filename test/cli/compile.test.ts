// The compiled build (scripts/compile.js): what it compiles, that the output runs with its
// imports rewritten, and when it counts as stale. Each case builds a small tree of its own
// (core/ and daemon/ in a temporary folder), never the checkout's dist/, which other tests
// running in parallel load.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { compile, ENTRIES, isFresh, sourceFiles } from '../../scripts/compile.js';
import { COMPILED, INSTALL_ROOT, runnableModule } from '../../daemon/install-root.ts';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'trawl-compile-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const SOURCES = {
  'core/index.ts': 'export const CORE: number = 40;\n',
  'core/assembly/index.ts': 'export function notCompiled(): i32 { return 1; }\n',
  'daemon/cli/main.ts':
    "import { CORE } from '../../core/index.ts';\nimport type { Shape } from '../search/shape.ts';\nimport { plus } from '../search/shape.ts';\n" +
    "const s: Shape = { n: plus(CORE) };\nconst lazy = await import('../search/lazy.ts');\nconsole.log(JSON.stringify({ n: s.n, lazy: lazy.LAZY, url: import.meta.url.endsWith('/dist/daemon/cli/main.js') }));\n",
  'daemon/search/shape.ts': 'export interface Shape { n: number }\nexport function plus(n: number): number { return n + 2; }\n',
  'daemon/search/lazy.ts': "export const LAZY = 'loaded on demand';\n",
  'daemon/config/schema.json': '{}\n',
};

const ENTRY = ['daemon/cli/main.ts'];

test('bundles each entry at its source path, with what it imports on demand in a chunk, into a tree that runs', async (t) => {
  const root = tree(SOURCES);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  // The sources the stamp watches: core/*.ts and daemon/**/*.ts, not the AssemblyScript.
  assert.deepEqual(sourceFiles(root), ['core/index.ts', 'daemon/cli/main.ts', 'daemon/search/lazy.ts', 'daemon/search/shape.ts']);
  assert.equal(isFresh(root), false, 'no build yet');
  assert.equal(await compile(root, ENTRY), 4);
  assert.equal(isFresh(root), true);
  assert.deepEqual(readdirSync(join(root, 'dist')).sort(), ['.compiled', 'daemon']);
  assert.deepEqual(readdirSync(join(root, 'dist', 'daemon')).sort(), ['chunks', 'cli']);
  const chunks = readdirSync(join(root, 'dist', 'daemon', 'chunks'));
  assert.equal(chunks.length, 1, 'the module imported on demand');
  assert.match(readFileSync(join(root, 'dist', 'daemon', 'chunks', chunks[0]!), 'utf8'), /loaded on demand/);
  // Static, type-only and dynamic imports resolved, and the program runs.
  const out = execFileSync(process.execPath, [join(root, 'dist', 'daemon', 'cli', 'main.js')], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out), { n: 42, lazy: 'loaded on demand', url: true });
  // No temporary or previous build left beside it.
  assert.deepEqual(readdirSync(root).sort(), ['core', 'daemon', 'dist']);
});

test('a build is stale when a source is newer, or a source was added or removed', async (t) => {
  const root = tree(SOURCES);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  await compile(root, ENTRY);
  assert.equal(isFresh(root), true);

  const later = new Date(Date.now() + 5_000);
  utimesSync(join(root, 'daemon/search/shape.ts'), later, later);
  assert.equal(isFresh(root), false, 'an edited source');
  await compile(root, ENTRY);
  assert.equal(isFresh(root), true, 'rebuilt');

  writeFileSync(join(root, 'daemon/search/new.ts'), 'export const NEW = 1;\n');
  const earlier = new Date(Date.now() - 3_600_000);
  utimesSync(join(root, 'daemon/search/new.ts'), earlier, earlier); // an old file copied in
  assert.equal(isFresh(root), false, 'an added source, even with an old time');
  await compile(root, ENTRY);
  assert.equal(isFresh(root), true);

  rmSync(join(root, 'daemon/search/new.ts'));
  assert.equal(isFresh(root), false, 'a removed source');
  await compile(root, ENTRY);
  assert.equal(isFresh(root), true);

  rmSync(join(root, 'dist/.compiled'));
  assert.equal(isFresh(root), false, 'no stamp, no build');
});

test('a source that does not compile fails the build and leaves the previous one in place', async (t) => {
  const root = tree(SOURCES);
  t.after(() => rmSync(root, { recursive: true, force: true }));
  await compile(root, ENTRY);
  writeFileSync(join(root, 'daemon/search/shape.ts'), 'export function plus(n: number {\n');
  await assert.rejects(compile(root, ENTRY));
  assert.ok(existsSync(join(root, 'dist/daemon/cli/main.js')), 'the previous build is still there');
  assert.equal(isFresh(root), false, 'and it is known to be stale');
  assert.deepEqual(readdirSync(root).sort(), ['core', 'daemon', 'dist']);
});

test('under tsx the modules are the sources; install root is the checkout', () => {
  // The tests run the TypeScript through tsx, so COMPILED is false here; the compiled side
  // (runnableModule giving the entry in dist/) runs in every test that starts bin/trawl.js
  // after scripts/setup.sh has built dist/.
  assert.equal(COMPILED, false);
  assert.ok(existsSync(join(INSTALL_ROOT, 'package.json')) && existsSync(join(INSTALL_ROOT, 'daemon', 'install-root.ts')));
  const worker = new URL('../../daemon/search/search-thread.ts', import.meta.url);
  assert.equal(runnableModule('daemon/search/search-thread.ts').href, worker.href);
});

test('every module the sources start by path is an entry of the build, and every entry exists', () => {
  // A module started by path is named by its source path from the root, in a string
  // (install-root.ts); one missing from ENTRIES would exist under tsx only.
  const named = new Set<string>();
  for (const f of sourceFiles()) {
    for (const m of readFileSync(join(INSTALL_ROOT, f), 'utf8').matchAll(/'((?:daemon|bench\/suite)\/[\w/.-]+\.ts)'/g)) named.add(m[1]!);
  }
  assert.ok(named.has('daemon/search/search-thread.ts') && named.has('daemon/index/build-worker.ts'), 'the scan finds the worker threads');
  assert.ok(named.has('bench/suite/index-child.ts'), "the scan finds the benchmark's child processes");
  for (const m of named) assert.ok(ENTRIES.includes(m), `${m} is started by path but is not in scripts/compile.js ENTRIES`);
  for (const e of ENTRIES) assert.ok(existsSync(join(INSTALL_ROOT, e)), `${e} does not exist`);
  assert.ok(ENTRIES.includes('daemon/cli/main.ts'), 'bin/trawl.js loads it');
});
