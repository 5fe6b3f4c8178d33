// The OAuth 2.1 authorization server (oauth/), for MCP clients that sign in instead of
// taking a pasted key: discovery documents under /.well-known/, dynamic client
// registration, the authorization endpoint with its consent page, the token and
// revocation endpoints. Enterprise: everything here needs a license with the "oauth"
// entitlement (without one the documents are 404 and the endpoints 403).
//
// These endpoints speak OAuth, not the API's conventions: form-encoded requests, errors as
// {"error", "error_description"} (oauth/errors.ts), HTML pages and redirects at the
// authorization endpoint. They are not authenticated as API routes (the client and the user
// authenticate in OAuth's ways) and not rate limited (docs/http-api.md 8.9 does not list
// them).

import { isApiKeyShape } from '../../auth/credentials.ts';
import { ServiceError } from '../../errors.ts';
import { approveLocation, AuthorizePageError, AuthorizeRedirect, denyLocation, readAuthorizationRequest } from '../../oauth/authorize.ts';
import { MAX_UNUSED_CLIENTS, REGISTRATION_WINDOW_MS, REGISTRATIONS_PER_ADDRESS, registerClient, UNUSED_CLIENT_TTL_MS } from '../../oauth/clients.ts';
import { consentPage, errorPage } from '../../oauth/consent-page.ts';
import { unavailable, type OAuthContext } from '../../oauth/context.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { parseForm, parseParams } from '../../oauth/form.ts';
import {
  AS_METADATA_PATH,
  authorizationServerMetadata,
  ENDPOINTS,
  protectedResourceMetadata,
  RESOURCE_METADATA_PATH,
  RESOURCE_PATHS,
} from '../../oauth/metadata.ts';
import { revokeRequest } from '../../oauth/revocation.ts';
import { tokenRequest } from '../../oauth/token-endpoint.ts';
import { addressKey } from '../client-address.ts';
import type { Route, RouteContext, RouteResult } from '../route.ts';

const NO_STORE: Array<[string, string]> = [
  ['Cache-Control', 'no-store'],
  ['Pragma', 'no-cache'],
];
/** Pages: no framing (clickjacking), no script, no referrer leaking the request. */
const PAGE_HEADERS: Array<[string, string]> = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['Cache-Control', 'no-store'],
  ['X-Frame-Options', 'DENY'],
  ['Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Content-Type-Options', 'nosniff'],
];

export function oauthRoutes(oauth: OAuthContext): Route[] {
  // Browser-based MCP clients read discovery and call the JSON endpoints (CORS); the
  // authorization endpoint is a page the browser navigates to, and needs none.
  const base = { tag: 'OAuth', rateLimited: false, authenticated: false, cors: true } as const;

  /** A JSON endpoint: OAuth errors in OAuth's format; 403 (the API's error object) without the entitlement. */
  const jsonEndpoint =
    (fn: (ctx: RouteContext) => Promise<RouteResult>): ((ctx: RouteContext) => Promise<RouteResult>) =>
    async (ctx) => {
      const off = await unavailable(oauth);
      if (off) throw new ServiceError('INSUFFICIENT_PERMISSIONS', `OAuth needs an active license with the "oauth" entitlement (${off})`);
      try {
        return await fn(ctx);
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        // A client that cannot authenticate (token and revocation endpoints) is a failed authentication of its address.
        if (err.error === 'invalid_client') oauth.failures.add(ctx.clientAddress, 'oauthClient');
        const headers: Array<[string, string]> = [...NO_STORE, ...err.headers];
        if (err.status === 401 && ctx.headers.authorization !== undefined) headers.push(['WWW-Authenticate', 'Basic realm="trawl"']);
        return { status: err.status, body: err.toJSON(), headers };
      }
    };

  const document = (path: string, summary: string, build: (issuer: string) => Record<string, unknown>): Route => ({
    ...base,
    errors: ['NOT_FOUND'],
    method: 'GET',
    path,
    operationId: `oauthMetadata${path.replace(/[^a-z]+(.)/g, (_, c: string) => c.toUpperCase())}`,
    summary,
    response: { status: 200, description: 'The metadata document (404 without the "oauth" entitlement).' },
    async handle() {
      const off = await unavailable(oauth);
      if (off) throw new ServiceError('NOT_FOUND', `OAuth is not available on this server: ${off}`);
      return { body: build(oauth.issuer()), headers: [['Cache-Control', 'max-age=300']] };
    },
  });

  return [
    document(AS_METADATA_PATH, 'OAuth authorization server metadata (RFC 8414)', authorizationServerMetadata),
    ...RESOURCE_PATHS.map((p) =>
      document(`${RESOURCE_METADATA_PATH}${p}`, `OAuth protected resource metadata (RFC 9728) of ${p === '' ? 'the API' : 'the tool server'}`, (issuer) =>
        protectedResourceMetadata(issuer, p),
      ),
    ),
    {
      ...base,
      errors: ['INSUFFICIENT_PERMISSIONS'],
      method: 'POST',
      path: ENDPOINTS.register,
      operationId: 'oauthRegister',
      summary: 'Dynamic client registration (RFC 7591)',
      description:
        'A JSON object of client metadata: redirect_uris (required), client_name, token_endpoint_auth_method (none, client_secret_basic, client_secret_post), grant_types, response_types. 201 with client_id (and client_secret unless "none"). ' +
        `At most ${REGISTRATIONS_PER_ADDRESS} registrations per client address (an IPv6 /64) in ${REGISTRATION_WINDOW_MS / 60_000} minutes: then 429 temporarily_unavailable with Retry-After. ` +
        `Clients never used (no consent reached them) are removed ${UNUSED_CLIENT_TTL_MS / 60_000} minutes after registration; with ${MAX_UNUSED_CLIENTS} of them waiting, 503 with Retry-After.`,
      rawBody: true,
      response: { status: 201, description: 'The registered client.' },
      handle: jsonEndpoint(async (ctx) => {
        let body: unknown;
        try {
          body = JSON.parse((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
        } catch {
          throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
        }
        // Counted per client address (trusted proxies honoured), an IPv6 /64 as one.
        return { status: 201, body: await registerClient(oauth, body, addressKey(ctx.clientAddress), ctx.clientAddress), headers: [...NO_STORE] };
      }),
    },
    {
      ...base,
      errors: ['INSUFFICIENT_PERMISSIONS'],
      method: 'POST',
      path: ENDPOINTS.token,
      operationId: 'oauthToken',
      summary: 'Token endpoint: authorization_code (with PKCE) or refresh_token grants',
      description:
        'application/x-www-form-urlencoded. Access tokens live 1 hour; refresh tokens 30 days and rotate on each use (reusing one revokes the whole grant).',
      rawBody: true,
      response: { status: 200, description: 'access_token, token_type Bearer, expires_in, scope, refresh_token.' },
      handle: jsonEndpoint(async (ctx) => ({
        body: await tokenRequest(oauth, parseForm(ctx.rawBody, ctx.headers['content-type'] ?? ''), ctx.headers.authorization, ctx.clientAddress),
        headers: [...NO_STORE],
      })),
    },
    {
      ...base,
      errors: ['INSUFFICIENT_PERMISSIONS'],
      method: 'POST',
      path: ENDPOINTS.revoke,
      operationId: 'oauthRevoke',
      summary: 'Token revocation (RFC 7009); a refresh token revokes its whole grant',
      rawBody: true,
      response: { status: 200, description: 'Revoked, or there was nothing of this client to revoke.' },
      handle: jsonEndpoint(async (ctx) => {
        await revokeRequest(oauth, parseForm(ctx.rawBody, ctx.headers['content-type'] ?? ''), ctx.headers.authorization, ctx.clientAddress);
        return { body: {}, headers: [...NO_STORE] };
      }),
    },
    {
      ...base,
      errors: ['INSUFFICIENT_PERMISSIONS'],
      cors: false,
      method: 'GET',
      path: ENDPOINTS.authorize,
      operationId: 'oauthAuthorize',
      summary: 'Authorization endpoint: the consent page (sign in with an API key)',
      response: { status: 200, contentType: 'text/html', description: 'The consent page; or a redirect (302) to the client with an error.' },
      async handle(ctx) {
        await pageAsync(ctx, 302, async () => {
          const request = await readAuthorizationRequest(oauth, parseParams(ctx.rawQuery));
          ctx.reply.send(200, consentPage(request, oauth.issuer(), oauth.grantLifetimeMs), PAGE_HEADERS);
        });
        return undefined;
      },
    },
    {
      ...base,
      errors: ['INSUFFICIENT_PERMISSIONS'],
      cors: false,
      method: 'POST',
      path: ENDPOINTS.authorize,
      operationId: 'oauthConsent',
      summary: 'The consent form: allow (with the API key) or deny',
      rawBody: true,
      response: {
        status: 303,
        contentType: 'text/html',
        description: 'Back to the client with a code or access_denied; the page again when the API key is not valid.',
      },
      async handle(ctx) {
        await pageAsync(ctx, 303, async () => {
          const params = parseForm(ctx.rawBody, ctx.headers['content-type'] ?? '');
          const request = await readAuthorizationRequest(oauth, params);
          const decision = params.get('decision');
          if (decision === 'deny') return redirect(ctx, 303, denyLocation(oauth, request));
          if (decision !== 'allow') throw new AuthorizePageError('The form was not answered with Allow or Deny.');
          const key = params.get('api_key')?.trim();
          const again = (status: number, message: string) =>
            ctx.reply.send(status, consentPage(request, oauth.issuer(), oauth.grantLifetimeMs, message), PAGE_HEADERS);
          if (!key) return again(400, 'Enter your API key to allow access.');
          if (!isApiKeyShape(key)) return again(401, 'That is not an API key: keys start with svk_ (trawl keys create --user EMAIL makes one).');
          let user: { userId: string; keyId: string };
          try {
            user = await oauth.apiKeyUser(key, ctx.clientAddress);
          } catch (err) {
            if (err instanceof ServiceError && err.statusCode < 500) return again(401, `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`);
            throw err;
          }
          redirect(ctx, 303, await approveLocation(oauth, request, user, ctx.clientAddress));
        });
        return undefined;
      },
    },
  ];

  /** 302 answers a GET; 303 a POST (the browser follows it with a GET). */
  function redirect(ctx: RouteContext, status: 302 | 303, location: string): void {
    ctx.reply.send(status, '', [
      ['Location', location],
      ['Cache-Control', 'no-store'],
      ['Referrer-Policy', 'no-referrer'],
    ]);
  }

  /** Runs a page handler: the entitlement first, then AuthorizePageError as the error page and AuthorizeRedirect as a redirect. */
  async function pageAsync(ctx: RouteContext, redirectStatus: 302 | 303, fn: () => Promise<void>): Promise<void> {
    const off = await unavailable(oauth);
    if (off) {
      ctx.reply.send(403, errorPage(`Signing in with OAuth is not available on this server: ${off}.`), PAGE_HEADERS);
      return;
    }
    try {
      await fn();
    } catch (err) {
      if (err instanceof AuthorizeRedirect) redirect(ctx, redirectStatus, err.location);
      else if (err instanceof AuthorizePageError) ctx.reply.send(err.status, errorPage(err.message), PAGE_HEADERS);
      else if (err instanceof OAuthError) ctx.reply.send(err.status, errorPage(err.description), PAGE_HEADERS);
      else throw err;
    }
  }
}
