// The daily rate limit over HTTP (docs/http-api.md sections 8 and 14) in one daemon
// with an injected clock: per user across both headers and a scoped token, failed requests
// counted, the headers counting down, 429 with Retry-After and the exact message, a user's
// own limit, what is not counted (anonymous, system endpoints, other endpoints, requests
// that do not authenticate), the reset at 00:00 UTC, and the limiter's own rules with a
// counter that fails. Several processes sharing a store: rate-limit-processes.test.ts.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { credentialHash, newScopedToken, serverSecret } from '../../daemon/auth/credentials.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import type { ServiceError } from '../../daemon/errors.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import type { RateCounter } from '../../daemon/ratelimit/counter.ts';
import { DailyRateLimiter, rateLimitMessage, utcDay } from '../../daemon/ratelimit/daily-limiter.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';

const MESSAGE_3 = 'API rate limit exceeded: 3 requests per day. The limit resets at 00:00 UTC. Ask an administrator for a higher limit.';

function counters(a: Answer): { limit: string | null; remaining: string | null; reset: string | null } {
  return { limit: a.headers.get('x-ratelimit-limit'), remaining: a.headers.get('x-ratelimit-remaining'), reset: a.headers.get('x-ratelimit-reset') };
}

test('the daily limit over HTTP', async (t) => {
  let clock = new Date('2026-11-22T23:00:00Z');
  const d = await startTestDaemon({ settings: { rateLimit: { requestsPerDay: 3 } }, daemon: { now: () => clock } });
  try {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => clock };
    const dd = ['--data-dir', d.dataDir];
    const key = async (email: string) => {
      await keysCommand(['create', '--user', email, ...dd], io);
      return lines.at(-1)!;
    };
    for (const email of ['ann@example.com', 'ben@example.com', 'cat@example.com']) await usersCommand(['add', '--email', email, ...dd], io);
    await usersCommand(['limit', 'cat@example.com', '5', ...dd], io);
    const [ann1, ann2, ben, cat] = [await key('ann@example.com'), await key('ann@example.com'), await key('ben@example.com'), await key('cat@example.com')];
    // A scoped token of ann's, put straight into the store (the endpoint that issues them is ee.test.ts's).
    const annToken = newScopedToken();
    const store = openStore(d.dataDir);
    try {
      const annId = (await store.getUserByEmail('ann@example.com'))!.id;
      await store.createScopedToken(
        {
          userId: annId,
          apiKeyId: (await store.listApiKeys(annId))[0]!.id,
          hash: credentialHash(serverSecret(d.dataDir), annToken),
          repoIds: [1],
          expiresAt: '2026-11-23T23:30:00Z',
        },
        clock.toISOString(),
      );
    } finally {
      await store.close();
    }
    const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
    const midnight = String(Date.parse('2026-11-23T00:00:00Z') / 1000);

    await t.test('one budget per user across both headers and a scoped token; failed requests count', async () => {
      const a = await call(`${d.url}/api/repos`, { headers: bearer(ann1) });
      assert.equal(a.status, 200);
      assert.deepEqual(counters(a), { limit: '3', remaining: '2', reset: midnight });
      const b = await call(`${d.url}/api/source?repo=no-such-repo&path=a.c`, { headers: { 'x-service-api-key': ann2 } });
      assert.equal(b.status, 404, 'a request that fails');
      assert.deepEqual(counters(b), { limit: '3', remaining: '1', reset: midnight }, 'still counts and carries the headers');
      const c = await call(`${d.url}/api/search`, { json: { query: 'widget', matches: 5 }, headers: bearer(annToken) });
      assert.equal(c.status, 200);
      assert.equal(counters(c).remaining, '0');
      for (const credential of [bearer(ann1), { 'x-service-api-key': ann2 }, bearer(annToken)]) {
        const over = await call(`${d.url}/api/repos`, { headers: credential });
        assert.equal(over.status, 429);
        assert.deepEqual(over.json, { statusCode: 429, errorCode: 'API_RATE_LIMIT_EXCEEDED', message: MESSAGE_3 });
        assert.equal(over.headers.get('retry-after'), '3600', 'seconds until 00:00 UTC');
        assert.deepEqual(counters(over), { limit: '3', remaining: '0', reset: midnight });
      }
      // The streaming endpoint refuses before the stream starts: a plain JSON 429.
      const stream = await call(`${d.url}/api/stream_search`, { json: { query: 'widget' }, headers: bearer(ann1) });
      assert.equal(stream.status, 429);
      assert.match(stream.headers.get('content-type') ?? '', /application\/json/);
    });

    await t.test("other users are counted apart; a user's own limit replaces the default", async () => {
      const b = await call(`${d.url}/api/connections`, { headers: bearer(ben) });
      assert.equal(b.status, 200);
      assert.deepEqual(counters(b), { limit: '3', remaining: '2', reset: midnight });
      const c = await call(`${d.url}/api/repos`, { headers: bearer(cat) });
      assert.deepEqual(counters(c), { limit: '5', remaining: '4', reset: midnight });
    });

    await t.test('not counted: system endpoints, endpoints outside the list, anonymous requests, credentials that fail', async () => {
      for (const path of ['/api/health', '/api/version', '/api/ee/user']) {
        const r = await call(`${d.url}${path}`, { headers: bearer(ben) });
        assert.equal(r.headers.get('x-ratelimit-limit'), null, path);
      }
      const anonymous = await call(`${d.url}/api/repos`);
      assert.equal(anonymous.status, 200);
      assert.equal(anonymous.headers.get('x-ratelimit-limit'), null);
      const bad = await call(`${d.url}/api/repos`, { headers: bearer(`svk_${'0'.repeat(64)}`) });
      assert.equal(bad.status, 401);
      assert.equal(bad.headers.get('x-ratelimit-limit'), null);
      // Ben's count is where the previous subtest left it.
      assert.equal(counters(await call(`${d.url}/api/repos`, { headers: bearer(ben) })).remaining, '1');
    });

    await t.test('a raised limit takes effect on the next request, giving the difference', async () => {
      await usersCommand(['limit', 'ann@example.com', '4', ...dd], io);
      const r = await call(`${d.url}/api/repos`, { headers: bearer(ann1) });
      assert.equal(r.status, 200);
      assert.deepEqual(counters(r), { limit: '4', remaining: '0', reset: midnight });
      assert.equal((await call(`${d.url}/api/repos`, { headers: bearer(ann1) })).status, 429);
      await usersCommand(['limit', 'ann@example.com', 'default', ...dd], io);
    });

    await t.test('00:00 UTC resets every count', async () => {
      clock = new Date('2026-11-22T23:59:59.500Z');
      const last = await call(`${d.url}/api/repos`, { headers: bearer(ann1) });
      assert.equal(last.status, 429);
      assert.equal(last.headers.get('retry-after'), '1', 'never 0: a client waiting that long would retry too early');
      clock = new Date('2026-11-23T00:00:00Z');
      const next = String(Date.parse('2026-11-24T00:00:00Z') / 1000);
      const r = await call(`${d.url}/api/repos`, { headers: bearer(ann1) });
      assert.equal(r.status, 200);
      assert.deepEqual(counters(r), { limit: '3', remaining: '2', reset: next });
      assert.deepEqual(counters(await call(`${d.url}/api/repos`, { headers: bearer(ben) })), { limit: '3', remaining: '2', reset: next });
    });
  } finally {
    await d.cleanup();
  }
});

test('the limiter: who is counted, the UTC day, and a failing counter', async () => {
  const taken: string[] = [];
  let fail = false;
  const counter: RateCounter = {
    async take(userId, day, limit) {
      if (fail) throw new Error('connection refused');
      taken.push(`${userId} ${day} ${limit}`);
      return { count: 1, counted: true };
    },
    async count() {
      return 0;
    },
    async prune() {},
    async close() {},
  };
  const errors: string[] = [];
  const limiter = new DailyRateLimiter({
    counter,
    defaultLimit: 7,
    now: () => new Date('2026-03-01T12:00:00Z'),
    onCounterError: (e) => errors.push(e.message),
  });
  const canSee = () => true;
  assert.equal(await limiter.take({ kind: 'anonymous', canSee }), undefined);
  for (const kind of ['apiKey', 'oauth', 'scopedToken'] as const) {
    assert.deepEqual(await limiter.take({ kind, userId: `u-${kind}`, canSee }), { limit: 7, remaining: 6, reset: Date.parse('2026-03-02T00:00:00Z') / 1000 });
  }
  await limiter.take({ kind: 'apiKey', userId: 'u-own', dailyLimit: 2, canSee });
  assert.deepEqual(taken, ['u-apiKey 2026-03-01 7', 'u-oauth 2026-03-01 7', 'u-scopedToken 2026-03-01 7', 'u-own 2026-03-01 2']);

  fail = true;
  await assert.rejects(limiter.take({ kind: 'apiKey', userId: 'u', canSee }), (err: ServiceError) => {
    assert.equal(err.errorCode, 'SERVICE_UNAVAILABLE');
    assert.doesNotMatch(err.message, /refused/, "the counter's failure stays in the log");
    return true;
  });
  assert.deepEqual(errors, ['connection refused']);

  assert.equal(rateLimitMessage(3), MESSAGE_3);
  const cases: Array<[string, string, string]> = [
    ['2026-11-22T00:00:00.000Z', '2026-11-22', '2026-11-23T00:00:00Z'],
    ['2026-11-22T23:59:59.999Z', '2026-11-22', '2026-11-23T00:00:00Z'],
    ['2026-12-31T12:00:00Z', '2026-12-31', '2027-01-01T00:00:00Z'],
    ['2028-02-28T23:00:00Z', '2028-02-28', '2028-02-29T00:00:00Z'],
  ];
  for (const [at, day, reset] of cases) assert.deepEqual(utcDay(new Date(at)), { day, reset: Date.parse(reset) / 1000 }, at);
});

test('a Redis rate-limit store that cannot be reached stops the daemon from starting, with the reason', async () => {
  const dir = tempDir('ratelimit-start');
  try {
    const config = parseConfig(JSON.stringify({ settings: { rateLimit: { store: 'redis://user:pw-not-shown@127.0.0.1:1' } } }), join(dir.path, 'trawl.json'));
    await assert.rejects(
      startDaemon({ config, dataDir: join(dir.path, 'data'), host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false }),
      (err: Error) => /^cannot reach the rate-limit store redis:\/\/user:\*\*\*@127\.0\.0\.1:1/.test(err.message) && !err.message.includes('pw-not-shown'),
    );
  } finally {
    dir.cleanup();
  }
});
