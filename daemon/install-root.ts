// Where trawl is installed, for the files it reads beside its code (the WebAssembly core,
// package.json, schemas, web/) and the modules it starts by path (worker threads, child
// processes). trawl runs either from its TypeScript sources through tsx (tests,
// development) or from the JavaScript that scripts/setup.sh builds into dist/ (bundled:
// one file per module started by path, the code they share in chunks; scripts/compile.js).
// A module's own extension says which. Paths relative to import.meta.url would differ
// between the two (in dist/ this code sits in whichever chunk the bundler chose), so both
// are resolved from the install root instead.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** True when this process runs the compiled JavaScript in dist/, false under tsx. */
export const COMPILED = import.meta.url.endsWith('.js');

/** The checkout's root: the nearest folder above this code that holds package.json (dist/ holds none). */
export const INSTALL_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`trawl: no package.json above ${from}`);
  }
}

/**
 * A module that is started by path, named by its source from the root
 * ('daemon/search/search-thread.ts'), as the file this process can load: the source under
 * tsx, its compiled twin in dist/ otherwise (scripts/compile.js makes each such module an
 * entry point of the build, at the same path).
 */
export function runnableModule(source: string): URL {
  return pathToFileURL(COMPILED ? join(INSTALL_ROOT, 'dist', source.replace(/\.ts$/, '.js')) : join(INSTALL_ROOT, source));
}
