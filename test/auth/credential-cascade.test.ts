// Revoking an API key ends everything it opened (docs/identity.md "Credential lifetimes"),
// over real HTTP: a user with two keys opens, with each, a scoped access token, an OAuth
// grant (access and refresh token, plus an authorization code not yet exchanged) and a
// browser session, and tool server sessions with the tokens. Revoking the first key (DELETE
// /api/keys/{id}) makes every one of its credentials fail on its next use: 401 on REST, on
// the streaming search (SSE) and on a tool call of an open MCP session; invalid_grant at
// the OAuth token endpoint for the refresh token and the code. Everything of the second key
// goes on.
// Credentials opened with the key while it was being revoked (a request racing the
// revocation, written after it) are refused too: each use checks the key itself.
// Then: a grant's absolute lifetime, lastUsedAt, and who may list and end what.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { StoreAuthenticator } from '../../daemon/auth/authenticator.ts';
import { BrowserSessions } from '../../daemon/auth/browser-session.ts';
import { credentialHash, newScopedToken, serverSecret } from '../../daemon/auth/credentials.ts';
import { signLicense } from '../../daemon/auth/license.ts';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { sessionsCommand } from '../../daemon/cli/sessions-command.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { newCredential } from '../../daemon/oauth/tokens.ts';
import { openStore } from '../../daemon/store/open.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import type { Store } from '../../daemon/store/store.ts';
import { call, startTestDaemon, type Answer, type TestDaemon } from '../helpers/daemon.ts';
import { databaseText, logRecorder } from '../helpers/log-recorder.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const LICENSE = signLicense(
  {
    id: 'L-cascade',
    licensee: 'Test Org',
    entitlements: ['oauth', 'scoped-access-tokens', 'org-management'],
    issuedAt: '2026-01-01T00:00:00Z',
    expiresAt: '2099-01-01T00:00:00Z',
  },
  privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
);
const T0 = Date.parse('2026-06-01T10:00:00Z');
const DAY = 86_400_000;
const CB = 'http://127.0.0.1:5000/cb';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const USER_AGENT = 'TestBrowser/1.0 (cascade)';

interface Key {
  key: string;
  id: string;
}

interface Session {
  token: string;
  csrf: string;
  id: string;
  /** Cookie and CSRF header, as the page sends them. */
  headers: Record<string, string>;
}

interface Grant {
  client: string;
  access: string;
  refresh: string;
}

/** Everything one API key opens. */
interface Opened {
  scoped: { id: string; token: string };
  grant: Grant;
  /** Consented with the key, not yet exchanged. */
  pending: { client: string; code: string; verifier: string };
  session: Session;
  /** Tool-server sessions opened with the scoped token and the OAuth access token. */
  mcp: { scoped: string; oauth: string };
}

function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The harness: a daemon with a license, CLI helpers, and a request per channel. */
async function harness(clock: () => Date, settings: Record<string, unknown> = {}) {
  const logger = logRecorder();
  const d: TestDaemon = await startTestDaemon({
    settings: { anonymousAccess: false, ...settings },
    config: { license: { publicKeys: [PUBLIC_PEM] } },
    daemon: { now: clock, logger },
  });
  const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: clock };
  const dd = ['--data-dir', d.dataDir];
  /** Every secret issued, for the searches of the logs, the database and the answers. */
  const secrets: string[] = [];
  /** Every answer of the credential endpoints, for the same search. */
  const answers: string[] = [];
  const withStore = async <T>(fn: (store: Store) => T): Promise<T> => {
    const store = openStore(d.dataDir);
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };
  await withStore((s) => s.putLicense(LICENSE));
  const secret = serverSecret(d.dataDir);

  const h = {
    d,
    logger,
    checker,
    out,
    err,
    secrets,
    answers,
    secret,
    withStore,
    users: (...args: string[]) => usersCommand([...args, ...dd], io),
    keys: (...args: string[]) => keysCommand([...args, ...dd], io),
    sessions: (...args: string[]) => sessionsCommand([...args, ...dd], io),
    async newKey(email: string, name = 'default'): Promise<Key> {
      assert.equal(await keysCommand(['create', '--user', email, '--name', name, ...dd], io), 0);
      const key = out.at(-1)!;
      secrets.push(key);
      return { key, id: /key (key_[0-9a-f]{24})/.exec(err.at(-1)!)![1]! };
    },
    /** An API request, its answer checked against the OpenAPI document. */
    async api(method: string, path: string, headers: Record<string, string> = {}, json?: unknown): Promise<Answer> {
      const a = await call(`${d.url}${path}`, { method, headers, ...(json !== undefined ? { json } : {}) });
      const route = path
        .split('?')[0]!
        .replace(/^\/api\/(keys|oauth_grants|sessions)\/[^/]+$/, '/api/$1/{id}')
        .replace(/^\/api\/ee\/scoped_access_token\/.+$/, '/api/ee/scoped_access_token/{id}');
      if (route !== '/api/mcp' && route.startsWith('/api/')) checker.check(method, route, a.status, a.json);
      if (/^\/api\/(keys|oauth_grants|sessions|sign_out_everywhere)/.test(route)) answers.push(a.text);
      return a;
    },
    bearer: (token: string) => ({ authorization: `Bearer ${token}` }),
    async rest(headers: Record<string, string>): Promise<number> {
      return (await h.api('GET', '/api/repos', headers)).status;
    },
    /** The streaming search: its status (the stream is read to its end when it is 200). */
    async sse(headers: Record<string, string>): Promise<number> {
      const res = await fetch(`${d.url}/api/stream_search`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'widget_count', matches: 10 }),
      });
      const text = await res.text();
      if (res.status === 200) {
        assert.match(text, /"type":"chunk"/, 'the stream found the matches');
        assert.match(text, /data: \[DONE\]\n\n$/, 'and ran to its end');
      }
      return res.status;
    },
    async mcpPost(token: string, body: unknown, session?: string): Promise<Answer> {
      const headers: Record<string, string> = { ...h.bearer(token), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
      if (session) headers['mcp-session-id'] = session;
      return call(`${d.url}/api/mcp`, { method: 'POST', headers, json: body });
    },
    /** Opens a tool-server session with `token`; its id. */
    async mcpOpen(token: string): Promise<string> {
      const init = await h.mcpPost(token, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cascade', version: '1' } },
      });
      assert.equal(init.status, 200, init.text);
      const id = init.headers.get('mcp-session-id')!;
      assert.equal((await h.mcpPost(token, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).status, 202);
      return id;
    },
    /** A tool call on an open session: the HTTP status (200 with a result, 401 refused). */
    async mcpCall(token: string, session: string): Promise<number> {
      const a = await h.mcpPost(
        token,
        { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search_code', arguments: { query: 'widget_count' } } },
        session,
      );
      if (a.status === 200) assert.ok(a.json.result && !a.json.result.isError, a.text);
      return a.status;
    },
    async register(): Promise<string> {
      const r = await call(`${d.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Cascade agent', redirect_uris: [CB], token_endpoint_auth_method: 'none' }),
      });
      assert.equal(r.status, 201, r.text);
      return r.json.client_id as string;
    },
    /** The consent form posted with `key`: a code and its verifier. */
    async consent(client: string, key: string): Promise<{ code: string; verifier: string }> {
      const p = pkce();
      const body = new URLSearchParams({
        response_type: 'code',
        client_id: client,
        redirect_uri: CB,
        code_challenge: p.challenge,
        code_challenge_method: 'S256',
        state: 's',
        decision: 'allow',
        api_key: key,
      });
      const res = await fetch(`${d.url}/oauth/authorize`, { method: 'POST', headers: FORM, body: body.toString(), redirect: 'manual' });
      assert.equal(res.status, 303, await res.text());
      const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
      secrets.push(code);
      return { code, verifier: p.verifier };
    },
    async token(params: Record<string, string>): Promise<Answer> {
      const a = await call(`${d.url}/oauth/token`, { method: 'POST', headers: FORM, body: new URLSearchParams(params).toString() });
      if (a.status === 200) secrets.push(a.json.access_token, a.json.refresh_token);
      return a;
    },
    exchange: (client: string, code: string, verifier: string) =>
      h.token({ grant_type: 'authorization_code', client_id: client, code, code_verifier: verifier, redirect_uri: CB }),
    refresh: (client: string, refreshToken: string) => h.token({ grant_type: 'refresh_token', client_id: client, refresh_token: refreshToken }),
    async signIn(key: string): Promise<Session> {
      const a = await h.api('POST', '/api/session', { 'user-agent': USER_AGENT }, { apiKey: key });
      assert.equal(a.status, 201, a.text);
      const token = /^trawl_session=([^;]+)/.exec(a.headers.getSetCookie()[0]!)![1]!;
      secrets.push(token, a.json.csrfToken);
      const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as { s: string };
      return { token, csrf: a.json.csrfToken, id: claims.s, headers: { cookie: `trawl_session=${token}`, 'x-csrf-token': a.json.csrfToken } };
    },
    /** Everything `key` can open. */
    async open(key: string): Promise<Opened> {
      const repoIds = (await h.api('GET', '/api/repos', h.bearer(key))).json.map((r: { repoId: number }) => r.repoId);
      const created = await h.api('POST', '/api/ee/scoped_access_token', h.bearer(key), { repoIds });
      assert.equal(created.status, 201, created.text);
      secrets.push(created.json.token);
      const client = await h.register();
      const flow = await h.consent(client, key);
      const tokens = await h.exchange(client, flow.code, flow.verifier);
      assert.equal(tokens.status, 200, tokens.text);
      const pendingClient = await h.register();
      const pending = await h.consent(pendingClient, key);
      const session = await h.signIn(key);
      const scoped = { id: created.json.id as string, token: created.json.token as string };
      const grant = { client, access: tokens.json.access_token as string, refresh: tokens.json.refresh_token as string };
      return {
        scoped,
        grant,
        pending: { client: pendingClient, ...pending },
        session,
        mcp: { scoped: await h.mcpOpen(scoped.token), oauth: await h.mcpOpen(grant.access) },
      };
    },
    /** No secret issued in the credential endpoints' answers, the log lines or the database (file and WAL). */
    assertNoSecrets(): void {
      const texts = { "credential endpoints' answers": answers.join('\n'), logs: logger.text(), database: databaseText(d.dataDir) };
      assert.ok(answers.length >= 3, `${answers.length} answers`);
      assert.match(texts.logs, /\/api\/keys/, 'the requests were logged');
      assert.ok(secrets.length >= 20, `${secrets.length} secrets`);
      for (const s of new Set(secrets)) {
        // The random part: a session token's signature, a prefixed credential's hex; a CSRF token is random whole.
        const random = s.startsWith('v2.') ? s.split('.')[2]! : /^sv[a-z]*_/.test(s) ? s.slice(s.indexOf('_') + 1) : s;
        for (const [where, text] of Object.entries(texts)) {
          assert.ok(!text.includes(s), `${s.slice(0, 8)}... is not in the ${where}`);
          assert.ok(!text.includes(random), `the secret part of ${s.slice(0, 8)}... is not in the ${where}`);
        }
      }
    },
    /** Whether every credential `o` holds works (200) or is refused (401, invalid_grant), on every channel. */
    async expect(o: Opened, works: boolean, what: string): Promise<void> {
      const want = works ? 200 : 401;
      for (const [name, headers] of [
        ['scoped token', h.bearer(o.scoped.token)],
        ['OAuth access token', h.bearer(o.grant.access)],
        ['browser session', o.session.headers],
      ] as const) {
        assert.equal(await h.rest(headers), want, `${what}: ${name} over REST`);
        assert.equal(await h.sse(headers), want, `${what}: ${name} over SSE (stream_search)`);
      }
      assert.equal(await h.mcpCall(o.scoped.token, o.mcp.scoped), want, `${what}: scoped token, tool call on its open MCP session`);
      assert.equal(await h.mcpCall(o.grant.access, o.mcp.oauth), want, `${what}: OAuth access token, tool call on its open MCP session`);
      const state = await h.api('GET', '/api/session', { cookie: o.session.headers.cookie! });
      assert.equal(state.json.authenticated, works, `${what}: GET /api/session`);
    },
  };
  return h;
}

test('revoking an API key ends, on the next request, everything it opened; the other key of the same user keeps its own', async (t) => {
  const clock = new Date(T0);
  const h = await harness(() => clock);
  try {
    assert.equal(await h.users('add', '--email', 'ann@example.com', '--name', 'Ann'), 0);
    const a = await h.newKey('ann@example.com', 'leaked');
    const b = await h.newKey('ann@example.com', 'kept');
    const openedA = await h.open(a.key);
    const openedB = await h.open(b.key);

    await t.test('before: every credential of both keys works', async () => {
      await h.expect(openedA, true, 'key A before');
      await h.expect(openedB, true, 'key B before');
      // A's refresh token works before: it rotates, and the new one is what is tried after.
      const r = await h.refresh(openedA.grant.client, openedA.grant.refresh);
      assert.equal(r.status, 200, r.text);
      openedA.grant = { ...openedA.grant, access: r.json.access_token, refresh: r.json.refresh_token };
      assert.equal(await h.rest(h.bearer(openedA.grant.access)), 200);
      openedA.mcp.oauth = await h.mcpOpen(openedA.grant.access);
    });

    await t.test('DELETE /api/keys/{id} revokes the key and says what it ended', async () => {
      const revoked = await h.api('DELETE', `/api/keys/${a.id}`, h.bearer(b.key));
      assert.equal(revoked.status, 200, revoked.text);
      assert.deepEqual(revoked.json, { id: a.id, revokedAt: clock.toISOString(), ended: { scopedTokens: 1, oauthGrants: 1, sessions: 1 } });
    });

    await t.test("after: each of A's credentials is refused on its next use: REST, SSE, MCP, the token endpoint", async () => {
      assert.equal(await h.rest(h.bearer(a.key)), 401, 'the key itself');
      await h.expect(openedA, false, 'key A after');
      const refresh = await h.refresh(openedA.grant.client, openedA.grant.refresh);
      assert.equal(refresh.status, 400, refresh.text);
      assert.equal(refresh.json.error, 'invalid_grant');
      const code = await h.exchange(openedA.pending.client, openedA.pending.code, openedA.pending.verifier);
      assert.equal(code.status, 400, code.text);
      assert.equal(code.json.error, 'invalid_grant');
      assert.match(
        code.json.error_description,
        /API key this authorization was approved with has been revoked/,
        'a code consented before the revocation, exchanged after',
      );
      assert.equal((await h.api('POST', '/api/session', {}, { apiKey: a.key })).status, 401, 'a revoked key signs in no more');
    });

    await t.test('the key that was not revoked keeps all of its credentials', async () => {
      await h.expect(openedB, true, 'key B after');
      const refresh = await h.refresh(openedB.grant.client, openedB.grant.refresh);
      assert.equal(refresh.status, 200, refresh.text);
      assert.equal(refresh.json.expires_in, 3600);
      const code = await h.exchange(openedB.pending.client, openedB.pending.code, openedB.pending.verifier);
      assert.equal(code.status, 200, code.text);
      assert.equal(await h.rest(h.bearer(code.json.access_token)), 200);
    });

    await t.test('the listing shows A revoked with nothing under it, and what B opened', async () => {
      const keys = await h.api('GET', '/api/keys', h.bearer(b.key));
      assert.equal(keys.status, 200);
      assert.equal(keys.headers.get('cache-control'), 'no-store');
      // Both were created at the same instant (the clock stands still): found by name.
      assert.deepEqual(keys.json.map((k: { name: string }) => k.name).sort(), ['kept', 'leaked']);
      const ka = keys.json.find((k: { name: string }) => k.name === 'leaked');
      const kb = keys.json.find((k: { name: string }) => k.name === 'kept');
      assert.equal(ka.revokedAt, clock.toISOString());
      assert.deepEqual([ka.scopedTokens, ka.oauthGrants, ka.sessions], [[], [], []]);
      assert.equal(kb.revokedAt, null);
      assert.deepEqual(
        kb.scopedTokens.map((x: { id: string }) => x.id),
        [openedB.scoped.id],
      );
      assert.equal(kb.oauthGrants.length, 2, 'the first grant and the one from the code exchanged after');
      assert.ok(kb.oauthGrants.every((g: { clientName: string }) => g.clientName === 'Cascade agent'));
      assert.deepEqual(
        kb.sessions.map((x: { id: string; userAgent: string }) => [x.id, x.userAgent]),
        [[openedB.session.id, USER_AGENT]],
      );
    });

    await t.test('credentials written with the key after its revocation (a request racing it) are refused too', async () => {
      // What a scoped-token creation, a sign-in, a consent and a code exchange that
      // authenticated with A just before the revocation would write just after it: the
      // store's cascade cannot have marked them, so only the check at each use stops them.
      const late = { scoped: newScopedToken(), access: newCredential('svoa_'), refresh: newCredential('svor_'), code: newCredential('svoc_') };
      h.secrets.push(...Object.values(late));
      const { session, mixed } = await h.withStore(async (s) => {
        const user = (await s.getUserByEmail('ann@example.com'))!;
        const now = clock.toISOString();
        const soon = new Date(clock.getTime() + 3_600_000).toISOString();
        await s.createScopedToken({ userId: user.id, apiKeyId: a.id, hash: credentialHash(h.secret, late.scoped), repoIds: [1], expiresAt: soon }, now);
        const client = await s.oauth.createClient({ name: 'late', redirectUris: [CB], metadata: {} }, now);
        const codeFields = {
          clientId: client.id,
          userId: user.id,
          apiKeyId: a.id,
          redirectUri: CB,
          codeChallenge: 'x'.repeat(43),
          scope: 'search',
          expiresAt: soon,
        };
        await s.oauth.createCode({ ...codeFields, hash: credentialHash(h.secret, `grant-of-${late.access}`) }, now);
        const redeemed = await s.oauth.redeemCode(
          credentialHash(h.secret, `grant-of-${late.access}`),
          [
            { hash: credentialHash(h.secret, late.access), kind: 'access', expiresAt: soon },
            { hash: credentialHash(h.secret, late.refresh), kind: 'refresh', expiresAt: soon },
          ],
          now,
        );
        assert.ok(redeemed && 'grant' in redeemed && redeemed.grant.revokedAt === undefined, 'a grant nobody marked revoked');
        const sessionRecord = await s.createSession({ userId: user.id, apiKeyId: a.id, expiresAt: soon }, now);
        // And a session whose record pairs the user with another user's key.
        await s.createUser({ email: 'olga@example.com', name: 'Olga', role: 'owner' }, now);
        const olga = (await s.getUserByEmail('olga@example.com'))!;
        const olgaKey = await s.createApiKey(
          { userId: olga.id, name: 'o', hash: credentialHash(h.secret, 'svk_olga-not-a-real-key'), hint: 'svk_00000000' },
          now,
        );
        const mixedRecord = await s.createSession({ userId: user.id, apiKeyId: olgaKey.id, expiresAt: soon }, now);
        return { session: sessionRecord, mixed: mixedRecord, client: client.id };
      });
      const sessions = new BrowserSessions(h.secret, () => clock);
      const cookie = (rec: { id: string; userId: string; apiKeyId?: string; expiresAt: string }) => {
        const token = sessions.sign(rec).token;
        h.secrets.push(token);
        return { cookie: `trawl_session=${token}`, 'x-csrf-token': sessions.csrfToken(token) };
      };
      assert.equal(await h.rest(h.bearer(late.scoped)), 401, 'a scoped token of the revoked key');
      assert.equal(await h.rest(h.bearer(late.access)), 401, 'an access token of a grant of the revoked key');
      assert.equal(await h.rest(cookie(session)), 401, 'a session of the revoked key');
      assert.equal(await h.rest(cookie(mixed)), 401, "a session whose key is another user's");
      const clientId = await h.withStore(async (s) => (await s.oauth.findToken(credentialHash(h.secret, late.refresh)))!.grant.clientId);
      const refresh = await h.refresh(clientId, late.refresh);
      assert.equal(refresh.status, 400);
      assert.equal(refresh.json.error, 'invalid_grant');
      assert.match(refresh.json.error_description, /API key this authorization was approved with has been revoked/);
      // The controls: the same writes with B's key work.
      const control = newScopedToken();
      h.secrets.push(control);
      const controlSession = await h.withStore(async (s) => {
        const user = (await s.getUserByEmail('ann@example.com'))!;
        const soon = new Date(clock.getTime() + 3_600_000).toISOString();
        await s.createScopedToken(
          { userId: user.id, apiKeyId: b.id, hash: credentialHash(h.secret, control), repoIds: [1], expiresAt: soon },
          clock.toISOString(),
        );
        return s.createSession({ userId: user.id, apiKeyId: b.id, expiresAt: soon }, clock.toISOString());
      });
      assert.equal(await h.rest(h.bearer(control)), 200);
      assert.equal(await h.rest(cookie(controlSession)), 200);
    });

    await t.test('no token, key, refresh token or session token in the answers, the logs or the database', async () => {
      await h.api('GET', '/api/keys', h.bearer(b.key));
      h.assertNoSecrets();
    });
  } finally {
    await h.d.cleanup();
  }
});

test('an OAuth grant lives at most settings.oauth.grantLifetimeDays from consent, however often it is refreshed', async () => {
  let clock = new Date(T0);
  // 45 days here (the default is 90: test/config/config.test.ts): past the first refresh token's 30.
  const LIFETIME = 45;
  const h = await harness(() => clock, { oauth: { grantLifetimeDays: LIFETIME } });
  try {
    await h.users('add', '--email', 'ann@example.com');
    const k = await h.newKey('ann@example.com');
    const client = await h.register();
    const flow = await h.consent(client, k.key);
    let tokens = (await h.exchange(client, flow.code, flow.verifier)).json;
    // Refreshed every 14 days (each refresh token lasts 30): good until the 45 days are up.
    for (const day of [14, 28, 42]) {
      clock = new Date(T0 + day * DAY);
      const r = await h.refresh(client, tokens.refresh_token);
      assert.equal(r.status, 200, `day ${day}: ${r.text}`);
      assert.equal(r.json.expires_in, 3600);
      tokens = r.json;
    }
    // Half an hour before the end, the new access token gets only the half hour left.
    clock = new Date(T0 + LIFETIME * DAY - 1_800_000);
    const last = await h.refresh(client, tokens.refresh_token);
    assert.equal(last.status, 200, last.text);
    assert.equal(last.json.expires_in, 1800, 'no token outlives its grant');
    assert.equal(await h.rest(h.bearer(last.json.access_token)), 200);
    clock = new Date(T0 + LIFETIME * DAY);
    assert.equal(await h.rest(h.bearer(last.json.access_token)), 401, 'the access token ends with the grant');
    const refused = await h.refresh(client, last.json.refresh_token);
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.json.error, 'invalid_grant');
    assert.match(refused.json.error_description, /more than 45 days ago, the longest an authorization lives; authorize again/);
    // A new consent starts a new 45 days.
    const again = await h.consent(client, k.key);
    const fresh = await h.exchange(client, again.code, again.verifier);
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.json.expires_in, 3600);
  } finally {
    await h.d.cleanup();
  }
});

test("who may list and end credentials: API keys and sessions only; members their own, owners anyone's; lastUsedAt", async (t) => {
  let clock = new Date(T0);
  const h = await harness(() => clock);
  try {
    await h.users('add', '--email', 'olga@example.com', '--role', 'owner');
    await h.users('add', '--email', 'ann@example.com');
    const olga = await h.newKey('olga@example.com');
    const ann = await h.newKey('ann@example.com');
    const [olgaId, annId] = await h.withStore(async (s) => [(await s.getUserByEmail('olga@example.com'))!.id, (await s.getUserByEmail('ann@example.com'))!.id]);
    const annOpened = await h.open(ann.key);
    const olgaOpened = await h.open(olga.key);
    const olgaGrantId = (await h.api('GET', '/api/keys', h.bearer(olga.key))).json[0].oauthGrants[0].id as string;
    const annGrantId = (await h.api('GET', '/api/keys', h.bearer(ann.key))).json[0].oauthGrants[0].id as string;

    await t.test('lastUsedAt of grants and sessions: recorded on use, at most once a minute', async () => {
      const listed = async () => (await h.api('GET', '/api/keys', h.bearer(ann.key))).json[0];
      assert.equal((await listed()).sessions[0].lastUsedAt, null, 'not used since sign-in');
      await h.rest(annOpened.session.headers);
      const first = await listed();
      assert.equal(first.lastUsedAt, clock.toISOString(), "the key's own");
      assert.equal(first.oauthGrants[0].lastUsedAt, clock.toISOString(), 'the access token was used (tool server)');
      assert.equal(first.sessions[0].lastUsedAt, clock.toISOString());
      const used = clock.toISOString();
      clock = new Date(T0 + 30_000);
      await h.rest(h.bearer(annOpened.grant.access));
      await h.rest(annOpened.session.headers);
      assert.equal((await listed()).oauthGrants[0].lastUsedAt, used, 'within the minute: not written again');
      assert.equal((await listed()).sessions[0].lastUsedAt, used);
      clock = new Date(T0 + 61_000);
      await h.rest(h.bearer(annOpened.grant.access));
      await h.rest(annOpened.session.headers);
      assert.equal((await listed()).oauthGrants[0].lastUsedAt, clock.toISOString());
      assert.equal((await listed()).sessions[0].lastUsedAt, clock.toISOString());
    });

    await t.test('anonymous: 401; a scoped token or an OAuth token: 403 on every endpoint', async () => {
      assert.equal((await h.api('GET', '/api/keys')).status, 401);
      for (const token of [annOpened.scoped.token, annOpened.grant.access]) {
        for (const [method, path, body] of [
          ['GET', '/api/keys', undefined],
          ['DELETE', `/api/keys/${ann.id}`, undefined],
          ['DELETE', `/api/oauth_grants/${annGrantId}`, undefined],
          ['DELETE', `/api/sessions/${annOpened.session.id}`, undefined],
          ['POST', '/api/sign_out_everywhere', {}],
        ] as const) {
          const a = await h.api(method, path, h.bearer(token), body);
          assert.equal(a.status, 403, `${method} ${path}: ${a.text}`);
          assert.equal(a.json.errorCode, 'INSUFFICIENT_PERMISSIONS');
          assert.match(a.json.message, /cannot manage credentials/);
        }
      }
      assert.equal(await h.rest(h.bearer(ann.key)), 200, 'nothing was ended');
      assert.equal(await h.rest(h.bearer(annOpened.scoped.token)), 200);
    });

    await t.test("a member sees and ends only their own: another user's ids answer like unknown ones", async () => {
      const as = h.bearer(ann.key);
      const other = await h.api('GET', `/api/keys?userId=${olgaId}`, as);
      const unknown = await h.api('GET', '/api/keys?userId=usr_000000000000000000000000', as);
      assert.equal(other.status, 404);
      assert.equal(other.json.errorCode, 'USER_NOT_FOUND');
      assert.equal(
        other.json.message.replace(olgaId, 'X'),
        unknown.json.message.replace('usr_000000000000000000000000', 'X'),
        'the same answer as for no such user',
      );
      assert.equal((await h.api('GET', `/api/keys?userId=${annId}`, as)).status, 200, 'their own id is fine');
      for (const [path, code, unknownId] of [
        [`/api/keys/${olga.id}`, 'API_KEY_NOT_FOUND', 'key_000000000000000000000000'],
        [`/api/oauth_grants/${olgaGrantId}`, 'OAUTH_GRANT_NOT_FOUND', 'ogr_000000000000000000000000'],
        [`/api/sessions/${olgaOpened.session.id}`, 'SESSION_NOT_FOUND', 'ses_000000000000000000000000'],
      ] as const) {
        const theirs = await h.api('DELETE', path, as);
        const none = await h.api('DELETE', path.replace(/[^/]+$/, unknownId), as);
        assert.equal(theirs.status, 404, path);
        assert.equal(theirs.json.errorCode, code);
        assert.equal(none.json.errorCode, code);
        assert.equal(theirs.json.message.replace(path.split('/').at(-1)!, 'X'), none.json.message.replace(unknownId, 'X'));
      }
      const signOut = await h.api('POST', '/api/sign_out_everywhere', as, { userId: olgaId });
      assert.equal(signOut.json.errorCode, 'USER_NOT_FOUND');
      // Olga's credentials are untouched.
      await h.expect(olgaOpened, true, "olga after the member's attempts");
      assert.equal(await h.rest(h.bearer(olga.key)), 200);
    });

    await t.test('a browser session may list and end, with its CSRF token; it can end itself', async () => {
      const second = await h.signIn(ann.key);
      const listed = await h.api('GET', '/api/keys', annOpened.session.headers);
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.json[0].sessions.map((s: { id: string }) => s.id).sort(), [annOpened.session.id, second.id].sort());
      const noCsrf = await h.api('DELETE', `/api/sessions/${second.id}`, { cookie: annOpened.session.headers.cookie! });
      assert.equal(noCsrf.json.errorCode, 'INVALID_CSRF_TOKEN', 'another site cannot make the browser end a session');
      assert.equal(await h.rest(second.headers), 200);
      assert.equal((await h.api('DELETE', `/api/sessions/${second.id}`, annOpened.session.headers)).status, 204);
      assert.equal(await h.rest(second.headers), 401, 'the ended session');
      assert.equal(await h.rest(annOpened.session.headers), 200, 'the one that ended it goes on');
      assert.equal((await h.api('DELETE', `/api/sessions/${second.id}`, annOpened.session.headers)).status, 204, 'again: 204');
      const self = await h.signIn(ann.key);
      assert.equal((await h.api('DELETE', `/api/sessions/${self.id}`, self.headers)).status, 204);
      assert.equal(await h.rest(self.headers), 401);
    });

    await t.test("an owner lists and ends a member's credentials", async () => {
      const as = h.bearer(olga.key);
      const annKeys = await h.api('GET', `/api/keys?userId=${annId}`, as);
      assert.equal(annKeys.status, 200);
      assert.deepEqual(
        annKeys.json.map((k: { id: string }) => k.id),
        [ann.id],
      );
      assert.equal((await h.api('GET', '/api/keys?userId=usr_000000000000000000000000', as)).json.errorCode, 'USER_NOT_FOUND');
      assert.equal((await h.api('DELETE', `/api/oauth_grants/${annGrantId}`, as)).status, 204);
      assert.equal(await h.rest(h.bearer(annOpened.grant.access)), 401, "the member's grant, revoked by the owner");
      const refresh = await h.refresh(annOpened.grant.client, annOpened.grant.refresh);
      assert.equal(refresh.json.error, 'invalid_grant');
      assert.equal((await h.api('DELETE', `/api/sessions/${annOpened.session.id}`, as)).status, 204);
      assert.equal(await h.rest(annOpened.session.headers), 401);
      assert.equal(await h.rest(h.bearer(annOpened.scoped.token)), 200, 'the scoped token is left');

      const fresh = await h.signIn(ann.key);
      const out = await h.api('POST', '/api/sign_out_everywhere', as, { userId: annId });
      assert.equal(out.status, 200, out.text);
      assert.deepEqual(out.json, { userId: annId, ended: { scopedTokens: 1, oauthGrants: 0, sessions: 1 } });
      assert.equal(await h.rest(h.bearer(annOpened.scoped.token)), 401);
      assert.equal(await h.rest(fresh.headers), 401);
      assert.equal(await h.rest(h.bearer(ann.key)), 200, 'sign-out everywhere leaves the keys');
      assert.equal((await h.api('POST', '/api/sign_out_everywhere', as, { userId: 'usr_000000000000000000000000' })).json.errorCode, 'USER_NOT_FOUND');

      const last = await h.signIn(ann.key);
      const revoked = await h.api('DELETE', `/api/keys/${ann.id}`, as);
      assert.equal(revoked.status, 200);
      assert.deepEqual(revoked.json.ended, { scopedTokens: 0, oauthGrants: 0, sessions: 1 }, 'the session signed in since');
      assert.equal(await h.rest(last.headers), 401);
      assert.equal(await h.rest(h.bearer(ann.key)), 401);
      const again = await h.api('DELETE', `/api/keys/${ann.id}`, as);
      assert.deepEqual(
        again.json,
        { id: ann.id, revokedAt: revoked.json.revokedAt, ended: { scopedTokens: 0, oauthGrants: 0, sessions: 0 } },
        'again: the first time is kept',
      );
    });

    await t.test('each ending is in the audit log, with who did it and why', async () => {
      const events = async (action: string) => {
        const a = await h.api('GET', `/api/ee/audit?action=${action}&perPage=100`, h.bearer(olga.key));
        assert.equal(a.status, 200, a.text);
        h.answers.push(a.text);
        return a.json as Array<{
          target: { type: string; id: string };
          actor: { userId: string; credentialKind: string; credentialId: string };
          details: Record<string, unknown>;
        }>;
      };
      const byOlga = { userId: olgaId, credentialKind: 'apiKey', credentialId: olga.id };
      const keyRevoked = await events('api_key.revoked');
      assert.deepEqual(
        keyRevoked.map((e) => [e.target.id, e.actor.credentialId, e.details]),
        [[ann.id, olga.id, { userId: annId, name: 'default', ended: { scopedTokens: 0, oauthGrants: 0, sessions: 1 } }]],
        'revoking again (nothing ended): not recorded',
      );
      const grant = await events('oauth_grant.revoked');
      assert.deepEqual(
        grant.map((e) => [e.target, e.details.reason, e.details.userId]),
        [[{ type: 'oauth_grant', id: annGrantId }, 'owner', annId]],
      );
      assert.deepEqual(grant[0]!.actor, { ...byOlga, email: 'olga@example.com' });
      const ended = await events('session.ended');
      const why = (id: string) => ended.filter((e) => e.target.id === id).map((e) => [e.details.reason, e.actor.credentialKind]);
      assert.deepEqual(why(annOpened.session.id), [['owner', 'apiKey']]);
      assert.equal(
        ended.filter((e) => e.details.reason === 'user' && e.actor.credentialKind === 'browserSession').length,
        2,
        'the member ending a session of hers, and one ending itself',
      );
      const out = await events('user.signed_out');
      assert.deepEqual(
        out.map((e) => [e.target, e.actor.credentialId, e.details]),
        [[{ type: 'user', id: annId }, olga.id, { ended: { scopedTokens: 1, oauthGrants: 0, sessions: 1 } }]],
      );
      const opened = await events('session.opened');
      assert.ok(
        opened.some((e) => e.target.type === 'session' && e.target.id === annOpened.session.id),
        'a sign-in names its session',
      );
    });

    await t.test('signing yourself out everywhere ends your own session too', async () => {
      const s = await h.signIn(olga.key);
      const out = await h.api('POST', '/api/sign_out_everywhere', s.headers, {});
      assert.equal(out.status, 200);
      assert.equal(out.json.userId, olgaId);
      assert.deepEqual(out.json.ended, { scopedTokens: 1, oauthGrants: 1, sessions: 2 });
      assert.equal(await h.rest(s.headers), 401);
      await h.expect(olgaOpened, false, 'olga signed out everywhere');
      assert.equal(await h.rest(h.bearer(olga.key)), 200);
    });

    await t.test('no secret in the answers, the logs or the database', () => h.assertNoSecrets());
  } finally {
    await h.d.cleanup();
  }
});

test('the CLI: keys list shows what each key opened, keys revoke what it ended; sessions list and revoke; users sign-out', async () => {
  const clock = new Date(T0);
  const h = await harness(() => clock);
  try {
    await h.users('add', '--email', 'ann@example.com');
    const a = await h.newKey('ann@example.com', 'laptop');
    const opened = await h.open(a.key);
    const grantId = (await h.api('GET', '/api/keys', h.bearer(a.key))).json[0].oauthGrants[0].id as string;
    const from = h.out.length;
    const lines = () => h.out.slice(from);

    assert.equal(await h.keys('list', '--user', 'ann@example.com'), 0);
    const t = clock.toISOString();
    assert.deepEqual(h.out.slice(from), [
      `${a.id}  laptop  ${a.key.slice(0, 12)}...  created ${t}  last used ${t}`,
      `  scoped token ${opened.scoped.id}  created ${t}  expires ${new Date(T0 + 3_600_000).toISOString()}  repositories 2,1`,
      `  OAuth grant ${grantId}  "Cascade agent" (${opened.grant.client})  since ${t}  last used ${t}`,
      `  browser session ${opened.session.id}  signed in ${t}  expires ${new Date(T0 + 12 * 3_600_000).toISOString()}  last used never  "${USER_AGENT}"`,
    ]);
    assert.equal(await h.keys('list', '--user', 'ann@example.com', '--json'), 0);
    assert.deepEqual(JSON.parse(h.out.at(-1)!), (await h.api('GET', '/api/keys', h.bearer(a.key))).json, '--json is the answer of GET /api/keys');

    assert.equal(await h.sessions('list', '--user', 'ann@example.com'), 0);
    assert.equal(
      h.out.at(-1),
      `browser session ${opened.session.id}  signed in ${t}  expires ${new Date(T0 + 12 * 3_600_000).toISOString()}  last used never  "${USER_AGENT}"  key ${a.id}`,
    );
    assert.equal(await h.sessions('list', '--user', 'ann@example.com', '--json'), 0);
    assert.deepEqual(
      JSON.parse(h.out.at(-1)!).map((x: { id: string; apiKeyId: string }) => [x.id, x.apiKeyId]),
      [[opened.session.id, a.id]],
    );
    assert.equal(await h.sessions('revoke', opened.session.id), 0);
    assert.equal(h.out.at(-1), `browser session ${opened.session.id} ended at ${t}: that browser is signed out`);
    assert.equal(await h.rest(opened.session.headers), 401);
    assert.equal(await h.sessions('revoke', opened.session.id), 0);
    assert.equal(h.out.at(-1), `browser session ${opened.session.id} had already ended at ${t}`);
    assert.equal(await h.sessions('list', '--user', 'ann@example.com'), 0);
    assert.equal(h.out.at(-1), 'no browser sessions');
    await assert.rejects(h.sessions('revoke', 'ses_000000000000000000000000'), /no browser session with id ses_000000000000000000000000/);
    await assert.rejects(h.sessions('list'), /sessions list needs --user EMAIL/);
    await assert.rejects(h.sessions('drop'), /sessions takes list or revoke, not "drop"/);
    await assert.rejects(h.users('sign-out'), /usage: trawl users sign-out EMAIL/);

    // users sign-out: every scoped token, grant and session; the key stays.
    const again = await h.signIn(a.key);
    assert.equal(await h.users('sign-out', 'ann@example.com'), 0);
    assert.equal(
      h.out.at(-1),
      'ann@example.com signed out everywhere: ended 1 scoped token, 1 OAuth grant and 1 browser session; their API keys still work (trawl keys revoke ID ends one)',
    );
    assert.equal(await h.rest(again.headers), 401);
    assert.equal(await h.rest(h.bearer(opened.scoped.token)), 401);
    assert.equal(await h.rest(h.bearer(opened.grant.access)), 401);
    assert.equal(await h.rest(h.bearer(a.key)), 200);

    // keys revoke: the key and what it opened since.
    const reopened = await h.open(a.key);
    assert.equal(await h.keys('revoke', a.id), 0);
    assert.equal(h.out.at(-1), `key ${a.id} (laptop) revoked at ${t}; ended 1 scoped token, 1 OAuth grant and 1 browser session opened with it`);
    await h.expect(reopened, false, 'after trawl keys revoke');
    assert.equal(await h.keys('list', '--user', 'ann@example.com'), 0);
    assert.equal(h.out.at(-1), `${a.id}  laptop  ${a.key.slice(0, 12)}...  created ${t}  last used ${t}  REVOKED ${t}`, 'nothing under a revoked key');

    // Each in the audit log, as the command line, once.
    const logged = async (action: string) =>
      (await h.withStore(async (st) => (await st.audit.list({ action, offset: 0, limit: 100 })).events)).map((e) => [
        e.actor.credentialKind,
        e.target?.id,
        e.details,
      ]);
    const annId = await h.withStore(async (st) => (await st.getUserByEmail('ann@example.com'))!.id);
    assert.deepEqual(
      await logged('session.ended'),
      [['cli', opened.session.id, { reason: 'operator', userId: annId }]],
      'ending an ended session again: not recorded',
    );
    assert.deepEqual(await logged('user.signed_out'), [['cli', annId, { email: 'ann@example.com', ended: { scopedTokens: 1, oauthGrants: 1, sessions: 1 } }]]);
    assert.deepEqual(await logged('api_key.revoked'), [
      ['cli', a.id, { userId: annId, name: 'laptop', ended: { scopedTokens: 1, oauthGrants: 1, sessions: 1 } }],
    ]);

    // What the commands printed holds no secret.
    const printed = lines().join('\n') + h.err.join('\n').replace(/^trawl: key .*shown once.*$/gm, '');
    for (const secret of h.secrets.filter((x) => !x.startsWith('svk_'))) assert.ok(!printed.includes(secret), `${secret.slice(0, 8)}... is not printed`);
    assert.ok(!lines().some((l) => l.includes(a.key)), 'nor the key, after its creation');

    // Exit status and one line on stderr, from the real command.
    const bin = fileURLToPath(new URL('../../bin/trawl.js', import.meta.url));
    const run = (...args: string[]) => spawnSync(process.execPath, [bin, ...args, '--data-dir', h.d.dataDir], { encoding: 'utf8' });
    const usage = run('sessions', 'list');
    assert.equal(usage.status, 2);
    assert.equal(usage.stderr, 'trawl: sessions list needs --user EMAIL\n');
    const unknown = run('sessions', 'revoke', 'ses_000000000000000000000000');
    assert.equal(unknown.status, 1);
    assert.equal(unknown.stderr, 'trawl: no browser session with id ses_000000000000000000000000 (trawl sessions list --user EMAIL shows them)\n');
    const help = run('sessions', '--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: trawl sessions list --user EMAIL/);
  } finally {
    await h.d.cleanup();
  }
});

test("recording a grant's or a session's last use never fails the request (a full disk), and is reported once a minute", async () => {
  let clock = new Date(T0);
  const store = openSqliteStore(':memory:');
  try {
    const secret = Buffer.alloc(32, 3);
    const user = await store.createUser({ email: 'a@b.c', name: 'A', role: 'member' }, clock.toISOString());
    const key = await store.createApiKey({ userId: user.id, name: 'k', hash: 'h', hint: 'svk_00000000' }, clock.toISOString());
    const sessions = new BrowserSessions(secret, () => clock);
    const record = await store.createSession({ userId: user.id, apiKeyId: key.id, expiresAt: sessions.expiry() }, clock.toISOString());
    const token = sessions.sign(record).token;
    const full = () => Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    // The store as a full disk leaves it: reads work, these writes fail.
    const failing = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'touchSession' || prop === 'touchApiKey')
          return async () => {
            throw full();
          };
        if (prop === 'oauth')
          return {
            touchGrant: async () => {
              throw full();
            },
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const errors: Error[] = [];
    const auth = new StoreAuthenticator({
      store: failing,
      secret,
      anonymousAccess: false,
      now: () => clock,
      sessions,
      oauth: async () => ({ userId: user.id, grantId: 'ogr_1' }),
      onTouchError: (e) => errors.push(e),
    });
    const viaSession = () => auth.authenticate({ session: token, csrf: sessions.csrfToken(token), via: 'session' });
    const viaOAuth = () => auth.authenticate({ token: `svoa_${'a'.repeat(64)}`, via: 'bearer' });
    assert.equal((await viaSession()).kind, 'browserSession');
    assert.equal((await viaOAuth()).kind, 'oauth');
    assert.equal(errors.length, 1, 'reported once');
    assert.match(errors[0]!.message, /disk is full/);
    clock = new Date(T0 + 61_000);
    assert.equal((await viaOAuth()).kind, 'oauth');
    assert.equal((await viaSession()).kind, 'browserSession');
    assert.equal(errors.length, 2, 'a minute later, reported again');
  } finally {
    await store.close();
  }
});
