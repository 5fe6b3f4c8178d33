// Tests of the WebAssembly core (core/*.ts + core/assembly/*): every function is
// compared with a plain-JS reference implementation written here, on seeded random
// inputs chosen to hit the edge cases of the SIMD code (sizes around 16 / 32, matches at
// the very start / end, bytes >= 0x80, Kelvin / long-s sequences, truncated sequences).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import {
  PostingsBuilder,
  REQUIRED_EXPORTS,
  decodePostings,
  containsLiteral,
  findLiteral,
  probeOffsets,
  foldBytes,
  hash32,
  Hash32Stream,
  holdsSorted,
  indexOfSorted,
  intersectPostings,
  intersectSorted,
  MalformedPostings,
  trigramId,
  unionSorted,
} from '../../core/index.ts';
import { caseFoldOrbit } from '../../daemon/query/case-fold.ts';

// ---------------------------------------------------------------------------------------
// Seeded randomness.

/** Small deterministic generator: xorshift32 state, output scrambled by a multiply. */
class Rng {
  #s: number;
  constructor(seed: number) {
    this.#s = seed >>> 0 || 0x9e3779b9;
  }
  u32(): number {
    let x = this.#s;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    this.#s = x;
    return Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) >>> 0;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor((this.u32() / 2 ** 32) * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }
}

const enc = new TextEncoder();
const KELVIN = [0xe2, 0x84, 0xaa];
const LONG_S = [0xc5, 0xbf];
/** Lengths around the 16-byte SIMD width and its multiples. */
const EDGE_SIZES = [0, 1, 2, 3, 4, 5, 7, 8, 9, 14, 15, 16, 17, 18, 30, 31, 32, 33, 34, 47, 48, 49, 63, 64, 65, 127, 128, 129];

type Flavor = 'ascii' | 'tiny' | 'special' | 'binary' | 'code';
const FLAVORS: readonly Flavor[] = ['ascii', 'tiny', 'special', 'binary', 'code'];

const CODE_WORDS = [
  'function',
  ' ',
  '\n',
  '  ',
  'return',
  'const',
  ' = ',
  '(',
  ')',
  '{',
  '}',
  ';',
  'x',
  'Value',
  'KEY',
  'key',
  'if',
  'else',
  '0',
  '1',
  '//',
  'ſtuff',
  'K',
  'Kelvin',
  '\u212Aey',
].map((w) => enc.encode(w));

/** Random bytes of length exactly n, in one of several flavours. */
function randomBytes(rng: Rng, n: number, flavor: Flavor = rng.pick(FLAVORS)): Uint8Array {
  const out = new Uint8Array(n);
  let i = 0;
  const put = (bytes: readonly number[] | Uint8Array) => {
    for (const b of bytes) if (i < n) out[i++] = b;
  };
  while (i < n) {
    switch (flavor) {
      case 'ascii':
        out[i++] = 0x20 + rng.int(95);
        break;
      case 'tiny':
        // Few distinct bytes: many (overlapping) matches; letter pairs differing only in
        // 0x20 and non-letters differing only in 0x20 ('@' / '`', '[' / '{').
        out[i++] = rng.pick([0x61, 0x41, 0x62, 0x42, 0x40, 0x60, 0x5b, 0x7b]);
        break;
      case 'special': {
        const r = rng.int(12);
        if (r === 0) put(KELVIN);
        else if (r === 1) put(LONG_S);
        else if (r === 2) put([0xe2]);
        else if (r === 3) put([0xe2, 0x84]);
        else if (r === 4) put([0xc5]);
        else if (r === 5) put([0x80 + rng.int(128)]);
        else put([rng.pick([0x6b, 0x4b, 0x73, 0x53, 0x65, 0x45, 0x79, 0x20])]);
        break;
      }
      case 'binary': {
        const r = rng.u32();
        out[i++] = r & 0xff;
        if (i < n) out[i++] = (r >>> 8) & 0xff;
        if (i < n) out[i++] = (r >>> 16) & 0xff;
        if (i < n) out[i++] = r >>> 24;
        break;
      }
      case 'code':
        put(rng.pick(CODE_WORDS));
        break;
    }
  }
  return out;
}

function randomSize(rng: Rng): number {
  const r = rng.int(10);
  if (r < 4) return rng.pick(EDGE_SIZES);
  if (r < 8) return rng.int(300);
  return rng.int(5000);
}

const MB = 1 << 20;

// ---------------------------------------------------------------------------------------
// Reference implementations (plain JS, deliberately simple).

function lowerRef(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b + 32 : b;
}

/**
 * foldBytes's contract (core/fold.ts), derived here rather than copied: each member of an
 * ASCII letter's case-folding orbit, as RE2's (?i) matches it (the planner's
 * caseFoldOrbit), folds to the lower-case letter; every other byte stays. Indexed by the
 * first byte of the member's UTF-8 form.
 */
const FOLDS: ReadonlyArray<ReadonlyArray<{ bytes: Uint8Array; to: number }>> = (() => {
  const byLead = Array.from({ length: 256 }, () => [] as Array<{ bytes: Uint8Array; to: number }>);
  for (let to = 0x61; to <= 0x7a; to++) {
    for (const cp of caseFoldOrbit(to)) {
      if (cp === to) continue;
      const bytes = enc.encode(String.fromCodePoint(cp));
      byLead[bytes[0]!]!.push({ bytes, to });
    }
  }
  return byLead;
})();

function foldRef(src: Uint8Array): Uint8Array {
  const out = new Uint8Array(src.length);
  let o = 0;
  for (let i = 0; i < src.length; i++) {
    const b = src[i]!;
    const fold = FOLDS[b]!.find((f) => f.bytes.every((x, k) => src[i + k] === x));
    if (fold) {
      out[o++] = fold.to;
      i += fold.bytes.length - 1;
    } else {
      out[o++] = b;
    }
  }
  return out.slice(0, o);
}

function trigramSetRef(src: Uint8Array): Set<number> {
  const f = foldRef(src);
  const set = new Set<number>();
  for (let i = 0; i + 2 < f.length; i++) set.add(f[i]! * 65536 + f[i + 1]! * 256 + f[i + 2]!);
  return set;
}

/** Each trigram's follow mask in src: bit (b & 7) of every folded byte b after it (a zero after the last). */
function followRef(src: Uint8Array): Map<number, number> {
  const f = foldRef(src);
  const m = new Map<number, number>();
  for (let i = 0; i + 2 < f.length; i++) {
    const id = f[i]! * 65536 + f[i + 1]! * 256 + f[i + 2]!;
    m.set(id, (m.get(id) ?? 0) | (1 << ((f[i + 3] ?? 0) & 7)));
  }
  return m;
}

function sortedRef(xs: Iterable<number>): Uint32Array {
  return Uint32Array.from(xs).sort();
}

/** LEB128 varints of the deltas, as documented in core/postings-builder.ts. */
function encodeListRef(docs: readonly number[]): number[] {
  const out: number[] = [];
  let prev = 0;
  for (const d of docs) {
    let v = d - prev;
    prev = d;
    while (v >= 0x80) {
      out.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    out.push(v);
  }
  return out;
}

function findRef(hay: Uint8Array, needle: Uint8Array, ci: boolean, max: number): number[] {
  const out: number[] = [];
  const m = needle.length;
  if (m === 0) return out;
  let i = 0;
  while (i + m <= hay.length && out.length < max) {
    let ok = true;
    for (let j = 0; j < m; j++) {
      const a = hay[i + j]!;
      const b = needle[j]!;
      if (ci ? lowerRef(a) !== lowerRef(b) : a !== b) {
        ok = false;
        break;
      }
    }
    if (ok) {
      out.push(i);
      i += m;
    } else {
      i++;
    }
  }
  return out;
}

function xxh32Ref(data: Uint8Array, seed = 0): number {
  const P1 = 0x9e3779b1,
    P2 = 0x85ebca77,
    P3 = 0xc2b2ae3d,
    P4 = 0x27d4eb2f,
    P5 = 0x165667b1;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  const rd = (i: number) => (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24)) >>> 0;
  const rnd = (acc: number, lane: number) => Math.imul(rotl((acc + Math.imul(lane, P2)) >>> 0, 13), P1) >>> 0;
  const n = data.length;
  let i = 0;
  let h: number;
  if (n >= 16) {
    let a = (seed + P1 + P2) >>> 0,
      b = (seed + P2) >>> 0,
      c = seed >>> 0,
      d = (seed - P1) >>> 0;
    for (; i + 16 <= n; i += 16) {
      a = rnd(a, rd(i));
      b = rnd(b, rd(i + 4));
      c = rnd(c, rd(i + 8));
      d = rnd(d, rd(i + 12));
    }
    h = (rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18)) >>> 0;
  } else {
    h = (seed + P5) >>> 0;
  }
  h = (h + n) >>> 0;
  for (; i + 4 <= n; i += 4) h = Math.imul(rotl((h + Math.imul(rd(i), P3)) >>> 0, 17), P4) >>> 0;
  for (; i < n; i++) h = Math.imul(rotl((h + Math.imul(data[i]!, P5)) >>> 0, 11), P1) >>> 0;
  h ^= h >>> 15;
  h = Math.imul(h, P2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, P3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/** Plain two-pointer merges (the core gallops when sizes are skewed). */
function intersectRef(a: Uint32Array, b: Uint32Array): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++;
    else if (b[j]! < a[i]!) j++;
    else {
      out.push(a[i]!);
      i++;
      j++;
    }
  }
  return out;
}

function unionRef(a: Uint32Array, b: Uint32Array): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i++]!);
    else if (i >= a.length || b[j]! < a[i]!) out.push(b[j++]!);
    else {
      out.push(a[i++]!);
      j++;
    }
  }
  return out;
}

/** Strictly ascending random set of about n values below `range`. */
function randomSet(rng: Rng, n: number, range: number): Uint32Array {
  const set = new Set<number>();
  for (let i = 0; i < n; i++) set.add(rng.int(range));
  return sortedRef(set);
}

function same(actual: ArrayLike<number>, expected: ArrayLike<number>, what: string): void {
  // Comparing as plain arrays keeps failure diffs readable and ignores the array type.
  if (actual.length === expected.length) {
    let ok = true;
    for (let i = 0; i < actual.length; i++)
      if (actual[i] !== expected[i]) {
        ok = false;
        break;
      }
    if (ok) return;
  }
  assert.deepEqual(Array.from(actual).slice(0, 200), Array.from(expected).slice(0, 200), `${what} (lengths ${actual.length} / ${expected.length})`);
  assert.fail(`${what}: differs beyond the first 200 entries`);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

// No DOM library in the compiler options, hence no WebAssembly typings: type what is used.
const Wasm = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => object;
      Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
      Memory: new (desc: { initial: number }) => object;
    };
  }
).WebAssembly;

// ---------------------------------------------------------------------------------------

test('the built module exports what the glue requires, and nothing else', () => {
  const files = ['../../core/build/trawl-core.wasm', '../../core/build/trawl-core.debug.wasm']
    .map((p) => new URL(p, import.meta.url))
    .filter((u) => existsSync(u));
  assert.ok(files.length >= 1, 'core/build/trawl-core.wasm exists');
  for (const url of files) {
    const mod = new Wasm.Module(readFileSync(url));
    const inst = new Wasm.Instance(mod, {
      env: {
        abort() {
          throw new Error('abort');
        },
      },
    });
    for (const name of REQUIRED_EXPORTS) assert.ok(name in inst.exports, `${url.pathname} exports ${name}`);
    // An export the glue does not call is dead code in the module (or the module is older
    // than its sources: rebuild it with npm run build:wasm).
    for (const name of Object.keys(inst.exports))
      assert.ok(REQUIRED_EXPORTS.includes(name), `${url.pathname} exports ${name}, which the glue (core/exports.ts) does not use`);
    assert.ok(inst.exports.memory instanceof Wasm.Memory);
  }
  assert.ok(REQUIRED_EXPORTS.includes('memory'));
});

test('foldBytes matches the reference', () => {
  const rng = new Rng(1);
  // Fixed cases: the multi-byte folds, truncated sequences at the end, neighbours.
  const fixed: Array<[number[], number[]]> = [
    [[], []],
    [[...KELVIN], [0x6b]],
    [[...LONG_S], [0x73]],
    [
      [0xe2, 0x84],
      [0xe2, 0x84],
    ],
    [[0xe2], [0xe2]],
    [[0xc5], [0xc5]],
    [
      [0x41, 0xe2, 0x84],
      [0x61, 0xe2, 0x84],
    ],
    [
      [0xe2, 0x84, 0xab],
      [0xe2, 0x84, 0xab],
    ],
    [
      [0xc5, 0xbe],
      [0xc5, 0xbe],
    ],
    [
      [0xe2, ...KELVIN],
      [0xe2, 0x6b],
    ],
    [
      [0xc5, ...LONG_S, 0x5a],
      [0xc5, 0x73, 0x7a],
    ],
    [
      [0x40, 0x5b, 0x60, 0x7b, 0xc0, 0xda],
      [0x40, 0x5b, 0x60, 0x7b, 0xc0, 0xda],
    ],
  ];
  for (const [src, want] of fixed) same(foldBytes(Uint8Array.from(src)), want, `fold ${hex(Uint8Array.from(src))}`);
  assert.equal(new TextDecoder().decode(foldBytes(enc.encode('\u212Aey ſtuff ABC xyz'))), 'key stuff abc xyz');
  // A Kelvin sign straddling every position of a 16-byte block.
  for (let at = 0; at < 40; at++) {
    const src = new Uint8Array(48).fill(0x41);
    src.set(KELVIN, at);
    same(foldBytes(src), foldRef(src), `kelvin at ${at}`);
  }
  for (let t = 0; t < 600; t++) {
    const src = randomBytes(rng, randomSize(rng));
    same(foldBytes(src), foldRef(src), `fold case ${t}`);
  }
  for (const flavor of FLAVORS) {
    const src = randomBytes(rng, MB + rng.int(100), flavor);
    same(foldBytes(src), foldRef(src), `fold 1 MB ${flavor}`);
  }
  // Every byte value alone, and every code point (surrogates are not characters) in one
  // UTF-8 text: the table is complete, and folds nothing else.
  for (let b = 0; b < 256; b++) same(foldBytes(Uint8Array.of(b)), foldRef(Uint8Array.of(b)), `byte ${b}`);
  const cps: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) if (cp < 0xd800 || cp > 0xdfff) cps.push(cp);
  const every = Buffer.concat(
    Array.from({ length: Math.ceil(cps.length / 4096) }, (_, k) => enc.encode(String.fromCodePoint(...cps.slice(k * 4096, (k + 1) * 4096)))),
  );
  same(foldBytes(every), foldRef(every), 'every code point');
});

test('trigramId packs three bytes', () => {
  assert.equal(trigramId(0x6b, 0x65, 0x79), 0x6b6579);
  assert.equal(trigramId(0xff, 0xff, 0xff), 0xffffff);
  assert.equal(trigramId(0, 0, 1), 1);
  assert.equal(trigramId(0x16b, -1, 0x100), 0x6bff00);
});

test('PostingsBuilder round trip matches a JS map of trigram -> docs, by the counting table and by sorting', () => {
  const rng = new Rng(3);
  const bigHay = randomBytes(rng, 3 * MB + 12_345, 'tiny');
  // finish() picks the path by size (a small builder sorts); each is also forced, on both
  // kinds of input.
  const paths = [undefined, 'table', 'sort', 'table', 'sort'] as const;
  for (let round = 0; round < paths.length; round++) {
    const builder = new PostingsBuilder({ expectedBytes: round === 0 ? 0 : 1 << 20 });
    const expected = new Map<number, number[]>();
    const expectedFollow = new Map<number, number[]>();
    let docId = 0;
    let rejected = 0;
    // Rounds 3 and 4: fewer, larger, source-like documents.
    const docs = round >= 3 ? 12 : 300;
    for (let t = 0; t < docs; t++) {
      const size = round >= 3 ? 20_000 + rng.int(150_000) : randomSize(rng);
      const content = round >= 3 ? randomBytes(rng, size, rng.pick(['code', 'special'])) : randomBytes(rng, size);
      const set = trigramSetRef(content);
      // Mostly unlimited; sometimes exactly at or just below the distinct count.
      const r = rng.int(6);
      const limit = r === 0 ? set.size : r === 1 ? Math.max(0, set.size - 1) : r === 2 ? rng.int(50) : 0x7fffffff;
      const got = builder.addContent(docId, content, limit);
      if (set.size > limit) {
        assert.equal(got, -1, `doc ${t}: ${set.size} trigrams > limit ${limit}`);
        rejected++;
        // The id was not consumed: the next id must still be docId.
        assert.throws(() => builder.addContent(docId + 1, content, limit), RangeError);
        continue;
      }
      assert.equal(got, set.size, `doc ${t}: distinct trigram count`);
      const follows = followRef(content);
      for (const id of set) {
        let list = expected.get(id);
        if (!list) expected.set(id, (list = []));
        list.push(docId);
        let masks = expectedFollow.get(id);
        if (!masks) expectedFollow.set(id, (masks = []));
        masks.push(follows.get(id)!);
      }
      docId++;
      // Large hays through the shared io region while the builder's blocks are live, so
      // regions get moved / memory grows in the middle of a build.
      if (t % 97 === 50) {
        const hay = bigHay.subarray(rng.int(1000));
        same(findLiteral(hay, enc.encode('ab'), false, 5), findRef(hay, enc.encode('ab'), false, 5), 'find during build');
        same(foldBytes(hay.subarray(0, 4 * t)), foldRef(hay.subarray(0, 4 * t)), 'fold during build');
      }
    }
    assert.ok(round >= 3 || rejected > 0, 'some documents hit the limit');
    const path = paths[round];
    const { ids, counts, offsets, blob, follow } = builder.finish(path ? { path } : undefined);
    const wantIds = sortedRef(expected.keys());
    same(ids, wantIds, 'ids');
    same(
      counts,
      wantIds.map((id) => expected.get(id)!.length),
      'counts',
    );
    // Exact bytes: list i is encodeListRef(docs of ids[i]), lists back to back.
    let at = 0;
    for (let i = 0; i < ids.length; i++) {
      const want = encodeListRef(expected.get(ids[i]!)!);
      assert.equal(offsets[i], at, `offset of list ${i}`);
      same(blob.subarray(at, at + want.length), want, `bytes of list ${i}`);
      at += want.length;
    }
    assert.equal(blob.length, at, 'blob length');
    // The follow masks: list after list, one byte per posting.
    same(
      follow,
      [...wantIds].flatMap((id) => expectedFollow.get(id)!),
      'follow masks',
    );
    for (let i = 0; i < ids.length; i++) {
      // The list's bytes followed by everything after it, as a reader would pass them.
      same(decodePostings(blob.subarray(offsets[i]!), counts[i]!), expected.get(ids[i]!)!, `list of ${ids[i]}`);
    }
    // A second builder is allowed now.
    builder.dispose();
  }
});

test('PostingsBuilder segment masks: for each posting of a large document, the segments holding the trigram, by the counting table and by sorting', () => {
  const rng = new Rng(11);
  const shift = 8;
  const minBytes = 3000;
  for (const path of ['table', 'sort'] as const) {
    const builder = new PostingsBuilder({ expectedBytes: 1 << 20, segments: { shift, minBytes } });
    // id -> the masks of its postings of large documents, in document order.
    const expected = new Map<number, number[]>();
    const segmentedDocs: number[] = [];
    const segmentCounts: number[] = [];
    for (let d = 0; d < 40; d++) {
      const size = d % 3 === 0 ? rng.int(minBytes) : minBytes + rng.int(20_000);
      // 'code' and 'special' hold the code points whose folding shortens: their large documents get no masks.
      let content = randomBytes(rng, size, rng.pick(['ascii', 'tiny', 'ascii', 'tiny', 'code', 'special']));
      // A Kelvin sign folds to one byte: positions in the folded bytes are not the content's, so no masks.
      if (d % 7 === 6) content = Uint8Array.from([...content.subarray(0, size >> 1), 0xe2, 0x84, 0xaa, ...content.subarray(size >> 1)]);
      assert.ok(builder.addContent(d, content, 0x7fffffff) >= 0);
      const folded = foldRef(content);
      if (folded.length !== content.length || content.length < minBytes) continue;
      const segments = ((content.length - 1) >> shift) + 1;
      const width = ((segments - 1) >> 3) + 1;
      const masks = new Map<number, Uint8Array>();
      for (let p = 0; p + 2 < folded.length; p++) {
        const id = trigramId(folded[p]!, folded[p + 1]!, folded[p + 2]!);
        let m = masks.get(id);
        if (!m) masks.set(id, (m = new Uint8Array(width)));
        m[(p >> shift) >> 3]! |= 1 << ((p >> shift) & 7);
      }
      for (const [id, m] of masks) {
        let list = expected.get(id);
        if (!list) expected.set(id, (list = []));
        list.push(...m);
      }
      segmentedDocs.push(d);
      segmentCounts.push(segments);
    }
    const { ids, segments } = builder.finish({ path });
    assert.ok(segments !== null && segmentedDocs.length > 5, `${path}: some documents have masks (${segmentedDocs.length}, ${segments?.docs.length})`);
    same(segments.docs, segmentedDocs, `${path}: documents with masks`);
    same(segments.segments, segmentCounts, `${path}: their segments`);
    assert.equal(segments.shift, shift);
    assert.equal(segments.starts.length, ids.length + 1);
    for (let r = 0; r < ids.length; r++) {
      same(segments.masks.subarray(segments.starts[r]!, segments.starts[r + 1]!), expected.get(ids[r]!) ?? [], `${path}: masks of row ${r}`);
    }
  }
  // Without the option, or without a large document, there are none.
  const plain = new PostingsBuilder();
  plain.addContent(0, randomBytes(rng, 10_000, 'code'), 0x7fffffff);
  assert.equal(plain.finish().segments, null);
});

test("PostingsBuilder grouped: a group's posting, follow mask and segment masks are the union and ORs of its versions'", () => {
  const rng = new Rng(23);
  const shift = 8;
  const minBytes = 3000;
  for (const path of ['table', 'sort'] as const) {
    const builder = new PostingsBuilder({ expectedBytes: 1 << 20, segments: { shift, minBytes }, grouped: true });
    // The oracle: each version's own trigrams, follow bytes and segment masks, ORed per group.
    const lists = new Map<number, number[]>();
    const follows = new Map<number, Map<number, number>>();
    const masksOf = new Map<number, Map<number, Uint8Array>>();
    const segmentsOf = new Map<number, number>();
    let groups = 0;
    for (let g = 0; g < 30; g++) {
      const large = g % 3 !== 0;
      const base = randomBytes(rng, large ? minBytes + rng.int(12_000) : 50 + rng.int(2000), rng.pick(['ascii', 'tiny', 'code', 'special']));
      // Versions: the base with a piece replaced, longer or shorter (the largest one known beforehand).
      const versions = Array.from({ length: 1 + rng.int(5) }, () => {
        const at = rng.int(base.length);
        const piece = randomBytes(rng, rng.int(400), rng.pick(['ascii', 'tiny']));
        return Uint8Array.from([...base.subarray(0, at), ...piece, ...base.subarray(Math.min(base.length, at + rng.int(300)))]);
      });
      const groupBytes = Math.max(...versions.map((v) => v.length));
      let added = 0;
      let plain = true;
      let maxLength = 0;
      const masks = new Map<number, Uint8Array>();
      for (const v of versions) {
        const set = trigramSetRef(v);
        const limit = rng.int(8) === 0 ? Math.max(0, set.size - 1) : 0x7fffffff;
        const got = builder.addContent(added === 0 ? groups : groups - 1, v, limit, groupBytes);
        if (set.size > limit) {
          assert.equal(got, -1, 'a version past the limit is not added');
          continue;
        }
        assert.equal(got, set.size, "the version's own distinct count");
        if (added === 0) groups++;
        added++;
        const group = groups - 1;
        const follow = followRef(v);
        for (const id of set) {
          const list = lists.get(id) ?? [];
          if (list[list.length - 1] !== group) list.push(group);
          lists.set(id, list);
          const byGroup = follows.get(id) ?? new Map<number, number>();
          byGroup.set(group, (byGroup.get(group) ?? 0) | follow.get(id)!);
          follows.set(id, byGroup);
        }
        const folded = foldRef(v);
        maxLength = Math.max(maxLength, v.length);
        if (set.size > 0 && folded.length !== v.length) plain = false;
        for (let p = 0; p + 2 < folded.length; p++) {
          const id = trigramId(folded[p]!, folded[p + 1]!, folded[p + 2]!);
          let m = masks.get(id);
          if (!m) masks.set(id, (m = new Uint8Array(64)));
          m[(p >> shift) >> 3]! |= 1 << ((p >> shift) & 7);
        }
      }
      if (added > 0 && groupBytes >= minBytes && plain && masks.size > 0) {
        masksOf.set(groups - 1, masks);
        segmentsOf.set(groups - 1, ((maxLength - 1) >> shift) + 1);
      }
    }
    const { ids, counts, offsets, blob, follow, segments } = builder.finish({ path });
    const wantIds = sortedRef(lists.keys());
    same(ids, wantIds, `${path}: ids`);
    let posting = 0;
    for (let i = 0; i < ids.length; i++) {
      const want = lists.get(ids[i]!)!;
      same(decodePostings(blob.subarray(offsets[i]!), counts[i]!), want, `${path}: groups of ${ids[i]}`);
      same(
        follow.subarray(posting, posting + want.length),
        want.map((g) => follows.get(ids[i]!)!.get(g)!),
        `${path}: follow masks of ${ids[i]}`,
      );
      posting += want.length;
    }
    const segmented = [...masksOf.keys()];
    assert.ok(segments !== null && segmented.length > 3 && segmented.length < groups, `${path}: some groups have masks, not all (${segmented.length})`);
    same(segments.docs, segmented, `${path}: groups with masks`);
    same(
      segments.segments,
      segmented.map((g) => segmentsOf.get(g)!),
      `${path}: their segments`,
    );
    for (let r = 0; r < ids.length; r++) {
      const want = lists
        .get(ids[r]!)!
        .filter((g) => masksOf.has(g))
        .flatMap((g) => [
          ...masksOf
            .get(g)!
            .get(ids[r]!)!
            .subarray(0, ((segmentsOf.get(g)! - 1) >> 3) + 1),
        ]);
      same(segments.masks.subarray(segments.starts[r]!, segments.starts[r + 1]!), want, `${path}: segment masks of row ${r}`);
    }
  }
});

test('PostingsBuilder: one live builder per thread, ids in sequence, empty docs', () => {
  const a = new PostingsBuilder();
  assert.throws(() => new PostingsBuilder(), /another builder is live/);
  assert.throws(() => a.addContent(1, enc.encode('abc'), 10), RangeError);
  assert.equal(a.addContent(0, new Uint8Array(0), 10), 0);
  assert.equal(a.addContent(1, enc.encode('ab'), 0), 0);
  assert.equal(a.addContent(2, enc.encode('abc'), 0), -1);
  assert.equal(a.addContent(2, Uint8Array.from([...KELVIN, 0x45, 0x59]), 1), 1);
  assert.equal(a.addContent(3, enc.encode('KEY'), 1), 1);
  const r = a.finish();
  same(r.ids, [trigramId(0x6b, 0x65, 0x79)], 'kelvin folds into the key trigram');
  same(r.counts, [2], 'two docs');
  same(decodePostings(r.blob, 2), [2, 3], 'docs 2 and 3');
  assert.throws(() => a.addContent(4, enc.encode('abc'), 10), /finished or disposed/);
  a.dispose(); // no-op after finish
  const b = new PostingsBuilder();
  b.dispose();
  b.dispose();
  const c = new PostingsBuilder({ expectedBytes: 100 });
  const empty = c.finish();
  assert.equal(empty.ids.length + empty.counts.length + empty.offsets.length + empty.blob.length, 0);
});

test('decodePostings matches the reference encoding', () => {
  const rng = new Rng(4);
  for (let t = 0; t < 400; t++) {
    const n = rng.pick([0, 1, 2, 3, 15, 16, 17, rng.int(200), rng.int(5000)]);
    const range = rng.pick([n + 1, 2 * n + 10, 1 << 20, 2 ** 32]);
    const list = Array.from(randomSet(rng, n, range));
    const bytes = Uint8Array.from(encodeListRef(list));
    same(decodePostings(bytes, list.length), list, `decode case ${t}`);
    // Trailing bytes (the next lists) are ignored.
    const padded = new Uint8Array(bytes.length + 20).fill(0xff);
    padded.set(bytes);
    same(decodePostings(padded, list.length), list, `decode padded case ${t}`);
    if (bytes.length > 0) assert.throws(() => decodePostings(bytes.subarray(0, bytes.length - 1), list.length), /truncated|cannot fit/);
    // Bounded by one past its largest id, the list decodes; by its largest id, it is refused.
    if (list.length > 0) {
      const top = list[list.length - 1]!;
      same(decodePostings(bytes, list.length, top + 1), list, `decode bounded case ${t}`);
      assert.throws(() => decodePostings(bytes, list.length, top), MalformedPostings);
    }
  }
  same(decodePostings(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]), 1), [0xffffffff], 'max u32');
  same(decodePostings(Uint8Array.from([0x80, 0x01, 0x7f]), 2), [128, 255], 'two bytes then one');
  assert.throws(() => decodePostings(Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x1f]), 1), /malformed/);
});

test('decodePostings and intersectPostings refuse what a damaged list holds', () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  const cases: Array<{ name: string; bytes: Uint8Array; count: number; limit?: number; ok?: number[] }> = [
    { name: 'a list of three', bytes: bytes(1, 2, 3), count: 3, limit: 7, ok: [1, 3, 6] },
    { name: 'a first id of zero', bytes: bytes(0, 1), count: 2, limit: 2, ok: [0, 1] },
    { name: 'a zero delta after the first id (a repeated id)', bytes: bytes(1, 0), count: 2 },
    { name: 'an id at the bound', bytes: bytes(1, 2, 3), count: 3, limit: 6 },
    { name: 'a first id past the bound', bytes: bytes(0x40), count: 1, limit: 6 },
    { name: 'ids that wrap past 2^32', bytes: bytes(0xff, 0xff, 0xff, 0xff, 0x0f, 0x02), count: 2 },
    { name: 'more ids than bytes', bytes: bytes(1, 1), count: 1_000_000_000 },
    { name: 'a count of ids and a bound of zero', bytes: bytes(0), count: 1, limit: 0 },
    { name: 'a varint cut short', bytes: bytes(0x81), count: 1 },
    { name: 'a varint of six bytes', bytes: bytes(0x80, 0x80, 0x80, 0x80, 0x80, 0x01), count: 1 },
  ];
  for (const c of cases) {
    const decode = () => decodePostings(c.bytes, c.count, c.limit);
    const alone = () =>
      intersectPostings(
        1,
        () => ({ bytes: c.bytes, count: c.count, limit: c.limit }),
        () => true,
      );
    const merged = () =>
      intersectPostings(
        2,
        (i) => (i === 0 ? { bytes: bytes(1, 1, 1, 1, 1, 1), count: 6 } : { bytes: c.bytes, count: c.count, limit: c.limit }),
        () => true,
      );
    if (c.ok) {
      same(decode(), c.ok, c.name);
      same(alone()!, c.ok, c.name);
      same(
        merged()!,
        c.ok.filter((d) => d >= 1 && d <= 6),
        c.name,
      );
    } else {
      assert.throws(decode, MalformedPostings, c.name);
      assert.throws(alone, MalformedPostings, c.name);
      // Merged, a list is read only as far as the running set reaches: refused when the
      // damage lies within that part, else what it gave is among the set's documents.
      let got: Uint32Array | null = null;
      try {
        got = merged();
      } catch (err) {
        assert.ok(err instanceof MalformedPostings, c.name);
      }
      if (got)
        assert.ok(
          [...got].every((d) => d >= 1 && d <= 6 && (c.limit === undefined || d < c.limit)),
          c.name,
        );
    }
  }
  // Follow masks fewer than the ids, when some are wanted.
  assert.throws(
    () =>
      intersectPostings(
        1,
        () => ({ bytes: bytes(1, 1), count: 2, follow: bytes(0xff), want: 1 }),
        () => true,
      ),
    MalformedPostings,
  );
});

test('intersectPostings merges encoded lists in the core like decoding and intersecting them one by one', () => {
  const rng = new Rng(6);
  for (let t = 0; t < 300; t++) {
    const k = rng.pick([1, 2, 3, 5, 8]);
    const range = rng.pick([64, 5000, 1 << 20, 2 ** 32]);
    // Rarest first, as the search gives them; sometimes one list is a subset of the first.
    const lists = Array.from({ length: k }, () => randomSet(rng, rng.int(rng.pick([10, 300, 20_000])), range)).sort((a, b) => a.length - b.length);
    if (k > 1 && rng.chance(0.3)) lists[1] = lists[0]!.filter((_, i) => i % 2 === 0);
    const encoded = lists.map((l) => ({ bytes: Uint8Array.from(encodeListRef(Array.from(l))), count: l.length }));
    const minShrink = rng.pick([0, 0.02, 0.5]);
    // The reference: the same rule, list by list.
    let want = lists[0]!;
    const read: number[] = [0];
    for (let i = 1; i < k && want.length > 0; i++) {
      read.push(i);
      const before = want.length;
      want = Uint32Array.from(intersectRef(want, lists[i]!));
      if (!(before - want.length >= before * minShrink)) break;
    }
    const asked: number[] = [];
    const got = intersectPostings(
      k,
      (i) => (asked.push(i), encoded[i]!),
      (next, before, after) => (assert.ok(next >= 2 && next < k), before - after >= before * minShrink),
    );
    same(got!, want, `case ${t}: ${lists.map((l) => l.length).join(', ')}, minShrink ${minShrink}`);
    assert.deepEqual(asked, read, `case ${t}: lists read`);
  }
  assert.equal(
    intersectPostings(
      0,
      () => assert.fail('no list'),
      () => true,
    ),
    null,
  );
  // The policy sees each list before it is read (by its index), and may stop at any.
  const lists3 = [
    [1, 2, 3, 4],
    [1, 2, 3, 4, 5],
    [2, 3, 9],
  ].map((l) => ({ bytes: Uint8Array.from(encodeListRef(l)), count: l.length }));
  same(
    intersectPostings(
      3,
      (i) => lists3[i]!,
      () => false,
    )!,
    [1, 2, 3, 4],
    'stopped before the third',
  );
  same(
    intersectPostings(
      3,
      (i) => lists3[i]!,
      (next) => next === 2,
    )!,
    [2, 3],
    'all three',
  );
  // A list's trailing bytes (the next lists) are ignored; a cut list throws.
  const one = { bytes: Uint8Array.from([...encodeListRef([3, 9, 400]), 0xff, 0xff]), count: 3 };
  same(
    intersectPostings(
      2,
      (i) => (i === 0 ? one : { bytes: Uint8Array.from(encodeListRef([9, 10, 400])), count: 3 }),
      () => true,
    )!,
    [9, 400],
    'padded',
  );
  assert.throws(
    () =>
      intersectPostings(
        2,
        (i) => (i === 0 ? one : { bytes: Uint8Array.from([0x80]), count: 1 }),
        () => true,
      ),
    /malformed/,
  );
  same(
    intersectPostings(
      2,
      (i) => (i === 0 ? one : { bytes: new Uint8Array(0), count: 0 }),
      () => true,
    )!,
    [],
    'an absent list',
  );
});

test('intersectPostings keeps only the documents whose follow masks hold the wanted bits', () => {
  const rng = new Rng(8);
  for (let t = 0; t < 200; t++) {
    const k = rng.pick([1, 2, 3, 5]);
    const lists = Array.from({ length: k }, () => randomSet(rng, 1 + rng.int(rng.pick([10, 300, 5000])), rng.pick([64, 5000, 1 << 20]))).sort(
      (a, b) => a.length - b.length,
    );
    const masks = lists.map((l) => Uint8Array.from(l, () => rng.int(256)));
    // Some lists without a want (or without masks): every document of theirs counts.
    const wants = lists.map(() => (rng.chance(0.3) ? 0 : (1 << rng.int(8)) | (rng.chance(0.3) ? 1 << rng.int(8) : 0)));
    const encoded = lists.map((l, i) => ({
      bytes: Uint8Array.from(encodeListRef(Array.from(l))),
      count: l.length,
      ...(rng.chance(0.9) ? { follow: masks[i]!, want: wants[i]! } : {}),
    }));
    const kept = lists.map((l, i) => Uint32Array.from(Array.from(l).filter((_, j) => !encoded[i]!.follow || (masks[i]![j]! & wants[i]!) === wants[i]!)));
    let want = kept[0]!;
    for (let i = 1; i < k; i++) want = Uint32Array.from(intersectRef(want, kept[i]!));
    same(
      intersectPostings(
        k,
        (i) => encoded[i]!,
        () => true,
      )!,
      want,
      `case ${t}`,
    );
  }
});

test('indexOfSorted and holdsSorted: every member found where it is, every value between and beyond them not', () => {
  for (const set of [[], [0], [7], [1, 2, 3], [0, 5, 9, 2 ** 32 - 1], Array.from({ length: 1000 }, (_, i) => i * 3 + 1)]) {
    const sorted = Uint32Array.from(set);
    for (const [i, v] of set.entries()) {
      assert.equal(holdsSorted(sorted, v), true, `${v} in ${set.length}`);
      assert.equal(indexOfSorted(sorted, v), i);
    }
    for (const v of [...set.map((x) => x + 1), ...set.map((x) => x - 1), 2 ** 31, 6])
      if (v >= 0 && !set.includes(v)) {
        assert.equal(holdsSorted(sorted, v), false, `${v} not in ${set.length}`);
        assert.equal(indexOfSorted(sorted, v), -1);
      }
  }
});

test('intersectSorted and unionSorted match the reference (balanced and skewed)', () => {
  const rng = new Rng(5);
  const shapes: Array<[number, number]> = [
    [0, 0],
    [0, 10],
    [10, 0],
    [1, 1],
    [1, 100_000],
    [100_000, 1],
    [3, 50_000],
    [10, 100_000],
    [100, 100_000],
    [1000, 1000],
    [5000, 4000],
    [31, 32 * 31],
    [33, 32 * 33 + 5],
    [16, 17],
  ];
  for (let t = 0; t < 400; t++) {
    const [na, nb] = t < shapes.length ? shapes[t]! : [rng.int(rng.pick([20, 2000])), rng.int(rng.pick([20, 2000, 20_000]))];
    const range = rng.pick([Math.max(na, nb) * 2 + 10, 1 << 20, 2 ** 32]);
    const a = randomSet(rng, na, range);
    const b = rng.chance(0.2) ? a.filter((_, i) => i % 3 === 0) : randomSet(rng, nb, range);
    same(intersectSorted(a, b), intersectRef(a, b), `intersect case ${t} (${a.length}, ${b.length})`);
    same(unionSorted(a, b), unionRef(a, b), `union case ${t} (${a.length}, ${b.length})`);
  }
  // Extremes: values at both ends of the u32 range; the short list before / after / around.
  const big = Uint32Array.from({ length: 100_000 }, (_, i) => 1000 + i * 7);
  for (const small of [[0], [1000], [0xffffffff], [999, 1000 + 7 * 99_999], [0, 1007, 1014, 0xfffffffe, 0xffffffff]]) {
    const a = Uint32Array.from(small);
    same(intersectSorted(a, big), intersectRef(a, big), `intersect ${small}`);
    same(intersectSorted(big, a), intersectRef(a, big), `intersect swapped ${small}`);
    same(unionSorted(a, big), unionRef(a, big), `union ${small}`);
    same(unionSorted(big, a), unionRef(a, big), `union swapped ${small}`);
  }
});

test('containsLiteral says whether findLiteral finds anything, wherever the needle lies; the same document searched again after it is found whole', () => {
  const rng = new Rng(61);
  for (let t = 0; t < 600; t++) {
    // Past the whole-document size (two first windows, 16 KiB), up to a few window doublings.
    const n = rng.pick([1, 2, 3, 40, 300]) * 1024 + rng.int(20_000);
    const hay = randomBytes(rng, n, rng.pick(['code', 'tiny', 'ascii']));
    const m = rng.pick([1, 2, 3, 8, 12, 17, 33]);
    const mid = n >>> 1;
    // Planted at the start, the end, just before, across and at the middle, at a window
    // boundary on either side of it, anywhere; or not planted at all.
    const spots = [0, n - m, mid - m, mid - (m >> 1), mid, mid + 8192 - 1, mid + 8192 + 16384 - (m >> 1), 8192 - (m >> 1), rng.int(n - m + 1)];
    const needle = randomBytes(rng, m, 'ascii');
    const r = rng.int(spots.length + 1);
    if (r < spots.length) {
      const at = Math.max(0, Math.min(n - m, spots[r]!));
      hay.set(needle, at);
    }
    const ci = rng.chance(0.5);
    const probe = ci && rng.chance(0.5) ? needle.map((b) => (b >= 0x61 && b <= 0x7a ? b - 32 : b)) : needle;
    const want = findRef(hay, probe, ci, 1).length > 0;
    assert.equal(containsLiteral(hay, probe, ci), want, `case ${t}: n=${n} m=${m} spot=${r} ci=${ci}`);
    // The document is partly laid out now (its second half, a prefix): searching it again
    // must copy what is missing, not trust what is there.
    same(findLiteral(hay, probe, ci, Infinity), findRef(hay, probe, ci, Infinity), `then findLiteral, case ${t}`);
  }
  assert.equal(containsLiteral(enc.encode('abc'), new Uint8Array(0), false), false, 'empty needle');
  assert.equal(containsLiteral(enc.encode('ab'), enc.encode('abc'), false), false, 'needle longer than hay');
});

test("probeOffsets: the needle's two rarest bytes in source code, in order", () => {
  const table: Array<[string, boolean, [number, number], string]> = [
    ['release_filter', false, [2, 10], "the two l's (rarer than f, much rarer than the r's at both ends)"],
    ['release_filter', true, [2, 8], 'l and f, each counted in both cases'],
    ['mutex_lock', false, [4, 9], 'x and k'],
    ['EXPORT_SYMBOL_GPL', false, [1, 8], 'X and B'],
    ['qq', false, [0, 1], 'a byte twice'],
    ['a', false, [0, 0], 'one byte: probed once'],
    ['', false, [0, 0], 'empty'],
  ];
  for (const [needle, ci, want, why] of table) same(probeOffsets(enc.encode(needle), ci), want, `${needle} ci=${ci}: ${why}`);
});

test('findLiteral matches the reference', () => {
  const rng = new Rng(6);
  same(findLiteral(enc.encode('aaaa'), enc.encode('aa'), false, 10), [0, 2], 'aa in aaaa');
  same(findLiteral(enc.encode('aaaaa'), enc.encode('aa'), false, 10), [0, 2], 'aa in aaaaa');
  same(findLiteral(enc.encode('aAaA'), enc.encode('Aa'), true, 10), [0, 2], 'ci');
  same(findLiteral(enc.encode('aAaA'), enc.encode('Aa'), false, 10), [1], 'cs');
  same(findLiteral(enc.encode('@`'), enc.encode('`'), true, 10), [1], "'@' is not '`' even ci");
  same(findLiteral(enc.encode('[{'), enc.encode('{'), true, 10), [1], "'[' is not '{' even ci");
  same(findLiteral(enc.encode('abc'), new Uint8Array(0), false, 10), [], 'empty needle');
  same(findLiteral(new Uint8Array(0), enc.encode('a'), false, 10), [], 'empty hay');
  same(findLiteral(enc.encode('ab'), enc.encode('abc'), false, 10), [], 'needle longer than hay');
  same(findLiteral(enc.encode('abab'), enc.encode('ab'), false, 0), [], 'max 0');
  same(findLiteral(enc.encode('abab'), enc.encode('ab'), false, 1), [0], 'max 1');
  same(findLiteral(enc.encode('\u212A K k'), enc.encode('k'), true, 10), [4, 6], 'no unicode folding in findLiteral');

  for (let t = 0; t < 800; t++) {
    const flavor = rng.pick(FLAVORS);
    const n = randomSize(rng);
    const hay = randomBytes(rng, n, flavor);
    let needle: Uint8Array;
    const m = rng.pick([1, 2, 3, 4, 8, 15, 16, 17, 31, 32, 33, 1 + rng.int(40)]);
    const r = rng.int(5);
    if (n === 0 || r === 0) needle = randomBytes(rng, m, flavor);
    else {
      // From the hay: at its very start, at its very end or anywhere.
      const len = Math.min(m, n);
      const start = r === 1 ? 0 : r === 2 ? n - len : rng.int(n - len + 1);
      needle = hay.slice(start, start + len);
      if (rng.chance(0.5)) needle = needle.map((b) => (rng.chance(0.5) && b >= 0x61 && b <= 0x7a ? b - 32 : b));
    }
    const ci = rng.chance(0.5);
    const max = rng.pick([1, 2, 3, 10, 1000, Infinity]);
    same(findLiteral(hay, needle, ci, max), findRef(hay, needle, ci, max), `find case ${t}: n=${n} m=${needle.length} ci=${ci} max=${max}`);
  }
  // Long hays: many matches, sparse matches, match at the very end only.
  for (const [flavor, needleText, ci] of [
    ['tiny', 'aB', true],
    ['tiny', 'ab@', false],
    ['code', 'return Value', true],
    ['code', 'KEY', false],
    ['ascii', 'zz', false],
  ] as const) {
    const hay = randomBytes(rng, MB + rng.int(64), flavor);
    const needle = enc.encode(needleText);
    same(findLiteral(hay, needle, ci, Infinity), findRef(hay, needle, ci, Infinity), `1 MB ${flavor} ${needleText}`);
  }
  // The io region is reused, so the bytes just past a hay are whatever the previous call
  // left there. Cut a hay right before its needle's last byte: the stale copy of that byte
  // sits in the padding and must not complete a match (lanes past the last start).
  for (let n = 1; n < 70; n++) {
    for (const needleText of ['b', 'ab', 'aXb', 'aXXXXXXXXXXXXXXXXb']) {
      const needle = enc.encode(needleText);
      const full = new Uint8Array(n - 1 + needle.length).fill(0x78);
      full.set(needle, n - 1);
      same(findLiteral(full, needle, false, 10), [n - 1], `needle at the end, n=${n} ${needleText}`);
      same(findLiteral(full.subarray(0, full.length - 1), needle, false, 10), [], `cut needle, n=${n} ${needleText}`);
      same(findLiteral(full.subarray(0, full.length - 1), needle, true, 10), [], `cut needle ci, n=${n} ${needleText}`);
    }
  }
  const tail = new Uint8Array(MB).fill(0x61);
  tail.set(enc.encode('needle!'), MB - 7);
  same(findLiteral(tail, enc.encode('NEEDLE!'), true, 10), [MB - 7], 'only at the very end');
  same(findLiteral(tail, enc.encode('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaan'), false, 10), [MB - 7 - 33], 'long needle, one match');
  same(findLiteral(tail, enc.encode('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab'), true, 10), [], 'long needle, no match');
});

test('hash32 matches xxHash32 test vectors and the reference', () => {
  assert.equal(hash32(new Uint8Array(0)), 0x02cc5d05);
  assert.equal(hash32(new Uint8Array(0), 0), 0x02cc5d05);
  assert.equal(hash32(enc.encode('a')), 0x550d7456);
  assert.equal(hash32(enc.encode('abc')), 0x32d153ff);
  assert.equal(hash32(enc.encode('Nobody inspects the spammish repetition')), 0xe2293b2f);
  // The reference agrees with the published vectors too, so the random comparisons below
  // check against a trusted implementation.
  assert.equal(xxh32Ref(enc.encode('abc')), 0x32d153ff);
  assert.equal(xxh32Ref(new Uint8Array(0)), 0x02cc5d05);
  const rng = new Rng(7);
  for (let t = 0; t < 600; t++) {
    const data = randomBytes(rng, randomSize(rng));
    const seed = rng.pick([0, 1, 0xffffffff, rng.u32()]);
    assert.equal(hash32(data, seed), xxh32Ref(data, seed), `hash case ${t} (len ${data.length}, seed ${seed})`);
  }
  // Beyond the 1 MiB streaming chunk: whole stripes, a tail, chunk multiples.
  for (const n of [MB - 1, MB, MB + 1, MB + 15, MB + 16, 2 * MB, 2 * MB + 7, 3 * MB + 5]) {
    const data = randomBytes(rng, n, 'binary');
    const seed = rng.u32();
    assert.equal(hash32(data, seed), xxh32Ref(data, seed), `hash of ${n} bytes`);
  }
});

test('Hash32Stream gives hash32 of its pieces, whatever their lengths, with other hashes in between', () => {
  const rng = new Rng(11);
  for (let t = 0; t < 300; t++) {
    const data = randomBytes(rng, rng.pick([0, 1, 15, 16, 17, 31, 33, rng.int(200), rng.int(5000), MB + rng.int(40)]), 'binary');
    const seed = rng.pick([0, 1, 0xffffffff, rng.u32()]);
    const stream = new Hash32Stream(seed);
    for (let at = 0; at < data.length; ) {
      const len = Math.min(data.length - at, rng.pick([0, 1, 3, 15, 16, 17, rng.int(100), rng.int(70000)]));
      stream.update(data.subarray(at, at + len));
      // Another hash meanwhile, one-shot and streamed (the core's streaming state is shared).
      hash32(data.subarray(0, rng.int(40)), 5);
      if (rng.int(4) === 0) hash32(randomBytes(rng, MB + 1, 'binary'));
      at += len;
    }
    assert.equal(stream.digest(), xxh32Ref(data, seed), `stream case ${t} (len ${data.length}, seed ${seed})`);
  }
});
