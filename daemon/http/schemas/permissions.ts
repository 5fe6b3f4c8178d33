// JSON Schemas of the permission sync's endpoints and of members' linked code-host accounts
// (docs/http-api.md 4.8 and section 14; http/handlers/permissions.ts).

import { ref, type JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };
const count = { type: 'integer', minimum: 0 };

export const permissionSchemas: Record<string, JsonSchema> = {
  LinkedAccount: {
    type: 'object',
    properties: {
      userId: { type: 'string' },
      connection: { type: 'string', description: 'The configured connection whose code host the account is on.' },
      accountId: { type: 'string', description: "The host's id of the account." },
      login: { type: 'string' },
      email: { type: 'string', description: 'The verified email the host gave, when it gave one.' },
      linkedBy: {
        enum: ['sign-in', 'owner', 'email'],
        description: "sign-in: single sign-on with the host; owner: linked by an owner; email: the sync matched the host's verified email.",
      },
      linkedAt: iso,
      hasToken: {
        type: 'boolean',
        description: "Whether trawl holds the member's own token on the host (from signing in with it); the token itself is never shown.",
      },
      permissionsSyncedAt: {
        ...iso,
        type: ['string', 'null'],
        description: 'When what this account can read was last asked of the host completely; null: not yet.',
      },
      permissionsError: { type: ['string', 'null'], description: 'Why the last attempt failed, until one completes.' },
    },
    required: ['userId', 'connection', 'accountId', 'login', 'linkedBy', 'linkedAt', 'hasToken', 'permissionsSyncedAt', 'permissionsError'],
    additionalProperties: false,
  },
  LinkedAccounts: { type: 'array', items: ref('LinkedAccount') },
  AccountLink: {
    type: 'object',
    properties: {
      connection: { type: 'string', minLength: 1, maxLength: 200, description: 'A configured connection to a code host.' },
      login: { type: 'string', minLength: 1, maxLength: 200, description: "The member's login on that host." },
    },
    required: ['connection', 'login'],
    additionalProperties: false,
  },
  PermissionSyncRequest: {
    type: 'object',
    properties: {
      userId: { type: 'string', minLength: 1, maxLength: 64, description: "Ask only about this member's accounts." },
      repo: { type: 'string', minLength: 1, maxLength: 1000, description: 'Ask only about this repository (by name).' },
      force: { type: 'boolean', description: 'Ask about everything now, however recently it was synced (default false: only what is due).' },
      wait: { type: 'boolean', description: 'Answer when the pass has ended, with its report (default false: 202 at once).' },
    },
    additionalProperties: false,
  },
  PermissionDirection: {
    type: 'object',
    properties: { unsupported: { type: 'boolean' }, synced: count, failed: count, skipped: count },
    required: ['unsupported', 'synced', 'failed', 'skipped'],
    additionalProperties: false,
  },
  PermissionSyncReport: {
    type: 'object',
    properties: {
      startedAt: iso,
      seconds: { type: 'number', minimum: 0 },
      connections: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            connection: { type: 'string' },
            error: { type: 'string' },
            repositories: ref('PermissionDirection'),
            accounts: ref('PermissionDirection'),
            linkedByEmail: count,
          },
          required: ['connection', 'repositories', 'accounts', 'linkedByEmail'],
          additionalProperties: false,
        },
      },
    },
    required: ['startedAt', 'seconds', 'connections'],
    additionalProperties: false,
  },
  PermissionStatusQuery: {
    type: 'object',
    properties: {
      repositories: {
        type: 'boolean',
        default: false,
        description: "true: each connection's private repositories too, each with when its readers were last synced and why the last attempt failed.",
      },
    },
    additionalProperties: false,
  },
  PermissionStatus: {
    type: 'object',
    properties: {
      mode: { enum: ['all', 'code-host'] },
      intervalMs: { type: 'integer' },
      running: { type: 'boolean' },
      nextAt: { ...iso, type: ['string', 'null'] },
      last: { oneOf: [ref('PermissionSyncReport'), { type: 'null' }] },
      connections: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            connection: { type: 'string' },
            type: { type: 'string' },
            accounts: count,
            accountsSynced: count,
            accountsFailing: count,
            privateRepositories: count,
            repositoriesSynced: count,
            repositoriesFailing: count,
            repositories: {
              type: 'array',
              description: 'With ?repositories=true: the private repositories, by name.',
              items: {
                type: 'object',
                properties: {
                  repoName: { type: 'string' },
                  permissionsSyncedAt: { ...iso, type: ['string', 'null'] },
                  permissionsError: { type: ['string', 'null'] },
                },
                required: ['repoName', 'permissionsSyncedAt', 'permissionsError'],
                additionalProperties: false,
              },
            },
            errors: {
              type: 'array',
              description: 'The latest failures (at most 20), newest first.',
              items: {
                type: 'object',
                properties: { subject: { type: 'string' }, error: { type: 'string' }, at: iso },
                required: ['subject', 'error', 'at'],
                additionalProperties: false,
              },
            },
          },
          required: [
            'connection',
            'type',
            'accounts',
            'accountsSynced',
            'accountsFailing',
            'privateRepositories',
            'repositoriesSynced',
            'repositoriesFailing',
            'errors',
          ],
          additionalProperties: false,
        },
      },
    },
    required: ['mode', 'intervalMs', 'running', 'nextAt', 'last', 'connections'],
    additionalProperties: false,
  },
};
