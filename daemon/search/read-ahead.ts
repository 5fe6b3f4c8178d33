// Reads a shard's candidates ahead of their examination: while one document is hashed and
// matched, the disk already reads the next ones (Shard.readAhead, a hint to the kernel). A
// shard is mapped without read-ahead, so from a cold page cache each document would
// otherwise be read only when its turn comes, its pages one request at a time: the
// searches that examine many documents waited on the disk for most of their time.
// Documents some thread has read already are skipped (most likely in memory), so a warm
// search asks for nothing.

import type { Shard } from '../index/shard-reader.ts';

/** How far ahead of the document being examined: at most this many documents, */
const AHEAD_DOCS = 32;
/** and once this many bytes are asked for, no more (a search may stop at its limit: what is read ahead and never examined is wasted). */
const AHEAD_BYTES = 4 << 20;

export class ReadAhead {
  /** The first position not asked for yet. */
  private next = 0;
  /** Bytes asked for at the positions past the one being examined. */
  private ahead = 0;
  /** What readAhead returned at the position being examined (it is no longer ahead). */
  private asked = new Map<number, number>();

  constructor(
    private readonly shard: Shard,
    /** The documents in the order they are examined; null: every document, in order. */
    private readonly order: Uint32Array | null,
    private readonly total: number,
  ) {}

  /** Before examining position `i`: the next documents asked for. */
  at(i: number): void {
    const mine = this.asked.get(i);
    if (mine !== undefined) {
      this.ahead -= mine;
      this.asked.delete(i);
    }
    if (this.next <= i) {
      this.next = i + 1;
      this.ahead = 0;
      this.asked.clear();
    }
    while (this.next < this.total && this.next - i <= AHEAD_DOCS && this.ahead < AHEAD_BYTES) {
      const doc = this.order === null ? this.next : this.order[this.next]!;
      const bytes = this.shard.readAhead(doc);
      if (bytes > 0) {
        this.asked.set(this.next, bytes);
        this.ahead += bytes;
      }
      this.next++;
    }
  }
}
