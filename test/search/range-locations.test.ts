// Result shaping: locations (byte offset, line, column in code points), chunks of whole
// lines with context, merging of overlapping and touching chunks.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { locateLines } from '../../core/index.ts';
import { chunkSpans, locateRanges, nameRanges } from '../../daemon/search/range-locations.ts';

const loc = (byteOffset: number, lineNumber: number, column: number) => ({ byteOffset, lineNumber, column });

test('locations count lines from 1 and columns in code points', () => {
  const buf = Buffer.from('ab\nçé x\n\nz');
  // "x" is at byte 8 (ç and é are two bytes each), column 4 of line 2.
  assert.deepEqual(locateRanges(buf, [8, 9]), [{ start: loc(8, 2, 4), end: loc(9, 2, 5) }]);
  // A range ending with "\n" ends at column 1 of the next line.
  assert.deepEqual(locateRanges(buf, [0, 3]), [{ start: loc(0, 1, 1), end: loc(3, 2, 1) }]);
  // Several ranges, increasing.
  // Byte 10 is the empty line 3 (its "\n"), byte 11 the "z" of line 4.
  assert.deepEqual(locateRanges(buf, [1, 2, 10, 11, 11, 12]), [
    { start: loc(1, 1, 2), end: loc(2, 1, 3) },
    { start: loc(10, 3, 1), end: loc(11, 4, 1) },
    { start: loc(11, 4, 1), end: loc(12, 4, 2) },
  ]);
  assert.deepEqual(nameRanges('dïr/file.c', [5, 9]), [{ start: loc(5, 1, 5), end: loc(9, 1, 9) }]);
});

const TABLE: Array<{ name: string; text: string; ranges: number[]; context: number; chunks: Array<[string, number, number]> }> = [
  { name: 'one match, no context', text: 'a\nbxb\nc\n', ranges: [3, 4], context: 0, chunks: [['bxb', 2, 1]] },
  { name: 'no context line after the final newline', text: 'a\nx\n', ranges: [2, 3], context: 2, chunks: [['a\nx', 1, 1]] },
  { name: 'context clamps at the start and end', text: 'a\nbxb\nc', ranges: [3, 4], context: 5, chunks: [['a\nbxb\nc', 1, 1]] },
  { name: 'two matches on one line make one chunk', text: 'xx\n', ranges: [0, 1, 1, 2], context: 0, chunks: [['xx', 1, 2]] },
  { name: 'adjacent lines merge', text: 'x\nx\n', ranges: [0, 1, 2, 3], context: 0, chunks: [['x\nx', 1, 2]] },
  {
    name: 'distant lines stay apart',
    text: 'x\n\n\nx\n',
    ranges: [0, 1, 4, 5],
    context: 0,
    chunks: [
      ['x', 1, 1],
      ['x', 4, 1],
    ],
  },
  { name: 'context that touches merges', text: 'x\na\nb\nx\n', ranges: [0, 1, 6, 7], context: 1, chunks: [['x\na\nb\nx', 1, 2]] },
  { name: 'a match spanning lines covers all of them', text: 'a\nfoo\nbar\nz', ranges: [2, 9], context: 0, chunks: [['foo\nbar', 2, 1]] },
  { name: 'a match ending with the newline does not pull in the next line', text: 'foo\nbar\n', ranges: [0, 4], context: 0, chunks: [['foo', 1, 1]] },
  { name: 'CRLF keeps the carriage return', text: 'a\r\nx\r\nb\r\n', ranges: [3, 4], context: 0, chunks: [['x\r', 2, 1]] },
  { name: 'an empty match at the end of the file', text: 'a\n', ranges: [2, 2], context: 0, chunks: [['', 2, 1]] },
  { name: 'an empty file', text: '', ranges: [0, 0], context: 2, chunks: [['', 1, 1]] },
];

for (const row of TABLE) {
  test(`chunks: ${row.name}`, () => {
    const buf = Buffer.from(row.text);
    const spans = chunkSpans(buf, row.ranges, locateLines(buf, row.ranges), row.context);
    assert.deepEqual(
      spans.map((s) => [buf.toString('utf8', s.start, s.end), s.firstLine, s.to - s.from]),
      row.chunks,
    );
    for (const s of spans) {
      // A chunk starts at the start of a line.
      assert.ok(s.start === 0 || buf[s.start - 1] === 0x0a, `${s.start} starts a line`);
      assert.equal(locateLines(buf, [s.start])[0], s.firstLine);
    }
  });
}
