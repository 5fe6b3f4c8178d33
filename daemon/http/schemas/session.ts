// JSON Schemas of the web UI's browser sign-in sessions (handlers/session.ts).

import { ref, type JsonSchema } from './common.ts';

export const sessionSchemas: Record<string, JsonSchema> = {
  SessionRequest: {
    type: 'object',
    properties: {
      apiKey: { type: 'string', minLength: 1, maxLength: 256, description: 'An API key (svk_...); scoped access tokens and OAuth tokens do not sign in.' },
    },
    required: ['apiKey'],
    additionalProperties: false,
  },
  SessionUser: {
    type: 'object',
    description: 'The signed-in user.',
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      role: { enum: ['owner', 'member'] },
    },
    required: ['id', 'name', 'email', 'role'],
    additionalProperties: false,
  },
  SessionCreated: {
    type: 'object',
    properties: {
      user: ref('SessionUser'),
      csrfToken: { type: 'string', minLength: 1, description: 'Send it as the X-CSRF-Token header of every API request made with the session cookie.' },
      expiresAt: { type: 'string', format: 'date-time', description: 'Sign-in plus 12 hours; the session cannot be extended.' },
    },
    required: ['user', 'csrfToken', 'expiresAt'],
    additionalProperties: false,
  },
  SessionState: {
    type: 'object',
    properties: {
      authenticated: { type: 'boolean', description: 'Whether the request carried a valid session cookie.' },
      anonymousAccess: { type: 'boolean', description: 'Whether the API answers without credentials (public repositories only).' },
      user: ref('SessionUser'),
      csrfToken: { type: 'string', minLength: 1 },
      expiresAt: { type: 'string', format: 'date-time' },
    },
    required: ['authenticated', 'anonymousAccess'],
    additionalProperties: false,
    // Signed in: the user, the CSRF token and the expiry; otherwise none of them.
    if: { properties: { authenticated: { const: true } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords
    then: { required: ['user', 'csrfToken', 'expiresAt'] },
    else: { properties: { user: false, csrfToken: false, expiresAt: false } },
  },
};
