// OAuth end to end, the way an MCP client signs in: the SDK's own client and its OAuth
// flow against the daemon over real HTTP. The client meets a 401 at /api/mcp, follows
// WWW-Authenticate to the metadata, registers itself, and sends the user to the consent
// page; the "user" (this test, as a browser would) posts the page's form with an API key
// and follows the redirect to the code; the client exchanges it with its PKCE verifier,
// connects and calls a tool. Then: a refresh rotates the tokens, reusing the old refresh
// token is refused and revokes the grant (so the new tokens die too), and a fresh sign-in
// ends with revocation at the revocation endpoint.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { auth, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { signLicense } from '../../daemon/auth/license.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { oauthCommand } from '../../daemon/cli/oauth-command.ts';
import { openStore } from '../../daemon/store/open.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';

const { publicKey, privateKey } = generateKeyPairSync('ed25519');
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const REDIRECT = 'http://127.0.0.1:53682/callback';

/** An MCP client's OAuth state, in memory; "redirecting" records the URL for the test to open. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizationUrl?: URL;
  get redirectUrl(): string {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test agent',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return 'state-123';
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier!;
  }
}

/** The browser's part: open the consent page, post it with the API key, read the code off the redirect. */
async function consent(authorizationUrl: URL, apiKey: string): Promise<string> {
  const page = await fetch(authorizationUrl);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /Allow <strong>Test agent<\/strong> to use trawl\?/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.set(m[1]!, unescape(m[2]!));
  form.set('api_key', apiKey);
  form.set('decision', 'allow');
  const posted = await fetch(new URL('authorize', authorizationUrl), { method: 'POST', body: form, redirect: 'manual' });
  assert.equal(posted.status, 303, await posted.clone().text());
  const back = new URL(posted.headers.get('location')!);
  assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
  assert.equal(back.searchParams.get('state'), 'state-123');
  return back.searchParams.get('code')!;
}

function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

async function connect(url: string, provider: OAuthClientProvider): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { authProvider: provider });
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

test('OAuth: an MCP client signs in with the SDK, calls a tool, refreshes, and its tokens are revoked', async (t) => {
  const d = await startTestDaemon({ settings: { anonymousAccess: false }, config: { license: { publicKeys: [PUBLIC_PEM] } } });
  try {
    const apiKey = await newUserKey('dev@example.com', ['--data-dir', d.dataDir]);
    const store = openStore(d.dataDir);
    try {
      await store.putLicense(
        signLicense(
          { id: 'L-oauth', licensee: 'Test Org', entitlements: ['oauth'], issuedAt: '2026-01-01T00:00:00Z', expiresAt: '2099-01-01T00:00:00Z' },
          PRIVATE_PEM,
        ),
      );
    } finally {
      await store.close();
    }
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    const searchWith = (token: string) => call(`${d.url}/api/search`, { headers: bearer(token), json: { query: 'widget_count', matches: 100 } });
    const provider = new MemoryProvider();
    /** A form POST to an OAuth endpoint, as the client (a public one: client_id in the body). */
    const form = (endpoint: 'token' | 'revoke', params: Record<string, string>) =>
      call(`${d.url}/oauth/${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_id: provider.client!.client_id }).toString(),
      });

    await t.test('a 401 at /api/mcp points at the resource metadata, which names the authorization server', async () => {
      const r = await call(`${d.url}/api/mcp`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      assert.equal(r.status, 401);
      assert.equal(
        r.headers.get('www-authenticate'),
        `Bearer realm="trawl", resource_metadata="${d.url}/.well-known/oauth-protected-resource/api/mcp", scope="search"`,
      );
      const prm = await call(`${d.url}/.well-known/oauth-protected-resource/api/mcp`);
      assert.deepEqual(prm.json.authorization_servers, [d.url]);
      assert.equal(prm.json.resource, `${d.url}/api/mcp`);
      const as = await call(`${d.url}/.well-known/oauth-authorization-server`);
      assert.equal(as.json.issuer, d.url);
      assert.deepEqual(as.json.code_challenge_methods_supported, ['S256']);
    });

    await t.test('browser-based clients: CORS on the tool server and OAuth, preflight answered; not elsewhere', async () => {
      const r = await call(`${d.url}/api/mcp`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
      assert.equal(r.headers.get('access-control-allow-origin'), '*', 'on errors too, so a script can read the 401');
      assert.match(r.headers.get('access-control-expose-headers')!, /WWW-Authenticate/);
      assert.match(r.headers.get('access-control-expose-headers')!, /Mcp-Session-Id/);
      for (const path of ['/api/mcp', '/oauth/token', '/oauth/register', '/.well-known/oauth-authorization-server']) {
        const pre = await fetch(`${d.url}${path}`, {
          method: 'OPTIONS',
          headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' },
        });
        assert.equal(pre.status, 204, path);
        assert.equal(pre.headers.get('access-control-allow-origin'), '*', path);
        assert.match(pre.headers.get('access-control-allow-headers')!, /Authorization, Content-Type/, path);
      }
      assert.match((await fetch(`${d.url}/.well-known/oauth-protected-resource/api/mcp`)).headers.get('access-control-allow-origin') ?? '', /\*/);
      // The REST API and the consent page are not for other origins' scripts.
      for (const path of ['/api/search', '/oauth/authorize']) {
        const pre = await fetch(`${d.url}${path}`, { method: 'OPTIONS' });
        assert.equal(pre.status, 405, path);
        assert.equal(pre.headers.get('access-control-allow-origin'), null, path);
      }
    });

    await t.test('register, authorize with PKCE, exchange, call a tool', async () => {
      await assert.rejects(connect(d.url, provider), UnauthorizedError);
      assert.ok(provider.client?.client_id.startsWith('oac_'), 'registered dynamically');
      const url = provider.authorizationUrl!;
      assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
      assert.equal(url.searchParams.get('resource'), `${d.url}/api/mcp`);
      const code = await consent(url, apiKey);
      const transport = new StreamableHTTPClientTransport(new URL(`${d.url}/api/mcp`), { authProvider: provider });
      await transport.finishAuth(code);
      assert.ok(provider.saved?.access_token.startsWith('svoa_'));
      assert.ok(provider.saved?.refresh_token?.startsWith('svor_'));
      assert.equal(provider.saved?.expires_in, 3600);

      const { client } = await connect(d.url, provider);
      try {
        const result = (await client.callTool({ name: 'search_code', arguments: { query: 'widget_count' } })) as { isError?: boolean; structuredContent?: any };
        assert.notEqual(result.isError, true);
        const rest = await searchWith(apiKey);
        assert.deepEqual(
          result.structuredContent.files.map((f: any) => `${f.repository}:${f.fileName.text}`),
          rest.json.files.map((f: any) => `${f.repository}:${f.fileName.text}`),
        );
        assert.ok(result.structuredContent.files.length > 0);
      } finally {
        await client.close();
      }
      // The access token is a bearer token of the REST API too, counted like any other.
      const r = await searchWith(provider.saved!.access_token);
      assert.equal(r.status, 200);
      assert.ok(r.headers.get('x-ratelimit-remaining') !== null, 'OAuth requests are counted');
    });

    await t.test('refresh rotates; reusing the rotated refresh token is refused and revokes the grant', async () => {
      const first = provider.saved!;
      assert.equal(await auth(provider, { serverUrl: new URL(`${d.url}/api/mcp`) }), 'AUTHORIZED');
      const second = provider.saved!;
      assert.notEqual(second.access_token, first.access_token);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.equal((await searchWith(second.access_token)).status, 200);

      const reuse = await form('token', { grant_type: 'refresh_token', refresh_token: first.refresh_token! });
      assert.equal(reuse.status, 400);
      assert.equal(reuse.json.error, 'invalid_grant');
      assert.equal(reuse.headers.get('cache-control'), 'no-store');
      // The whole grant is gone: the newest access token and refresh token too.
      const dead = await searchWith(second.access_token);
      assert.equal(dead.status, 401);
      assert.match(dead.headers.get('www-authenticate')!, /error="invalid_token"/);
      const again = await form('token', { grant_type: 'refresh_token', refresh_token: second.refresh_token! });
      assert.equal(again.json.error, 'invalid_grant');
    });

    await t.test('sign in again, then revoke: the refresh token takes its access tokens with it', async () => {
      provider.saved = undefined;
      await assert.rejects(connect(d.url, provider), UnauthorizedError);
      const code = await consent(provider.authorizationUrl!, apiKey);
      await new StreamableHTTPClientTransport(new URL(`${d.url}/api/mcp`), { authProvider: provider }).finishAuth(code);
      const tokens = provider.saved!;
      assert.equal((await searchWith(tokens.access_token)).status, 200);
      const revoke = await form('revoke', { token: tokens.refresh_token!, token_type_hint: 'refresh_token' });
      assert.equal(revoke.status, 200);
      assert.equal((await searchWith(tokens.access_token)).status, 401);
      const refresh = await form('token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
      assert.equal(refresh.json.error, 'invalid_grant');
    });

    await t.test('the operator lists the grants in use and revokes one: its tokens stop working', async () => {
      provider.saved = undefined;
      await assert.rejects(connect(d.url, provider), UnauthorizedError);
      const code = await consent(provider.authorizationUrl!, apiKey);
      await new StreamableHTTPClientTransport(new URL(`${d.url}/api/mcp`), { authProvider: provider }).finishAuth(code);
      const out: string[] = [];
      const cli = (argv: string[]) => oauthCommand([...argv, '--data-dir', d.dataDir], { out: (l) => out.push(l), err: () => {}, now: () => new Date() });
      assert.equal(await cli(['list', '--json']), 0);
      const grants = JSON.parse(out.pop()!) as Array<{ id: string; clientName: string; userEmail: string }>;
      // Only this sign-in's grant is usable: the earlier two were revoked.
      assert.deepEqual(
        grants.map((g) => [g.clientName, g.userEmail]),
        [['Test agent', 'dev@example.com']],
      );
      assert.equal((await searchWith(provider.saved!.access_token)).status, 200);
      assert.equal(await cli(['revoke', grants[0]!.id]), 0);
      assert.match(out.pop()!, /revoked/);
      assert.equal((await searchWith(provider.saved!.access_token)).status, 401);
      assert.equal(await cli(['list']), 0);
      assert.equal(out.pop(), 'no OAuth grants in use');
      await assert.rejects(cli(['revoke', 'ogr_000000000000000000000000']), /no OAuth grant/);
    });
  } finally {
    await d.cleanup();
  }
});
