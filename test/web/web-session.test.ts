// Browser sign-in sessions of the web UI (daemon/auth/browser-session.ts,
// daemon/http/handlers/session.ts): the token module on its own, then a real daemon over
// loopback: sign-in with an API key sets an HttpOnly, SameSite=Strict session cookie and
// hands out a CSRF token; API requests with the cookie need that token, act as the key's
// user, are never counted against the daily limit and carry no X-RateLimit-* headers; the
// session ends with its 12 hours, signing out (a copy of its token too), its key's
// revocation or its user's suspension; a bearer credential wins over the cookie; the tool
// server (a CORS route) ignores the cookie.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { BrowserSessions, clearSessionCookie, readCookie, SESSION_LIFETIME_MS, sessionCookie } from '../../daemon/auth/browser-session.ts';
import { credentialHash, newScopedToken, serverSecret } from '../../daemon/auth/credentials.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon, type Answer, type TestDaemon } from '../helpers/daemon.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const SECRET = Buffer.alloc(32, 7);
const T0 = new Date('2026-11-22T10:00:00Z');

/** A session record's fields, as the store would hand them to sign(). */
function record(s: BrowserSessions, id = 'ses_cccccccccccccccccccccccc', userId = 'usr_aaaaaaaaaaaaaaaaaaaaaaaa', apiKeyId = 'key_bbbbbbbbbbbbbbbbbbbbbbbb') {
  return { id, userId, apiKeyId, expiresAt: s.expiry() };
}

test('session tokens: sign and verify round trip; CSRF derived per session', () => {
  let clock = new Date(T0.getTime() + 456); // the expiry is kept in whole seconds
  const s = new BrowserSessions(SECRET, () => clock);
  assert.equal(s.expiry(), '2026-11-22T22:00:00.000Z', '12 hours, in whole seconds');
  clock = T0;
  const a = s.sign(record(s));
  assert.match(a.token, /^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.equal(a.expiresAt, new Date(T0.getTime() + SESSION_LIFETIME_MS).toISOString());
  assert.equal(a.expiresAt, '2026-11-22T22:00:00.000Z', '12 hours');
  const payload = JSON.parse(Buffer.from(a.token.split('.')[1]!, 'base64url').toString('utf8'));
  assert.deepEqual(Object.keys(payload).sort(), ['e', 'k', 's', 'u']);
  assert.deepEqual(s.verify(a.token), {
    sessionId: 'ses_cccccccccccccccccccccccc',
    userId: 'usr_aaaaaaaaaaaaaaaaaaaaaaaa',
    apiKeyId: 'key_bbbbbbbbbbbbbbbbbbbbbbbb',
    expires: Date.parse(a.expiresAt) / 1000,
  });

  // Every sign-in is a new session (the store's new id) with its own CSRF token.
  const b = s.sign(record(s, 'ses_dddddddddddddddddddddddd'));
  assert.notEqual(a.token, b.token);
  assert.notEqual(a.csrfToken, b.csrfToken);
  assert.equal(s.csrfToken(a.token), a.csrfToken);
  assert.equal(s.csrfMatches(a.token, a.csrfToken), true);
  assert.equal(s.csrfMatches(a.token, b.csrfToken), false, 'the CSRF token of another session');
  assert.equal(s.csrfMatches(a.token, undefined), false);
  assert.equal(s.csrfMatches(a.token, ''), false);
  assert.equal(s.csrfMatches(a.token, `${a.csrfToken}x`), false);

  // Another secret (another deployment) accepts neither the token nor the CSRF token.
  const other = new BrowserSessions(Buffer.alloc(32, 8), () => clock);
  assert.equal(other.verify(a.token), undefined);
  assert.equal(other.csrfMatches(a.token, a.csrfToken), false);

  // Absolute expiry: good until the last millisecond before the 12 hours are up.
  clock = new Date(T0.getTime() + SESSION_LIFETIME_MS - 1);
  assert.ok(s.verify(a.token));
  clock = new Date(T0.getTime() + SESSION_LIFETIME_MS);
  assert.equal(s.verify(a.token), undefined);
});

test('session tokens: every malformed or forged token is refused', () => {
  const s = new BrowserSessions(SECRET, () => T0);
  const good = s.sign(record(s, 'ses_1', 'usr_1', 'key_1')).token;
  const [, payload, sig] = good.split('.') as [string, string, string];
  const mac = (p: string) => signedWith(SECRET, p);
  const enc = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o), 'utf8').toString('base64url');
  const future = T0.getTime() / 1000 + 3600;
  const flip = (t: string, at: number) => t.slice(0, at) + (t[at] === 'A' ? 'B' : 'A') + t.slice(at + 1);
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['no parts', 'v1'],
    ['two parts', `v1.${payload}`],
    ['four parts', `${good}.x`],
    ['other version', `v3.${payload}.${sig}`],
    // The format before sessions were stored: well signed, but it names no session.
    ['a v1 token, well signed', `v1.${enc({ u: 'usr_1', k: 'key_1', e: future, n: 'x' })}.${mac(enc({ u: 'usr_1', k: 'key_1', e: future, n: 'x' }))}`],
    ['signed, no session id', `v2.${enc({ u: 'usr_1', k: 'key_1', e: future })}.${mac(enc({ u: 'usr_1', k: 'key_1', e: future }))}`],
    ['signed, session id not an id', `v2.${enc({ u: 'usr_1', k: 'key_1', s: 'a b', e: future })}.${mac(enc({ u: 'usr_1', k: 'key_1', s: 'a b', e: future }))}`],
    ['payload changed', `v1.${flip(payload, 5)}.${sig}`],
    ['signature changed', `v1.${payload}.${flip(sig, 10)}`],
    ['signature cut', `v1.${payload}.${sig.slice(0, 42)}`],
    ['signature padded', `v1.${payload}.${sig}=`],
    ['not base64url', `v1.${payload}+.${sig}`],
    ['whitespace', ` ${good}`],
    ['huge', `v2.${'A'.repeat(5000)}.${sig}`],
    ['other user, same signature', `v2.${enc({ u: 'usr_2', k: 'key_1', s: 'ses_1', e: future })}.${sig}`],
    // Well signed but not a session's payload (what a format change could produce).
    ['signed, not JSON', `v2.${enc('nope')}.${mac(enc('nope'))}`],
    ['signed, an array', `v2.${enc([1])}.${mac(enc([1]))}`],
    ['signed, no expiry', `v2.${enc({ u: 'usr_1', k: 'key_1', s: 'ses_1' })}.${mac(enc({ u: 'usr_1', k: 'key_1', s: 'ses_1' }))}`],
    [
      'signed, expiry a string',
      `v2.${enc({ u: 'usr_1', k: 'key_1', s: 'ses_1', e: String(future) })}.${mac(enc({ u: 'usr_1', k: 'key_1', s: 'ses_1', e: String(future) }))}`,
    ],
    [
      'signed, expired',
      `v2.${enc({ u: 'usr_1', k: 'key_1', s: 'ses_1', e: future - 7200 })}.${mac(enc({ u: 'usr_1', k: 'key_1', s: 'ses_1', e: future - 7200 }))}`,
    ],
    ['signed, user not an id', `v2.${enc({ u: 'a b', k: 'key_1', s: 'ses_1', e: future })}.${mac(enc({ u: 'a b', k: 'key_1', s: 'ses_1', e: future }))}`],
    ['signed, key missing', `v2.${enc({ u: 'usr_1', s: 'ses_1', e: future })}.${mac(enc({ u: 'usr_1', s: 'ses_1', e: future }))}`],
  ];
  // The table's own control: a payload built the same way, well formed, verifies.
  const control = enc({ u: 'usr_1', k: 'key_1', s: 'ses_1', e: future });
  assert.deepEqual(s.verify(`v2.${control}.${mac(control)}`), { sessionId: 'ses_1', userId: 'usr_1', apiKeyId: 'key_1', expires: future });
  for (const [what, token] of cases) assert.equal(s.verify(token), undefined, what);
});

/** The signature part of a token, computed as browser-session.ts documents it. */
function signedWith(secret: Buffer, payloadPart: string): string {
  // Independent of the module: HMAC-SHA256(secret, "trawl-session\0" + payload), base64url.
  return createHmacB64(secret, `trawl-session\0${payloadPart}`);
}

function createHmacB64(secret: Buffer, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('base64url');
}

test('session tokens: the CSRF token is the documented HMAC; cookies read and written', () => {
  const s = new BrowserSessions(SECRET, () => T0);
  const { token, csrfToken } = s.sign(record(s, 'ses_1', 'usr_1', 'key_1'));
  assert.equal(csrfToken, createHmacB64(SECRET, `trawl-csrf\0${token}`));
  assert.equal(token.split('.')[2], createHmacB64(SECRET, `trawl-session\0${token.split('.')[1]}`));

  const table: Array<[string | undefined, string | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['trawl_session=abc', 'abc'],
    ['a=1; trawl_session=abc; b=2', 'abc'],
    ['a=1;trawl_session=abc;b=2', 'abc'],
    ['  a=1 ;   trawl_session=abc  ; b=2', 'abc'],
    ['a=1, trawl_session=abc', 'abc'], // two Cookie headers, joined by the server
    ['trawl_session="abc"', 'abc'],
    ['trawl_session=', undefined],
    ['trawl_session=abc; trawl_session=def', 'abc'],
    ['xtrawl_session=abc; trawl_sessionx=def', undefined],
    ['trawl_session', undefined],
    ['other=trawl_session=abc', undefined],
  ];
  for (const [header, want] of table) assert.equal(readCookie(header, 'trawl_session'), want, JSON.stringify(header));

  assert.equal(sessionCookie('tok', false), 'trawl_session=tok; Path=/; HttpOnly; SameSite=Strict');
  assert.equal(sessionCookie('tok', true), 'trawl_session=tok; Path=/; HttpOnly; SameSite=Strict; Secure');
  assert.equal(clearSessionCookie(false), 'trawl_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0');
});

// ---------------------------------------------------------------------------------------

interface Session {
  token: string;
  csrf: string;
  /** Cookie and CSRF headers of a request made with this session. */
  headers: Record<string, string>;
  body: any;
  answer: Answer;
}

function cli(d: TestDaemon, now: () => Date) {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now };
  const dd = ['--data-dir', d.dataDir];
  return {
    users: (...args: string[]) => usersCommand([...args, ...dd], io),
    /** A new key of the user: the key and its id. */
    async key(email: string): Promise<{ key: string; id: string }> {
      assert.equal(await keysCommand(['create', '--user', email, ...dd], io), 0);
      return { key: out.at(-1)!, id: /key (key_[0-9a-f]{24})/.exec(err.at(-1)!)![1]! };
    },
    revoke: (id: string) => keysCommand(['revoke', id, ...dd], io),
  };
}

/** What drops a session: both cookies, the session's and the one that carries the CSRF token to the page. */
const CLEARING = ['trawl_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0', 'trawl_csrf=; Path=/; SameSite=Strict; Max-Age=0'];

function setCookies(a: Answer): string[] {
  return a.headers.getSetCookie();
}

function rateHeaders(a: Answer): string[] {
  return [...a.headers.keys()].filter((k) => k.startsWith('x-ratelimit-'));
}

test('browser sessions over HTTP', async (t) => {
  let clock = T0;
  const logger = logRecorder();
  const d = await startTestDaemon({ settings: { anonymousAccess: false }, daemon: { now: () => clock, logger } });
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const c = cli(d, () => clock);
    assert.equal(await c.users('add', '--email', 'ann@example.com', '--name', 'Ann', '--role', 'owner'), 0);
    assert.equal(await c.users('add', '--email', 'ben@example.com', '--name', 'Ben'), 0);
    // Ann may make one counted request a day: a counted session request would use it up.
    assert.equal(await c.users('limit', 'ann@example.com', '1'), 0);
    const ann = await c.key('ann@example.com');
    const ben = await c.key('ben@example.com');
    const store = openStore(d.dataDir);
    const annUser = (await store.getUserByEmail('ann@example.com'))!;
    const benUser = (await store.getUserByEmail('ben@example.com'))!;
    await store.close();
    const secret = serverSecret(d.dataDir);
    const sessions = new BrowserSessions(secret, () => clock);

    const api = async (method: string, path: string, init: { headers?: Record<string, string>; json?: unknown; body?: string } = {}): Promise<Answer> => {
      const a = await call(`${d.url}${path}`, { method, ...init });
      const route = path.split('?')[0]!;
      if (route.startsWith('/api/') && route !== '/api/mcp') checker.check(method, route, a.status, a.json);
      return a;
    };
    const signIn = async (apiKey: string): Promise<Session> => {
      const a = await api('POST', '/api/session', { json: { apiKey } });
      assert.equal(a.status, 201, a.text);
      const [cookie] = setCookies(a);
      const token = /^trawl_session=([^;]+)/.exec(cookie!)![1]!;
      // Both cookies, as a browser sends them.
      return {
        token,
        csrf: a.json.csrfToken,
        headers: { cookie: `trawl_session=${token}; trawl_csrf=${a.json.csrfToken}`, 'x-csrf-token': a.json.csrfToken },
        body: a.json,
        answer: a,
      };
    };
    const search = (headers: Record<string, string>, query = 'widget_count') => api('POST', '/api/search', { headers, json: { query, matches: 10 } });
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const assertExpired = (a: Answer, what: string) => {
      assert.equal(a.status, 401, `${what}: ${a.text}`);
      assert.equal(a.json.errorCode, 'NOT_AUTHENTICATED', what);
      assert.equal(a.json.message, 'the browser session has expired or is no longer valid; sign in again', what);
    };
    const assertCsrf = (a: Answer, what: string) => {
      assert.equal(a.status, 403, `${what}: ${a.text}`);
      assert.equal(a.json.errorCode, 'INVALID_CSRF_TOKEN', what);
      assert.match(a.json.message, /X-CSRF-Token.*sign-in; reload the page/, what);
    };

    await t.test('signed out: GET /api/session says so, sets no cookie', async () => {
      const a = await api('GET', '/api/session');
      assert.equal(a.status, 200);
      assert.deepEqual(a.json, { authenticated: false, anonymousAccess: false, providers: [] });
      assert.deepEqual(setCookies(a), []);
      assert.equal(a.headers.get('cache-control'), 'no-store');
    });

    let annSession: Session;
    await t.test('sign-in: 201, the user, a CSRF token, a session cookie for the browser session', async () => {
      annSession = await signIn(ann.key);
      const a = annSession.answer;
      assert.deepEqual(a.json.user, { id: annUser.id, name: 'Ann', email: 'ann@example.com', role: 'owner' });
      assert.equal(a.json.expiresAt, '2026-11-22T22:00:00.000Z', "12 hours from sign-in on the daemon's clock");
      assert.equal(typeof a.json.csrfToken, 'string');
      const cookies = setCookies(a);
      assert.equal(cookies.length, 2);
      assert.match(cookies[0]!, /^trawl_session=v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
      // The page's script reads the CSRF token from the second cookie at start (not HttpOnly).
      assert.equal(cookies[1], `trawl_csrf=${a.json.csrfToken}; Path=/; SameSite=Strict`);
      for (const cookie of cookies)
        assert.doesNotMatch(cookie, /Max-Age|Expires|Secure/i, 'no lifetime: it ends with the browser session; no Secure over http');
      assert.equal(a.headers.get('cache-control'), 'no-store');
      assert.deepEqual(rateHeaders(a), [], 'sign-in is not rate limited');
      assert.equal(annSession.csrf, sessions.csrfToken(annSession.token), 'the CSRF token is derived from the session token');
    });

    await t.test('GET /api/session with the cookie: the user, the same CSRF token and expiry', async () => {
      const a = await api('GET', '/api/session', { headers: { cookie: annSession.headers.cookie! } });
      assert.equal(a.status, 200);
      assert.deepEqual(a.json, {
        authenticated: true,
        anonymousAccess: false,
        providers: [],
        user: annSession.body.user,
        csrfToken: annSession.csrf,
        expiresAt: annSession.body.expiresAt,
      });
      assert.deepEqual(setCookies(a), [], 'both cookies are there: nothing to set');
      assert.equal(a.headers.get('cache-control'), 'no-store');
      // The session cookie without its CSRF cookie (a session made before there was one):
      // the CSRF cookie is set again; the reverse, a CSRF cookie alone, is dropped.
      const sessionOnly = await api('GET', '/api/session', { headers: { cookie: `trawl_session=${annSession.token}` } });
      assert.equal(sessionOnly.json.csrfToken, annSession.csrf);
      assert.deepEqual(setCookies(sessionOnly), [`trawl_csrf=${annSession.csrf}; Path=/; SameSite=Strict`]);
      const csrfOnly = await api('GET', '/api/session', { headers: { cookie: `trawl_csrf=${annSession.csrf}` } });
      assert.deepEqual(csrfOnly.json, { authenticated: false, anonymousAccess: false, providers: [] });
      assert.deepEqual(setCookies(csrfOnly), [CLEARING[1]]);
      // The CSRF cookie is never a credential: the header is what counts.
      assertCsrf(await search({ cookie: annSession.headers.cookie! }), 'both cookies, no header');
      assert.equal(
        (await search({ cookie: `trawl_csrf=${annSession.csrf}`, 'x-csrf-token': annSession.csrf })).status,
        401,
        'the CSRF cookie and header without the session',
      );
    });

    await t.test('API requests with the session: act as the user, never counted, no X-RateLimit headers', async () => {
      for (let i = 0; i < 4; i++) {
        const a = await search(annSession.headers);
        assert.equal(a.status, 200, a.text);
        assert.ok(a.json.files.length > 0);
        assert.deepEqual(rateHeaders(a), [], 'a browser-session response carries no X-RateLimit-* header');
      }
      // The user's own view: private repositories too (anonymous callers never see them).
      const secretHit = await search(annSession.headers, 'widget_secret_sauce');
      assert.equal(secretHit.status, 200);
      assert.deepEqual(
        secretHit.json.files.map((f: { repository: string }) => f.repository),
        ['secret'],
      );
      assert.equal((await api('GET', '/api/repos', { headers: annSession.headers })).status, 200);
      // Ann's one counted request of the day is still there...
      const counted = await search(bearer(ann.key));
      assert.equal(counted.status, 200, counted.text);
      assert.equal(counted.headers.get('x-ratelimit-limit'), '1');
      assert.equal(counted.headers.get('x-ratelimit-remaining'), '0');
      // ...and now used up: the limit is real, and browser use is not subject to it.
      assert.equal((await search(bearer(ann.key))).status, 429);
      const still = await search(annSession.headers);
      assert.equal(still.status, 200);
      assert.deepEqual(rateHeaders(still), []);
    });

    await t.test('the CSRF token: required, exact, per session', async () => {
      assertCsrf(await search({ cookie: annSession.headers.cookie! }), 'cookie without X-CSRF-Token');
      assertCsrf(await search({ cookie: annSession.headers.cookie!, 'x-csrf-token': 'wrong' }), 'wrong token');
      assertCsrf(await search({ cookie: annSession.headers.cookie!, 'x-csrf-token': '' }), 'empty token');
      assertCsrf(
        await search({ cookie: annSession.headers.cookie!, 'x-csrf-token': `${annSession.csrf.slice(0, -1)}${annSession.csrf.endsWith('A') ? 'B' : 'A'}` }),
        'one character off',
      );
      const other = await signIn(ann.key);
      assertCsrf(await search({ cookie: annSession.headers.cookie!, 'x-csrf-token': other.csrf }), 'the CSRF token of another session of the same user');
      const bens = await signIn(ben.key);
      assertCsrf(await search({ cookie: annSession.headers.cookie!, 'x-csrf-token': bens.csrf }), "the CSRF token of another user's session");
      // GET routes too: a link or image another site embeds sends the cookie on a GET.
      assertCsrf(await api('GET', `/api/source?repo=widgets&path=src/main.c`, { headers: { cookie: annSession.headers.cookie! } }), 'GET without the token');
      assert.equal((await api('GET', `/api/source?repo=widgets&path=src/main.c`, { headers: annSession.headers })).status, 200);
      // The cookie among others, spaced as browsers and proxies send them.
      const many = await search({ cookie: `theme=dark;  trawl_session=${annSession.token} ; lang=en`, 'x-csrf-token': annSession.csrf });
      assert.equal(many.status, 200, many.text);
    });

    await t.test('tampered or forged session tokens: 401 (with a CSRF token made to match)', async () => {
      const [, payload, sig] = annSession.token.split('.') as [string, string, string];
      const withCsrf = (token: string) => ({ cookie: `trawl_session=${token}`, 'x-csrf-token': sessions.csrfToken(token) });
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      const asBen = Buffer.from(JSON.stringify({ ...claims, u: benUser.id }), 'utf8').toString('base64url');
      const flipped = `${sig.slice(0, 5)}${sig[5] === 'A' ? 'B' : 'A'}${sig.slice(6)}`;
      const own = { id: claims.s as string, userId: annUser.id, apiKeyId: ann.id, expiresAt: annSession.body.expiresAt as string };
      const wrongSecret = new BrowserSessions(Buffer.alloc(32, 1), () => clock).sign(own).token;
      for (const [what, token] of [
        ['payload swapped for another user', `v2.${asBen}.${sig}`],
        ['signature changed', `v2.${payload}.${flipped}`],
        ['signed with another secret', wrongSecret],
        ['not a token at all', 'hello'],
      ] as const) {
        assertExpired(await search(withCsrf(token)), what);
        const state = await api('GET', '/api/session', { headers: { cookie: `trawl_session=${token}` } });
        assert.deepEqual(state.json, { authenticated: false, anonymousAccess: false, providers: [] }, what);
        assert.deepEqual(setCookies(state), CLEARING, `${what}: the stale cookie is dropped`);
      }
      // Well-signed tokens that do not say what the session's record says, or name no record.
      assertExpired(await search(withCsrf(sessions.sign({ ...own, apiKeyId: ben.id }).token)), 'a key of another user');
      assertExpired(await search(withCsrf(sessions.sign({ ...own, userId: benUser.id, apiKeyId: ben.id }).token)), 'another user and key');
      assertExpired(await search(withCsrf(sessions.sign({ ...own, apiKeyId: 'key_000000000000000000000000' }).token)), 'an unknown key');
      assertExpired(await search(withCsrf(sessions.sign({ ...own, id: 'ses_000000000000000000000000' }).token)), 'an unknown session');
      // The control: a token made the same way for the session's record works.
      assert.equal((await search(withCsrf(sessions.sign(own).token))).status, 200);
    });

    await t.test('a bearer credential wins over the cookie', async () => {
      // The cookie is not even looked at: no CSRF token needed, and the request is ben's (counted).
      const a = await search({ cookie: annSession.headers.cookie!, ...bearer(ben.key) });
      assert.equal(a.status, 200, a.text);
      assert.equal(a.headers.get('x-ratelimit-limit'), '10000', "counted against ben's limit");
      const b = await search({ cookie: 'trawl_session=garbage', 'x-service-api-key': ben.key });
      assert.equal(b.status, 200, b.text);
      // And a bad bearer credential is not rescued by a good session.
      const c2 = await search({ ...annSession.headers, authorization: `Bearer svk_${'0'.repeat(64)}` });
      assert.equal(c2.status, 401);
      assert.match(c2.json.message, /API key is not valid/);
    });

    await t.test('only an API key signs in; bad keys and bad bodies are refused', async () => {
      const token = newScopedToken();
      const st = openStore(d.dataDir);
      try {
        await st.createScopedToken(
          {
            userId: benUser.id,
            apiKeyId: ben.id,
            hash: credentialHash(secret, token),
            repoIds: [1],
            expiresAt: new Date(clock.getTime() + 3_600_000).toISOString(),
          },
          clock.toISOString(),
        );
      } finally {
        await st.close();
      }
      // The scoped token (ben's: ann's daily requests are used up) is good, the control...
      assert.equal((await api('GET', '/api/repos', { headers: bearer(token) })).status, 200);
      // ...but does not sign in; nor does an OAuth token.
      for (const t2 of [token, `svoa_${'a'.repeat(64)}`]) {
        const a = await api('POST', '/api/session', { json: { apiKey: t2 } });
        assert.equal(a.status, 401);
        assert.equal(a.json.errorCode, 'NOT_AUTHENTICATED');
        assert.match(a.json.message, /only an API key/);
        assert.deepEqual(setCookies(a), []);
      }
      for (const bad of [`svk_${'0'.repeat(64)}`, ann.key.slice(0, -1), 'hello']) {
        const a = await api('POST', '/api/session', { json: { apiKey: bad } });
        assert.equal(a.status, 401, bad);
        assert.equal(a.json.message, 'the API key is not valid (unknown, malformed or revoked)');
        assert.deepEqual(setCookies(a), []);
      }
      const bodies: Array<[string, RequestInit & { json?: unknown }]> = [
        ['missing apiKey', { json: {} }],
        ['an extra field', { json: { apiKey: ann.key, remember: true } }],
        ['apiKey not a string', { json: { apiKey: 42 } }],
        ['apiKey empty', { json: { apiKey: '' } }],
        ['not JSON', { body: 'apiKey=svk_x', headers: { 'content-type': 'application/json' } }],
        ['a JSON array', { json: [ann.key] }],
      ];
      for (const [what, init] of bodies) {
        const a = await call(`${d.url}/api/session`, { method: 'POST', ...init });
        checker.check('POST', '/api/session', a.status, a.json);
        assert.equal(a.status, 400, what);
        assert.equal(a.json.errorCode, 'INVALID_REQUEST_BODY', what);
        assert.deepEqual(setCookies(a), [], what);
      }
    });

    await t.test('a session cannot create scoped access tokens (an API key is needed)', async () => {
      const a = await api('POST', '/api/ee/scoped_access_token', { headers: annSession.headers, json: { repoIds: [1] } });
      assert.equal(a.status, 403);
      assert.equal(a.json.errorCode, 'INSUFFICIENT_PERMISSIONS');
    });

    await t.test('the tool server (a CORS route) ignores the cookie', async () => {
      const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const none = await call(`${d.url}/api/mcp`, { method: 'POST', json: ping, headers: { accept: 'application/json, text/event-stream' } });
      assert.equal(none.status, 401);
      for (const headers of [{ cookie: annSession.headers.cookie! }, annSession.headers]) {
        const a = await call(`${d.url}/api/mcp`, { method: 'POST', json: ping, headers: { ...headers, accept: 'application/json, text/event-stream' } });
        assert.equal(a.status, 401, 'a session is no credential here');
        assert.deepEqual(a.json, none.json, 'the same answer as no credential at all');
        assert.equal(a.headers.get('www-authenticate'), none.headers.get('www-authenticate'));
      }
      // The control: the same request with ann's key passes authentication.
      const withKey = await call(`${d.url}/api/mcp`, {
        method: 'POST',
        json: ping,
        headers: { ...bearer(ben.key), accept: 'application/json, text/event-stream' },
      });
      assert.notEqual(withKey.status, 401);
    });

    await t.test('revoking the key ends its sessions, and only those', async () => {
      const second = await c.key('ann@example.com');
      const s2 = await signIn(second.key);
      assert.equal((await search(s2.headers)).status, 200);
      assert.equal(await c.revoke(second.id), 0);
      assertExpired(await search(s2.headers), 'revoked key');
      const state = await api('GET', '/api/session', { headers: { cookie: s2.headers.cookie! } });
      assert.equal(state.json.authenticated, false);
      assert.deepEqual(setCookies(state), CLEARING);
      assert.equal((await search(annSession.headers)).status, 200, 'the session of the other key goes on');
      const again = await api('POST', '/api/session', { json: { apiKey: second.key } });
      assert.equal(again.status, 401, 'a revoked key cannot sign in');
    });

    await t.test('suspending the user ends the sessions; lifting it restores them', async () => {
      assert.equal(await c.users('suspend', 'ann@example.com'), 0);
      assertExpired(await search(annSession.headers), 'suspended user');
      assert.equal((await api('GET', '/api/session', { headers: { cookie: annSession.headers.cookie! } })).json.authenticated, false);
      const refused = await api('POST', '/api/session', { json: { apiKey: ann.key } });
      assert.equal(refused.status, 401);
      assert.match(refused.json.message, /suspended/);
      assert.equal(await c.users('unsuspend', 'ann@example.com'), 0);
      assert.equal((await search(annSession.headers)).status, 200);
    });

    await t.test('sign-out: needs the CSRF token with a valid session; drops the cookie', async () => {
      const s3 = await signIn(ben.key);
      assertCsrf(await api('DELETE', '/api/session', { headers: { cookie: s3.headers.cookie! } }), 'sign-out without the token');
      assertCsrf(
        await api('DELETE', '/api/session', { headers: { cookie: s3.headers.cookie!, 'x-csrf-token': annSession.csrf } }),
        "sign-out with another session's token",
      );
      assert.equal((await search(s3.headers)).status, 200, 'the control: the session works before');
      const out = await api('DELETE', '/api/session', { headers: s3.headers });
      assert.equal(out.status, 204);
      assert.deepEqual(setCookies(out), CLEARING);
      // The session ended in the store: a copy of the token no longer works either.
      assertExpired(await search(s3.headers), "a copy of a signed-out session's token");
      assert.equal((await search(annSession.headers)).status, 200, 'another session goes on');
      // Nothing to sign out of: still 204, still cleared.
      for (const headers of [{}, { cookie: 'trawl_session=garbage' }] as Array<Record<string, string>>) {
        const a = await api('DELETE', '/api/session', { headers });
        assert.equal(a.status, 204);
        assert.deepEqual(setCookies(a), CLEARING);
      }
    });

    await t.test('sessions expire 12 hours after sign-in', async () => {
      const fresh = await signIn(ben.key);
      clock = new Date(T0.getTime() + SESSION_LIFETIME_MS - 1000);
      assert.equal((await search(annSession.headers)).status, 200, 'a second before');
      clock = new Date(T0.getTime() + SESSION_LIFETIME_MS);
      assertExpired(await search(annSession.headers), 'after 12 hours');
      assertExpired(await search(fresh.headers), 'after 12 hours');
      const state = await api('GET', '/api/session', { headers: { cookie: annSession.headers.cookie! } });
      assert.deepEqual(state.json, { authenticated: false, anonymousAccess: false, providers: [] });
      assert.deepEqual(setCookies(state), CLEARING);
      // Signing in again starts a new 12 hours.
      const renewed = await signIn(ann.key);
      assert.equal(renewed.body.expiresAt, '2026-11-23T10:00:00.000Z');
      assert.equal((await search(renewed.headers)).status, 200);
    });

    await t.test('no session token or CSRF token in the logs', async () => {
      const logs = logger.text();
      assert.ok(logs.length > 0);
      assert.ok(!logs.includes(annSession.token.split('.')[2]!), 'no session token');
      assert.ok(!logs.includes(annSession.csrf), 'no CSRF token');
    });
  } finally {
    await d.cleanup();
  }
});

test('browser sessions with anonymous access on and an https public URL', async () => {
  const d = await startTestDaemon({ settings: { anonymousAccess: true, publicUrl: 'https://code.example.com' } });
  try {
    const c = cli(d, () => new Date());
    assert.equal(await c.users('add', '--email', 'cy@example.com', '--name', 'Cy'), 0);
    const cy = await c.key('cy@example.com');

    const state = await call(`${d.url}/api/session`);
    assert.deepEqual(state.json, { authenticated: false, anonymousAccess: true, providers: [] });

    const a = await call(`${d.url}/api/session`, { json: { apiKey: cy.key } });
    assert.equal(a.status, 201);
    const [cookie] = a.headers.getSetCookie();
    assert.match(cookie!, /^trawl_session=v2\.[^;]+; Path=\/; HttpOnly; SameSite=Strict; Secure$/, 'Secure behind an https public URL');
    assert.equal(a.headers.getSetCookie()[1], `trawl_csrf=${a.json.csrfToken}; Path=/; SameSite=Strict; Secure`);
    const token = /^trawl_session=([^;]+)/.exec(cookie!)![1]!;
    const headers = { cookie: `trawl_session=${token}`, 'x-csrf-token': a.json.csrfToken };

    const signedIn = await call(`${d.url}/api/session`, { headers: { cookie: headers.cookie } });
    assert.equal(signedIn.json.authenticated, true);
    assert.equal(signedIn.json.anonymousAccess, true);

    // Anonymous sees public repositories only; the session sees the private one too.
    const secretQuery = { query: 'widget_secret_sauce', matches: 10 };
    assert.equal((await call(`${d.url}/api/search`, { json: secretQuery })).json.files.length, 0);
    assert.equal((await call(`${d.url}/api/search`, { json: secretQuery, headers })).json.files.length, 1);

    // A session cookie is never silently downgraded to anonymous access.
    const noCsrf = await call(`${d.url}/api/search`, { json: secretQuery, headers: { cookie: headers.cookie } });
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.json.errorCode, 'INVALID_CSRF_TOKEN');
    const stale = new BrowserSessions(serverSecret(d.dataDir)).sign({
      id: 'ses_000000000000000000000000',
      userId: 'usr_000000000000000000000000',
      apiKeyId: cy.id,
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    }).token;
    const staleAnswer = await call(`${d.url}/api/search`, {
      json: secretQuery,
      headers: { cookie: `trawl_session=${stale}`, 'x-csrf-token': new BrowserSessions(serverSecret(d.dataDir)).csrfToken(stale) },
    });
    assert.equal(staleAnswer.status, 401);

    const out = await call(`${d.url}/api/session`, { method: 'DELETE', headers });
    assert.equal(out.status, 204);
    assert.deepEqual(
      out.headers.getSetCookie(),
      CLEARING.map((c) => `${c}; Secure`),
    );
  } finally {
    await d.cleanup();
  }
});
