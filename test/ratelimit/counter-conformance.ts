// The RateCounter conformance suite (daemon/ratelimit/counter.ts): every place counters can
// live runs it (test/ratelimit/ratelimit-counter.test.ts), so the limiter behaves the same whichever
// settings.rateLimit.store names. `open()` gives another handle on the same counters (a
// second process's view); the handles are closed by the suite.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { RateCounter } from '../../daemon/ratelimit/counter.ts';
import { utcDay } from '../../daemon/ratelimit/daily-limiter.ts';

/**
 * The UTC day `offset` days from today. Counters that expire (Redis keys live until the end
 * of the day after theirs) must be tested on days that are not over yet: fixed dates in
 * these tests stopped counting two days after they were written.
 */
export function dayFromToday(offset = 0): string {
  return utcDay(new Date(Date.now() + offset * 86_400_000)).day;
}

export function counterConformance(name: string, open: () => Promise<RateCounter>, skip?: string): void {
  const opts = skip ? { skip } : {};
  // Every test uses users of its own: backends that outlive a test (a Redis server) need no flushing.
  const user = () => `usr_${randomBytes(6).toString('hex')}`;
  const day = dayFromToday();
  const nextDay = dayFromToday(1);
  const dayBefore = dayFromToday(-1);

  const withCounters = (fn: (a: RateCounter, b: RateCounter) => Promise<void>) => async () => {
    const a = await open();
    const b = await open();
    try {
      await fn(a, b);
    } finally {
      await a.close();
      await b.close();
    }
  };

  test(
    `${name}: counts from 1 up to the limit, then refuses without counting`,
    opts,
    withCounters(async (c) => {
      const u = user();
      assert.equal(await c.count(u, day), 0);
      const got = [];
      for (let i = 0; i < 5; i++) got.push(await c.take(u, day, 3));
      assert.deepEqual(got, [
        { count: 1, counted: true },
        { count: 2, counted: true },
        { count: 3, counted: true },
        { count: 3, counted: false },
        { count: 3, counted: false },
      ]);
      assert.equal(await c.count(u, day), 3);
    }),
  );

  test(
    `${name}: users and days are counted apart`,
    opts,
    withCounters(async (c) => {
      const [u1, u2] = [user(), user()];
      await c.take(u1, day, 10);
      await c.take(u1, day, 10);
      await c.take(u2, day, 10);
      await c.take(u1, nextDay, 10);
      assert.equal(await c.count(u1, day), 2);
      assert.equal(await c.count(u2, day), 1);
      assert.equal(await c.count(u1, nextDay), 1);
      assert.equal(await c.count(u2, nextDay), 0);
    }),
  );

  test(
    `${name}: a limit of 0 counts nothing; a raised limit gives the difference, a lowered one refuses`,
    opts,
    withCounters(async (c) => {
      const u = user();
      assert.deepEqual(await c.take(u, day, 0), { count: 0, counted: false });
      assert.equal(await c.count(u, day), 0);
      for (let i = 0; i < 3; i++) await c.take(u, day, 2);
      assert.equal(await c.count(u, day), 2);
      assert.deepEqual(await c.take(u, day, 4), { count: 3, counted: true });
      assert.deepEqual(await c.take(u, day, 4), { count: 4, counted: true });
      assert.deepEqual(await c.take(u, day, 4), { count: 4, counted: false });
      assert.deepEqual(await c.take(u, day, 1), { count: 4, counted: false });
    }),
  );

  test(
    `${name}: exact under concurrency through two handles`,
    opts,
    withCounters(async (a, b) => {
      const u = user();
      const limit = 250;
      const results = await Promise.all(Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).take(u, day, limit)));
      const counted = results.filter((r) => r.counted);
      assert.equal(counted.length, limit);
      // Every counted request saw its own count: 1..limit, each once.
      assert.deepEqual(
        counted.map((r) => r.count).sort((x, y) => x - y),
        Array.from({ length: limit }, (_, i) => i + 1),
      );
      for (const r of results.filter((r) => !r.counted)) assert.equal(r.count, limit);
      assert.equal(await a.count(u, day), limit);
      assert.equal(await b.count(u, day), limit);
    }),
  );

  test(
    `${name}: prune keeps the day it is given and those after`,
    opts,
    withCounters(async (c) => {
      const u = user();
      await c.take(u, dayBefore, 5);
      await c.take(u, day, 5);
      await c.prune(day);
      assert.equal(await c.count(u, day), 1);
    }),
  );
}
