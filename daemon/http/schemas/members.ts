// JSON Schemas of the organization members' endpoints (docs/http-api.md 4.3–4.6 and
// section 14; http/handlers/members.ts).

import { ref, type JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };

export const memberSchemas: Record<string, JsonSchema> = {
  EeUserQuery: {
    type: 'object',
    properties: { userId: { type: 'string', minLength: 1, maxLength: 64, description: "The user's id (GET /api/ee/users lists them)." } },
    required: ['userId'],
    additionalProperties: false,
  },
  User: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      role: { enum: ['owner', 'member'] },
      suspendedAt: { ...iso, type: ['string', 'null'] },
      createdAt: iso,
      updatedAt: iso,
      lastActivityAt: { ...iso, type: ['string', 'null'] },
      dailyLimit: {
        type: ['integer', 'null'],
        minimum: 0,
        description: 'Requests per UTC day for this user; null: the default limit (settings.rateLimit.requestsPerDay).',
      },
      defaultContext: {
        type: ['string', 'null'],
        description: "The search context the user's searches are limited to when their query names none (PUT /api/default_context); null: none.",
      },
    },
    required: ['id', 'name', 'email', 'role', 'suspendedAt', 'createdAt', 'updatedAt', 'lastActivityAt', 'dailyLimit', 'defaultContext'],
    additionalProperties: false,
  },
  UsersResponse: { type: 'array', items: ref('User') },
  UserChange: {
    type: 'object',
    description: 'What changes; a field left out stays as it is. At least one field.',
    properties: {
      suspended: {
        type: 'boolean',
        description: 'true: suspend (every credential of the user stops working at once: 401); false: active again. You cannot suspend yourself.',
      },
      dailyLimit: { type: ['integer', 'null'], minimum: 0, maximum: 2147483647, description: 'Requests per UTC day; null: the default limit.' },
    },
    additionalProperties: false,
  },
};
