// Single sign-on through an OpenID Connect provider (daemon/http/handlers/sign-in.ts,
// daemon/auth/sso/), over real HTTP: an in-process provider (test/helpers/oidc-provider.ts)
// and a real daemon on loopback, the browser's part played by following redirects. A first
// sign-in makes a member (the configured role; a domain not allowed, an unverified email or
// a suspended member refused); a later one finds them by their account even after the
// provider's email changed; an existing member is found by verified email; a state or nonce
// changed on the way, and a callback sent again, are refused. The session is the API-key
// sign-in's (cookies, CSRF, audit) and ends like one: sign-out, DELETE /api/sessions/{id},
// sign-out everywhere, suspension; and when the provider leaves the configuration.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sessionsCommand } from '../../daemon/cli/sessions-command.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { AuditEventRecord, Store } from '../../daemon/store/store.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { logRecorder } from '../helpers/log-recorder.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { ResponseChecker } from '../helpers/openapi.ts';
import { CookieJar, navigate, walk } from '../helpers/sign-in-walk.ts';

const SECRET_ENV = 'CORP_SSO_SECRET';

let idp: TestOidcProvider;
let d: TestDaemon;
let base: string;
/** A second daemon's address, which the provider also knows (the configuration tests). */
let otherBase: string;
const log = logRecorder();

/** The provider's settings as the configuration file holds them. */
const corp = () => ({ type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: { env: SECRET_ENV }, displayName: 'Corp SSO' });

before(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  otherBase = `http://127.0.0.1:${await freePort()}`;
  idp = await startOidcProvider({
    redirectUris: [`${base}/auth/corp/callback`, `${otherBase}/auth/corp/callback`],
    accounts: {
      'sub-alice': { email: 'Alice@Example.com', email_verified: true, name: 'Alice Liddell' },
      'sub-bob': { email: 'bob@elsewhere.org', email_verified: true, name: 'Bob' },
      'sub-carol': { email: 'carol@example.com', email_verified: false, name: 'Carol' },
      'sub-dave': { email: 'dave@example.com', email_verified: true, name: 'Dave' },
      'sub-erin': { email: 'erin@example.com', email_verified: true, name: 'Erin (IdP)' },
      'sub-nomail': { name: 'No Mail' },
      'sub-frank': { email: 'frank@example.com', email_verified: true, name: 'Frank' },
    },
  });
  d = await startTestDaemon({
    settings: { anonymousAccess: false, publicUrl: base },
    config: { signIn: { providers: { corp: corp() }, allowedDomains: ['example.com'], defaultRole: 'member' } },
    daemon: { port, env: { [SECRET_ENV]: idp.clientSecret }, logger: log },
  });
  // Members before any sign-in: Dave (suspended) and Erin (an owner).
  await withStore(async (store) => {
    const dave = await store.createUser({ email: 'dave@example.com', name: 'Dave', role: 'member' }, new Date().toISOString());
    await store.updateUser(dave.id, { suspendedAt: new Date().toISOString() }, new Date().toISOString());
    await store.createUser({ email: 'erin@example.com', name: 'Erin', role: 'owner' }, new Date().toISOString());
  });
});

after(async () => {
  await d?.cleanup();
  await idp?.close();
});

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore(d.dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** A whole sign-in of `sub` from /auth/corp/start of the daemon at `at` (default the first), as a browser follows it. */
async function signIn(sub: string, options: { returnTo?: string; rewrite?: (url: string) => string; at?: string } = {}) {
  const site = options.at ?? base;
  idp.nextLogin = sub;
  const jar = new CookieJar();
  const start = `${site}/auth/corp/start${options.returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(options.returnTo)}`}`;
  // Done when back on the daemon, outside /auth/.
  const done = (url: string) => url.startsWith(site) && !new URL(url).pathname.startsWith('/auth/');
  const result = await walk(start, jar, { done, ...(options.rewrite ? { rewrite: options.rewrite } : {}) });
  const callback = result.hops.find((h) => h.url.startsWith(`${site}/auth/corp/callback`));
  const end = new URL(result.end);
  return {
    ...result,
    jar,
    callback,
    refusal: end.searchParams.get('signInError'),
    session: jar.get(site, 'trawl_session'),
    csrf: jar.get(site, 'trawl_csrf'),
    /** Headers of an API call as the page makes them. */
    headers: () => ({ cookie: jar.header(`${site}/api/`), 'x-csrf-token': jar.get(site, 'trawl_csrf') ?? '' }),
  };
}

async function auditActions(userId?: string): Promise<AuditEventRecord[]> {
  return withStore(async (store) => (await store.audit.list({ offset: 0, limit: 1000, ...(userId ? { actor: userId } : {}) })).events);
}

describe('single sign-on through OpenID Connect', () => {
  test('GET /api/session names the providers', async () => {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const r = await call(`${d.url}/api/session`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.providers, [{ name: 'corp', displayName: 'Corp SSO', type: 'oidc' }]);
    checker.check('GET', '/api/session', r.status, r.json);
  });

  test('start: the provider gets PKCE (S256), a state and a nonce; the flow cookie is HttpOnly, Lax, under /auth/', async () => {
    const jar = new CookieJar();
    const hop = await navigate(`${base}/auth/corp/start?returnTo=/search`, jar);
    assert.equal(hop.status, 302);
    const to = new URL(hop.location!);
    assert.equal(to.origin, idp.issuer);
    const q = to.searchParams;
    assert.equal(q.get('client_id'), idp.clientId);
    assert.equal(q.get('redirect_uri'), `${base}/auth/corp/callback`);
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('scope'), 'openid email profile');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('state') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
    const cookie = hop.res.headers.getSetCookie().find((c) => c.startsWith('trawl_sign_in='))!;
    assert.match(cookie, /; Path=\/auth\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
    // The verifier is in the cookie, never in the address.
    assert.ok(!hop.location!.includes(JSON.parse(Buffer.from(jar.get(base, 'trawl_sign_in')!.split('.')[0]!, 'base64url').toString()).v));
    assert.equal((await navigate(`${base}/auth/nope/start`, jar)).status, 404, 'an unknown provider');
  });

  let aliceId: string;

  test('a first sign-in makes a member (role member, the name the provider gives), signs the browser in and returns to its page', async () => {
    const s = await signIn('sub-alice', { returnTo: '/search?q=widget' });
    assert.equal(s.refusal, null);
    assert.equal(s.end, `${base}/search?q=widget`);
    const callbackCookies = s.last.headers.getSetCookie();
    assert.ok(
      callbackCookies.some((c) => /^trawl_session=v2\.[^;]+; Path=\/; HttpOnly; SameSite=Strict$/.test(c)),
      callbackCookies.join('\n'),
    );
    assert.ok(callbackCookies.some((c) => /^trawl_csrf=[^;]+; Path=\/; SameSite=Strict$/.test(c)));
    assert.ok(
      callbackCookies.some((c) => c.startsWith('trawl_sign_in=; Path=/auth/')),
      'the flow cookie is dropped',
    );

    const state = await call(`${d.url}/api/session`, { headers: { cookie: s.jar.header(`${base}/api/session`) } });
    assert.equal(state.json.authenticated, true);
    assert.equal(state.json.user.email, 'alice@example.com');
    assert.equal(state.json.user.name, 'Alice Liddell');
    assert.equal(state.json.user.role, 'member');
    assert.equal(state.json.csrfToken, s.csrf);
    aliceId = state.json.user.id;

    // An API request with the session and its CSRF token, never counted against the limit.
    const repos = await call(`${d.url}/api/repos`, { headers: s.headers() });
    assert.equal(repos.status, 200);
    assert.equal(repos.headers.get('x-ratelimit-limit'), null);
    assert.equal((await call(`${d.url}/api/repos`, { headers: { cookie: s.headers().cookie } })).status, 403, 'without the CSRF header');

    await withStore(async (store) => {
      const user = (await store.getUserByEmail('alice@example.com'))!;
      assert.equal(user.id, aliceId);
      const identity = (await store.findSignInIdentity(`${idp.issuer}/`, 'sub-alice'))!;
      assert.equal(identity.userId, aliceId);
      assert.equal(identity.provider, 'corp');
      assert.equal(identity.email, 'alice@example.com');
      const sessions = await store.listLiveSessions(aliceId, new Date().toISOString());
      assert.equal(sessions.length, 1);
      assert.equal(sessions[0]!.identityId, identity.id);
      assert.equal(sessions[0]!.apiKeyId, undefined);
    });
    // The command line names the provider a session came through.
    const out: string[] = [];
    const io = { out: (l: string) => void out.push(l), err: () => {}, now: () => new Date() };
    assert.equal(await sessionsCommand(['list', '--user', 'alice@example.com', '--data-dir', d.dataDir], io), 0);
    assert.match(out.join('\n'), /^browser session ses_[0-9a-f]{24} .* single sign-on corp \(sso_[0-9a-f]{24}\)$/);
    const events = await auditActions(aliceId);
    const opened = events.find((e) => e.action === 'session.opened')!;
    assert.deepEqual(opened.details, { expiresAt: opened.details!.expiresAt, provider: 'corp', linked: 'provisioned' });
    assert.equal(opened.actor.credentialKind, 'singleSignOn');
    const added = events.find((e) => e.action === 'user.added')!;
    assert.deepEqual(added.details, { email: 'alice@example.com', role: 'member', provider: 'corp' });
  });

  test('a callback sent again (a copy of the flow cookie with it) is refused, before the provider is asked', async () => {
    const s = await signIn('sub-alice');
    assert.equal(s.refusal, null);
    const tokenCalls = idp.requests.filter((r) => r.startsWith('POST /token')).length;
    const again = await navigate(s.callback!.url, new CookieJar(), s.callback!.cookie);
    assert.equal(again.status, 303);
    assert.equal(new URL(again.location!).searchParams.get('signInError'), 'replayed');
    assert.equal(new URL(again.location!).searchParams.get('provider'), 'corp');
    assert.ok(!again.res.headers.getSetCookie().some((c) => c.startsWith('trawl_session=v2')), 'no session');
    assert.equal(idp.requests.filter((r) => r.startsWith('POST /token')).length, tokenCalls, 'the code was not sent again');
    // Without the flow cookie at all: refused as a flow this browser did not start.
    const bare = await navigate(s.callback!.url, new CookieJar(), '');
    assert.equal(new URL(bare.location!).searchParams.get('signInError'), 'expired');
  });

  test('a state changed on the way back is refused; so is a nonce changed on the way out', async () => {
    const state = await signIn('sub-alice', {
      rewrite: (url) =>
        url.startsWith(`${base}/auth/corp/callback`) ? url.replace(/([?&]state=)[^&]+/, '$1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA') : url,
    });
    assert.equal(state.refusal, 'expired');
    assert.equal(state.session, undefined);
    const nonce = await signIn('sub-alice', {
      rewrite: (url) => (url.startsWith(`${idp.issuer}/auth?`) ? url.replace(/([?&]nonce=)[^&]+/, '$1BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB') : url),
    });
    assert.ok(
      nonce.hops.some((h) => h.url.includes('nonce=BBBB')),
      'the nonce was changed',
    );
    assert.equal(nonce.refusal, 'provider_error');
    assert.equal(nonce.session, undefined);
    assert.match(log.text(), /"reason":"provider_error","detail":"[^"]*\\"nonce\\" claim value/, 'the log says the nonce was wrong');
  });

  test('a later sign-in finds the member by their account, even after the provider changed their email', async () => {
    idp.accounts.set('sub-alice', { email: 'alice.l@example.com', email_verified: true, name: 'Alice L.' });
    const s = await signIn('sub-alice');
    assert.equal(s.refusal, null);
    const state = await call(`${d.url}/api/session`, { headers: { cookie: s.jar.header(`${base}/api/session`) } });
    assert.equal(state.json.user.id, aliceId, 'the same member');
    assert.equal(state.json.user.email, 'alice@example.com', "the member's email is theirs, not the provider's");
    await withStore(async (store) => {
      assert.equal(await store.getUserByEmail('alice.l@example.com'), undefined, 'nobody new');
      assert.equal((await store.findSignInIdentity(`${idp.issuer}/`, 'sub-alice'))!.email, 'alice.l@example.com');
    });
    const opened = (await auditActions(aliceId)).find((e) => e.action === 'session.opened')!;
    assert.equal(opened.details!.linked, 'known');
  });

  test('an existing member is found by verified email and keeps their role', async () => {
    const s = await signIn('sub-erin');
    assert.equal(s.refusal, null);
    const state = await call(`${d.url}/api/session`, { headers: { cookie: s.jar.header(`${base}/api/session`) } });
    assert.equal(state.json.user.email, 'erin@example.com');
    assert.equal(state.json.user.role, 'owner');
    assert.equal(state.json.user.name, 'Erin', 'the name the owner gave');
    const opened = (await auditActions(state.json.user.id)).find((e) => e.action === 'session.opened')!;
    assert.equal(opened.details!.linked, 'email');
  });

  for (const [sub, reason, email] of [
    ['sub-bob', 'domain_not_allowed', 'bob@elsewhere.org'],
    ['sub-carol', 'unverified_email', 'carol@example.com'],
    ['sub-dave', 'suspended', 'dave@example.com'],
    ['sub-nomail', 'no_email', undefined],
  ] as const) {
    test(`refused: ${reason}, with no session and no member made, recorded as a failed session.opened`, async () => {
      const users = await withStore((store) => store.listUsers());
      const s = await signIn(sub, { returnTo: '/settings' });
      assert.equal(s.refusal, reason);
      assert.equal(new URL(s.end).pathname, '/settings', 'back to the page it started from');
      assert.equal(s.session, undefined);
      assert.equal((await withStore((store) => store.listUsers())).length, users.length);
      const failed = (await auditActions()).find((e) => e.action === 'session.opened' && e.outcome === 'failure' && e.details?.reason === reason)!;
      assert.ok(failed, `a failed session.opened with reason ${reason}`);
      assert.equal(failed.details!.provider, 'corp');
      if (email) assert.equal(failed.details!.email, email);
    });
  }

  test('the session ends like any: DELETE /api/sessions/{id}, sign-out everywhere, suspension', async () => {
    const ids = async (userId: string) => withStore(async (store) => (await store.listLiveSessions(userId, new Date().toISOString())).map((x) => x.id));
    const a = await signIn('sub-alice');
    const live = await ids(aliceId);
    const newest = live[0]!;
    assert.equal((await call(`${d.url}/api/sessions/${newest}`, { method: 'DELETE', headers: a.headers() })).status, 204, 'a session may end itself');
    assert.equal((await call(`${d.url}/api/repos`, { headers: a.headers() })).status, 401);

    const b = await signIn('sub-alice');
    const c = await signIn('sub-alice');
    const out = await call(`${d.url}/api/sign_out_everywhere`, { json: {}, headers: b.headers() });
    assert.equal(out.status, 200);
    assert.ok(out.json.ended.sessions >= 2);
    for (const s of [b, c]) assert.equal((await call(`${d.url}/api/repos`, { headers: s.headers() })).status, 401);

    const e = await signIn('sub-alice');
    assert.equal((await call(`${d.url}/api/repos`, { headers: e.headers() })).status, 200);
    await withStore((store) => store.updateUser(aliceId, { suspendedAt: new Date().toISOString() }, new Date().toISOString()));
    assert.equal((await call(`${d.url}/api/repos`, { headers: e.headers() })).status, 401, 'suspended: the session is refused');
    assert.equal((await signIn('sub-alice')).refusal, 'suspended', 'and a new sign-in too');
    await withStore((store) => store.updateUser(aliceId, { suspendedAt: null }, new Date().toISOString()));
  });

  test('the provider denied (access_denied): refused as denied', async () => {
    const s = await signIn('sub-alice', {
      rewrite: (url) => (url.startsWith(`${base}/auth/corp/callback`) ? url.replace(/code=[^&]+/, 'error=access_denied') : url),
    });
    assert.equal(s.refusal, 'denied');
  });

  test('the log holds no code, state, token or session cookie', async () => {
    const s = await signIn('sub-alice');
    const q = new URL(s.callback!.url).searchParams;
    const text = log.text();
    for (const secret of [q.get('code')!, q.get('state')!, s.session!, s.csrf!]) assert.ok(!text.includes(secret), `the log holds ${secret.slice(0, 8)}...`);
  });
});

describe('single sign-on: what the configuration changes', () => {
  /** Another daemon on the same data directory (so the same store and secret) with another signIn section. */
  async function daemonWith(signIn: Record<string, unknown>, port: number): Promise<Daemon> {
    const config = parseConfig(
      JSON.stringify({ settings: { anonymousAccess: false, publicUrl: `http://127.0.0.1:${port}` }, signIn }),
      join(d.dataDir, 'other.json'),
    );
    return startDaemon({
      config,
      dataDir: d.dataDir,
      host: '127.0.0.1',
      port,
      logger: silentHttpLogger,
      workers: 1,
      sync: false,
      env: { [SECRET_ENV]: idp.clientSecret },
    });
  }

  test('a provider taken out of the configuration: its sessions are refused', async () => {
    const s = await signIn('sub-alice');
    assert.equal((await call(`${d.url}/api/repos`, { headers: s.headers() })).status, 200);
    const other = await daemonWith({}, await freePort());
    try {
      assert.equal((await call(`${other.url}/api/repos`, { headers: s.headers() })).status, 401);
      assert.deepEqual((await call(`${other.url}/api/session`)).json.providers, []);
    } finally {
      await other.close();
    }
  });

  test('provisioning off: a person the store does not know is refused as not_a_member; a member still signs in', async () => {
    const other = await daemonWith({ providers: { corp: corp() }, provision: false }, Number(new URL(otherBase).port));
    try {
      const frank = await signIn('sub-frank', { at: otherBase });
      assert.equal(frank.refusal, 'not_a_member');
      assert.equal(await withStore((store) => store.getUserByEmail('frank@example.com')), undefined);
      const erin = await signIn('sub-erin', { at: otherBase });
      assert.equal(erin.refusal, null);
      assert.equal((await call(`${other.url}/api/repos`, { headers: erin.headers() })).status, 200);
    } finally {
      await other.close();
    }
  });

  test('a provider that cannot be reached: the start goes back to the page with provider_error, and is tried again next time', async () => {
    const port = await freePort();
    const other = await daemonWith({ providers: { corp: { ...corp(), issuer: `http://127.0.0.1:${await freePort()}` } } }, port);
    try {
      for (let i = 0; i < 2; i++) {
        const hop = await navigate(`http://127.0.0.1:${port}/auth/corp/start?returnTo=/settings`, new CookieJar());
        assert.equal(hop.status, 303);
        assert.equal(hop.location, `http://127.0.0.1:${port}/settings?signInError=provider_error&provider=corp`);
        assert.ok(!hop.res.headers.getSetCookie().some((c) => c.startsWith('trawl_sign_in=v')), 'no flow is started');
      }
    } finally {
      await other.close();
    }
  });

  test('an unset client secret stops the start, naming the variable', async () => {
    const config = parseConfig(
      JSON.stringify({ settings: { publicUrl: 'http://127.0.0.1:1' }, signIn: { providers: { corp: corp() } } }),
      join(d.dataDir, 'other.json'),
    );
    await assert.rejects(
      () => startDaemon({ config, dataDir: d.dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false, env: {} }),
      /signIn provider "corp": the environment variable CORP_SSO_SECRET \(its clientSecret\) is not set/,
    );
  });
});
