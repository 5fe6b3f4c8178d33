// The mmap binding (@riaskov/mmap-io) for read-only shard maps. The package's own entry
// finds its compiled addon through @mapbox/node-pre-gyp, which loads ~50 ms of modules
// (npmlog, semver, ...) into every process and worker thread that opens a shard. The addon's
// place is fixed by the package's "binary" template, read from its package.json here and
// filled in as node-pre-gyp does (Release build, this Node's ABI, platform and arch); the
// package's entry stays the fallback when the addon is not there.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The part of the binding trawl uses (the package's `sync` wrapper is not needed). */
export interface MmapBinding {
  readonly PROT_READ: number;
  readonly MAP_SHARED: number;
  readonly MADV_RANDOM: number;
  readonly MADV_DONTNEED: number;
  map(size: number, protection: number, flags: number, fd: number, offset: number, advise: number): Buffer;
  advise(buffer: Buffer, offset: number, length: number, advice: number): void;
}

const require = createRequire(import.meta.url);

function load(): MmapBinding {
  try {
    const pkgPath = require.resolve('@riaskov/mmap-io/package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { binary?: { module_name?: string; module_path?: string } };
    const b = pkg.binary;
    if (b?.module_name && b.module_path) {
      const dir = b.module_path
        .replace('{configuration}', 'Release')
        .replace('{node_abi}', `node-v${process.versions.modules}`)
        .replace('{platform}', process.platform)
        .replace('{arch}', process.arch);
      const addon = join(dirname(pkgPath), dir, `${b.module_name}.node`);
      if (existsSync(addon)) return require(addon) as MmapBinding;
    }
  } catch {
    // fall through to the package's own loader
  }
  return require('@riaskov/mmap-io') as MmapBinding;
}

export const mmap: MmapBinding = load();
