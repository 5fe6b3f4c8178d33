// The gauges of one scrape share one reading, and a reading more than a second old is
// read again however often /metrics is scraped.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readAtMostEverySecond } from '../../daemon/http/metrics.ts';

test('read again once the last reading is over a second old, also under scrapes closer than a second', (t) => {
  let now = 1_000_000;
  t.mock.method(Date, 'now', () => now);
  let reads = 0;
  const value = readAtMostEverySecond(() => ++reads);
  assert.equal(value(), 1);
  assert.equal(value(), 1, 'same scrape: one reading');
  // Scrapes every 600 ms: each second or so a new reading.
  const seen: number[] = [];
  for (let i = 0; i < 6; i++) {
    now += 600;
    seen.push(value());
  }
  assert.deepEqual(seen, [1, 2, 2, 3, 3, 4]);
});
