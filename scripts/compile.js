// Compiles trawl's TypeScript (core/*.ts, daemon/**/*.ts, the benchmark suite in
// bench/suite/) into JavaScript under dist/, so that commands and worker threads start
// without compiling at run time (tsx stays the development and test runner). scripts/setup.sh runs it; bin/trawl.js asks isFresh()
// before it loads dist/ and runs the sources through tsx when the build is missing or stale.
//
//   node scripts/compile.js            build when stale (quick no-op otherwise)
//   node scripts/compile.js --force    build anyway
//
// Plain JavaScript on purpose: it must run before anything can load TypeScript.
//
// The build is a bundle (esbuild; type checking is `npm run check`): one file for each
// module started by path (ENTRIES: the command line, worker threads, child processes), at
// its source's path in dist/ with `.js` (dist/daemon/cli/main.js), and the code they share
// in chunks (dist/daemon/chunks/); a command's module imported on demand is a chunk of its
// own. Packages stay imports. Loading ~4 files instead of ~150 saves a command and each
// worker thread most of their module-loading time. Code does not know which chunk it lands
// in, so files beside the sources (the wasm core, schemas, web/) and modules started by
// path are found from the install root (daemon/install-root.ts), never relative to
// import.meta.url.
//
// Stale means: a source file is newer than the stamp, or the set of source files is not the
// one the stamp lists (a file added, renamed or removed). The stamp, dist/.compiled, is
// written last, and a build is assembled in a temporary folder and renamed into place, so a
// build killed half-way leaves either the previous dist/ or none, never a mix.

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The checkout this script belongs to (every function takes another root, for the tests). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = '.compiled';
/** Bumped when the build's output changes for the same sources (options, layout). */
const FORMAT = 4;

/**
 * The configuration's validator is generated too (ajv's standalone code, which loads in a
 * small fraction of what loading ajv and compiling the schema take, on every command that
 * reads a configuration file: docs/design.md, "Compiled at install, TypeScript in
 * development"): from these inputs, which the stamp watches like the
 * sources. daemon/config/schema.ts (isValidConfig) loads it.
 */
const VALIDATOR_INPUTS = ['daemon/config/trawl.schema.json', 'daemon/config/validator-options.json'];
const VALIDATOR_OUT = 'config-validator.cjs';

/**
 * The modules started by path (install-root.ts, runnableModule): bin/trawl.js loads the
 * command line, the command line the benchmark suite (`trawl bench`), the pools start
 * worker threads, the benchmark measured child processes. test/cli/compile.test.ts checks
 * that every such path in the sources is listed here.
 */
export const ENTRIES = [
  'daemon/cli/main.ts',
  'daemon/search/search-thread.ts',
  'daemon/search/plan-thread.ts',
  'daemon/index/build-worker.ts',
  'daemon/index/scrub-thread.ts',
  'daemon/history/word-count-thread.ts',
  'daemon/runtime/spawner-child.ts',
  'bench/suite/command.ts',
  'bench/suite/history-bench.ts',
  'bench/suite/webhook-bench.ts',
  'bench/suite/index-child.ts',
  'bench/suite/stream-child.ts',
  'bench/suite/stopwatch-child.ts',
];

/**
 * The folders of TypeScript besides core/: the daemon, and the benchmark suite that the
 * command line loads on demand (`trawl bench`: a tool beside the product, with a
 * package.json of its own).
 */
const SOURCE_TREES = ['daemon', 'bench/suite'];

/** The sources, relative to ROOT, sorted: core/*.ts (not the AssemblyScript) and SOURCE_TREES' **. */
export function sourceFiles(root = ROOT) {
  const out = VALIDATOR_INPUTS.filter((f) => existsSync(join(root, f)));
  for (const f of readdirSync(join(root, 'core'))) if (f.endsWith('.ts')) out.push(`core/${f}`);
  for (const tree of SOURCE_TREES) {
    if (!existsSync(join(root, tree))) continue;
    for (const f of readdirSync(join(root, tree), { recursive: true })) {
      if (f.endsWith('.ts')) out.push(`${tree}/${f}`);
    }
  }
  return out.sort();
}

/**
 * The folders the sources are listed from, each with its modification time: a file added,
 * renamed or removed in one changes that time (compared for equality, so a source dated in
 * the future, which moves the stamp's time with it, hides nothing).
 */
function sourceDirs(root, files) {
  const dirs = new Set(['core', ...SOURCE_TREES]);
  for (const f of files) for (let d = dirname(f); d !== '.' && !dirs.has(d); d = dirname(d)) dirs.add(d);
  return [...dirs]
    .filter((d) => existsSync(join(root, d)))
    .sort()
    .map((d) => [d, statSync(join(root, d)).mtimeMs]);
}

function stampText(files, dirs) {
  return JSON.stringify({ format: FORMAT, files, dirs });
}

/**
 * Whether dist/ holds the build of the current sources. One stat per source file and per
 * folder of them, which is what a command pays at start for never running stale code.
 * Listing the folders again, several times as costly, is needed only when one of them
 * changed since the build: then the set of files may have.
 */
export function isFresh(root = ROOT) {
  const dist = join(root, 'dist');
  let stamp;
  let listed;
  try {
    stamp = statSync(join(dist, STAMP));
    listed = JSON.parse(readFileSync(join(dist, STAMP), 'utf8'));
  } catch {
    return false;
  }
  if (listed?.format !== FORMAT || !Array.isArray(listed.files) || !Array.isArray(listed.dirs)) return false;
  const built = stamp.mtimeMs;
  const newer = (p) => (statSync(join(root, p), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) > built;
  const moved = ([d, t]) => statSync(join(root, d), { throwIfNoEntry: false })?.mtimeMs !== t;
  if (listed.dirs.some(moved) && JSON.stringify(sourceFiles(root)) !== JSON.stringify(listed.files)) return false;
  if (statSync(fileURLToPath(import.meta.url)).mtimeMs > built) return false;
  return !listed.files.some(newer);
}

/**
 * Packages bundled into the build rather than imported from node_modules at run time:
 * linguist's language data is hundreds of tiny modules, slow to load one by one and quick
 * as one chunk.
 */
const BUNDLED = ['linguist-languages'];

/** The package.json files whose dependencies the build's code imports: trawl's and the benchmark suite's. */
const PACKAGE_FILES = ['package.json', 'bench/package.json'];

/** Every other dependency (and its subpaths) stays an import, native addons included. */
function externalPackages(root) {
  const names = new Set();
  for (const file of PACKAGE_FILES) {
    if (!existsSync(join(root, file))) continue;
    const pkg = JSON.parse(readFileSync(join(root, file), 'utf8'));
    for (const n of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })) if (!BUNDLED.includes(n)) names.add(n);
  }
  return [...names].flatMap((n) => [n, `${n}/*`]);
}

/**
 * The configuration validator's code (CommonJS; its ajv runtime helpers are required from
 * node_modules), made with the options schema.ts validates with; null when the tree has no
 * schema (the tests' small trees).
 */
export async function configValidatorCode(root = ROOT) {
  const [schemaFile, optionsFile] = VALIDATOR_INPUTS.map((f) => join(root, f));
  if (!existsSync(schemaFile) || !existsSync(optionsFile)) return null;
  const { Ajv2020 } = await import('ajv/dist/2020.js');
  const { default: standaloneCode } = await import('ajv/dist/standalone/index.js');
  const options = JSON.parse(readFileSync(optionsFile, 'utf8'));
  const ajv = new Ajv2020({ ...options, code: { source: true } });
  return standaloneCode(ajv, ajv.compile(JSON.parse(readFileSync(schemaFile, 'utf8'))));
}

/** Builds dist/ from the sources; returns the number of source files. */
export async function compile(root = ROOT, entries = ENTRIES) {
  const esbuild = await import('esbuild');
  // The stamp carries the time the build read the sources (or the newest source's time, if
  // a clock put that in the future), so that a file saved during the build counts as newer.
  const files = sourceFiles(root);
  let newest = Date.now();
  for (const f of files) newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  const started = Math.ceil(newest) / 1000; // seconds, as utimesSync takes them
  const dist = join(root, 'dist');
  const tmp = join(root, `dist.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    await esbuild.build({
      absWorkingDir: root,
      entryPoints: entries,
      outdir: tmp,
      outbase: root,
      bundle: true,
      splitting: true,
      chunkNames: 'daemon/chunks/[name]-[hash]',
      external: externalPackages(root),
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
    });
    const validator = await configValidatorCode(root);
    if (validator !== null) writeFileSync(join(tmp, VALIDATOR_OUT), validator);
    writeFileSync(join(tmp, STAMP), stampText(files, sourceDirs(root, files)));
    utimesSync(join(tmp, STAMP), started, started);
    // Swap: the old build out of the way, the new one in, the old one removed. Between the
    // two renames dist/ is missing and bin/trawl.js runs the sources: slower, never wrong.
    const old = join(root, `dist.old-${process.pid}`);
    if (existsSync(dist)) renameSync(dist, old);
    renameSync(tmp, dist);
    rmSync(old, { recursive: true, force: true });
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  } finally {
    await esbuild.stop();
  }
  return files.length;
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const force = process.argv.includes('--force');
  if (force || !isFresh()) {
    const started = performance.now();
    const n = await compile();
    process.stderr.write(
      `compile: ${n} source files bundled into ${relative(process.cwd(), join(ROOT, 'dist'))}/ in ${Math.round(performance.now() - started)} ms\n`,
    );
  }
}
