// JSON Schemas of the scoped access tokens' endpoints (docs/http-api.md 4.5–4.6 and
// section 14; http/handlers/scoped-tokens.ts).

import type { JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };

export const scopedTokenSchemas: Record<string, JsonSchema> = {
  ScopedTokenRequest: {
    type: 'object',
    properties: {
      repoIds: {
        type: 'array',
        minItems: 1,
        maxItems: 10000,
        items: { type: 'integer', minimum: 1, maximum: 2147483647 },
        description: 'Integer repository ids (GET /api/repos) the token may reach; the caller must be able to see each.',
      },
    },
    required: ['repoIds'],
    additionalProperties: false,
  },
  ScopedTokenResponse: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'Revoke with DELETE /api/ee/scoped_access_token/{id}.' },
      token: { type: 'string', pattern: '^svst_[0-9a-f]{64}$', description: 'Shown once; send it as Authorization: Bearer.' },
      createdAt: iso,
      expiresAt: { ...iso, description: 'createdAt plus exactly one hour; it cannot be extended.' },
      repoIds: { type: 'array', items: { type: 'integer' } },
    },
    required: ['id', 'token', 'createdAt', 'expiresAt', 'repoIds'],
    additionalProperties: false,
  },
};
