// Opening a file of sections (a shard, or its symbols file): the descriptor, the mapping,
// and the checks of its header and table of contents (their layout: shard-reader.ts).

import { closeSync, readSync } from 'node:fs';
import { hash32 } from '../../core/index.ts';
import { openRegularFile, RefusedFile, type RegularFile } from '../bounded-read.ts';
import { mmap } from './mmap.ts';
import type { Section } from './section-checks.ts';
import { ShardError } from './shard-error.ts';
import {
  HEADER_SIZE,
  COMPRESSIBLE_SECTIONS,
  SECTION_NAMES,
  SECTION_COMPRESSED,
  SHARD_FORMAT,
  type SectionKind,
  TOC_ENTRY_SIZE,
  type SectionFileFormat,
} from './shard-format.ts';

/**
 * Opens a file of sections and hands `use` its descriptor and size (at least a header's),
 * closing it after; a file that cannot be opened, is not a regular file (a device or a
 * FIFO would be mapped or read without end) or is shorter than a header is a ShardError.
 */
function withSectionFile<T>(path: string, format: SectionFileFormat, use: (fd: number, size: number) => T): T {
  let opened: RegularFile;
  try {
    opened = openRegularFile(path);
  } catch (err) {
    throw new ShardError(
      path,
      err instanceof RefusedFile ? err.reason : `cannot open: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      format.what,
    );
  }
  const { fd, size } = opened;
  try {
    if (size < HEADER_SIZE) throw new ShardError(path, `truncated: ${size} bytes is shorter than the header`, format.what);
    return use(fd, size);
  } finally {
    closeSync(fd); // a mapping stays valid after the descriptor is closed
  }
}

/** Maps a file of sections read-only (the header's checks come after). */
export function mapFile(path: string, format: SectionFileFormat): Buffer {
  return withSectionFile(path, format, (fd, size) => mmap.map(fd, size));
}

/** More sections than any version has: a bound on what checkShardHeader reads. */
const MAX_SECTIONS = 32;

/**
 * Checks a shard (or a symbols file) without mapping it: its header and table of contents
 * (their checksums, the version, the file size against the real one, every section within
 * the file). Reads a few hundred bytes; throws ShardError. What a listing checks, and
 * where the scrub finds the sections (section-scrub.ts); the sections are verified when
 * the shard is opened or by the scrub (section-checks.ts).
 */
export function checkShardHeader(path: string, format: SectionFileFormat = SHARD_FORMAT): Map<SectionKind, Section> {
  return withSectionFile(path, format, (fd, size) => {
    // The table of contents follows the header; its length comes from the header (bounded
    // here: readToc rejects any count but the version's).
    const head = Buffer.alloc(HEADER_SIZE + MAX_SECTIONS * TOC_ENTRY_SIZE);
    const got = readSync(fd, head, 0, head.length, 0);
    return readToc(path, head.subarray(0, got), size, format);
  });
}

/** `head` holds at least the header and the table of contents; `fileLength` is the file's real size. */
export function readToc(path: string, map: Buffer, fileLength: number, format: SectionFileFormat): Map<SectionKind, Section> {
  if (map.toString('latin1', 0, 8) !== format.magic) throw new ShardError(path, `not a trawl ${format.what} (bad magic)`, format.what);
  const version = map.readUInt32LE(8);
  if (version < format.minVersion || version > format.version) {
    throw new ShardError(
      path,
      `unsupported ${format.what} format version ${version} (this trawl reads versions ${format.minVersion} to ${format.version}); re-index the repository`,
      format.what,
    );
  }
  const order = format.order(version);
  if (hash32(map.subarray(0, 60)) !== map.readUInt32LE(60)) throw new ShardError(path, 'header is corrupt (checksum mismatch)', format.what);
  const fileSize = readU64(map, 16);
  if (fileLength < fileSize) throw new ShardError(path, `truncated: ${fileLength} of ${fileSize} bytes`, format.what);
  if (fileLength > fileSize) throw new ShardError(path, `has ${fileLength - fileSize} trailing bytes`, format.what);
  const count = map.readUInt32LE(24);
  if (count !== order.length) throw new ShardError(path, `has ${count} sections, expected ${order.length}`, format.what);
  if (map.length < HEADER_SIZE + count * TOC_ENTRY_SIZE) throw new ShardError(path, 'truncated: the table of contents is cut short', format.what);
  const toc = map.subarray(HEADER_SIZE, HEADER_SIZE + count * TOC_ENTRY_SIZE);
  if (hash32(toc) !== map.readUInt32LE(28)) throw new ShardError(path, 'table of contents is corrupt (checksum mismatch)', format.what);
  const sections = new Map<SectionKind, Section>();
  for (let i = 0; i < count; i++) {
    const o = i * TOC_ENTRY_SIZE;
    const word = toc.readUInt32LE(o);
    const compressed = (word & SECTION_COMPRESSED) !== 0;
    const kind = (word & ~SECTION_COMPRESSED) as SectionKind;
    const offset = readU64(toc, o + 8);
    const length = readU64(toc, o + 16);
    if (!SECTION_NAMES[kind] || sections.has(kind)) throw new ShardError(path, `unknown or repeated section kind ${kind}`, format.what);
    if (compressed && (version < format.compressedFrom || !COMPRESSIBLE_SECTIONS.has(kind))) {
      throw new ShardError(path, `section ${SECTION_NAMES[kind]} is marked compressed, which version ${version} does not allow`, format.what);
    }
    if (offset % 8 !== 0 || offset + length > fileSize) throw new ShardError(path, `section ${SECTION_NAMES[kind]} lies outside the file`, format.what);
    sections.set(kind, { offset, length, hash: toc.readUInt32LE(o + 4), ...(compressed ? { compressed } : {}) });
  }
  return sections;
}

function readU64(buf: Buffer, offset: number): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 0x1_0000_0000;
}
