// A file of sections' table of contents, read from its bytes as tests that damage or compare
// sections need it (the layout is at the top of daemon/index/shard-reader.ts: the entries
// follow the 64-byte header; their count is the header's u32 at 24; a kind word's top bit
// marks a compressed section).
import { HEADER_SIZE, SECTION_COMPRESSED, TOC_ENTRY_SIZE, type SectionKind } from '../../daemon/index/shard-format.ts';

/** Where each section is, by kind, in a shard's or a symbols file's bytes, and whether it is stored compressed. */
export function sectionTable(buf: Buffer): Map<SectionKind, { offset: number; length: number; compressed: boolean }> {
  const out = new Map<SectionKind, { offset: number; length: number; compressed: boolean }>();
  for (let i = 0; i < buf.readUInt32LE(24); i++) {
    const o = HEADER_SIZE + i * TOC_ENTRY_SIZE;
    const word = buf.readUInt32LE(o);
    out.set((word & ~SECTION_COMPRESSED) as SectionKind, {
      offset: buf.readUInt32LE(o + 8),
      length: buf.readUInt32LE(o + 16),
      compressed: (word & SECTION_COMPRESSED) !== 0,
    });
  }
  return out;
}
