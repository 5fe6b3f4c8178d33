// Where trawl is installed, for the files it reads beside its code (the WebAssembly core,
// package.json, schemas, web/). trawl runs either from its TypeScript sources through tsx
// (tests, development) or from the JavaScript that scripts/setup.sh compiles into dist/
// (dist/core/, dist/daemon/: the same tree one level down, see scripts/compile.js). A
// module's own extension says which; paths relative to import.meta.url would differ between
// the two, so files outside the compiled tree are found from INSTALL_ROOT instead.

import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** True when this process runs the compiled JavaScript in dist/, false under tsx. */
export const COMPILED = import.meta.url.endsWith('.js');

/** The checkout's root folder (the one holding package.json, core/, daemon/ and web/). */
export const INSTALL_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), COMPILED ? '../..' : '..');

/**
 * A module of this program by the URL of its TypeScript source (`new URL('./x.ts',
 * import.meta.url)` in the caller), as the file this process can load: the source itself
 * under tsx, its compiled `.js` twin in dist/ otherwise.
 */
export function runnableModule(source: URL): URL {
  return COMPILED ? new URL(source.href.replace(/\.ts$/, '.js')) : source;
}
