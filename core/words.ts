// The words of a shard's documents and their posting lists, built in the core
// (core/assembly/words.ts): what the content-words section holds.

import { Taken, type Block } from './arena.ts';
import { core, type Core } from './instance.ts';

/**
 * The words of a shard's documents (core/assembly/words.ts says what a word is and how they
 * are found) and, for each word found in at least `minDocs` documents, the ascending list
 * of those documents, encoded as PostingsBuilder encodes its lists (decodePostings reads
 * them). What the content-words section holds (daemon/index/content-words.ts). Its regions
 * live beside a PostingsBuilder's.
 */
export class WordsBuilder {
  #core: Core;
  /** The per-document table (16-byte entries), its size in entries. */
  #table: Block;
  /** (key, document, ref) per distinct word of each document: 16 bytes (assembly/words.ts). */
  #pairs: Block;
  #arena: Block;
  #state: Block;
  #numDocs = 0;
  /** The last generation given to the table (assembly/words.ts docWords). */
  #gen = 0;
  #hashBits: number;
  #live = true;

  /** `hashBits`: of the long words' 57-bit hash (tests take fewer, to make words share keys). */
  constructor(options?: { hashBits?: number }) {
    const c = core();
    this.#core = c;
    this.#hashBits = Math.max(0, Math.min(57, Math.floor(options?.hashBits ?? 57)));
    [this.#table, this.#pairs, this.#arena, this.#state] = new Taken(c.arena).all([TABLE_MIN * 16, 1 << 20, 1 << 16, 64]) as [Block, Block, Block, Block];
    c.u8.fill(0, this.#table.off, this.#table.off + this.#table.size);
    c.u32[this.#state.off / 4] = 0;
    c.u32[this.#state.off / 4 + 1] = 0;
  }

  /** Adds document `docId` (the previous docId + 1, from 0). Returns its distinct words. */
  add(docId: number, content: Uint8Array): number {
    if (!this.#live) throw new Error('WordsBuilder: already finished or disposed');
    if (docId !== this.#numDocs) throw new RangeError(`WordsBuilder.add: expected docId ${this.#numDocs}, got ${docId}`);
    const c = this.#core;
    const n = content.length;
    // Room for the most a document of n bytes can add (assembly/words.ts): words of 3+
    // bytes, apart.
    const most = Math.floor(n / 4) + 2;
    const pairs = c.u32[this.#state.off / 4]!;
    const arenaUsed = c.u32[this.#state.off / 4 + 1]!;
    // Grown by half at least, so that the blocks move (and leave holes) rarely.
    const grow = (b: Block, need: number, keep: number) => {
      if (need > b.size) c.arena.resize(b, Math.max(need, Math.ceil(b.size * 1.5)), keep);
    };
    grow(this.#pairs, (pairs + most) * 16, pairs * 16);
    // (+ 8: assembly/words.ts reads a word's last 8 bytes whole.)
    grow(this.#arena, arenaUsed + n + 8, arenaUsed);
    // (+ 64: assembly/words.ts reads the document 64 bytes at a time.) Left there for a
    // scan of the same document (scanC), which copies it no more.
    const base = c.scratchWith(content, n, n + 64);
    // The table sized for a typical document, which has fewer distinct words than one per
    // 32 bytes, so that it stays at most half full: small enough to stay in cache. A
    // document with more words is read again with a table twice the size
    // (assembly/words.ts FULL).
    let slots = TABLE_MIN;
    while (slots < n / 16) slots *= 2;
    let k: number;
    for (;;) {
      if (slots * 16 > this.#table.size) {
        // Entries' generations start at 0, which no call gives: a grown table is cleared.
        c.arena.resize(this.#table, slots * 16, 0);
        c.u8.fill(0, this.#table.off, this.#table.off + this.#table.size);
      }
      k =
        c.ex.docWords(
          base,
          n,
          docId,
          this.#table.off,
          slots - 1,
          64 - Math.log2(slots),
          ++this.#gen,
          this.#pairs.off,
          this.#arena.off,
          this.#state.off,
          this.#hashBits,
        ) >>> 0;
      if (k !== WORDS_FULL) break;
      slots *= 2;
    }
    this.#numDocs++;
    return k;
  }

  /**
   * Finishes: the words found in at least `minDocs` documents, in byte order: their bytes
   * one after the other (word i is wordBytes[wordOff[i], wordOff[i + 1])), each word's
   * document count, and the offset of its list in `blob`.
   */
  finish(minDocs: number): { wordBytes: Buffer; wordOff: Uint32Array; counts: Uint32Array; offsets: Uint32Array; blob: Uint8Array } {
    if (!this.#live) throw new Error('WordsBuilder: already finished or disposed');
    const c = this.#core;
    const a = c.arena;
    const taken = new Taken(a);
    const take = (size: number): Block => taken.take(size);
    try {
      const min = Math.max(1, Math.floor(minDocs));
      const P = c.u32[this.#state.off / 4]!;
      a.free(this.#table); // (its room serves the blocks below)
      const sortedPairs = take(P * 16);
      const counts = take(c.ex.wordCountsBytes());
      const most = Math.floor(P / min) + 1;
      const outWord = take(most * 4);
      const outCount = take(most * 4);
      // Sorted by key and taken by runs (assembly/words.ts); each kept word's documents,
      // list after list, in the pairs' own region.
      const K = c.ex.groupWords(this.#pairs.off, P, sortedPairs.off, counts.off, min, this.#arena.off, outWord.off, outCount.off, this.#pairs.off) >>> 0;
      const bytes = take(K * 64 + 8);
      const offs = take((K + 1) * 4);
      c.ex.keptWordBytes(sortedPairs.off, outWord.off, K, this.#arena.off, bytes.off, offs.off);
      const memory = Buffer.from(c.u8.buffer, c.u8.byteOffset, c.u8.byteLength);
      const off = c.u32.subarray(offs.off / 4, offs.off / 4 + K + 1);
      // In byte order: sorted as latin1 strings (words are ASCII: their order is their
      // bytes'), each followed by "\0" and its number in three chars: no word holds "\0",
      // so the tail never decides the order, and a sort without a comparator compares
      // them natively (Buffer.compare per pair of words is much slower).
      const sorted: string[] = new Array<string>(K);
      for (let j = 0; j < K; j++)
        sorted[j] =
          memory.toString('latin1', bytes.off + off[j]!, bytes.off + off[j + 1]!) + String.fromCharCode(0, (j >>> 16) & 0xff, (j >>> 8) & 0xff, j & 0xff);
      sorted.sort();
      const listCount = c.u32.slice(outCount.off / 4, outCount.off / 4 + K);
      const listStart = new Uint32Array(K + 1);
      for (let j = 0; j < K; j++) listStart[j + 1] = listStart[j]! + listCount[j]!;
      const wordOff = new Uint32Array(K + 1);
      const wordCounts = new Uint32Array(K);
      const docsSorted = take(listStart[K]! * 4);
      const docsFrom = this.#pairs.off / 4;
      let at = docsSorted.off / 4;
      for (let i = 0; i < K; i++) {
        const s = sorted[i]!;
        const j = (s.charCodeAt(s.length - 3) << 16) | (s.charCodeAt(s.length - 2) << 8) | s.charCodeAt(s.length - 1);
        wordOff[i + 1] = wordOff[i]! + s.length - 4;
        wordCounts[i] = listCount[j]!;
        c.u32.copyWithin(at, docsFrom + listStart[j]!, docsFrom + listStart[j + 1]!);
        at += listCount[j]!;
      }
      const wordBytes = Buffer.allocUnsafe(wordOff[K]!);
      for (let i = 0; i < K; i++) wordBytes.write(sorted[i]!, wordOff[i]!, wordOff[i + 1]! - wordOff[i]!, 'latin1');
      // Encoded by the core, as PostingsBuilder's lists are.
      const countsBlock = take(K * 4);
      const blobBlock = take(listStart[K]! * 5 + 16);
      const offsetsBlock = take(K * 4);
      c.u32.set(wordCounts, countsBlock.off / 4);
      const blobLen = c.ex.encodeLists(docsSorted.off, countsBlock.off, K, blobBlock.off, offsetsBlock.off) >>> 0;
      return {
        wordBytes,
        wordOff,
        counts: wordCounts,
        offsets: c.u32.slice(offsetsBlock.off / 4, offsetsBlock.off / 4 + K),
        blob: c.u8.slice(blobBlock.off, blobBlock.off + blobLen),
      };
    } finally {
      taken.free();
      this.dispose();
    }
  }

  /** Releases the builder's regions. finish() calls it; calling it again is a no-op. */
  dispose(): void {
    if (!this.#live) return;
    this.#live = false;
    const a = this.#core.arena;
    for (const b of [this.#table, this.#pairs, this.#arena, this.#state]) a.free(b);
  }
}

/** The per-document words table's least size, in entries (a power of two). */
const TABLE_MIN = 1024;
/** docWords' answer when its table is too small (core/assembly/words.ts FULL). */
const WORDS_FULL = 0xffffffff;
