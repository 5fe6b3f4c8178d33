// A shard's documents as its content section stores them (the format is at the top of
// shard-reader.ts): each as it is, a view into the mapping; or (version 9, a shard built
// with version deltas) deflated, or as a delta against the document before it
// (content-delta.ts), rebuilt here. Every document is checked against its checksum the
// first time it is read, rebuilt or not, so a damaged delta fails its document as corrupt
// like a damaged byte does; rebuilding is bounded (a chain longer than DELTA_CHAIN_MAX - 1,
// a copy outside its base, a delta or an inflated stream longer than its document: refused
// before any byte is read out of bounds or any buffer made larger than the document).

import { inflateRawSync } from 'node:zlib';
import { hash32 } from '../../core/index.ts';
import { applyDelta } from './content-delta.ts';
import { PAGE, willNeed } from './mmap.ts';
import { ShardError } from './shard-error.ts';
import { DELTA_CHAIN_MAX, DOC_FLAG_DEFLATE, DOC_FLAG_DELTA, DOC_RECORD_SIZE } from './shard-format.ts';
import { VersionCache } from './version-cache.ts';

/** What of a shard its documents are read from: its docs and content sections, and which documents are checked. */
export interface StoredContent {
  path: string;
  version: number;
  docs: Buffer;
  content: Buffer;
  /** One byte per document, 1 once checked (shared with the other threads reading the file: section-checks.ts). */
  verified: Uint8Array;
  name(doc: number): string;
}

/**
 * Two buffers used in turn for the versions a delta chain passes through on its way to the
 * one asked for (each is the next one's base, so two suffice); one pair per thread, grown
 * to the longest version met.
 */
class Between {
  private buffers = [new Uint8Array(0), new Uint8Array(0)];
  private turn = 0;

  /** The next buffer, at least `length` bytes: never the one the previous call returned. */
  next(length: number): Uint8Array {
    this.turn ^= 1;
    const had = this.buffers[this.turn]!;
    // Grown at least twofold: versions met one after another grow a little each (zeroed memory is not free).
    if (had.length < length) this.buffers[this.turn] = new Uint8Array(Math.max(length, 2 * had.length, 1 << 16));
    return this.buffers[this.turn]!;
  }
}

const between = new Between();

/** The largest chunk a document is inflated in: its own length plus one below this, else chunks of this. */
const INFLATE_CHUNK_MAX = 1 << 20;

export class StoredVersions {
  /** Versions rebuilt lately (version-cache.ts). */
  private readonly cache = new VersionCache();

  constructor(private readonly s: StoredContent) {}

  /**
   * The document's bytes, checked against its checksum the first time it is read: a view
   * into the mapping, or, for a document stored deflated or as a delta, its bytes rebuilt
   * (versionOf). Throws ShardError when the bytes are corrupt.
   */
  contentOf(doc: number): Buffer {
    if (this.encoded(doc) !== 0) return this.versionOf(doc);
    const { docs, content } = this.s;
    const o = doc * DOC_RECORD_SIZE;
    const off = docs.readUInt32LE(o + 8);
    const len = docs.readUInt32LE(o + 12);
    if (off + len > content.length) throw new ShardError(this.s.path, `document ${doc} lies outside the content section`);
    const bytes = content.subarray(off, off + len);
    if (this.s.verified[doc] === 0) {
      // Its pages in one request, not one at a time as hashing touches them (mmap.ts).
      if (len > PAGE) willNeed(content, off, off + len);
      this.check(doc, bytes);
    }
    return bytes;
  }

  /**
   * Where in the content section the document's reading reads: what is stored of it, and
   * of a delta the documents its chain goes back to (adjacent documents, stored one after
   * the other); undefined when that does not lie within the section.
   */
  storedRange(doc: number): { start: number; end: number } | undefined {
    const docs = this.s.docs;
    const end = docs.readUInt32LE(doc * DOC_RECORD_SIZE + 8) + this.storedLength(doc);
    let first = doc;
    while (first > 0 && doc - first < DELTA_CHAIN_MAX && this.isDelta(first)) first--;
    const start = docs.readUInt32LE(first * DOC_RECORD_SIZE + 8);
    return start <= end && end <= this.s.content.length ? { start, end } : undefined;
  }

  /** How the document is stored (version 9): its DOC_FLAG_DELTA and DOC_FLAG_DEFLATE bits; 0 is its bytes as they are. */
  private encoded(doc: number): number {
    return this.s.version >= 9 ? this.s.docs.readUInt16LE(doc * DOC_RECORD_SIZE + 26) & (DOC_FLAG_DELTA | DOC_FLAG_DEFLATE) : 0;
  }

  private isDelta(doc: number): boolean {
    return (this.encoded(doc) & DOC_FLAG_DELTA) !== 0;
  }

  /** Bytes the document takes in the content section: its own length, or what is stored of it (version 9, offset 20). */
  private storedLength(doc: number): number {
    return this.s.docs.readUInt32LE(doc * DOC_RECORD_SIZE + (this.encoded(doc) !== 0 ? 20 : 12));
  }

  private contentLength(doc: number): number {
    return this.s.docs.readUInt32LE(doc * DOC_RECORD_SIZE + 12);
  }

  /**
   * A document stored deflated or as a delta: a delta's chain is followed back to the
   * document not stored as a delta that starts it (at most DELTA_CHAIN_MAX - 1 deltas back,
   * else the shard is corrupt), or to a version of the chain rebuilt lately, and its deltas
   * are applied from there.
   */
  private versionOf(doc: number): Buffer {
    const cached = this.cache.get(doc);
    if (cached !== undefined) return cached;
    let whole = doc;
    while (this.isDelta(whole)) {
      if (doc - whole >= DELTA_CHAIN_MAX - 1) throw this.corrupt(doc, `more than ${DELTA_CHAIN_MAX - 1} deltas`);
      if (whole === 0) throw this.corrupt(doc, 'a delta with no base');
      whole--;
    }
    let from = whole;
    let bytes: Buffer | undefined;
    for (let d = doc - 1; d >= whole && bytes === undefined; d--) {
      bytes = this.cache.get(d);
      if (bytes !== undefined) from = d;
    }
    if (bytes === undefined) {
      if (this.encoded(whole) === 0) bytes = this.contentOf(whole);
      else {
        bytes = this.decoded(whole, (stored) => this.inflated(whole, stored, true));
        // The chain's inflated start is kept too: another version of the path, read by a later
        // search, then starts from it without inflating it again (a copy, never a view).
        if (whole !== doc) this.cache.set(whole, bytes);
      }
    }
    if (from === doc) {
      this.cache.set(doc, bytes);
      return bytes;
    }
    // The versions between are written into the thread's two scratch buffers in turn, each
    // the next one's base; only the version asked for gets a buffer of its own.
    let base: Uint8Array = bytes;
    for (let d = from + 1; d < doc; d++) base = this.applied(d, base, between.next(this.contentLength(d)));
    const version = Buffer.allocUnsafe(this.contentLength(doc));
    this.applied(doc, base, version);
    this.cache.set(doc, version);
    return version;
  }

  /** Delta document `d` applied to `base` into `out` (at least its length): the view of `out` it fills, checked the first time. */
  private applied(d: number, base: Uint8Array, out: Uint8Array): Uint8Array {
    const length = this.contentLength(d);
    return this.decoded(d, (stored) => applyDelta(base, (this.encoded(d) & DOC_FLAG_DEFLATE) !== 0 ? this.inflated(d, stored, false) : stored, length, out));
  }

  /** Document `doc` made from its stored bytes by `decode` (which throws Error on corrupt ones), and checked the first time. */
  private decoded<T extends Uint8Array>(doc: number, decode: (stored: Buffer) => T): T {
    const off = this.s.docs.readUInt32LE(doc * DOC_RECORD_SIZE + 8);
    const end = off + this.storedLength(doc);
    if (end > this.s.content.length) throw new ShardError(this.s.path, `document ${doc} lies outside the content section`);
    let bytes: T;
    try {
      bytes = decode(this.s.content.subarray(off, end));
    } catch (err) {
      throw this.corrupt(doc, (err as Error).message);
    }
    if (this.s.verified[doc] === 0) this.check(doc, bytes);
    return bytes;
  }

  /**
   * `stored` inflated (raw deflate, DOC_FLAG_DEFLATE): the document's bytes, exactly its
   * length (`whole`), or its delta, shorter than the document (a delta is stored only when
   * it is); a longer output is refused before it is made.
   */
  private inflated(doc: number, stored: Buffer, whole: boolean): Buffer {
    const length = this.contentLength(doc);
    const most = Math.max(1, whole ? length : length - 1);
    // Its output in one chunk, not in 16 KB ones joined afterwards: its longest is known.
    // (One byte more than that: a chunk filled exactly costs zlib another round for the end.
    // At most INFLATE_CHUNK_MAX: a damaged length allocates no more than that before failing.)
    const out = inflateRawSync(stored, { maxOutputLength: most, chunkSize: Math.min(INFLATE_CHUNK_MAX, Math.max(64, most + 1)) });
    if (whole && out.length !== length) throw new Error(`inflates to ${out.length} bytes of the document's ${length}`);
    if (!whole && out.length >= length) throw new Error('its delta is not shorter than the document');
    return out;
  }

  /** Marks the document checked once `bytes` match its checksum; throws ShardError when not. */
  private check(doc: number, bytes: Uint8Array): void {
    if (hash32(bytes) !== this.s.docs.readUInt32LE(doc * DOC_RECORD_SIZE + 16)) throw this.corrupt(doc, 'checksum mismatch');
    this.s.verified[doc] = 1;
  }

  private corrupt(doc: number, why: string): ShardError {
    return new ShardError(this.s.path, `content of ${this.s.name(doc)} is corrupt (${why}); re-index the repository`);
  }
}
