// The rate-limit counters: the conformance suite against the embedded store (two handles on
// one database file, as two daemon processes have) and against a private Redis server; then
// what only one backend does: the store prunes past days, Redis keys expire by themselves,
// an unreachable Redis is a clear start-up error and, once running, a prompt rejection
// rather than a hang or an uncounted request.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisRateCounter } from '../../daemon/ratelimit/redis-counter.ts';
import { StoreRateCounter } from '../../daemon/ratelimit/store-counter.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { tempDir } from '../helpers/corpus.ts';
import { startTestRedis, type TestRedis } from '../helpers/redis.ts';
import { counterConformance, dayFromToday } from './counter-conformance.ts';

const dir = tempDir('ratelimit');
const stores: Store[] = [];
// Started before the tests are declared, so that the Redis ones know whether to skip.
const started = await startTestRedis();
const redis: TestRedis | undefined = 'skip' in started ? undefined : started;
const redisSkip = 'skip' in started ? started.skip : undefined;

after(async () => {
  for (const s of stores) await s.close();
  await redis?.stop();
  dir.cleanup();
});

function openEmbedded(): StoreRateCounter {
  const store = openStore(join(dir.path, 'data'));
  stores.push(store);
  return new StoreRateCounter(store);
}

counterConformance('embedded store', async () => openEmbedded());
counterConformance('redis', async () => RedisRateCounter.connect(redis!.url), redisSkip);

test('embedded store: prune drops the days before the one given', async () => {
  const c = openEmbedded();
  await c.take('usr_prune', '2026-11-20', 5);
  await c.take('usr_prune', '2026-11-21', 5);
  await c.prune('2026-11-21');
  assert.equal(await c.count('usr_prune', '2026-11-20'), 0);
  assert.equal(await c.count('usr_prune', '2026-11-21'), 1);
});

test('redis: a counter key expires at the end of the following day', { skip: redisSkip }, async () => {
  const c = await RedisRateCounter.connect(redis!.url);
  const raw = new Redis(redis!.url);
  try {
    // Today: a key of a day already over would be gone at once.
    const day = dayFromToday();
    await c.take('usr_ttl', day, 5);
    const at = await raw.call('EXPIRETIME', `trawl:requests:usr_ttl:${day}`);
    assert.equal(at, Date.parse(`${dayFromToday(2)}T00:00:00Z`) / 1000);
  } finally {
    raw.disconnect();
    await c.close();
  }
});

test('redis: unreachable at start is one clear error, with the password hidden', async () => {
  await assert.rejects(RedisRateCounter.connect('redis://trawl:hunter2@127.0.0.1:1'), (err: Error) => {
    assert.match(err.message, /^cannot reach the rate-limit store redis:\/\/trawl:\*\*\*@127\.0\.0\.1:1/);
    // The socket's reason, not ioredis's "Connection is closed."
    assert.match(err.message, /ECONNREFUSED/);
    assert.doesNotMatch(err.message, /hunter2/);
    return true;
  });
});

test('redis: an outage after start rejects at once, and counting resumes when it is back', { skip: redisSkip, timeout: 120_000 }, async (t) => {
  const own = await startTestRedis();
  if ('skip' in own || process.env.TRAWL_TEST_REDIS_URL) return t.skip('needs a Redis server of its own to stop');
  const errors: Error[] = [];
  // A command timeout the test never reaches: only a refusal can end the call below.
  const c = await RedisRateCounter.connect(own.url, { onError: (e) => errors.push(e), commandTimeoutMs: 600_000 });
  try {
    assert.deepEqual(await c.take('usr_outage', dayFromToday(), 5), { count: 1, counted: true });
    await own.stop();
    const started = Date.now();
    const refused = await c.take('usr_outage', dayFromToday(), 5).then(
      () => assert.fail('counted without a server'),
      (e: Error) => e,
    );
    t.diagnostic(`refused after ${Date.now() - started} ms: ${refused.message}`);
    // Refused without being queued or sent: not the command timeout (set out of reach
    // above), not ioredis's retry limit after a queued command's reconnect attempts.
    assert.match(refused.message, /enableOfflineQueue options is false|Connection is closed/, 'no waiting for a server that is gone');
    await until(() => errors.length >= 1, 'the outage is reported');
    // Back on the same address (empty: this server keeps nothing): the client reconnects by itself.
    const back = await startTestRedis(own.port);
    if ('skip' in back) throw new Error(back.skip);
    try {
      await until(async () => (await c.take('usr_outage', dayFromToday(), 5).catch(() => undefined))?.counted === true, 'counting resumes');
    } finally {
      await back.stop();
    }
  } finally {
    await c.close();
  }
});

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
