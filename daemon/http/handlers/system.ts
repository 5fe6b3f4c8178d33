// System endpoints (docs/http-api.md 13.4): health, version and the OpenAPI document.
// None needs credentials and none is rate limited.

import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

export const API_VERSION = 'v5.1.6';

export function systemRoutes(s: Services): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/health',
      operationId: 'health',
      summary: 'Whether the daemon can serve',
      tag: 'System',
      response: { status: 200, schema: 'Health', description: '`{"status":"ok"}`.' },
      otherResponses: [{ status: 503, schema: 'Health', description: '`{"status":"unavailable","reason":...}`: shutting down, or the index cannot be read.' }],
      errors: [],
      rateLimited: false,
      authenticated: false,
      answersWhileDraining: true,
      async handle() {
        const reason = s.unavailable();
        return reason === undefined ? { body: { status: 'ok' } } : { status: 503, body: { status: 'unavailable', reason } };
      },
    },
    {
      method: 'GET',
      path: '/api/version',
      operationId: 'version',
      summary: "trawl's version and the API version it implements",
      tag: 'System',
      response: { status: 200, schema: 'Version', description: 'The versions.' },
      errors: [],
      rateLimited: false,
      authenticated: false,
      async handle() {
        return { body: { version: s.version, apiVersion: API_VERSION } };
      },
    },
    {
      method: 'GET',
      path: '/api/openapi.json',
      operationId: 'openapi',
      summary: 'This API as an OpenAPI 3.1 document',
      description: 'Generated from the same schemas the server validates requests with.',
      tag: 'System',
      response: { status: 200, description: 'The OpenAPI document.' },
      errors: [],
      rateLimited: false,
      authenticated: false,
      async handle() {
        return { body: s.openapi() };
      },
    },
  ];
}
