// The content-words section (content-words.ts): its worked example byte for byte, what a
// word is (a table), and every listed word's documents against a plain scan of random
// documents, with the minDocs threshold.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContentWords, contentWordsOf, encodeContentWords, isListableWord } from '../../daemon/index/content-words.ts';
import { WordsBuilder } from '../../core/index.ts';
import { prng } from '../helpers/corpus.ts';

test('the worked example of content-words.ts holds byte for byte', () => {
  const section = Buffer.from(contentWordsOf([Buffer.from('int foo;'), Buffer.from('foo(bar);')], 1));
  const u32 = (i: number) => section.readUInt32LE(4 * i);
  assert.deepEqual([u32(0), u32(1), u32(2), u32(3)], [3, 1, 9, 0]);
  assert.deepEqual([4, 5, 6, 7].map(u32), [0, 3, 6, 9]); // wordOff
  assert.deepEqual([8, 9, 10].map(u32), [1, 2, 1]); // count
  assert.deepEqual([11, 12, 13, 14].map(u32), [0, 1, 3, 4]); // listOff
  assert.equal(section.toString('latin1', 60, 72), 'barfooint\0\0\0');
  assert.deepEqual([...section.subarray(72)], [0x01, 0x00, 0x01, 0x00]);
  const words = new ContentWords(section);
  assert.deepEqual([...words.docsWith(Buffer.from('foo'))!], [0, 1]);
  assert.deepEqual([...words.docsWith(Buffer.from('bar'))!], [1]);
  assert.equal(words.docsWith(Buffer.from('fo')), null);
});

test('what a word is', () => {
  const table: Array<[string, string[]]> = [
    ['int x;', ['int']],
    ['mutex_unlock(&lock->base);', ['mutex_unlock', 'lock', 'base']],
    ['__init _a9 a_b 0x1F 1234 ab', ['__init', '_a9', 'a_b', '0x1F', '1234']],
    ['Ünïcode naïve café', ['code', 'caf']],
    [`${'x'.repeat(64)} ${'y'.repeat(65)}`, ['x'.repeat(64)]],
    ['foo-bar.baz/qux', ['foo', 'bar', 'baz', 'qux']],
    ['FOO foo Foo', ['FOO', 'Foo', 'foo']],
  ];
  for (const [text, expected] of table) {
    const words = new ContentWords(Buffer.from(contentWordsOf([Buffer.from(text)], 1)));
    assert.equal(words.size, expected.length, text);
    for (const w of expected) assert.deepEqual([...(words.docsWith(Buffer.from(w)) ?? [])], [0], `${text}: ${w}`);
  }
  for (const [w, ok] of [
    ['abc', true],
    ['ab', false],
    ['a_1', true],
    ['a-b', false],
    ['ü12', false],
    ['x'.repeat(65), false],
    ['x'.repeat(64), true],
  ] as const) {
    assert.equal(isListableWord(Buffer.from(w)), ok, w);
  }
});

test('words are found wherever they lie against the 64-byte windows the core reads', () => {
  // A word starting, ending or crossing at every offset around a window's edge, documents
  // ending inside a word and right after one, and words of 63-65 bytes across two windows.
  for (let at = 56; at <= 72; at++) {
    for (const word of ['abc', 'mutex_unlock', 'x'.repeat(63), 'y'.repeat(64), 'z'.repeat(65)]) {
      for (const after of ['', ' ', ';'.repeat(70)]) {
        const text = '.'.repeat(at) + word + after;
        const words = new ContentWords(Buffer.from(contentWordsOf([Buffer.from(text), Buffer.from(`(${word})`)], 1)));
        const listed = word.length <= 64;
        assert.equal(words.size, listed ? 1 : 0, `${at} ${word.length} ${after.length}`);
        if (listed) assert.deepEqual([...(words.docsWith(Buffer.from(word)) ?? [])], [0, 1], `${at} ${word.length} ${after.length}`);
      }
    }
  }
});

test('every listed word lists exactly the documents holding it, and only words in minDocs documents are listed', () => {
  const rnd = prng(77);
  const alphabet = 'abAB_01 ;\n(é';
  const docs: Buffer[] = [];
  for (let d = 0; d < 3000; d++) {
    let s = '';
    for (let i = rnd.int(400); i > 0; i--) s += alphabet[rnd.int(alphabet.length)];
    docs.push(Buffer.from(s));
  }
  const minDocs = 3;
  const words = new ContentWords(Buffer.from(contentWordsOf(docs, minDocs)));
  const expected = new Map<string, number[]>();
  docs.forEach((d, i) => {
    for (const m of d.toString('latin1').matchAll(/[A-Za-z0-9_]+/g)) {
      if (m[0].length < 3 || m[0].length > 64) continue;
      const list = expected.get(m[0]) ?? [];
      if (list.at(-1) !== i) list.push(i);
      expected.set(m[0], list);
    }
  });
  let listed = 0;
  for (const [w, list] of expected) {
    const got = words.docsWith(Buffer.from(w, 'latin1'));
    if (list.length < minDocs) {
      assert.equal(got, null, w);
      continue;
    }
    listed++;
    assert.deepEqual([...got!], list, w);
  }
  assert.equal(words.size, listed);
  assert.ok(listed > 1000 && expected.size > 10_000, `${listed} of ${expected.size} words listed`);
});

test('long words that share a key are told apart by their bytes (the hash narrowed to force it)', () => {
  // Words of 9..64 bytes get a hashed key (core/assembly/words.ts); with 0 or 1 bits of
  // hash kept, every long word of one length shares a key with the others of that length,
  // so the runs of a key hold several words, which must be split by their bytes.
  const rnd = prng(2024);
  const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_';
  const vocabulary: string[] = [];
  for (let i = 0; i < 120; i++) {
    const len = 9 + rnd.int(8); // few lengths: many words per length
    let w = '';
    for (let k = 0; k < len; k++) w += letters[rnd.int(letters.length)];
    vocabulary.push(w);
  }
  vocabulary.push('abc', 'mutex_lock', 'x'.repeat(64));
  const docs: Buffer[] = [];
  for (let d = 0; d < 400; d++) {
    const words: string[] = [];
    for (let i = rnd.int(30); i > 0; i--) words.push(rnd.pick(vocabulary));
    docs.push(Buffer.from(words.join(rnd.chance(0.5) ? ' ' : ';\n')));
  }
  const expected = new Map<string, number[]>();
  docs.forEach((d, i) => {
    for (const m of d.toString('latin1').matchAll(/[A-Za-z0-9_]+/g)) {
      const list = expected.get(m[0]) ?? [];
      if (list.at(-1) !== i) list.push(i);
      expected.set(m[0], list);
    }
  });
  for (const hashBits of [0, 1, 57]) {
    for (const minDocs of [1, 5]) {
      const b = new WordsBuilder({ hashBits });
      docs.forEach((d, i) => b.add(i, d));
      const words = new ContentWords(Buffer.from(encodeContentWords(b.finish(minDocs), minDocs)));
      let listed = 0;
      for (const [w, list] of expected) {
        const got = words.docsWith(Buffer.from(w, 'latin1'));
        if (list.length < minDocs) {
          assert.equal(got, null, `${hashBits} ${w}`);
          continue;
        }
        listed++;
        assert.deepEqual([...got!], list, `${hashBits} ${w}`);
      }
      assert.equal(words.size, listed, `hashBits ${hashBits}, minDocs ${minDocs}`);
    }
  }
});

test('a narrowed hash gives the same section as the full one', () => {
  const rnd = prng(5);
  const docs = Array.from({ length: 300 }, () => {
    let s = '';
    for (let i = rnd.int(600); i > 0; i--) s += 'ab_Z9 ;\n'[rnd.int(8)];
    return Buffer.from(s);
  });
  const section = (hashBits: number) => {
    const b = new WordsBuilder({ hashBits });
    docs.forEach((d, i) => b.add(i, d));
    return Buffer.from(encodeContentWords(b.finish(2), 2));
  };
  const full = section(57);
  assert.ok(new ContentWords(full).size > 500);
  for (const bits of [0, 3]) assert.ok(section(bits).equals(full), `hashBits ${bits}`);
});

test('a document with more distinct words than its first table holds is read again with a larger one', () => {
  // ~5 bytes a word: 3,000 distinct words in 15 KB, where the table is sized for ~1 word
  // in 45 bytes (core/index.ts WordsBuilder.add), so the first tries are too small.
  const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36).padStart(3, '0')}`);
  const dense = Buffer.from(words.join(' '));
  const docs = [Buffer.from('w000 w001 other'), dense, Buffer.from(words.slice(1000, 1010).join('\n'))];
  const section = new ContentWords(Buffer.from(contentWordsOf(docs, 1)));
  assert.equal(section.size, 3001);
  assert.deepEqual([...section.docsWith(Buffer.from('w000'))!], [0, 1]);
  assert.deepEqual([...section.docsWith(Buffer.from(words[1005]!))!], [1, 2]);
  assert.deepEqual([...section.docsWith(Buffer.from(words[2999]!))!], [1]);
  assert.deepEqual([...section.docsWith(Buffer.from('other'))!], [0]);
});
