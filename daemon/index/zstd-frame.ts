// What trawl stores compressed: one zstd frame (RFC 8878), written with its content
// checksum, so that a damaged byte anywhere in it fails the read instead of giving other
// bytes. The history's record files (history/diff-store.ts, history/commit-records.ts) and
// the compressed sections of its shards (compressed-section.ts) are made of these.
//
// A file states each frame's size before compression in its own header. The
// reader checks the stated size against the bound of its kind before it decompresses,
// and decompresses to at most that size (zlib's output grows as the frame gives bytes, so
// a frame that lies about its size costs no more memory than it really holds): a damaged
// or hostile file gives a clear error, never a crash or memory without end.
//
// Level 3, measured on hono's diff records (2,790 commits: 7.3 MB before compression):
// level 1 gives 2.17 MB in 18 ms, level 3 1.94 MB in 28 ms, level 6 1.78 MB in 67 ms,
// level 9 1.71 MB in 104 ms; decompressing takes 7-14 ms at any of them. An update writes
// the whole file for one new commit, so its time counts: level 3 is where a level more
// starts to cost more time than it saves bytes. Its commit records (0.94 MB) go to 0.25 MB.

import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';

/** The compression level (see the header). */
const LEVEL = 3;

/** `raw` as one zstd frame with its content checksum. */
export function compressFrame(raw: Buffer): Buffer {
  return zstdCompressSync(raw, {
    params: { [constants.ZSTD_c_compressionLevel]: LEVEL, [constants.ZSTD_c_checksumFlag]: 1 },
    pledgedSrcSize: raw.length,
  });
}

/**
 * The bytes of `frame`, which its file says are `size` bytes (at most `max`); `what` names
 * the file in the errors ("the diff records file").
 */
export function decompressFrame(frame: Buffer, size: number, max: number, what: string): Buffer {
  if (!Number.isSafeInteger(size) || size < 0 || size > max) throw new Error(`${what} is damaged: it says it holds ${size} bytes, over the ${max} it may hold`);
  let raw: Buffer;
  try {
    // One byte more than stated: a frame holding more says the size was a lie.
    raw = zstdDecompressSync(frame, { maxOutputLength: size + 1 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new Error(`${what} is damaged: its compressed part holds more than the ${size} bytes it says`);
    if (code === 'Z_BUF_ERROR') throw new Error(`${what} is cut short: its compressed part ends early`);
    throw new Error(`${what} is damaged: ${(err as Error).message}`);
  }
  if (raw.length !== size) throw new Error(`${what} is damaged: its compressed part holds ${raw.length} bytes, not the ${size} it says`);
  return raw;
}
