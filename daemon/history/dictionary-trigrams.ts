// Which words of a word counts dictionary (word-counts.ts: the words in byte order, each
// followed by "\n") hold a literal of word bytes, without reading the whole dictionary.
// One Buffer.indexOf over it is one native pass, but a pass over every page of a dictionary
// of hundreds of kilobytes, which is most of a `history:yes` query's word counting when the
// pages are cold (another process ran in between). Here each trigram of the dictionary
// lists the words holding it; a literal's words are among those of its rarest trigram, and
// each of those is checked whole.
//
// Layout, built in memory the first time a dictionary is searched (two passes over it):
// bytes are coded in 6 bits (the 63 ASCII word bytes; every other byte, the UTF-8 of K and
// ſ, is code 63), a trigram is its three codes (18 bits), `offsets[t]..offsets[t + 1]` is
// the range of `words` listing the words holding trigram t, ascending, each once. A literal
// of word bytes never holds code 63, so conflating the other bytes only adds words that the
// whole check then drops.

const BITS = 6;
const KEYS = 1 << (3 * BITS);
const OTHER = (1 << BITS) - 1;

/** Each byte's 6-bit code: the ASCII word bytes [0-9A-Z_a-z] 0 to 62, any other OTHER. */
const CODE = (() => {
  const code = new Uint8Array(256).fill(OTHER);
  const word = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
  for (let i = 0; i < word.length; i++) code[word.charCodeAt(i)] = i;
  return code;
})();

export class DictionaryTrigrams {
  private constructor(
    private readonly dict: Uint8Array,
    private readonly starts: Uint32Array,
    private readonly offsets: Uint32Array,
    private readonly words: Uint32Array,
  ) {}

  /**
   * The index of `dict`, whose word w is `dict[starts[w], starts[w + 1] - 1)` (its "\n"
   * after it; `starts` has one entry past the last word), made once per dictionary object.
   */
  static of(dict: Uint8Array, starts: Uint32Array): DictionaryTrigrams {
    let made = built.get(dict);
    if (made === undefined) built.set(dict, (made = new DictionaryTrigrams(dict, starts, ...trigramLists(dict, starts))));
    return made;
  }

  /** The words whose bytes hold `needle` (at least 3 bytes), ascending. */
  holding(needle: Uint8Array): number[] {
    const out: number[] = [];
    if (needle.length < 3) throw new RangeError('a literal of at least 3 bytes is looked up by its trigrams');
    let from = 0;
    let to = this.words.length;
    let key = 0;
    for (let i = 0; i < needle.length; i++) {
      key = ((key << BITS) | CODE[needle[i]!]!) & (KEYS - 1);
      if (i < 2) continue;
      const n = this.offsets[key + 1]! - this.offsets[key]!;
      if (n < to - from) {
        from = this.offsets[key]!;
        to = this.offsets[key + 1]!;
      }
    }
    for (let e = from; e < to; e++) {
      const w = this.words[e]!;
      if (holds(this.dict, this.starts[w]!, this.starts[w + 1]! - 1, needle)) out.push(w);
    }
    return out;
  }
}

const built = new WeakMap<Uint8Array, DictionaryTrigrams>();

/** The offsets and word lists of the layout above. */
function trigramLists(dict: Uint8Array, starts: Uint32Array): [Uint32Array, Uint32Array] {
  const wordCount = starts.length - 1;
  const offsets = new Uint32Array(KEYS + 1);
  // The last word counted for each trigram: a word holding one twice lists it once.
  const last = new Int32Array(KEYS).fill(-1);
  const each = (visit: (key: number, w: number) => void): void => {
    for (let w = 0; w < wordCount; w++) {
      const end = starts[w + 1]! - 1;
      let key = 0;
      for (let i = starts[w]!; i < end; i++) {
        key = ((key << BITS) | CODE[dict[i]!]!) & (KEYS - 1);
        if (i - starts[w]! >= 2 && last[key] !== w) {
          last[key] = w;
          visit(key, w);
        }
      }
    }
  };
  each((key) => offsets[key + 1]!++);
  for (let k = 0; k < KEYS; k++) offsets[k + 1]! += offsets[k]!;
  const words = new Uint32Array(offsets[KEYS]!);
  const next = offsets.slice(0, KEYS);
  last.fill(-1);
  each((key, w) => {
    words[next[key]!++] = w;
  });
  return [offsets, words];
}

/** Whether `dict[from, to)` holds `needle`. */
function holds(dict: Uint8Array, from: number, to: number, needle: Uint8Array): boolean {
  const n = needle.length;
  const first = needle[0]!;
  for (let p = from; p + n <= to; p++) {
    if (dict[p] !== first) continue;
    let k = 1;
    while (k < n && dict[p + k] === needle[k]) k++;
    if (k === n) return true;
  }
  return false;
}
