// The OAuth 2.1 authorization server's endpoints over real HTTP, request by request (the
// SDK's own flow is test/oauth/oauth.test.ts): the entitlement gate (no license, a license
// without "oauth", an expired one) and the discovery documents and 401 challenges; dynamic
// client registration and its refusals; the authorization endpoint's errors (a page before
// the client and its redirect URI are known, a redirect to the client after) and the
// consent form with every kind of bad credential; the token endpoint's client
// authentication, code exchange with PKCE (reuse and races revoke), refresh rotation (reuse
// and races revoke) and expiry on an injected clock; the tokens at the API; revocation;
// and no issued credential in the database file or its write-ahead log (the audit log's
// rows among them) or in the audit log as `trawl audit` reads it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { auditCommand } from '../../daemon/cli/audit-command.ts';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { call, startTestDaemon, type Answer } from '../helpers/daemon.ts';
import { databaseText } from '../helpers/log-recorder.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';

const licensor = testLicensor('L-oauth');
const PUBLIC_PEM = licensor.publicPem;

const T0 = Date.parse('2026-06-01T10:00:00Z');
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const CB = 'http://127.0.0.1:5000/cb';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function license(entitlements: string[], expiresAt?: string): string {
  return licensor.sign(entitlements, expiresAt);
}

/** A PKCE pair (RFC 7636): 32 random bytes as the verifier, its S256 challenge. */
function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A form body; undefined values are left out (so an override can drop a parameter). */
function form(params: Record<string, string | undefined>): string {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) out.append(k, v);
  return out.toString();
}

interface Client {
  id: string;
  secret?: string;
  redirect: string;
}

interface Page {
  status: number;
  headers: Headers;
  text: string;
  location?: URL;
}

interface Tokens {
  access_token: string;
  refresh_token?: string;
}

/** Where a redirect goes, as origin + path (the query is checked parameter by parameter). */
function target(u: URL): string {
  return u.protocol === 'http:' || u.protocol === 'https:' ? `${u.origin}${u.pathname}` : `${u.protocol}//${u.host}${u.pathname}`;
}

function expectOAuthError(a: Answer, status: number, error: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.json?.error, error, a.text);
  assert.equal(typeof a.json.error_description, 'string');
  assert.equal(a.headers.get('cache-control'), 'no-store');
}

function expectApiError(a: Answer, status: number, code: string): void {
  assert.equal(a.status, status, a.text);
  assert.equal(a.json?.errorCode, code, a.text);
}

/** An HTML page (never a redirect) with `status`, whose text matches `pattern`. */
function expectPage(p: Page, status: number, pattern?: RegExp): void {
  assert.equal(p.status, status, p.text.slice(0, 400));
  assert.equal(p.location, undefined, 'a page, not a redirect');
  assert.equal(p.headers.get('content-type'), 'text/html; charset=utf-8');
  assert.equal(p.headers.get('x-frame-options'), 'DENY');
  assert.equal(p.headers.get('cache-control'), 'no-store');
  if (pattern) assert.match(p.text, pattern);
}

test('OAuth endpoints: gate, discovery, registration, authorization, tokens, revocation', async (t) => {
  let clock = new Date(T0);
  const at = (ms: number) => void (clock = new Date(T0 + ms));
  // The test's own address is a trusted proxy, so that each registration can come from
  // an address of its own (X-Forwarded-For): this test is about the endpoint; the
  // per-address limit is test/faults/oauth-registration.test.ts's.
  const d = await startTestDaemon({
    settings: { anonymousAccess: false, http: { trustedProxies: ['127.0.0.1'] } },
    config: { license: { publicKeys: [PUBLIC_PEM] } },
    daemon: { now: () => clock },
  });
  let registrations = 0;
  /** Every credential issued, for the search of the database at the end. */
  const issued: string[] = [];
  try {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: () => clock };
    const dd = ['--data-dir', d.dataDir];
    const newKey = async (email: string): Promise<{ key: string; id: string }> => {
      await keysCommand(['create', '--user', email, ...dd], io);
      const id = /key (\S+) /.exec(err.at(-1)!)![1]!;
      issued.push(out.at(-1)!);
      return { key: out.at(-1)!, id };
    };
    await usersCommand(['add', '--email', 'dev@example.com', ...dd], io);
    await usersCommand(['add', '--email', 'sus@example.com', ...dd], io);
    const apiKey = (await newKey('dev@example.com')).key;
    const suspendedKey = (await newKey('sus@example.com')).key;
    const setLicense = (text: string) => installLicense(d.dataDir, text);
    const GOOD = license(['oauth', 'scoped-access-tokens']);

    // ---- HTTP helpers -------------------------------------------------------------------

    const browse = async (url: string, init: RequestInit = {}): Promise<Page> => {
      const res = await fetch(url, { ...init, redirect: 'manual' });
      const location = res.headers.get('location');
      return { status: res.status, headers: res.headers, text: await res.text(), ...(location ? { location: new URL(location) } : {}) };
    };
    const api = (token: string, path = '/api/repos', via: 'bearer' | 'header' = 'bearer') =>
      call(`${d.url}${path}`, { headers: via === 'bearer' ? { authorization: `Bearer ${token}` } : { 'x-service-api-key': token } });
    const search = (token: string) =>
      call(`${d.url}/api/search`, { headers: { authorization: `Bearer ${token}` }, json: { query: 'widget_count', matches: 10 } });

    const register = (body: unknown) => {
      const n = ++registrations;
      const from = `10.1.${n >> 8}.${n & 255}`;
      return call(`${d.url}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    };
    const newClient = async (meta: Record<string, unknown> = {}): Promise<Client> => {
      const r = await register({ client_name: 'Test agent', redirect_uris: [CB], token_endpoint_auth_method: 'none', ...meta });
      assert.equal(r.status, 201, r.text);
      if (r.json.client_secret) issued.push(r.json.client_secret);
      return { id: r.json.client_id, ...(r.json.client_secret ? { secret: r.json.client_secret } : {}), redirect: (r.json.redirect_uris as string[])[0]! };
    };

    /** An authorization request's parameters; an override of undefined drops one. */
    const authParams = (c: Client, challenge: string, over: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
      response_type: 'code',
      client_id: c.id,
      redirect_uri: c.redirect,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-42',
      ...over,
    });
    const authorizeUrl = (params: Record<string, string | undefined>) => `${d.url}/oauth/authorize?${form(params)}`;
    const consentPost = (params: Record<string, string | undefined>, decision: string | undefined, key?: string) =>
      browse(`${d.url}/oauth/authorize`, { method: 'POST', headers: FORM, body: form({ ...params, decision, api_key: key }) });

    /** Consent with `key`: the code, its verifier and the redirect URI it was issued for. */
    const authorize = async (
      c: Client,
      over: Record<string, string | undefined> = {},
      key = apiKey,
      p = pkce(),
    ): Promise<{ code: string; verifier: string; redirectUri: string }> => {
      const params = authParams(c, p.challenge, over);
      const r = await consentPost(params, 'allow', key);
      assert.equal(r.status, 303, r.text.slice(0, 400));
      const code = r.location!.searchParams.get('code')!;
      assert.match(code, /^svoc_[0-9a-f]{64}$/);
      issued.push(code);
      return { code, verifier: p.verifier, redirectUri: params.redirect_uri! };
    };

    /** A token endpoint request as `c` (client_id and secret in the body, or HTTP Basic). */
    const token = async (
      c: Client | undefined,
      params: Record<string, string | undefined>,
      opts: { basic?: boolean; headers?: Record<string, string> } = {},
    ): Promise<Answer> => {
      const headers: Record<string, string> = { ...FORM, ...opts.headers };
      const body: Record<string, string | undefined> = { ...params };
      if (c && opts.basic)
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret ?? '')}`).toString('base64')}`;
      else if (c) Object.assign(body, { client_id: c.id, client_secret: c.secret }, params);
      const a = await call(`${d.url}/oauth/token`, { method: 'POST', headers, body: form(body) });
      if (a.status === 200) issued.push(a.json.access_token, ...(a.json.refresh_token ? [a.json.refresh_token] : []));
      return a;
    };
    const exchange = (
      c: Client,
      flow: { code: string; verifier: string; redirectUri: string },
      over: Record<string, string | undefined> = {},
      opts: { basic?: boolean } = {},
    ) => token(c, { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.verifier, redirect_uri: flow.redirectUri, ...over }, opts);
    const refresh = (c: Client, refreshToken: string, over: Record<string, string | undefined> = {}) =>
      token(c, { grant_type: 'refresh_token', refresh_token: refreshToken, ...over });
    const revoke = (c: Client | undefined, value: string | undefined, opts: { basic?: boolean } = {}) => {
      const headers: Record<string, string> = { ...FORM };
      const body: Record<string, string | undefined> = { token: value };
      if (c && opts.basic)
        headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret ?? '')}`).toString('base64')}`;
      else if (c) Object.assign(body, { client_id: c.id, client_secret: c.secret });
      return call(`${d.url}/oauth/revoke`, { method: 'POST', headers, body: form(body) });
    };
    /** The whole sign-in: consent, exchange; the tokens. */
    const signIn = async (c: Client, key = apiKey): Promise<Tokens> => {
      const a = await exchange(c, await authorize(c, {}, key));
      assert.equal(a.status, 200, a.text);
      return a.json as Tokens;
    };

    // ---- 1. The entitlement gate and discovery ------------------------------------------

    const gateClosed = async (why: string) => {
      for (const p of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/api/mcp']) {
        expectApiError(await call(`${d.url}${p}`), 404, 'NOT_FOUND');
      }
      expectApiError(await register({ redirect_uris: [CB] }), 403, 'INSUFFICIENT_PERMISSIONS');
      const forbidden = await call(`${d.url}/oauth/token`, { method: 'POST', headers: FORM, body: 'grant_type=authorization_code&client_id=x' });
      expectApiError(forbidden, 403, 'INSUFFICIENT_PERMISSIONS');
      assert.match(forbidden.json.message, new RegExp(why));
      expectApiError(await call(`${d.url}/oauth/revoke`, { method: 'POST', headers: FORM, body: 'token=x&client_id=y' }), 403, 'INSUFFICIENT_PERMISSIONS');
      expectPage(await browse(`${d.url}/oauth/authorize?client_id=x&response_type=code`), 403, /not available on this server/);
      expectPage(await browse(`${d.url}/oauth/authorize`, { method: 'POST', headers: FORM, body: 'client_id=x&decision=allow' }), 403);
      // The challenge points nowhere: no resource_metadata without OAuth.
      for (const path of ['/api/repos', '/api/mcp']) {
        const r = await call(`${d.url}${path}`, path === '/api/mcp' ? { json: { jsonrpc: '2.0', id: 1, method: 'ping' } } : {});
        assert.equal(r.status, 401);
        assert.equal(r.headers.get('www-authenticate'), 'Bearer realm="trawl"');
      }
      assert.equal((await api('svk_nope')).headers.get('www-authenticate'), 'Bearer realm="trawl", error="invalid_token"');
    };

    await t.test('without the "oauth" entitlement: documents 404, endpoints 403, no resource_metadata', async () => {
      await gateClosed('no license installed');
      await setLicense(license(['scoped-access-tokens']));
      await gateClosed('does not include the "oauth" entitlement');
      await setLicense(license(['oauth'], '2026-05-01T00:00:00Z'));
      await gateClosed('expired');
    });

    await t.test('with the license: the metadata documents and the 401 challenges', async () => {
      await setLicense(GOOD);
      const as = await call(`${d.url}/.well-known/oauth-authorization-server`);
      assert.equal(as.status, 200);
      assert.equal(as.headers.get('access-control-allow-origin'), '*');
      assert.equal(as.headers.get('cache-control'), 'max-age=300');
      assert.deepEqual(as.json, {
        issuer: d.url,
        authorization_endpoint: `${d.url}/oauth/authorize`,
        token_endpoint: `${d.url}/oauth/token`,
        registration_endpoint: `${d.url}/oauth/register`,
        revocation_endpoint: `${d.url}/oauth/revoke`,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
        scopes_supported: ['search'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${d.url}/api/openapi.json`,
      });
      for (const [path, resource, name] of [
        ['', d.url, 'trawl API'],
        ['/api/mcp', `${d.url}/api/mcp`, 'trawl tool server (MCP)'],
      ] as const) {
        const prm = await call(`${d.url}/.well-known/oauth-protected-resource${path}`);
        assert.equal(prm.status, 200);
        assert.deepEqual(prm.json, {
          resource,
          authorization_servers: [d.url],
          scopes_supported: ['search'],
          bearer_methods_supported: ['header'],
          resource_name: name,
          resource_documentation: `${d.url}/api/openapi.json`,
        });
      }

      const api401 = `Bearer realm="trawl", resource_metadata="${d.url}/.well-known/oauth-protected-resource", scope="search"`;
      const mcp401 = `Bearer realm="trawl", resource_metadata="${d.url}/.well-known/oauth-protected-resource/api/mcp", scope="search"`;
      const none = await call(`${d.url}/api/repos`);
      assert.equal(none.status, 401);
      assert.equal(none.headers.get('www-authenticate'), api401);
      assert.equal((await api('svk_nope')).headers.get('www-authenticate'), `${api401}, error="invalid_token"`);
      assert.equal((await api('svk_nope', '/api/repos', 'header')).headers.get('www-authenticate'), `${api401}, error="invalid_token"`);
      const mcp = await call(`${d.url}/api/mcp`, { json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      assert.equal(mcp.status, 401);
      assert.equal(mcp.headers.get('www-authenticate'), mcp401);
      const mcpBad = await call(`${d.url}/api/mcp`, {
        json: { jsonrpc: '2.0', id: 1, method: 'ping' },
        headers: { authorization: `Bearer svoa_${'0'.repeat(64)}` },
      });
      assert.equal(mcpBad.headers.get('www-authenticate'), `${mcp401}, error="invalid_token"`);
    });

    await t.test('a token issued under the license stops working when the license loses "oauth"', async () => {
      const c = await newClient();
      const tokens = await signIn(c);
      assert.equal((await api(tokens.access_token)).status, 200);
      await setLicense(license(['scoped-access-tokens']));
      const off = await api(tokens.access_token);
      expectApiError(off, 401, 'NOT_AUTHENTICATED');
      assert.match(off.json.message, /"oauth" entitlement/);
      assert.equal(off.headers.get('www-authenticate'), 'Bearer realm="trawl", error="invalid_token"');
      expectApiError(await refresh(c, tokens.refresh_token!), 403, 'INSUFFICIENT_PERMISSIONS');
      // Nothing was revoked: with the entitlement back, the same token works again.
      await setLicense(GOOD);
      assert.equal((await api(tokens.access_token)).status, 200);
    });

    // ---- 2. Registration ----------------------------------------------------------------

    await t.test('registration: public and confidential clients, unknown fields, refusals', async () => {
      at(0);
      const pub = await register({
        client_name: 'Public',
        redirect_uris: [CB],
        token_endpoint_auth_method: 'none',
        logo_uri: 'https://x.example/l.png',
        software_id: 'abc',
        extra: { a: 1 },
      });
      assert.equal(pub.status, 201, pub.text);
      assert.equal(pub.headers.get('cache-control'), 'no-store');
      assert.match(pub.json.client_id, /^oac_[0-9a-f]{24}$/);
      assert.equal(pub.json.client_secret, undefined);
      assert.equal(pub.json.client_secret_expires_at, undefined);
      assert.deepEqual(pub.json, {
        client_id: pub.json.client_id,
        client_id_issued_at: Math.floor(T0 / 1000),
        client_name: 'Public',
        redirect_uris: [CB],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        scope: 'search',
      });

      const conf = await register({ redirect_uris: ['https://app.example.com/cb'] });
      assert.equal(conf.status, 201, conf.text);
      assert.match(conf.json.client_secret, /^svcs_[0-9a-f]{64}$/);
      issued.push(conf.json.client_secret);
      assert.equal(conf.json.client_secret_expires_at, 0);
      assert.equal(conf.json.token_endpoint_auth_method, 'client_secret_basic');
      assert.equal(conf.json.client_name, 'Unnamed client');
      const post = await register({ redirect_uris: ['https://app.example.com/cb'], token_endpoint_auth_method: 'client_secret_post' });
      assert.match(post.json.client_secret, /^svcs_/);
      issued.push(post.json.client_secret);

      // Accepted: loopback http on any port and host spelling, https anywhere, native apps' own schemes.
      const ok = [
        'http://127.0.0.1:1/cb',
        'http://localhost:65535/oauth/callback',
        'http://[::1]:8080/',
        'http://127.0.0.1/cb',
        'https://app.example.com/cb?x=1',
        'cursor://anysphere.cursor-retrieval/oauth/callback',
        'vscode://vscode.github-authentication/did-authenticate',
      ];
      const many = await register({ redirect_uris: ok, token_endpoint_auth_method: 'none' });
      assert.equal(many.status, 201, many.text);
      assert.deepEqual(many.json.redirect_uris, ok);

      const twentyOne = Array.from({ length: 21 }, (_, i) => `https://app.example.com/cb${i}`);
      const refusals: Array<[string, unknown, string]> = [
        ['redirect_uris missing', { client_name: 'x' }, 'invalid_redirect_uri'],
        ['redirect_uris empty', { redirect_uris: [] }, 'invalid_redirect_uri'],
        ['redirect_uris not an array', { redirect_uris: CB }, 'invalid_redirect_uri'],
        ['a redirect URI not a string', { redirect_uris: [42] }, 'invalid_redirect_uri'],
        ['a relative URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
        ['javascript:', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
        ['JavaScript: with a leading space', { redirect_uris: [' JavaScript:alert(1)'] }, 'invalid_redirect_uri'],
        ['data:', { redirect_uris: ['data:text/html,<script>alert(1)</script>'] }, 'invalid_redirect_uri'],
        ['file:', { redirect_uris: ['file:///etc/passwd'] }, 'invalid_redirect_uri'],
        ['http to a non-loopback host', { redirect_uris: ['http://app.example.com/cb'] }, 'invalid_redirect_uri'],
        ['http to a host that starts like loopback', { redirect_uris: ['http://127.0.0.1.evil.example/cb'] }, 'invalid_redirect_uri'],
        ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, 'invalid_redirect_uri'],
        ['an empty fragment', { redirect_uris: ['https://app.example.com/cb#'] }, 'invalid_redirect_uri'],
        ['user information', { redirect_uris: ['https://user:pw@app.example.com/cb'] }, 'invalid_redirect_uri'],
        ['more than 20 URIs', { redirect_uris: twentyOne }, 'invalid_redirect_uri'],
        ['one bad URI among good ones', { redirect_uris: [CB, 'http://evil.example/cb'] }, 'invalid_redirect_uri'],
        ['grant type client_credentials', { redirect_uris: [CB], grant_types: ['authorization_code', 'client_credentials'] }, 'invalid_client_metadata'],
        ['grant type implicit', { redirect_uris: [CB], grant_types: ['implicit'] }, 'invalid_client_metadata'],
        ['grant types without authorization_code', { redirect_uris: [CB], grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
        ['grant types empty', { redirect_uris: [CB], grant_types: [] }, 'invalid_client_metadata'],
        ['response type token', { redirect_uris: [CB], response_types: ['token'] }, 'invalid_client_metadata'],
        ['auth method private_key_jwt', { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
        ['auth method not a string', { redirect_uris: [CB], token_endpoint_auth_method: ['none'] }, 'invalid_client_metadata'],
        ['client_name empty', { redirect_uris: [CB], client_name: ' ' }, 'invalid_client_metadata'],
        ['client_name too long', { redirect_uris: [CB], client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
        ['scope not a string', { redirect_uris: [CB], scope: ['search'] }, 'invalid_client_metadata'],
        ['a body that is not JSON', 'redirect_uris=http://127.0.0.1/cb', 'invalid_client_metadata'],
        ['an empty body', '', 'invalid_client_metadata'],
        ['a JSON array', [{ redirect_uris: [CB] }], 'invalid_client_metadata'],
        ['JSON null', null, 'invalid_client_metadata'],
        ['a JSON string', '"hello"', 'invalid_client_metadata'],
      ];
      for (const [why, body, error] of refusals) {
        const r = await register(body === null ? 'null' : body);
        assert.equal(r.status, 400, `${why}: ${r.text}`);
        assert.equal(r.json?.error, error, `${why}: ${r.text}`);
        assert.equal(r.headers.get('cache-control'), 'no-store', why);
      }
    });

    // ---- 3. The authorization endpoint --------------------------------------------------

    await t.test('authorization endpoint: errors on the page before the client is known, to the client after', async () => {
      const c = await newClient();
      const other = await newClient({ redirect_uris: ['https://one.example.com/cb', 'https://two.example.com/cb'] });
      const { challenge } = pkce();
      const get = (over: Record<string, string | undefined>, client = c) => browse(authorizeUrl(authParams(client, challenge, over)));

      // The well-formed request: the consent page.
      expectPage(await get({}), 200, /Allow <strong>Test agent<\/strong> to use trawl\?/);

      // Pages (400, never a redirect).
      expectPage(await get({ client_id: undefined }), 400, /client_id is missing/);
      expectPage(await get({ client_id: 'oac_000000000000000000000000' }), 400, /not registered here/);
      expectPage(await get({ redirect_uri: 'https://evil.example/cb' }), 400, /redirect_uri\) is not one the application registered/);
      expectPage(await get({ redirect_uri: 'http://127.0.0.1:5000/other' }), 400, /not one the application registered/);
      expectPage(await get({ redirect_uri: 'http://localhost:5000/cb' }), 400, /not one the application registered/);
      expectPage(await get({ redirect_uri: undefined }, other), 400, /registered several addresses/);
      expectPage(await browse(`${authorizeUrl(authParams(c, challenge))}&state=second`), 400, /sent more than once/);
      expectPage(await browse(`${authorizeUrl(authParams(c, challenge))}&redirect_uri=https%3A%2F%2Fevil.example%2Fcb`), 400, /sent more than once/);
      // Sent twice with the first empty is still twice.
      expectPage(
        await browse(`${authorizeUrl(authParams(c, challenge, { redirect_uri: undefined }))}&redirect_uri=&redirect_uri=${encodeURIComponent(CB)}`),
        400,
        /sent more than once/,
      );
      // Without redirect_uri, the one registered address is used.
      expectPage(await get({ redirect_uri: undefined }), 200);

      // Redirects to the client (302) with the error, the state and the issuer.
      const back = async (over: Record<string, string | undefined>, error: string, client = c, redirect = CB) => {
        const r = await get(over, client);
        assert.equal(r.status, 302, r.text.slice(0, 300));
        assert.equal(target(r.location!), redirect);
        assert.equal(r.location!.searchParams.get('error'), error);
        assert.equal(r.location!.searchParams.get('state'), over.state === undefined && 'state' in over ? null : (over.state ?? 'st-42'));
        assert.equal(r.location!.searchParams.get('iss'), d.url);
        assert.equal(r.location!.searchParams.get('code'), null);
        assert.equal(r.headers.get('cache-control'), 'no-store');
        return r;
      };
      await back({ response_type: 'token' }, 'unsupported_response_type');
      await back({ response_type: undefined }, 'invalid_request');
      await back({ response_type: 'code id_token' }, 'unsupported_response_type');
      await back({ code_challenge: undefined }, 'invalid_request');
      await back({ code_challenge_method: 'plain' }, 'invalid_request');
      await back({ code_challenge_method: 'plain', code_challenge: pkce().verifier }, 'invalid_request');
      await back({ code_challenge_method: undefined }, 'invalid_request');
      await back({ code_challenge: 'too-short' }, 'invalid_request');
      await back({ code_challenge: `${challenge.slice(0, 42)}=` }, 'invalid_request');
      await back({ resource: 'https://other.example.com/api/mcp' }, 'invalid_target');
      await back({ resource: `${d.url.replace('127.0.0.1', 'localhost')}/api/mcp` }, 'invalid_target');
      await back({ resource: 'not a url' }, 'invalid_target');
      await back({ resource: `${d.url}/api/mcp#x` }, 'invalid_target');
      await back({ response_type: 'token', state: undefined }, 'unsupported_response_type');
      // The registered address keeps its own query.
      const q = await newClient({ redirect_uris: ['https://app.example.com/cb?tenant=7'] });
      const r = await back({ response_type: 'token' }, 'unsupported_response_type', q, 'https://app.example.com/cb');
      assert.equal(r.location!.searchParams.get('tenant'), '7');
      // A resource of this server is accepted.
      expectPage(await get({ resource: `${d.url}/api/mcp` }), 200);
      expectPage(await get({ resource: d.url }), 200);

      // Loopback: any port matches the registered loopback address.
      const loop = await get({ redirect_uri: 'http://127.0.0.1:6123/cb' });
      expectPage(loop, 200, /returns to <code>127\.0\.0\.1:6123<\/code>/);
      const flow = await authorize(c, { redirect_uri: 'http://127.0.0.1:6123/cb' });
      assert.equal(flow.redirectUri, 'http://127.0.0.1:6123/cb');
      assert.equal((await exchange(c, flow)).status, 200);
    });

    await t.test('the consent page: escaping, headers, the form round trip', async () => {
      const hostile = await newClient({ client_name: '<script>alert("x")</script> & <img src=x onerror=alert(1)>' });
      const { challenge, verifier } = pkce();
      const params = authParams(hostile, challenge, { state: '"><script>alert(2)</script>', scope: 'search extra' });
      const page = await browse(authorizeUrl(params));
      expectPage(page, 200);
      assert.ok(!page.text.includes('<script'), 'no raw script tag');
      assert.ok(!page.text.includes('<img'), 'no raw img tag');
      assert.match(page.text, /Allow <strong>&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/script&gt; &amp; &lt;img src=x onerror=alert\(1\)&gt;<\/strong>/);
      assert.match(page.text, /<title>Allow &lt;script&gt;/);
      assert.match(page.text, /value="&quot;&gt;&lt;script&gt;alert\(2\)&lt;\/script&gt;"/);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      const csp = page.headers.get('content-security-policy')!;
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'none'/);
      assert.equal(page.headers.get('cache-control'), 'no-store');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');

      // The hidden fields carry the request back unchanged.
      const unescape = (s: string) =>
        s
          .replace(/&quot;/g, '"')
          .replace(/&#39;/g, "'")
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&amp;/g, '&');
      const hidden: Record<string, string> = {};
      for (const m of page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) hidden[m[1]!] = unescape(m[2]!);
      assert.deepEqual(hidden, params);
      const r = await consentPost(hidden, 'allow', apiKey);
      assert.equal(r.status, 303);
      assert.equal(r.location!.searchParams.get('state'), params.state);
      const flow = { code: r.location!.searchParams.get('code')!, verifier, redirectUri: CB };
      issued.push(flow.code);
      const a = await exchange(hostile, flow);
      assert.equal(a.status, 200, a.text);
      assert.equal(a.json.scope, 'search', 'only "search" is granted, whatever was asked');
    });

    await t.test('the consent form: deny, missing and bad credentials, allow', async () => {
      const c = await newClient({ redirect_uris: [CB, 'cursor://anysphere.cursor-retrieval/oauth/callback'] });
      const { challenge } = pkce();
      const params = authParams(c, challenge);

      const deny = await consentPost(params, 'deny');
      assert.equal(deny.status, 303);
      assert.equal(target(deny.location!), CB);
      assert.equal(deny.location!.searchParams.get('error'), 'access_denied');
      assert.equal(deny.location!.searchParams.get('state'), 'st-42');
      assert.equal(deny.location!.searchParams.get('iss'), d.url);
      assert.equal(deny.location!.searchParams.get('code'), null);
      const denyApp = await consentPost({ ...params, redirect_uri: 'cursor://anysphere.cursor-retrieval/oauth/callback' }, 'deny');
      assert.equal(denyApp.status, 303);
      assert.equal(target(denyApp.location!), 'cursor://anysphere.cursor-retrieval/oauth/callback');
      assert.equal(denyApp.location!.searchParams.get('error'), 'access_denied');

      expectPage(await consentPost(params, undefined, apiKey), 400, /not answered with Allow or Deny/);
      expectPage(await consentPost(params, 'maybe', apiKey), 400, /not answered with Allow or Deny/);
      // The request is checked again on the POST.
      expectPage(await consentPost({ ...params, redirect_uri: 'https://evil.example/cb' }, 'allow', apiKey), 400, /not one the application registered/);
      const noPkce = await consentPost({ ...params, code_challenge_method: 'plain' }, 'allow', apiKey);
      assert.equal(noPkce.status, 303);
      assert.equal(noPkce.location!.searchParams.get('error'), 'invalid_request');
      expectPage(
        await browse(`${d.url}/oauth/authorize`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...params, decision: 'allow', api_key: apiKey }),
        }),
        400,
        /x-www-form-urlencoded/,
      );

      const empty = await consentPost(params, 'allow');
      expectPage(empty, 400, /Enter your API key to allow access/);
      assert.match(empty.text, /<form method="post"/, 'the consent page again');

      const revoked = await newKey('dev@example.com');
      await keysCommand(['revoke', revoked.id, ...dd], io);
      await usersCommand(['suspend', 'sus@example.com', ...dd], io);
      const repos = (await api(apiKey)).json as Array<{ repoId: number }>;
      const scoped = await call(`${d.url}/api/ee/scoped_access_token`, {
        headers: { authorization: `Bearer ${apiKey}` },
        json: { repoIds: [repos[0]!.repoId] },
      });
      assert.equal(scoped.status, 201, scoped.text);
      assert.match(scoped.json.token, /^svst_/);
      issued.push(scoped.json.token);
      const bad: Array<[string, string, RegExp]> = [
        ['malformed', 'svk_nope', /That is not an API key/],
        ['an OAuth token', `svoa_${'a'.repeat(64)}`, /That is not an API key/],
        ['a scoped token', scoped.json.token, /That is not an API key/],
        ['unknown', `svk_${randomBytes(32).toString('hex')}`, /The API key is not valid/],
        ['revoked', revoked.key, /The API key is not valid/],
        ['of a suspended user', suspendedKey, /suspended/],
      ];
      for (const [why, key, message] of bad) {
        const r = await consentPost(params, 'allow', key);
        expectPage(r, 401, message);
        assert.match(r.text, /role="alert"/, why);
        assert.match(r.text, /<form method="post"/, `${why}: the consent page again`);
        assert.ok(!r.text.includes(key), `${why}: the key is not echoed`);
        assert.ok(!r.text.includes('svoc_'), `${why}: no code`);
      }
      await usersCommand(['unsuspend', 'sus@example.com', ...dd], io);

      const ok = await consentPost(params, 'allow', apiKey);
      assert.equal(ok.status, 303);
      assert.equal(target(ok.location!), CB);
      assert.match(ok.location!.searchParams.get('code')!, /^svoc_[0-9a-f]{64}$/);
      issued.push(ok.location!.searchParams.get('code')!);
      assert.equal(ok.location!.searchParams.get('state'), 'st-42');
      assert.equal(ok.location!.searchParams.get('iss'), d.url);
      assert.equal(ok.headers.get('cache-control'), 'no-store');
      const app = await consentPost(
        { ...params, redirect_uri: 'cursor://anysphere.cursor-retrieval/oauth/callback', state: undefined },
        'allow',
        ` ${apiKey} `,
      );
      assert.equal(app.status, 303);
      assert.equal(target(app.location!), 'cursor://anysphere.cursor-retrieval/oauth/callback');
      assert.match(app.location!.searchParams.get('code')!, /^svoc_/);
      issued.push(app.location!.searchParams.get('code')!);
      assert.equal(app.location!.searchParams.get('state'), null);
    });

    // ---- 4. The token endpoint ----------------------------------------------------------

    await t.test('token endpoint: request format, grant types, client authentication', async () => {
      const pub = await newClient();
      const conf = await newClient({ token_endpoint_auth_method: 'client_secret_basic' });
      const flow = await authorize(pub);

      const json = await call(`${d.url}/oauth/token`, {
        json: { grant_type: 'authorization_code', client_id: pub.id, code: flow.code, code_verifier: flow.verifier },
      });
      expectOAuthError(json, 400, 'invalid_request');
      assert.match(json.json.error_description, /x-www-form-urlencoded/);
      // A form without its content type (fetch sends text/plain), and the query string instead of a body.
      expectOAuthError(
        await call(`${d.url}/oauth/token`, { method: 'POST', body: form({ grant_type: 'authorization_code', client_id: pub.id }) }),
        400,
        'invalid_request',
      );
      const viaGet = await call(
        `${d.url}/oauth/token?${form({ grant_type: 'authorization_code', client_id: pub.id, code: flow.code, code_verifier: flow.verifier })}`,
      );
      expectApiError(viaGet, 405, 'METHOD_NOT_ALLOWED');
      assert.equal(viaGet.headers.get('allow'), 'POST');
      expectOAuthError(await token(pub, { code: flow.code, code_verifier: flow.verifier }), 400, 'invalid_request');
      expectOAuthError(await token(pub, { grant_type: 'password', username: 'dev@example.com', password: 'x' }), 400, 'unsupported_grant_type');
      expectOAuthError(await token(pub, { grant_type: 'client_credentials' }), 400, 'unsupported_grant_type');
      expectOAuthError(
        await call(`${d.url}/oauth/token`, {
          method: 'POST',
          headers: FORM,
          body: `grant_type=authorization_code&grant_type=refresh_token&client_id=${pub.id}`,
        }),
        400,
        'invalid_request',
      );

      // Client authentication.
      const noWww = (a: Answer) => assert.equal(a.headers.get('www-authenticate'), null);
      let a = await exchange({ ...pub, secret: `svcs_${'0'.repeat(64)}` }, flow);
      expectOAuthError(a, 401, 'invalid_client');
      assert.match(a.json.error_description, /public client/);
      noWww(a);
      a = await exchange({ ...pub, secret: `svcs_${'0'.repeat(64)}` }, flow, {}, { basic: true });
      expectOAuthError(a, 401, 'invalid_client');
      assert.equal(a.headers.get('www-authenticate'), 'Basic realm="trawl"');
      a = await exchange({ ...pub, id: 'oac_000000000000000000000000' }, flow);
      expectOAuthError(a, 401, 'invalid_client');
      assert.match(a.json.error_description, /unknown client/);
      expectOAuthError(await token(undefined, { grant_type: 'authorization_code', code: flow.code, code_verifier: flow.verifier }), 401, 'invalid_client');

      const cflow = await authorize(conf);
      const wrong = { ...conf, secret: `svcs_${'1'.repeat(64)}` };
      a = await exchange(wrong, cflow, {}, { basic: true });
      expectOAuthError(a, 401, 'invalid_client');
      assert.equal(a.headers.get('www-authenticate'), 'Basic realm="trawl"');
      a = await exchange(wrong, cflow);
      expectOAuthError(a, 401, 'invalid_client');
      noWww(a);
      expectOAuthError(await exchange({ ...conf, secret: 'hunter2' }, cflow), 401, 'invalid_client');
      expectOAuthError(await exchange({ ...conf, secret: undefined }, cflow), 401, 'invalid_client');
      a = await token(conf, { grant_type: 'authorization_code', code: cflow.code, code_verifier: cflow.verifier, client_secret: conf.secret }, { basic: true });
      expectOAuthError(a, 400, 'invalid_request');
      a = await token(conf, { grant_type: 'authorization_code', code: cflow.code, code_verifier: cflow.verifier, client_id: pub.id }, { basic: true });
      expectOAuthError(a, 400, 'invalid_request');
      a = await token(
        undefined,
        { grant_type: 'authorization_code', code: cflow.code, code_verifier: cflow.verifier },
        { headers: { authorization: `Bearer ${apiKey}` } },
      );
      expectOAuthError(a, 401, 'invalid_client');
      assert.equal(a.headers.get('www-authenticate'), 'Basic realm="trawl"');
      // None of that used the codes up: each client exchanges its own, by Basic and by the body.
      a = await exchange(conf, cflow, {}, { basic: true });
      assert.equal(a.status, 200, a.text);
      const pflow = await authorize(conf);
      assert.equal((await exchange(conf, pflow)).status, 200, 'client_secret_post works as well');
      assert.equal((await exchange(pub, flow)).status, 200);
      // The secret of a client_secret_post client in HTTP Basic is accepted too (RFC 6749 section 2.3.1 requires Basic support).
      const post = await newClient({ token_endpoint_auth_method: 'client_secret_post' });
      assert.equal((await exchange(post, await authorize(post), {}, { basic: true })).status, 200);
    });

    await t.test('token endpoint: the code exchange', async () => {
      at(0);
      const c = await newClient();
      const other = await newClient();

      const flow = await authorize(c);
      const ok = await exchange(c, flow);
      assert.equal(ok.status, 200, ok.text);
      assert.deepEqual(Object.keys(ok.json).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      assert.equal(ok.json.token_type, 'Bearer');
      assert.equal(ok.json.expires_in, 3600);
      assert.equal(ok.json.scope, 'search');
      assert.match(ok.json.access_token, /^svoa_[0-9a-f]{64}$/);
      assert.match(ok.json.refresh_token, /^svor_[0-9a-f]{64}$/);
      assert.equal(ok.headers.get('cache-control'), 'no-store');
      assert.equal(ok.headers.get('pragma'), 'no-cache');
      assert.equal((await api(ok.json.access_token)).status, 200);

      // Used twice: refused, and the tokens of the first exchange are revoked.
      expectOAuthError(await exchange(c, flow), 400, 'invalid_grant');
      expectApiError(await api(ok.json.access_token), 401, 'NOT_AUTHENTICATED');
      expectOAuthError(await refresh(c, ok.json.refresh_token), 400, 'invalid_grant');

      // Each refusal leaves the code good for the right request.
      const f = await authorize(c);
      expectOAuthError(await exchange(c, f, { code_verifier: pkce().verifier }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { code_verifier: 'short' }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { code_verifier: `${f.verifier}!` }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { code_verifier: undefined }), 400, 'invalid_request');
      expectOAuthError(await exchange(c, f, { code: undefined }), 400, 'invalid_request');
      expectOAuthError(await exchange(c, f, { code: 'svoc_nope' }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { code: `svoc_${randomBytes(32).toString('hex')}` }), 400, 'invalid_grant');
      const stolen = await exchange(other, f);
      expectOAuthError(stolen, 400, 'invalid_grant');
      assert.match(stolen.json.error_description, /another client/);
      expectOAuthError(await exchange(c, f, { redirect_uri: 'http://127.0.0.1:5000/other' }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { redirect_uri: 'http://127.0.0.1:5001/cb' }), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, f, { resource: 'https://other.example.com/api/mcp' }), 400, 'invalid_target');
      const done = await exchange(c, f, { redirect_uri: undefined, resource: `${d.url}/api/mcp` });
      assert.equal(done.status, 200, done.text);

      // Verifiers of 43 to 128 characters (RFC 7636 section 4.1); S256 of a longer one is not accepted.
      const ofLength = (n: number) => {
        const verifier = randomBytes(120).toString('base64url').slice(0, n).replace(/^(.)/, '~');
        assert.equal(verifier.length, n);
        return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
      };
      assert.equal((await exchange(c, await authorize(c, {}, apiKey, ofLength(128)))).status, 200);
      expectOAuthError(await exchange(c, await authorize(c, {}, apiKey, ofLength(129))), 400, 'invalid_grant');
      expectOAuthError(await exchange(c, await authorize(c, {}, apiKey, ofLength(42))), 400, 'invalid_grant');

      // A code for a resource: only that resource at the token endpoint.
      const rf = await authorize(c, { resource: `${d.url}/api/mcp` });
      expectOAuthError(await exchange(c, rf, { resource: d.url }), 400, 'invalid_target');
      assert.equal((await exchange(c, rf, { resource: `${d.url}/api/mcp/` })).status, 200);

      // Codes live 5 minutes, to the millisecond.
      const early = await authorize(c);
      const late = await authorize(c);
      at(5 * MINUTE - 1);
      assert.equal((await exchange(c, early)).status, 200);
      at(5 * MINUTE);
      const expired = await exchange(c, late);
      expectOAuthError(expired, 400, 'invalid_grant');
      assert.match(expired.json.error_description, /expired/);
      at(0);

      // Raced: exactly one exchange wins; the others are reuses, which revoke what it got.
      const raced = await authorize(c);
      const answers = await Promise.all(Array.from({ length: 5 }, () => exchange(c, raced)));
      const wins = answers.filter((x) => x.status === 200);
      assert.equal(wins.length, 1, answers.map((x) => x.status).join(' '));
      for (const x of answers.filter((y) => y.status !== 200)) expectOAuthError(x, 400, 'invalid_grant');
      expectApiError(await api(wins[0]!.json.access_token), 401, 'NOT_AUTHENTICATED');
      expectOAuthError(await refresh(c, wins[0]!.json.refresh_token), 400, 'invalid_grant');

      // No refresh_token grant registered: no refresh token, and no refresh.
      const once = await newClient({ grant_types: ['authorization_code'] });
      const got = await exchange(once, await authorize(once));
      assert.equal(got.status, 200, got.text);
      assert.equal(got.json.refresh_token, undefined);
      expectOAuthError(await refresh(once, `svor_${randomBytes(32).toString('hex')}`), 400, 'unauthorized_client');
      const theirs = (await signIn(c)).refresh_token!;
      expectOAuthError(await refresh(once, theirs), 400, 'unauthorized_client');
      assert.equal((await refresh(c, theirs)).status, 200, "the owner's token was not touched");

      // A code of a user suspended since consent.
      const sus = await authorize(c, {}, suspendedKey);
      await usersCommand(['suspend', 'sus@example.com', ...dd], io);
      try {
        const r = await exchange(c, sus);
        expectOAuthError(r, 400, 'invalid_grant');
        assert.match(r.json.error_description, /suspended/);
      } finally {
        await usersCommand(['unsuspend', 'sus@example.com', ...dd], io);
      }
    });

    // ---- 5. Tokens in use, and refresh --------------------------------------------------

    await t.test('access tokens at the API: bearer only, counted, one hour, suspended users', async () => {
      at(0);
      const c = await newClient();
      const tokens = await signIn(c);
      const repos = await api(tokens.access_token);
      assert.equal(repos.status, 200);
      assert.deepEqual((repos.json as Array<{ repoName: string }>).map((r) => r.repoName).sort(), ['secret', 'widgets']);
      const s1 = await search(tokens.access_token);
      assert.equal(s1.status, 200, s1.text);
      assert.ok(s1.json.files.length > 0);
      const s2 = await search(tokens.access_token);
      const remaining = Number(s1.headers.get('x-ratelimit-remaining'));
      assert.ok(Number.isInteger(remaining) && remaining > 0, `X-RateLimit-Remaining: ${s1.headers.get('x-ratelimit-remaining')}`);
      assert.equal(Number(s2.headers.get('x-ratelimit-remaining')), remaining - 1, 'each request is counted');

      const header = await api(tokens.access_token, '/api/repos', 'header');
      expectApiError(header, 401, 'NOT_AUTHENTICATED');
      assert.match(header.json.message, /only as "Authorization: Bearer/);
      expectApiError(await api(tokens.refresh_token!), 401, 'NOT_AUTHENTICATED');
      expectApiError(await api(`${tokens.access_token.slice(0, -1)}${tokens.access_token.endsWith('0') ? '1' : '0'}`), 401, 'NOT_AUTHENTICATED');

      at(HOUR - 1);
      assert.equal((await api(tokens.access_token)).status, 200);
      at(HOUR);
      const expired = await api(tokens.access_token);
      expectApiError(expired, 401, 'NOT_AUTHENTICATED');
      assert.match(expired.headers.get('www-authenticate')!, /error="invalid_token"/);
      // The refresh token outlives it.
      const next = await refresh(c, tokens.refresh_token!);
      assert.equal(next.status, 200, next.text);
      assert.equal((await api(next.json.access_token)).status, 200);
      at(0);

      const sus = await signIn(c, suspendedKey);
      assert.equal((await api(sus.access_token)).status, 200);
      await usersCommand(['suspend', 'sus@example.com', ...dd], io);
      try {
        const r = await api(sus.access_token);
        expectApiError(r, 401, 'NOT_AUTHENTICATED');
        assert.match(r.json.message, /suspended/);
        const rr = await refresh(c, sus.refresh_token!);
        expectOAuthError(rr, 400, 'invalid_grant');
        assert.match(rr.json.error_description, /suspended/);
      } finally {
        await usersCommand(['unsuspend', 'sus@example.com', ...dd], io);
      }
      assert.equal((await api(sus.access_token)).status, 200, 'suspension revoked nothing');
    });

    await t.test('refresh: rotation, races, scope, expiry', async () => {
      at(0);
      const c = await newClient();
      const other = await newClient();
      const first = await signIn(c);
      const second = await refresh(c, first.refresh_token!);
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(Object.keys(second.json).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
      assert.notEqual(second.json.access_token, first.access_token);
      assert.notEqual(second.json.refresh_token, first.refresh_token);
      assert.equal(second.json.scope, 'search');
      assert.equal(second.headers.get('cache-control'), 'no-store');
      assert.equal((await api(second.json.access_token)).status, 200);

      expectOAuthError(await refresh(c, second.json.refresh_token, { scope: 'admin' }), 400, 'invalid_scope');
      expectOAuthError(await refresh(c, second.json.refresh_token, { scope: 'search admin' }), 400, 'invalid_scope');
      expectOAuthError(await refresh(c, second.json.refresh_token, { resource: 'https://other.example.com/' }), 400, 'invalid_target');
      expectOAuthError(await refresh(c, second.json.refresh_token, { refresh_token: undefined }), 400, 'invalid_request');
      expectOAuthError(await refresh(c, 'svor_nope'), 400, 'invalid_grant');
      expectOAuthError(await refresh(c, second.json.access_token), 400, 'invalid_grant');
      expectOAuthError(await refresh(other, second.json.refresh_token), 400, 'invalid_grant');
      // None of those used it (nor were they taken for a reuse).
      const third = await refresh(c, second.json.refresh_token, { scope: 'search' });
      assert.equal(third.status, 200, third.text);
      assert.equal((await api(third.json.access_token)).status, 200);

      // Raced: one wins; the rest are reuses, which revoke the grant, the winner's tokens included.
      const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(c, third.json.refresh_token)));
      const wins = answers.filter((x) => x.status === 200);
      assert.equal(wins.length, 1, answers.map((x) => x.status).join(' '));
      for (const x of answers.filter((y) => y.status !== 200)) expectOAuthError(x, 400, 'invalid_grant');
      assert.match(answers.find((y) => y.status !== 200)!.json.error_description, /used before/);
      expectApiError(await api(wins[0]!.json.access_token), 401, 'NOT_AUTHENTICATED');
      expectApiError(await api(third.json.access_token), 401, 'NOT_AUTHENTICATED');
      expectOAuthError(await refresh(c, wins[0]!.json.refresh_token), 400, 'invalid_grant');

      // Refresh tokens live 30 days, to the millisecond.
      const a = await signIn(c);
      const b = await signIn(c);
      at(30 * DAY - 1);
      assert.equal((await refresh(c, a.refresh_token!)).status, 200);
      at(30 * DAY);
      const expired = await refresh(c, b.refresh_token!);
      expectOAuthError(expired, 400, 'invalid_grant');
      assert.match(expired.json.error_description, /expired/);
      at(0);
    });

    // ---- 6. Revocation ------------------------------------------------------------------

    await t.test('revocation: an access token alone, a refresh token with its grant, others untouched', async () => {
      at(0);
      const c = await newClient();
      const conf = await newClient({ token_endpoint_auth_method: 'client_secret_basic' });
      const other = await newClient();

      const one = await signIn(c);
      let r = await revoke(c, one.access_token);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, {});
      assert.equal(r.headers.get('cache-control'), 'no-store');
      expectApiError(await api(one.access_token), 401, 'NOT_AUTHENTICATED');
      const renewed = await refresh(c, one.refresh_token!);
      assert.equal(renewed.status, 200, 'the refresh token still works');
      assert.equal((await api(renewed.json.access_token)).status, 200);
      assert.equal((await revoke(c, one.access_token)).status, 200, 'again: still 200');

      r = await revoke(c, renewed.json.refresh_token);
      assert.equal(r.status, 200);
      expectApiError(await api(renewed.json.access_token), 401, 'NOT_AUTHENTICATED');
      expectOAuthError(await refresh(c, renewed.json.refresh_token), 400, 'invalid_grant');

      // Unknown, malformed, another client's: 200, and nothing happens.
      const theirs = await signIn(other);
      for (const value of [
        `svoa_${randomBytes(32).toString('hex')}`,
        `svor_${randomBytes(32).toString('hex')}`,
        'nope',
        apiKey,
        theirs.access_token,
        theirs.refresh_token!,
      ]) {
        const x = await revoke(c, value);
        assert.equal(x.status, 200, x.text);
        assert.deepEqual(x.json, {});
      }
      assert.equal((await api(theirs.access_token)).status, 200, "the other client's token still works");
      const theirsNext = await refresh(other, theirs.refresh_token!);
      assert.equal(theirsNext.status, 200, 'and its refresh token too');

      expectOAuthError(await revoke(c, undefined), 400, 'invalid_request');
      expectOAuthError(await revoke(undefined, theirsNext.json.access_token), 401, 'invalid_client');
      expectOAuthError(await revoke({ ...c, id: 'oac_000000000000000000000000' }, theirsNext.json.access_token), 401, 'invalid_client');
      expectOAuthError(await call(`${d.url}/oauth/revoke`, { json: { token: theirsNext.json.access_token, client_id: other.id } }), 400, 'invalid_request');

      // A confidential client authenticates to revoke.
      const ct = await signIn(conf);
      expectOAuthError(await revoke({ ...conf, secret: undefined }, ct.refresh_token), 401, 'invalid_client');
      const wrong = await revoke({ ...conf, secret: `svcs_${'2'.repeat(64)}` }, ct.refresh_token, { basic: true });
      expectOAuthError(wrong, 401, 'invalid_client');
      assert.equal(wrong.headers.get('www-authenticate'), 'Basic realm="trawl"');
      assert.equal((await api(ct.access_token)).status, 200, 'nothing revoked by the failed requests');
      assert.equal((await revoke(conf, ct.refresh_token, { basic: true })).status, 200);
      expectApiError(await api(ct.access_token), 401, 'NOT_AUTHENTICATED');
      // The other client's grant is still alive after all that.
      assert.equal((await api(theirsNext.json.access_token)).status, 200);
    });

    // ---- 7. Secrets at rest -------------------------------------------------------------

    await t.test('no issued credential is in the database file or its write-ahead log', async () => {
      const kinds = ['svoa_', 'svor_', 'svoc_', 'svcs_', 'svk_'].map((p) => issued.filter((s) => s.startsWith(p)).length);
      assert.ok(
        kinds.every((n) => n > 0),
        `every kind was issued: ${kinds.join(' ')}`,
      );
      assert.ok(issued.length > 50, `${issued.length} credentials`);
      const db = databaseText(d.dataDir);
      assert.ok(db.length > 0);
      // Sanity: the text is searchable (the registered redirect URIs are stored as given).
      assert.ok(db.includes('anysphere.cursor-retrieval'));
      // The audit log recorded every step (by ids), in the database and as `trawl audit` reads it.
      const lines: string[] = [];
      assert.equal(
        await auditCommand(['--json', '--limit', '10000', '--data-dir', d.dataDir], { out: (l) => lines.push(l), err: () => {}, now: () => clock }),
        0,
      );
      const audit = lines.join('\n');
      const actions = new Set((JSON.parse(audit) as Array<{ action: string }>).map((e) => e.action));
      for (const a of ['oauth_client.registered', 'oauth_grant.consented', 'oauth_grant.created', 'oauth_grant.revoked', 'oauth_token.revoked'])
        assert.ok(actions.has(a), `${a} was recorded`);
      for (const s of new Set(issued)) {
        const secretPart = s.slice(s.indexOf('_') + 1);
        assert.ok(!db.includes(s), `${s.slice(0, 9)}... is not in the database`);
        assert.ok(!db.includes(secretPart), `the random part of ${s.slice(0, 9)}... is not in the database`);
        assert.ok(!audit.includes(s) && !audit.includes(secretPart), `${s.slice(0, 9)}... is not in the audit log`);
      }
    });
  } finally {
    await d.cleanup();
  }
});
