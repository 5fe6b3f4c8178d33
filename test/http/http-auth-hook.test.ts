// The one authentication and rate-limit step (daemon/http/auth.ts): every route but the
// system ones goes through it, rate-limited routes (docs/http-api.md 8.9) are counted and
// carry the X-RateLimit-* headers, an exhausted limit is 429 with Retry-After, and a
// failure inside the step is a 500 error object with the request id and nothing of the
// failure's inside.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../daemon/errors.ts';
import type { Authenticator, Identity } from '../../daemon/auth/identity.ts';
import type { RateLimiter, RateLimitState } from '../../daemon/ratelimit/limiter.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';

// docs/http-api.md 8.9's list, GET /api/outline included (the web UI's symbol outline,
// counted like GET /api/source, whose file it reads).
const RATE_LIMITED = [
  'POST /api/search',
  'POST /api/stream_search',
  'POST /api/find_definitions',
  'POST /api/find_references',
  'GET /api/source',
  'GET /api/outline',
  'POST /api/files',
  'POST /api/tree',
  'GET /api/folder_contents',
  'GET /api/blame',
  'GET /api/diff',
  'GET /api/commit',
  'GET /api/commits',
  'GET /api/commits/authors',
  'GET /api/repos',
  'GET /api/connections',
];

test('every route but the system ones authenticates; the rate-limited ones are counted', async () => {
  const seen: string[] = [];
  let remaining = 3;
  const user: Identity = { kind: 'apiKey', userId: 'u1', canSee: () => true };
  const authenticator: Authenticator = {
    async authenticate(c) {
      if (c.token === 'boom') throw new Error('store exploded at /var/lib/secret/path');
      if (c.token !== 'svk_good') throw new ServiceError('NOT_AUTHENTICATED', 'bad key');
      seen.push('auth');
      return user;
    },
  };
  const rateLimiter: RateLimiter = {
    async take(identity): Promise<RateLimitState> {
      assert.equal(identity, user);
      seen.push('take');
      if (remaining === 0) throw new ServiceError('API_RATE_LIMIT_EXCEEDED', 'API rate limit exceeded: 3 requests per day.', 429, [['Retry-After', '3600']]);
      remaining--;
      return { limit: 3, remaining, reset: 1_900_000_000 };
    },
  };
  const d = await startTestDaemon({ daemon: { authenticator, rateLimiter } });
  try {
    const auth = { authorization: 'Bearer svk_good' };
    // The route table says which routes are authenticated and rate limited: exactly docs/http-api.md 8.9's list.
    const limited = d.daemon.routes
      .filter((r) => r.rateLimited)
      .map((r) => `${r.method} ${r.path}`)
      .sort();
    assert.deepEqual(limited, [...RATE_LIMITED].sort());
    // The OAuth endpoints authenticate clients and users in OAuth's ways (test/oauth*.test.ts),
    // the browser sign-in endpoints with an API key in the body or the session cookie (test/web/web-session.test.ts),
    // single sign-on through its provider (test/auth/sso-oidc.test.ts), code hosts' webhook
    // deliveries with the connection's webhook secret (test/webhooks/).
    for (const r of d.daemon.routes)
      assert.equal(
        r.authenticated,
        !r.path.match(/^\/api\/(health|version|openapi\.json|session)$|^\/oauth\/|^\/\.well-known\/oauth-|^\/auth\/|^\/api\/webhooks\//),
        r.path,
      );

    const ok = await call(`${d.url}/api/repos`, { headers: auth });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('x-ratelimit-limit'), '3');
    assert.equal(ok.headers.get('x-ratelimit-remaining'), '2');
    assert.equal(ok.headers.get('x-ratelimit-reset'), '1900000000');
    assert.deepEqual(seen, ['auth', 'take']);

    // System routes: neither step.
    seen.length = 0;
    for (const path of ['/api/health', '/api/version', '/api/openapi.json']) assert.equal((await call(`${d.url}${path}`, { headers: auth })).status, 200);
    assert.deepEqual(seen, []);

    // A request that then fails still counts (docs/http-api.md 8.3).
    const failed = await call(`${d.url}/api/source?repo=nope&path=a`, { headers: auth });
    assert.equal(failed.status, 404);
    assert.equal(failed.headers.get('x-ratelimit-remaining'), '1');
    await call(`${d.url}/api/connections`, { headers: auth });
    const over = await call(`${d.url}/api/search`, { json: { query: 'x', matches: 1 }, headers: auth });
    assert.equal(over.status, 429);
    assert.equal(over.json.errorCode, 'API_RATE_LIMIT_EXCEEDED');
    assert.equal(over.headers.get('retry-after'), '3600', "the error's headers go out with it");

    const bad = await call(`${d.url}/api/repos`, { headers: { authorization: 'Bearer svk_bad' } });
    assert.equal(bad.status, 401);
    // Every 401 carries a challenge (RFC 9110 section 11.6.1); without OAuth it names only the scheme.
    assert.equal(bad.headers.get('www-authenticate'), 'Bearer realm="trawl", error="invalid_token"');

    const boom = await call(`${d.url}/api/repos`, { headers: { authorization: 'Bearer boom' } });
    assert.equal(boom.status, 500);
    assert.equal(boom.json.errorCode, 'UNEXPECTED_ERROR');
    assert.match(boom.json.message, new RegExp(`request id ${boom.headers.get('x-request-id')}`));
    assert.doesNotMatch(boom.json.message, /exploded|\/var\/lib/);
  } finally {
    await d.cleanup();
  }
});
