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
  readonly MADV_WILLNEED: number;
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

/** The pages' size (a hint's range starts on one). */
export const PAGE = 4096;

/**
 * Asks the kernel to read bytes [start, end) of `view` ahead, in as few requests as it
 * likes, without waiting for them. `view` lies in a mapping made by mmap.map (whose memory
 * starts on a page: a view's place in it is its byteOffset). A shard is mapped MADV_RANDOM
 * (no read-ahead: most reads are a few bytes of a table or a list), so a document or a long
 * posting list read from a cold page cache would otherwise cost one disk request per page,
 * in turn; and bytes asked for ahead of their use are read while other work goes on. A
 * hint: a refusal changes nothing.
 */
export function willNeed(view: Uint8Array, start: number, end: number): void {
  const abs = view.byteOffset + start;
  const from = abs - (abs % PAGE);
  const to = Math.min(view.buffer.byteLength, view.byteOffset + end);
  if (to <= from) return;
  try {
    mmap.advise(Buffer.from(view.buffer as ArrayBuffer), from, to - from, mmap.MADV_WILLNEED);
  } catch {
    // Not advised: the pages are read as they are touched.
  }
}
