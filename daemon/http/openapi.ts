// The OpenAPI 3.1 document of the API, generated from the route table and the same schema
// objects the server validates with (validate.ts), so the document cannot drift from the
// server. Query-parameter schemas (objects of strings) become `parameters`.

import { ERROR_CODES, type ErrorCode } from '../errors.ts';
import { API_VERSION } from './handlers/system.ts';
import type { Route, RouteResponse } from './route.ts';
import { ref, type JsonSchema } from './schemas/common.ts';

/** Errors any authenticated route may answer with, besides its own. */
const AUTHENTICATED_ERRORS: ErrorCode[] = ['NOT_AUTHENTICATED', 'UNEXPECTED_ERROR'];
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per day (on counted requests).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left today.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Next reset (00:00 UTC) as Unix seconds.', schema: { type: 'integer' } },
};

export function buildOpenApi(routes: Route[], schemas: Record<string, JsonSchema>, version: string, serverUrl: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const op: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      tags: [route.tag],
    };
    if (route.description) op.description = route.description;
    if (!route.authenticated) op.security = [];
    const parameters: unknown[] = [];
    for (const seg of route.path.split('/')) {
      if (seg.startsWith('{')) parameters.push({ name: seg.slice(1, -1), in: 'path', required: true, schema: { type: 'string' } });
    }
    if (route.query) {
      const q = schemas[route.query]!;
      const required = new Set((q.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, JsonSchema>)) {
        const p: Record<string, unknown> = { name, in: 'query', required: required.has(name), schema };
        if (typeof schema.description === 'string') p.description = schema.description;
        parameters.push(p);
      }
    }
    if (parameters.length > 0) op.parameters = parameters;
    if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: ref(route.body) } } };
    const responses: Record<string, unknown> = {};
    for (const r of [route.response, ...(route.otherResponses ?? [])]) responses[String(r.status)] = response(r, route.rateLimited);
    const codes = new Set<ErrorCode>([...route.errors, ...(route.authenticated ? AUTHENTICATED_ERRORS : ['UNEXPECTED_ERROR' as const])]);
    // The browser session cookie, with its CSRF header, is accepted wherever credentials are, except on CORS routes.
    if (route.authenticated && !route.cors) codes.add('INVALID_CSRF_TOKEN');
    if (route.rateLimited) codes.add('API_RATE_LIMIT_EXCEEDED');
    if (route.body) for (const c of ['INVALID_REQUEST_BODY', 'REQUEST_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] as const) codes.add(c);
    codes.add('SERVICE_UNAVAILABLE'); // shutting down
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes) byStatus.set(ERROR_CODES[c], [...(byStatus.get(ERROR_CODES[c]) ?? []), c]);
    for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      const r: Record<string, unknown> = {
        description: `Error object; errorCode ${list.join(' or ')}.`,
        content: { 'application/json': { schema: ref('Error') } },
      };
      if (status === 429 || status === 503) r.headers = { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } };
      responses[String(status)] = r;
    }
    op.responses = responses;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'trawl code search API',
      version: API_VERSION,
      description: `trawl ${version}. Every error response is the Error object with the HTTP status equal to statusCode. Unknown paths answer 404 NOT_FOUND; a known path with another method 405 METHOD_NOT_ALLOWED with Allow.`,
    },
    servers: [{ url: serverUrl }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key (svk_...), OAuth access token or scoped access token (svst_...).' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key', description: 'An API key.' },
        sourcebotApiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Sourcebot-Api-Key',
          description: 'An API key, in the header clients written for Sourcebot send; the same rules as X-Service-Api-Key.',
        },
        browserSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'trawl_session',
          description:
            "The web UI's sign-in session (POST /api/session). Every request with it must also send the X-CSRF-Token header (else 403 INVALID_CSRF_TOKEN). Ignored when Authorization or an API key header is sent, and on the tool server and OAuth endpoints. Never counted against the daily limit.",
        },
      },
    },
    security: [{ bearer: [] }, { apiKey: [] }, { sourcebotApiKey: [] }, { browserSession: [] }, {}],
    paths,
  };
}

function response(r: RouteResponse, rateLimited: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { description: r.description };
  const headers = { ...(r.headers ?? {}), ...(rateLimited ? RATE_LIMIT_HEADERS : {}) };
  if (Object.keys(headers).length > 0) out.headers = headers;
  if (r.status !== 204) {
    const type = r.contentType ?? 'application/json';
    out.content = { [type]: { schema: r.schema ? ref(r.schema) : { type: 'object' } } };
  }
  return out;
}
