// Loads uWebSockets.js's native binary, or refuses. The package's own entry point falls
// back to a pure-JS server (about 10x slower) with only a console warning when the binary
// does not load; a daemon that quietly runs on the fallback is worse than one that says
// why it cannot start, so the binary is required directly here.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export type UwsModule = typeof Uws;

let loaded: UwsModule | undefined;

export function loadUws(): UwsModule {
  loaded ??= loadUwsBinary(`uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  return loaded;
}

/** Loads one of the package's binaries by file name, or throws why it cannot. */
export function loadUwsBinary(name: string): UwsModule {
  let binary: string;
  try {
    binary = join(dirname(require.resolve('uWebSockets.js/package.json')), 'binaries', name);
  } catch {
    throw new Error('uWebSockets.js is not installed: run ./scripts/setup.sh');
  }
  let mod: UwsModule;
  try {
    mod = require(binary) as UwsModule;
  } catch (err) {
    throw new Error(
      `uWebSockets.js has no working native build ${name} for this machine (${(err as Error).message.split('\n')[0]}); ` +
        'trawl will not run on its slow JavaScript fallback (Node 20 on linux-x64 glibc is supported)',
    );
  }
  if (typeof mod.App !== 'function' || typeof mod.us_listen_socket_close !== 'function') {
    throw new Error(`uWebSockets.js binary ${name} lacks App/us_listen_socket_close`);
  }
  return mod;
}
