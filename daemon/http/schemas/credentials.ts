// JSON Schemas of the credential endpoints (handlers/credentials.ts): a user's API keys
// with what each opened, creating a key, revoking a key (and everything it opened), a grant
// or a session, and "sign out everywhere". The listing's shape is auth/credential-listing.ts.

import { ref, type JsonSchema } from './common.ts';
import { NO_CONTROL_CHARACTERS } from '../../auth/control-characters.ts';
import { KEY_NAME_MAX_LENGTH } from '../../auth/key-name.ts';

const iso = { type: 'string', format: 'date-time' };
const isoOrNull = { ...iso, type: ['string', 'null'] };
const userId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: "Another user's id (owners only; GET /api/ee/users lists them). Default: the caller.",
};

export const credentialSchemas: Record<string, JsonSchema> = {
  KeysQuery: {
    type: 'object',
    properties: { userId },
    additionalProperties: false,
  },
  ListedScopedToken: {
    type: 'object',
    description: 'A live scoped access token created with the key (the token itself is never shown again).',
    properties: { id: { type: 'string' }, createdAt: iso, expiresAt: iso, repoIds: { type: 'array', items: { type: 'integer' } } },
    required: ['id', 'createdAt', 'expiresAt', 'repoIds'],
    additionalProperties: false,
  },
  ListedOAuthGrant: {
    type: 'object',
    description: 'A live OAuth grant: an application the user let in with the key (its access and refresh tokens).',
    properties: {
      id: { type: 'string', description: 'Revoke with DELETE /api/oauth_grants/{id}.' },
      clientId: { type: 'string' },
      clientName: { type: 'string', description: 'As the application registered itself (unverified).' },
      scope: { type: 'string' },
      createdAt: iso,
      lastUsedAt: { ...isoOrNull, description: 'The last use of one of its tokens (recorded at most once a minute); null: never.' },
    },
    required: ['id', 'clientId', 'clientName', 'scope', 'createdAt', 'lastUsedAt'],
    additionalProperties: false,
  },
  ListedSession: {
    type: 'object',
    description: 'A live browser session of the web UI signed in with the key.',
    properties: {
      id: { type: 'string', description: 'End it with DELETE /api/sessions/{id}.' },
      createdAt: iso,
      lastUsedAt: { ...isoOrNull, description: 'Recorded at most once a minute; null: not used since sign-in.' },
      expiresAt: iso,
      userAgent: { type: ['string', 'null'], description: "The browser's User-Agent at sign-in (at most 256 characters)." },
    },
    required: ['id', 'createdAt', 'lastUsedAt', 'expiresAt', 'userAgent'],
    additionalProperties: false,
  },
  KeyCredentials: {
    type: 'object',
    description: 'An API key and what it opened that still works. A revoked key has nothing under it.',
    properties: {
      id: { type: 'string', description: 'Revoke with DELETE /api/keys/{id}.' },
      name: { type: 'string' },
      hint: { type: 'string', description: "The key's first 12 characters, to tell keys apart (far too short to use)." },
      createdAt: iso,
      lastUsedAt: isoOrNull,
      revokedAt: isoOrNull,
      scopedTokens: { type: 'array', items: ref('ListedScopedToken') },
      oauthGrants: { type: 'array', items: ref('ListedOAuthGrant') },
      sessions: { type: 'array', items: ref('ListedSession') },
    },
    required: ['id', 'name', 'hint', 'createdAt', 'lastUsedAt', 'revokedAt', 'scopedTokens', 'oauthGrants', 'sessions'],
    additionalProperties: false,
  },
  KeysResponse: { type: 'array', items: ref('KeyCredentials'), description: "The user's API keys, oldest first." },
  KeyCreateRequest: {
    type: 'object',
    properties: {
      name: {
        type: 'string',
        minLength: 1,
        maxLength: KEY_NAME_MAX_LENGTH,
        pattern: NO_CONTROL_CHARACTERS,
        description:
          'What the key is for (shown in listings); not blank, trimmed; no control characters (C0, DEL, C1) or bidirectional marks, overrides and isolates.',
      },
    },
    required: ['name'],
    additionalProperties: false,
  },
  KeyCreated: {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'Revoke with DELETE /api/keys/{id}.' },
      name: { type: 'string' },
      key: { type: 'string', pattern: '^svk_[0-9a-f]{64}$', description: 'The key itself: shown this once, never again (only its keyed hash is stored).' },
      hint: { type: 'string', description: "The key's first 12 characters, as listings show it." },
      createdAt: iso,
    },
    required: ['id', 'name', 'key', 'hint', 'createdAt'],
    additionalProperties: false,
  },
  EndedCredentials: {
    type: 'object',
    description: 'How many live credentials of each kind were ended.',
    properties: {
      scopedTokens: { type: 'integer', minimum: 0 },
      oauthGrants: { type: 'integer', minimum: 0 },
      sessions: { type: 'integer', minimum: 0 },
    },
    required: ['scopedTokens', 'oauthGrants', 'sessions'],
    additionalProperties: false,
  },
  KeyRevoked: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      revokedAt: { ...iso, description: 'When the key was first revoked (revoking again keeps it).' },
      ended: ref('EndedCredentials'),
    },
    required: ['id', 'revokedAt', 'ended'],
    additionalProperties: false,
  },
  SignOutRequest: {
    type: 'object',
    properties: { userId },
    additionalProperties: false,
  },
  SignedOut: {
    type: 'object',
    properties: { userId: { type: 'string' }, ended: ref('EndedCredentials') },
    required: ['userId', 'ended'],
    additionalProperties: false,
  },
};
