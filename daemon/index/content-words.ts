// The content-words section (shard format version 6): the documents that contain each
// common word, so that a search can tell that a document holds a literal without reading
// it. A negated literal (`mutex_lock -mutex_unlock`) is the case it is for: its trigrams are
// in nearly every candidate of the positive term, so the trigram index cannot rule the
// candidates out, and checking each by its bytes reads most of the repository per search.
//
// A word is a maximal run of ASCII word bytes [A-Za-z0-9_] of 3 to 64 bytes, with its
// case (core/assembly/words.ts). A document listed under a word holds those exact bytes
// with no word byte on either side; a literal that is such a word therefore matches it,
// case-sensitively and so also case-insensitively. The converse does not hold (the bytes
// can also occur inside a longer word, or in another case), so a document not listed is
// decided by its bytes as before. Only words found in at least `minDocs` documents of the
// shard are kept: a rarer word's literal has few candidates holding its trigrams, and the
// dictionary stays a small fraction of the shard. A large build's shards get the section
// empty (no word listed), and the symbols pass writes the real one into their symbols
// files (shard-format.ts, symbols file version 2), which stands for it once committed.
//
// # Layout
//
// All integers are little-endian u32; the arrays start at multiples of 4 bytes.
//
//   0   wordCount N
//   4   minDocs       the builder's threshold (documents)
//   8   wordBytes W   length of the words' bytes
//   12  reserved      0
//   16  wordOff[N + 1]   word n is words[wordOff[n] .. wordOff[n + 1]), in byte order
//       count[N]         documents listing each word
//       listOff[N + 1]   word n's list is postings[listOff[n] .. listOff[n + 1])
//       words            W bytes, padded with zeros to a multiple of 4
//       postings         each list: ascending document numbers, LEB128 varint deltas, as
//                        content-postings (core/index.ts decodePostings reads them)
//
// Worked example: documents 0 "int foo;" and 1 "foo(bar);" with minDocs 1 give the words
// "bar" (document 1), "foo" (0, 1) and "int" (0): N = 3, W = 9, wordOff = [0, 3, 6, 9],
// count = [1, 2, 1], listOff = [0, 1, 3, 4], words "barfooint" + 3 zeros, postings
// 01 | 00 01 | 00.

import { ANY_ID, decodePostings, WordsBuilder } from '../../core/index.ts';

const HEADER = 16;
/** Words in fewer documents of a shard are not listed (see above). */
export const WORD_MIN_DOCS = 8;
/** A word's bounds (core/assembly/words.ts MIN_WORD, MAX_WORD). */
const MIN_WORD = 3;
const MAX_WORD = 64;

const pad4 = (n: number) => (n + 3) & ~3;

/** Whether `bytes` can be listed: a word by the rule above. */
export function isListableWord(bytes: Uint8Array): boolean {
  if (bytes.length < MIN_WORD || bytes.length > MAX_WORD) return false;
  for (const b of bytes) {
    const letter = (b | 0x20) >= 0x61 && (b | 0x20) <= 0x7a;
    if (!letter && !(b >= 0x30 && b <= 0x39) && b !== 0x5f) return false;
  }
  return true;
}

/** The section of a builder's words (WordsBuilder.finish). */
export function encodeContentWords(built: ReturnType<WordsBuilder['finish']>, minDocs: number): Uint8Array {
  const n = built.counts.length;
  const wordBytes = built.wordBytes.length;
  const arrays = 4 * (n + 1 + n + (n + 1));
  const out = new Uint8Array(HEADER + arrays + pad4(wordBytes) + built.blob.length);
  const u32 = new Uint32Array(out.buffer, 0, (HEADER + arrays) / 4);
  u32[0] = n;
  u32[1] = minDocs;
  u32[2] = wordBytes;
  const wordOff = 4;
  const count = wordOff + n + 1;
  const listOff = count + n;
  u32.set(built.wordOff, wordOff);
  u32.set(built.counts, count);
  u32.set(built.offsets, listOff);
  u32[listOff + n] = built.blob.length;
  out.set(built.wordBytes, HEADER + arrays);
  out.set(built.blob, HEADER + arrays + pad4(wordBytes));
  return out;
}

/** The section of the documents given in order: what the shard builder builds as it goes, and the symbols pass (symbols-pass.ts) at once. */
export function contentWordsOf(docs: readonly Uint8Array[], minDocs = WORD_MIN_DOCS): Uint8Array {
  const b = new WordsBuilder();
  try {
    docs.forEach((d, i) => b.add(i, d));
  } catch (err) {
    b.dispose();
    throw err;
  }
  return encodeContentWords(b.finish(minDocs), minDocs);
}

/** A content-words section, read in place. */
export class ContentWords {
  readonly minDocs: number;
  private readonly n: number;
  private readonly wordOff: Uint32Array;
  private readonly counts: Uint32Array;
  private readonly listOff: Uint32Array;
  private readonly words: Buffer;
  private readonly postings: Buffer;
  /** The shard's documents: what every listed document lies below. */
  private readonly docCount: number;

  /**
   * Throws a plain Error when the section is inconsistent (the caller names the shard).
   * The section may be read before its checksum is verified (section-checks.ts): its shape
   * is checked here, each list where it is decoded (`docCount` bounds its documents).
   */
  constructor(section: Buffer, docCount = ANY_ID) {
    if (section.length < HEADER || section.byteOffset % 4 !== 0) throw new Error('content-words section is truncated or misaligned');
    const n = section.readUInt32LE(0);
    this.docCount = docCount;
    this.minDocs = section.readUInt32LE(4);
    const wordBytes = section.readUInt32LE(8);
    const arrays = 4 * (3 * n + 2);
    const postingsAt = HEADER + arrays + pad4(wordBytes);
    if (postingsAt > section.length) throw new Error('content-words section is truncated');
    const all = new Uint32Array(section.buffer, section.byteOffset + HEADER, 3 * n + 2);
    this.n = n;
    this.wordOff = all.subarray(0, n + 1);
    this.counts = all.subarray(n + 1, 2 * n + 1);
    this.listOff = all.subarray(2 * n + 1, 3 * n + 2);
    this.words = section.subarray(HEADER + arrays, HEADER + arrays + wordBytes);
    this.postings = section.subarray(postingsAt);
    if (this.wordOff[n] !== wordBytes || this.listOff[n]! > this.postings.length) throw new Error('content-words section is inconsistent');
  }

  /** Words listed. */
  get size(): number {
    return this.n;
  }

  /**
   * The documents listed under `word` (ascending), or null when it is not listed (not a
   * word, or in fewer than minDocs documents): then nothing is known.
   */
  docsWith(word: Uint8Array): Uint32Array | null {
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = Buffer.compare(this.words.subarray(this.wordOff[mid]!, this.wordOff[mid + 1]!), word);
      if (c < 0) lo = mid + 1;
      else if (c > 0) hi = mid - 1;
      else return decodePostings(this.postings.subarray(this.listOff[mid]!, this.listOff[mid + 1]!), this.counts[mid]!, this.docCount);
    }
    return null;
  }
}
