// The delta codec of version-9 shards (index/content-delta.ts): every pair of versions
// round-trips exactly, the documented worked example encodes to the documented bytes, and
// a corrupt delta fails with an Error (never a wrong length, an out-of-bounds read or a
// hang), whatever its bytes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyDelta, encodeDelta } from '../../daemon/index/content-delta.ts';
import { prng, WORDS } from '../helpers/corpus.ts';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

function source(seed: number, lines: number): string {
  const r = prng(seed);
  return Array.from({ length: lines }, () => `${'  '.repeat(r.int(3))}${Array.from({ length: 1 + r.int(5) }, () => r.pick(WORDS)).join(' ')};\n`).join('');
}

const big = source(7, 400);
const bigLines = big.split('\n');

/** [name, base, target, the most bytes the delta may take (undefined: any)]. */
const ROUND_TRIPS: Array<[string, string | Buffer, string | Buffer, number | undefined]> = [
  ['empty to empty', '', '', 0],
  ['empty to text', '', 'int x;\n', undefined],
  ['text to empty', 'int x;\n', '', 0],
  ['identical', big, big, 6],
  ['a line appended', big, `${big}return 0;\n`, 20],
  ['a line prepended', big, `#include <x.h>\n${big}`, 24],
  ['a line deleted in the middle', big, [...bigLines.slice(0, 200), ...bigLines.slice(201)].join('\n'), 12],
  ['a line changed in its middle', big, big.replace(bigLines[100]!, `${bigLines[100]!.slice(0, 3)}CHANGED${bigLines[100]!.slice(3)}`), 20],
  ['blocks swapped', big, [...bigLines.slice(200), ...bigLines.slice(0, 200)].join('\n'), 16],
  ['no newline at the end', 'a\nb\nc', 'a\nb\nc\nd', undefined],
  ['CRLF lines', 'one\r\ntwo\r\nthree\r\n', 'one\r\ntwo!\r\nthree\r\n', undefined],
  ['repeated short lines', '}\n'.repeat(500), `${'}\n'.repeat(250)}x\n${'}\n'.repeat(250)}`, 16],
  ['no line in common', source(1, 50), source(2, 50), undefined],
  ['non-ASCII bytes', 'straße ÄÖÜ\nK\u212a\n', 'straße ÄÖÜ\nK\u212a\n\u017f\n', undefined],
  [
    'arbitrary bytes',
    Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 131) & 0xff)),
    Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 131 + (i > 1500 ? 1 : 0)) & 0xff)),
    undefined,
  ],
  ['a rewrite of the same size', 'x'.repeat(1000), 'y'.repeat(1000), undefined],
  // (The matcher looks for lines only where the versions differ, here past the whole base: this is a literal.)
  ['the base copied twice', big, big + big, undefined],
  ['a line changed at the start and at the end', big, `x${big.slice(1, -2)}y\n`, 12],
];

for (const [name, base, target, most] of ROUND_TRIPS) {
  test(`delta round trip: ${name}`, () => {
    const bb = typeof base === 'string' ? b(base) : base;
    const tb = typeof target === 'string' ? b(target) : target;
    const delta = encodeDelta(bb, tb);
    assert.deepEqual(applyDelta(bb, delta, tb.length), tb);
    if (most !== undefined) assert.ok(delta.length <= most, `${delta.length} bytes, expected at most ${most}`);
  });
}

test('the worked example encodes to the documented bytes', () => {
  const delta = encodeDelta(b('int a;\nint b;\nint c;\n'), b('int a;\nint B;\nint c;\nint d;\n'));
  assert.equal(Buffer.from(delta).toString('hex'), '1700' + '0242' + '1302' + '0e696e7420643b0a');
});

test('random edits of random versions round-trip', () => {
  const r = prng(20261128);
  for (let i = 0; i < 300; i++) {
    const lines = source(i, 1 + r.int(80)).split('\n');
    const base = lines.join('\n');
    for (let e = r.int(6); e > 0; e--) {
      const at = r.int(lines.length);
      const kind = r.int(4);
      if (kind === 0) lines.splice(at, 1);
      else if (kind === 1) lines.splice(at, 0, r.pick(WORDS));
      else if (kind === 2) lines[at] = `${lines[at]}${r.pick(WORDS)}`;
      else lines.push(...lines.slice(0, r.int(5)));
    }
    const target = lines.join(r.chance(0.1) ? '\r\n' : '\n');
    const delta = encodeDelta(b(base), b(target));
    assert.deepEqual(applyDelta(b(base), delta, b(target).length).toString('utf8'), target, `case ${i}`);
    // Into a buffer of the reader's, longer than the version and holding an older one: the view of its start.
    const out = Buffer.alloc(b(target).length + 1 + r.int(100), 'z');
    const into = applyDelta(b(base), delta, b(target).length, out);
    assert.equal(into.buffer, out.buffer, `case ${i}: written into the buffer given`);
    assert.equal(Buffer.from(into).toString('utf8'), target, `case ${i}`);
  }
});

/** [name, base, delta bytes, the document's length, the error]. */
const CORRUPT: Array<[string, string, number[], number, RegExp]> = [
  ['a varint cut short', 'abc', [0x80], 3, /ends inside an instruction/],
  ['a varint of 6 bytes', 'abc', [0x80, 0x80, 0x80, 0x80, 0x80, 0x01], 3, /longer than 5 bytes/],
  ['an empty literal', 'abc', [0x00], 3, /empty instruction/],
  ['an empty copy', 'abc', [0x01, 0x00], 3, /empty instruction/],
  ['a literal past the end', 'abc', [0x0a, 0x41], 5, /runs past its end/],
  ['a copy without its distance', 'abc', [0x07], 3, /ends inside an instruction/],
  ['a copy past the base', 'abc', [0x07, 0x02], 3, /outside its base/],
  ['a copy before the base', 'abc', [0x03, 0x01], 1, /outside its base/],
  ['a copy far outside the base', 'abc', [0x03, 0xff, 0xff, 0xff, 0xff, 0x0f], 1, /outside its base/],
  ['more bytes than the document', 'abc', [0x06, 0x41, 0x42, 0x43], 2, /more bytes than the document/],
  ['fewer bytes than the document', 'abc', [0x07, 0x00], 4, /makes 3 bytes of the document's 4/],
  ['nothing for a document', 'abc', [], 1, /makes 0 bytes/],
  ['a huge length in a copy', 'abc', [0xff, 0xff, 0xff, 0xff, 0x0f, 0x00], 3, /more bytes than the document/],
];

for (const [name, base, delta, length, error] of CORRUPT) {
  test(`corrupt delta: ${name}`, () => {
    assert.throws(() => applyDelta(b(base), Uint8Array.from(delta), length), error);
  });
}

test('a damaged delta fails with an Error or makes exactly the length asked, never more', () => {
  const r = prng(99);
  const base = b(big);
  const target = b(big.replace(/spin_lock/g, 'spin_unlock'));
  const delta = encodeDelta(base, target);
  for (let i = 0; i < 3000; i++) {
    const bad = Buffer.from(delta);
    for (let k = 1 + r.int(3); k > 0; k--) bad[r.int(bad.length)] = r.int(256);
    const cut = r.chance(0.2) ? bad.subarray(0, r.int(bad.length)) : bad;
    try {
      assert.equal(applyDelta(base, cut, target.length).length, target.length);
    } catch (err) {
      assert.ok(err instanceof Error && /delta|document/.test(err.message), String(err));
    }
  }
});
