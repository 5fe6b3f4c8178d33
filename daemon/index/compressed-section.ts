// A compressed section: a section of a shard or symbols file stored compressed, and
// decompressed into memory when the file is opened (the table of contents marks it:
// shard-format.ts SECTION_COMPRESSED). A history index holds every version of every file,
// and most of its records (the definitions of a file's versions, which of them each commit
// holds, their paths) repeat from one version to the next: compressed, a history's symbols
// take a fifth of their size. Only sections a search reads through a view of the whole
// section are compressible (COMPRESSIBLE_SECTIONS); the content, the document table, the
// n-gram tables, their postings and the masks beside them stay read in place from the
// mapping.
//
// # Layout
//
//   0   rawLength u64 (little-endian)   the section's bytes once decompressed
//   8   one zstd frame (RFC 8878) holding them, with its content checksum
//
// The section's checksum in the table of contents covers these stored bytes (what the scrub
// and the checks at open hash); zstd's own checksum covers the decompressed ones.
//
// Worked example: a section of 4 bytes 01 00 00 00 is stored as 04 00 00 00 00 00 00 00
// then the zstd frame of those 4 bytes (the frame's magic 28 b5 2f fd first).

import { compressFrame, decompressFrame } from './zstd-frame.ts';

const HEADER = 8;
/** The largest section decompressed: a bound on the memory a damaged or hostile length asks for. */
export const MAX_DECOMPRESSED = 1 << 30;

/** The stored bytes of section `bytes` (layout above). */
export function compressSection(bytes: Uint8Array): Buffer {
  if (bytes.length > MAX_DECOMPRESSED) throw new RangeError(`a compressed section holds at most ${MAX_DECOMPRESSED} bytes, not ${bytes.length}`);
  const frame = compressFrame(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
  const out = Buffer.allocUnsafe(HEADER + frame.length);
  out.writeUInt32LE(bytes.length >>> 0, 0);
  out.writeUInt32LE(Math.floor(bytes.length / 0x1_0000_0000), 4);
  frame.copy(out, HEADER);
  return out;
}

/**
 * The bytes a compressed section holds, in a buffer of their own starting at a multiple
 * of 8 (the readers take typed-array views of a section). Throws an Error saying what is
 * wrong when the stored bytes are not a compressed section: cut short, a length past the
 * bound, a frame that does not decode or decodes to another length.
 */
export function decompressSection(stored: Uint8Array): Buffer {
  if (stored.length < HEADER) throw new Error(`compressed section is cut short (${stored.length} bytes)`);
  const view = Buffer.from(stored.buffer, stored.byteOffset, stored.length);
  const rawLength = view.readUInt32LE(0) + view.readUInt32LE(4) * 0x1_0000_0000;
  const raw = decompressFrame(view.subarray(HEADER), rawLength, MAX_DECOMPRESSED, 'compressed section');
  if (raw.byteOffset % 8 === 0) return raw;
  const aligned = Buffer.alloc(raw.length);
  raw.copy(aligned);
  return aligned;
}
