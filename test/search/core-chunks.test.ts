// The chunks the core writes (core shapeChunks) against the ones file-json.ts writes in
// TypeScript (writeChunks), byte for byte, on random documents: multi-byte and invalid
// UTF-8, control characters, quotes, "\r\n", empty lines, matches that are empty, that
// end with "\n" or span lines, and 0-3 context lines. Null (not valid UTF-8) exactly when
// the TypeScript writer decodes a chunk.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { locateLines, shapeChunks } from '../../core/index.ts';
import { JsonBytes } from '../../daemon/search/json-bytes.ts';
import { writeChunks } from '../../daemon/search/file-json.ts';
import { chunkSpans } from '../../daemon/search/range-locations.ts';
import { prng } from '../helpers/corpus.ts';

// Long plain runs too: the core copies 16 clean bytes at a time and stops at the first
// byte to escape (or to check as UTF-8) inside a block.
const PIECES = [
  'a',
  'bc',
  ' ',
  '\n',
  '\n',
  '\r\n',
  '"',
  '\\',
  '\t',
  '\u0001',
  '\u001f',
  '\u007f',
  'é',
  '€',
  '😀',
  'x\n\ny',
  'static int gfp_mask = GFP_KERNEL',
  'abcdefghijklmnop',
  '0123456789abcdef0',
].map((s) => Buffer.from(s));
const BAD = [Buffer.from([0x80]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xff])];

function reference(doc: Buffer, ranges: number[], context: number): Buffer | null {
  const lines = locateLines(doc, ranges);
  const w = new JsonBytes(16);
  writeChunks(w, doc, ranges, lines, { contextLines: context, symbols: () => {} });
  // The core gives up where the TypeScript writer decodes a chunk that is not UTF-8.
  const valid = chunkSpans(doc, ranges, lines, context).every((s) => isUtf8(doc.subarray(s.start, s.end)));
  return valid ? w.take() : null;
}

/** A caller's keep: the JSON copied into one growing arena, a view of it returned. */
const arena = new Uint8Array(1 << 24);
let arenaAt = 0;
function keep(json: Uint8Array): Uint8Array {
  if (arenaAt + json.length > arena.length) arenaAt = 0;
  arena.set(json, arenaAt);
  arenaAt += json.length;
  return arena.subarray(arenaAt - json.length, arenaAt);
}

test('the core writes the chunks file-json.ts writes, byte for byte', () => {
  const rnd = prng(20261125);
  let compared = 0;
  let invalid = 0;
  for (let round = 0; round < 4000; round++) {
    const parts: Buffer[] = [];
    const pieces = 1 + rnd.int(60);
    for (let i = 0; i < pieces; i++) parts.push(rnd.chance(0.004) ? rnd.pick(BAD) : rnd.pick(PIECES));
    const doc = Buffer.concat(parts);
    // Ascending, non-overlapping ranges on character boundaries (the pieces' starts), some empty.
    const starts: number[] = [];
    let at = 0;
    for (const p of parts) {
      starts.push(at);
      at += p.length;
    }
    starts.push(doc.length);
    const ranges: number[] = [];
    let i = rnd.int(3);
    while (i < starts.length) {
      const j = Math.min(starts.length - 1, i + rnd.int(4));
      ranges.push(starts[i]!, starts[j]!);
      i = j + 1 + rnd.int(4);
    }
    if (ranges.length === 0) continue;
    const context = rnd.int(4);
    const want = reference(doc, ranges, context);
    // Every other round the JSON is kept by a caller (`keep`: an arena of views).
    const got = shapeChunks(doc, ranges, context, round % 2 === 1 ? keep : undefined);
    if (want === null) {
      assert.equal(got, null, `round ${round}: not UTF-8`);
      invalid++;
      continue;
    }
    assert.ok(got, `round ${round}`);
    // The marks: where each chunk's symbols go, after its `"symbols":[`.
    const spans = chunkSpans(doc, ranges, locateLines(doc, ranges), context);
    assert.deepEqual(
      got.marks.filter((_, k) => k % 3 !== 0),
      spans.flatMap((s) => [s.from, s.to]),
    );
    const json = Buffer.from(got.json.buffer, got.json.byteOffset, got.json.length);
    for (let m = 0; m < got.marks.length; m += 3) assert.equal(json.toString('latin1', got.marks[m]! - 12, got.marks[m]!), ',"symbols":[');
    assert.equal(
      json.toString('utf8'),
      want.toString('utf8'),
      `round ${round}: ${JSON.stringify(doc.toString('latin1'))} ${JSON.stringify(ranges)} context ${context}`,
    );
    assert.deepEqual(got.lines, locateLines(doc, ranges));
    compared++;
  }
  assert.ok(compared > 3000 && invalid > 20, `${compared} compared, ${invalid} not UTF-8`);
});
