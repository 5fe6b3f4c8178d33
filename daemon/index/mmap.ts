// Read-only maps of shard files, through the project's own addon (native/mmap/mmap.c):
// map(fd, size) maps a whole file and its Buffer unmaps it when collected; advise() passes
// madvise hints. Built by scripts/setup.sh; without it no shard can be opened, so loading
// fails with the command that builds it.

import { createRequire } from 'node:module';
import { INSTALL_ROOT } from '../install-root.ts';
import { join } from 'node:path';

export interface MmapBinding {
  readonly MADV_RANDOM: number;
  readonly MADV_WILLNEED: number;
  readonly MADV_DONTNEED: number;
  /** The whole file, read-only and shared, advised MADV_RANDOM. */
  map(fd: number, size: number): Buffer;
  /** madvise on bytes [offset, offset + length) of the view; offset + the view's start must fall on a page. */
  advise(view: Uint8Array | ArrayBuffer, offset: number, length: number, advice: number): void;
}

export const MMAP_ADDON = join(INSTALL_ROOT, 'native/mmap/build/Release/mmap.node');

function load(): MmapBinding {
  try {
    return createRequire(import.meta.url)(MMAP_ADDON) as MmapBinding;
  } catch (err) {
    throw new Error(`the mmap addon does not load (${(err as Error).message.split('\n')[0]}); build it with ./scripts/setup.sh`);
  }
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
    mmap.advise(view.buffer as ArrayBuffer, from, to - from, mmap.MADV_WILLNEED);
  } catch {
    // Not advised: the pages are read as they are touched.
  }
}
