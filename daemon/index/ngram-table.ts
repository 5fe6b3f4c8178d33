// The trigram tables of a shard (content-ngrams with content-postings and content-follow;
// name-ngrams with name-postings; symbol-ngrams with symbol-postings), read in place.
//
// # Layout
//
//   n-grams    n u32, 0 u32, ids[n] u32, counts[n] u32, offsets[n] u32: every trigram that
//              occurs, ascending; counts = documents (or, for a symbol index's names,
//              blocks) that contain it; offsets = byte offset of its list in the postings
//   postings   each list: ascending document numbers, LEB128 varint deltas (core/index.ts
//              documents the exact encoding; decodePostings reads it)
//   follow     (content only, version 5) one byte per posting, in the postings' order (list
//              after list; row i's bytes start at the sum of the counts before it): bit
//              (b & 7) is set when some occurrence of the trigram in that document is
//              followed by the folded byte b (the document's last trigram sets one
//              arbitrary bit). A literal's candidates must hold each of its trigrams
//              followed by the literal's next byte: a 4-gram test at one byte per posting,
//              which rules out most candidates of a long identifier unread.
//
// The sections may be read before the scrub has verified them (section-checks.ts): a row's
// list is checked to lie within the postings where it is read, and the decoder refuses an
// id at or past the limit, so damage gives a wrong candidate set at worst, never a crash.

import { decodePostings, indexOfSorted, type EncodedList } from '../../core/index.ts';
import { PAGE, willNeed } from './mmap.ts';
import { ShardError } from './shard-error.ts';

const EMPTY = new Uint8Array(0);

/** What a table is read with besides its two sections. */
export interface NgramTableOptions {
  /** The shard's path, for errors. */
  path: string;
  /** What every posting lies below: the documents (or, for a symbol index's names, its blocks). */
  limit: number;
  /** What verifying one candidate reads, on average (NgramTable.bytesPerCandidate); default 0. */
  bytesPerCandidate?: number;
  /** The follow masks of the postings (content-follow, version 5 content). */
  follow?: Buffer;
}

/** The trigram table of one kind (content, names or symbol names) with its posting lists. */
export class NgramTable {
  readonly ids: Uint32Array;
  private readonly counts: Uint32Array;
  private readonly offsets: Uint32Array;
  private readonly postings: Buffer;

  /**
   * What verifying one candidate of this table reads, on average (a document's bytes for
   * content; 0 where verifying is next to free): what a posting list that removes
   * candidates saves (search/candidates.ts intersectRarest).
   */
  readonly bytesPerCandidate: number;

  /** The follow mask of each posting (content-follow), in the postings' order; absent before version 5. */
  private readonly follow: Buffer | undefined;
  /** Where each row's masks start in `follow`: the sum of the counts before it (made at first use). */
  private followStarts: Uint32Array | undefined;

  /** The shard's path, for errors. */
  private readonly path: string;
  /** What every posting lies below: the documents (or, for a symbol index's names, its blocks). */
  private readonly limit: number;

  constructor(table: Buffer, postings: Buffer, options: NgramTableOptions) {
    const { path, limit } = options;
    this.bytesPerCandidate = options.bytesPerCandidate ?? 0;
    this.follow = options.follow;
    this.path = path;
    this.limit = limit;
    // (The section may not be verified yet: its shape is checked here, each row's list where it is read.)
    const n = table.length >= 8 ? table.readUInt32LE(0) : -1;
    if (n < 0 || table.length < 8 + 12 * n) throw new ShardError(path, 'an n-gram table is cut short');
    const all = new Uint32Array(table.buffer, table.byteOffset, 2 + 3 * n);
    // Every lookup bisects the ids (a page read in turn per step from a cold page cache): the
    // table, a small part of the shard, is asked for whole at once (mmap.ts).
    willNeed(table, 0, 8 + 12 * n);
    this.ids = all.subarray(2, 2 + n);
    this.counts = all.subarray(2 + n, 2 + 2 * n);
    this.offsets = all.subarray(2 + 2 * n, 2 + 3 * n);
    this.postings = postings;
  }

  /** Index of the trigram in the table, or -1. */
  find(id: number): number {
    return indexOfSorted(this.ids, id);
  }

  /** The documents of table row `i` (find()), ascending. */
  rowDocs(i: number): Uint32Array {
    const l = this.rowList(i);
    return decodePostings(l.bytes, l.count, this.limit);
  }

  /** Number of documents containing the trigram (0 when absent). */
  count(id: number): number {
    const i = this.find(id);
    return i < 0 ? 0 : this.counts[i]!;
  }

  /** The documents containing the trigram, ascending, and the bytes read to get them. */
  postingList(id: number): { docs: Uint32Array; bytes: number } {
    const l = this.encoded(id);
    return { docs: decodePostings(l.bytes, l.count, this.limit), bytes: l.bytes.length };
  }

  /** The trigram's posting list as stored (empty when absent): for intersectPostings. */
  encoded(id: number): EncodedList {
    const i = this.find(id);
    return i < 0 ? { bytes: EMPTY, count: 0 } : this.rowList(i);
  }

  /** Documents in the posting list of table row `i` (find()). */
  rowCount(i: number): number {
    return this.counts[i]!;
  }

  /** Bytes of the posting list of table row `i` (find()). */
  rowBytes(i: number): number {
    return (i + 1 < this.offsets.length ? this.offsets[i + 1]! : this.postings.length) - this.offsets[i]!;
  }

  /**
   * The posting list of table row `i` (find()) as stored; with `want` (the follow bits a
   * document must hold: ngram-query.ts) and a follow section, with the row's masks.
   */
  rowList(i: number, want = 0): EncodedList {
    const start = this.offsets[i]!;
    const bytes = this.rowBytes(i);
    const count = this.counts[i]!;
    // A list lies within the postings and takes a byte per document at least.
    if (bytes < 0 || start + bytes > this.postings.length || count > bytes)
      throw new ShardError(this.path, `n-gram table row ${i} does not match its posting list`);
    const list: EncodedList = { bytes: this.postings.subarray(start, start + bytes), count, limit: this.limit };
    // A long list's pages in one request (mmap.ts): it is read whole, or up to the running set's end.
    if (bytes > PAGE) willNeed(this.postings, start, start + bytes);
    if (want !== 0 && this.follow !== undefined) {
      const at = this.rowFollowStart(i);
      list.follow = this.follow.subarray(at, at + list.count);
      list.want = want;
      if (list.count > PAGE) willNeed(this.follow, at, at + list.count);
    }
    return list;
  }

  /** Whether the table has follow masks (version 5 content). */
  get hasFollow(): boolean {
    return this.follow !== undefined;
  }

  private rowFollowStart(i: number): number {
    let starts = this.followStarts;
    if (starts === undefined) {
      starts = new Uint32Array(this.counts.length);
      let sum = 0;
      for (let r = 0; r < starts.length; r++) {
        starts[r] = sum;
        sum += this.counts[r]!;
      }
      if (sum !== this.follow!.length) throw new ShardError(this.path, `follow masks (${this.follow!.length} bytes) do not match the postings (${sum})`);
      this.followStarts = starts;
    }
    return starts[i]!;
  }
}
