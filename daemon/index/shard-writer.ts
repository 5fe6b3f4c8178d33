// Writes one shard file, or one symbols file (shard-format.ts): files of sections, whose
// layout is documented at the top of shard-reader.ts.
//
// Atomicity: everything goes to `<final>.tmp-<pid>-<random>`; the header (which carries
// the file size and the table of contents' checksum) is written last, then the file is
// renamed to its final name. A reader therefore sees either no file or a complete one,
// and a crash leaves only a temporary file that the next index run removes.
//
// Durability is the indexer's job, not the writer's: it flushes each shard from its own
// thread as the shard is built, and the manifest names the shards only after
// (build-shards.ts). An fsync per shard inside the build, on the build threads, made the
// build much longer: the threads sat waiting on the disk instead of overlapping with it.

import { closeSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hash32 } from '../../core/index.ts';
import { compressSection } from './compressed-section.ts';
import {
  HEADER_SIZE,
  COMPRESSIBLE_SECTIONS,
  SECTION_ALIGN,
  SECTION_COMPRESSED,
  SHARD_FORMAT,
  SectionKind,
  TOC_ENTRY_SIZE,
  type SectionFileFormat,
} from './shard-format.ts';

export interface SectionEntry {
  kind: SectionKind;
  /** Stored compressed (compressed-section.ts): its length and hash are the stored bytes'. */
  compressed: boolean;
  hash: number;
  offset: number;
  length: number;
}

const WRITE_BUFFER = 1 << 20;

export class ShardWriter {
  readonly finalPath: string;
  readonly tempPath: string;
  private fd: number;
  private position: number;
  private readonly sections: SectionEntry[] = [];
  private pending: Buffer = Buffer.allocUnsafe(WRITE_BUFFER);
  private pendingLength = 0;
  private contentStart: number;
  private contentLength = 0;
  private closed = false;
  /** The sections this file holds, in order: its format's current version's. */
  private readonly order: readonly SectionKind[];

  /**
   * A writer of a shard, or of another file of sections (`format`: a symbols file,
   * shard-format.ts). `compressed`: its compressible sections are stored compressed (COMPRESSIBLE_SECTIONS).
   */
  constructor(
    finalPath: string,
    private readonly format: SectionFileFormat = SHARD_FORMAT,
    private readonly compressed = false,
  ) {
    this.finalPath = finalPath;
    this.tempPath = `${finalPath}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    this.order = format.order(format.version);
    // Header and table of contents are written last, at offset 0.
    this.position = align(HEADER_SIZE + this.order.length * TOC_ENTRY_SIZE);
    this.contentStart = this.position;
    this.fd = openSync(this.tempPath, 'wx', 0o644);
  }

  /** Appends one document's bytes to the content section; returns its offset in the section. */
  appendContent(bytes: Uint8Array): number {
    if (this.order[0] !== SectionKind.Content) throw new Error(`shard writer: a ${this.format.what} has no content section`);
    const offset = this.contentLength;
    this.write(bytes);
    this.contentLength += bytes.length;
    return offset;
  }

  /**
   * Writes the remaining sections, the table of contents and the header, then renames the
   * file into place. `contentHash` is the content section's checksum (see the reader), for
   * a format that has one.
   */
  finish(rest: Map<SectionKind, Uint8Array>, contentHash?: number): void {
    for (const kind of this.order) {
      if (kind === SectionKind.Content) {
        if (contentHash === undefined) throw new Error('shard writer: the content checksum is missing');
        this.sections.push({ kind, compressed: false, hash: contentHash >>> 0, offset: this.contentStart, length: this.contentLength });
        continue;
      }
      const raw = rest.get(kind);
      if (!raw) throw new Error(`shard writer: section ${kind} missing`);
      const compressed = this.compressed && COMPRESSIBLE_SECTIONS.has(kind);
      const bytes = compressed ? compressSection(raw) : raw;
      this.padTo(align(this.position + this.pendingLength));
      const offset = this.position + this.pendingLength;
      this.write(bytes);
      this.sections.push({ kind, compressed, hash: hash32(bytes), offset, length: bytes.length });
    }
    this.flush();
    const fileSize = this.position;

    const toc = Buffer.alloc(this.sections.length * TOC_ENTRY_SIZE);
    this.sections.forEach((s, i) => {
      const o = i * TOC_ENTRY_SIZE;
      toc.writeUInt32LE((s.kind | (s.compressed ? SECTION_COMPRESSED : 0)) >>> 0, o);
      toc.writeUInt32LE(s.hash, o + 4);
      writeU64(toc, o + 8, s.offset);
      writeU64(toc, o + 16, s.length);
    });
    const header = Buffer.alloc(HEADER_SIZE);
    header.write(this.format.magic, 0, 'latin1');
    header.writeUInt32LE(this.format.version, 8);
    header.writeUInt32LE(HEADER_SIZE, 12);
    writeU64(header, 16, fileSize);
    header.writeUInt32LE(this.sections.length, 24);
    header.writeUInt32LE(hash32(toc), 28);
    header.writeUInt32LE(hash32(header.subarray(0, 60)), 60);
    writeSync(this.fd, toc, 0, toc.length, HEADER_SIZE);
    writeSync(this.fd, header, 0, header.length, 0);
    closeSync(this.fd);
    this.closed = true;
    renameSync(this.tempPath, this.finalPath);
  }

  /** Drops the temporary file; safe to call after a failure at any point. */
  abort(): void {
    if (!this.closed) {
      try {
        closeSync(this.fd);
      } catch {
        /* already closed */
      }
      this.closed = true;
    }
    try {
      unlinkSync(this.tempPath);
    } catch {
      /* never created or already gone */
    }
  }

  private write(bytes: Uint8Array): void {
    if (bytes.length >= WRITE_BUFFER) {
      this.flush();
      writeAll(this.fd, bytes, this.position);
      this.position += bytes.length;
      return;
    }
    if (this.pendingLength + bytes.length > WRITE_BUFFER) this.flush();
    this.pending.set(bytes, this.pendingLength);
    this.pendingLength += bytes.length;
  }

  private padTo(target: number): void {
    const pad = target - (this.position + this.pendingLength);
    if (pad > 0) this.write(new Uint8Array(pad));
  }

  private flush(): void {
    if (this.pendingLength === 0) return;
    writeAll(this.fd, this.pending.subarray(0, this.pendingLength), this.position);
    this.position += this.pendingLength;
    this.pendingLength = 0;
  }
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) {
    done += writeSync(fd, bytes, done, bytes.length - done, position + done);
  }
}

function align(n: number): number {
  return Math.ceil(n / SECTION_ALIGN) * SECTION_ALIGN;
}

function writeU64(buf: Buffer, offset: number, value: number): void {
  buf.writeUInt32LE(value % 0x1_0000_0000, offset);
  buf.writeUInt32LE(Math.floor(value / 0x1_0000_0000), offset + 4);
}
