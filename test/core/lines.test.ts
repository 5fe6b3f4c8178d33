// locateLines (core/assembly/lines.ts) against a byte-by-byte reference: random documents
// of every length around the 16-byte blocks, newline densities from none to all, and
// offsets anywhere (on a newline, at 0, at the end, repeated).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findLiteral, hash32, locateLines } from '../../core/index.ts';

function reference(hay: Uint8Array, offsets: number[]): number[] {
  const out: number[] = [];
  for (const t of offsets) {
    let line = 1;
    let start = 0;
    for (let i = 0; i < t; i++) {
      if (hay[i] === 0x0a) {
        line++;
        start = i + 1;
      }
    }
    out.push(line, start);
  }
  return out;
}

/** A small deterministic generator (tests must repeat). */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

test('locateLines agrees with counting byte by byte', () => {
  const r = rng(20261124);
  for (let round = 0; round < 2000; round++) {
    const n = round < 100 ? round : Math.floor(r() * 3000);
    const density = [0, 0.02, 0.2, 0.9, 1][round % 5]!;
    const hay = new Uint8Array(n);
    for (let i = 0; i < n; i++) hay[i] = r() < density ? 0x0a : 0x61 + Math.floor(r() * 26);
    const k = Math.floor(r() * 12);
    const offsets = Array.from({ length: k }, () => Math.floor(r() * (n + 1))).sort((a, b) => a - b);
    if (round % 7 === 0) offsets.push(n);
    assert.deepEqual([...locateLines(hay, offsets)], reference(hay, offsets), `round ${round}: n ${n}, offsets ${offsets.join(',')}`);
  }
});

test('locateLines reads only up to the last offset of a view into a larger buffer', () => {
  const big = Buffer.from('ab\ncd\n\nef\n'.repeat(40));
  const view = big.subarray(5, 300);
  const offsets = [0, 1, 2, 17, 150, 295];
  assert.deepEqual([...locateLines(view, offsets)], reference(view, offsets));
  assert.deepEqual([...locateLines(view, [])], []);
});

test('a document left in the core by one call serves the next without a copy, and stays intact', () => {
  const r = rng(7);
  for (let round = 0; round < 300; round++) {
    const n = 1 + Math.floor(r() * 2000);
    const doc = Buffer.alloc(n);
    for (let i = 0; i < n; i++) doc[i] = r() < 0.1 ? 0x0a : 0x61 + Math.floor(r() * 4);
    const needles = ['ab', 'abc', 'd', 'cab'].map((x) => Buffer.from(x));
    // Interleave literal searches and line location (a prefix) on the same document, and
    // now and then another document or a hash in between, which must not be mistaken for it.
    for (let step = 0; step < 6; step++) {
      const needle = needles[Math.floor(r() * needles.length)]!;
      const ci = r() < 0.5;
      const want: number[] = [];
      const hay = ci ? Buffer.from(doc.toString('latin1').toLowerCase(), 'latin1') : doc;
      for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) want.push(i);
      assert.deepEqual([...findLiteral(doc, needle, ci, 1 << 20)], want, `round ${round} step ${step}: ${needle}`);
      const offsets = [Math.floor(r() * n), n].sort((a, b) => a - b);
      assert.deepEqual([...locateLines(doc, offsets)], reference(doc, offsets), `round ${round} step ${step}: lines`);
      if (r() < 0.2) findLiteral(Buffer.from('zzzz'), Buffer.from('z'), false, 10);
      if (r() < 0.2) hash32(doc);
    }
  }
});

test('locateLines counts long runs exactly (the wide counters never wrap) and finds starts past long lines', () => {
  const allNewlines = Buffer.alloc(100_003, 0x0a);
  const offsets = [0, 1, 63, 64, 4031, 4032, 4033, 16_128, 16_129, 65_535, 100_000, 100_003];
  assert.deepEqual([...locateLines(allNewlines, offsets)], reference(allNewlines, offsets));
  const longLine = Buffer.concat([Buffer.alloc(50_000, 0x61), Buffer.from('\n'), Buffer.alloc(70_000, 0x62)]);
  const at = [10, 49_999, 50_000, 50_001, 90_000, 120_001];
  assert.deepEqual([...locateLines(longLine, at)], reference(longLine, at));
});

test('one match in a large document: the windowed copy finds the first occurrence wherever it lies, and the prefix it leaves serves later calls', () => {
  const r = rng(11);
  // Window edges (16 KiB, doubling): a needle just before, across and after them.
  const edges = [16384, 49152, 114688, 245760];
  for (let round = 0; round < 120; round++) {
    const n = 40_000 + Math.floor(r() * 260_000);
    const doc = Buffer.alloc(n);
    for (let i = 0; i < n; i++) doc[i] = r() < 0.05 ? 0x0a : 0x61 + Math.floor(r() * 3);
    const needle = Buffer.from(r() < 0.5 ? 'XyZzY' : 'Q');
    const at: number[] = [];
    const copies = Math.floor(r() * 3);
    for (let k = 0; k < copies; k++) {
      const edge = edges[Math.floor(r() * edges.length)]!;
      const p =
        r() < 0.6
          ? Math.min(n - needle.length, Math.max(0, edge - needle.length + Math.floor(r() * (2 * needle.length + 1)) - needle.length))
          : Math.floor(r() * (n - needle.length));
      needle.copy(doc, p);
      at.push(p);
    }
    const ci = r() < 0.5;
    const hay = ci ? Buffer.from(doc.toString('latin1').toLowerCase(), 'latin1') : doc;
    const lower = ci ? Buffer.from(needle.toString('latin1').toLowerCase(), 'latin1') : needle;
    const all: number[] = [];
    for (let i = hay.indexOf(lower); i !== -1; i = hay.indexOf(lower, i + lower.length)) all.push(i);
    const query = ci ? Buffer.from(needle.toString('latin1').toUpperCase(), 'latin1') : needle;
    assert.deepEqual([...findLiteral(doc, query, ci, 1)], all.slice(0, 1), `round ${round}: first of ${all.join(',')} in ${n} bytes`);
    // The same document again: every match, then lines, then one match (prefix reuse both ways).
    assert.deepEqual([...findLiteral(doc, query, ci, 1 << 20)], all, `round ${round}: all`);
    // Lines up to an early offset: the core keeps only that prefix of the document.
    const offsets = [Math.floor(r() * 1000), Math.floor(r() * 20_000)].sort((a, b) => a - b);
    assert.deepEqual([...locateLines(doc, offsets)], reference(doc, offsets), `round ${round}: lines`);
    assert.deepEqual([...findLiteral(doc, query, ci, 1)], all.slice(0, 1), `round ${round}: first again`);
    assert.deepEqual([...findLiteral(doc, query, ci, 1 << 20)], all, `round ${round}: all again`);
  }
});
