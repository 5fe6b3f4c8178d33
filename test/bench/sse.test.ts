// The bench's stream client's counting of Server-Sent Events (bench/suite/sse.ts): a
// table of bodies, each fed whole and split at every byte (events and their blank lines
// cut across reads), against the counts the body holds.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseCounter, type SseCounts } from '../../bench/suite/sse.ts';

const chunk = (files: number): string =>
  `data: {"type":"chunk","files":[${Array.from({ length: files }, (_, i) => `{"n":${i},"text":"a\\nb"}`).join(',')}],"stats":{}}\n\n`;
const final = (matches: number, exhaustive = true): string =>
  `data: {"type":"final","accumulatedStats":{"actualMatchCount":${matches}},"isSearchExhaustive":${exhaustive}}\n\n`;
const DONE = 'data: [DONE]\n\n';
const KEEP = ': keep-alive\n\n';

const base: SseCounts = { messages: 0, chunks: 0, keepAlives: 0, final: false, error: null, endsWithDone: false, matches: null, isSearchExhaustive: null };

const TABLE: Array<[string, string, Partial<SseCounts>]> = [
  ['an empty body', '', {}],
  [
    'a whole stream',
    KEEP + chunk(3) + chunk(1) + final(7) + DONE,
    { messages: 4, chunks: 2, keepAlives: 1, final: true, endsWithDone: true, matches: 7, isSearchExhaustive: true },
  ],
  ['a chunk shorter than the prefix read ahead', `data: {"type":"chunk"}\n\n${DONE}`, { messages: 2, chunks: 1, endsWithDone: true }],
  ['a chunk with its keys in another order', 'data: {"files":[],"type":"chunk"}\n\n', { messages: 1, chunks: 1 }],
  ['a search cut short', chunk(2) + final(2, false) + DONE, { messages: 3, chunks: 1, final: true, endsWithDone: true, matches: 2, isSearchExhaustive: false }],
  ['an error', `data: {"type":"error","error":{"message":"boom"}}\n\n${DONE}`, { messages: 2, error: 'boom', endsWithDone: true }],
  ['a message that is not JSON', 'data: {nope\n\n', { messages: 1, error: 'a message that is not JSON: {nope' }],
  ['a last event without its blank line', `${chunk(1)}data: [DONE]`, { messages: 2, chunks: 1, endsWithDone: true }],
  ['[DONE] not last', DONE + chunk(1), { messages: 2, chunks: 1, endsWithDone: false }],
  ['keep-alives only', KEEP + KEEP, { keepAlives: 2 }],
];

for (const [name, body, want] of TABLE) {
  test(`SSE counts: ${name}`, () => {
    const bytes = Buffer.from(body);
    const expected = { ...base, ...want };
    const whole = new SseCounter();
    whole.push(bytes);
    assert.deepEqual(whole.end(), expected, 'read at once');
    for (let cut = 1; cut < bytes.length; cut++) {
      const c = new SseCounter();
      c.push(Buffer.from(bytes.subarray(0, cut)));
      c.push(Buffer.from(bytes.subarray(cut)));
      assert.deepEqual(c.end(), expected, `split at ${cut}`);
    }
    const bytewise = new SseCounter();
    for (let i = 0; i < bytes.length; i++) bytewise.push(Buffer.from(bytes.subarray(i, i + 1)));
    assert.deepEqual(bytewise.end(), expected, 'a byte a read');
  });
}
