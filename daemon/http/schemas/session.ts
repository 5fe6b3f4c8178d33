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
  SignInProvider: {
    type: 'object',
    description: 'A single sign-on provider people may sign in with: a browser starts at GET /auth/{name}/start.',
    properties: {
      name: { type: 'string', description: 'Its name in the configuration (signIn.providers), part of its sign-in addresses.' },
      displayName: { type: 'string', description: 'What its button says: "Sign in with <displayName>".' },
      type: { enum: ['oidc', 'github', 'gitlab'] },
    },
    required: ['name', 'displayName', 'type'],
    additionalProperties: false,
  },
  SignInStartQuery: {
    type: 'object',
    properties: {
      returnTo: {
        type: 'string',
        maxLength: 2000,
        description: 'The path of this site to go back to once signed in (default "/"); anything but such a path is taken as "/".',
      },
    },
    additionalProperties: false,
  },
  SessionState: {
    type: 'object',
    properties: {
      authenticated: { type: 'boolean', description: 'Whether the request carried a valid session cookie.' },
      anonymousAccess: { type: 'boolean', description: 'Whether the API answers without credentials (public repositories only).' },
      providers: {
        type: 'array',
        items: ref('SignInProvider'),
        description: "The single sign-on providers, in the configuration's order; empty: API keys only.",
      },
      user: ref('SessionUser'),
      csrfToken: { type: 'string', minLength: 1 },
      expiresAt: { type: 'string', format: 'date-time' },
    },
    required: ['authenticated', 'anonymousAccess', 'providers'],
    additionalProperties: false,
    // Signed in: the user, the CSRF token and the expiry; otherwise none of them.
    if: { properties: { authenticated: { const: true } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then/else keywords
    then: { required: ['user', 'csrfToken', 'expiresAt'] },
    else: { properties: { user: false, csrfToken: false, expiresAt: false } },
  },
};
