// JSON Schemas of the repository and connection lists and of the system endpoints
// (docs/http-api.md section 13).

import { CODE_HOST_TYPES } from '../../repos/hosts/types.ts';
import { CONNECTION_TYPES, EXTERNAL_WEB_URL, type JsonSchema } from './common.ts';

export const repoSchemas: Record<string, JsonSchema> = {
  ReposQuery: {
    type: 'object',
    properties: {
      page: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 1 },
      perPage: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
      sort: { enum: ['name', 'pushed'], default: 'name' },
      direction: { enum: ['asc', 'desc'], default: 'asc' },
      query: { type: 'string', maxLength: 1024, description: 'Case-insensitive substring of the repository name.' },
      connectionId: { type: 'integer', minimum: 1 },
    },
    additionalProperties: false,
  },
  Repo: {
    type: 'object',
    properties: {
      codeHostType: { enum: [...CODE_HOST_TYPES] },
      repoId: { type: 'integer' },
      repoName: { type: 'string' },
      webUrl: { type: 'string' },
      repoDisplayName: { type: 'string' },
      externalWebUrl: EXTERNAL_WEB_URL,
      imageUrl: { type: 'string' },
      indexedAt: { type: 'string', format: 'date-time' },
      pushedAt: { type: 'string', format: 'date-time' },
      defaultBranch: { type: 'string' },
      isFork: { type: 'boolean' },
      isArchived: { type: 'boolean' },
      symbolsPending: {
        type: 'boolean',
        description: 'The content is searchable; its symbol definitions (sym:, the symbols of chunks) are still being added by the build that indexed it.',
      },
      topics: {
        type: 'array',
        items: { type: 'string' },
        description: "The code host's topics of the repository, lower case (what search contexts may select by); empty when it has none.",
      },
      indexedCommit: { type: 'string', description: 'The commit of the default branch its index holds.' },
      lastEventAt: {
        type: 'string',
        format: 'date-time',
        description: 'When a webhook (or an owner) last asked for its sync; while that sync waits, the oldest such request not yet synced.',
      },
      lastEventSyncedAt: {
        type: 'string',
        format: 'date-time',
        description: 'When the sync that answered lastEventAt ended; absent while it waits, or when it failed.',
      },
      eventLagSeconds: {
        type: 'number',
        minimum: 0,
        description:
          'From lastEventAt to lastEventSyncedAt: how long the last event took to be searchable; while it waits (or failed), the time since it came.',
      },
    },
    required: ['codeHostType', 'repoId', 'repoName', 'webUrl', 'isFork', 'isArchived'],
    additionalProperties: false,
  },
  ReposResponse: { type: 'array', items: { $ref: '#/components/schemas/Repo' } },
  RepoSyncQuery: {
    type: 'object',
    properties: { wait: { type: 'boolean', default: false, description: 'Answer once the sync has ended, with its outcome (default: 202 at once).' } },
    additionalProperties: false,
  },
  RepoSyncResult: {
    type: 'object',
    properties: {
      repoId: { type: 'integer' },
      repoName: { type: 'string' },
      outcome: {
        enum: ['indexed', 'unchanged', 'failed', 'deleted', 'refused', 'backing-off'],
        description: 'indexed: what moved is searchable now; unchanged: its refs had not moved; failed: see error (its previous index keeps serving).',
      },
      error: { type: 'string' },
      seconds: { type: 'number', minimum: 0 },
    },
    required: ['repoId', 'repoName', 'outcome', 'seconds'],
    additionalProperties: false,
  },
  RepoSyncQueued: {
    type: 'object',
    properties: { repoId: { type: 'integer' }, repoName: { type: 'string' }, queued: { const: true } },
    required: ['repoId', 'repoName', 'queued'],
    additionalProperties: false,
  },
  WebhookAnswer: {
    type: 'object',
    properties: {
      outcome: {
        enum: ['queued', 'listing', 'ignored', 'replayed', 'ping'],
        description:
          "queued: the repositories' syncs; listing: the connections listed again (a repository created, renamed or deleted); ignored: nothing to do; replayed: a delivery taken before; ping: the host checking the hook.",
      },
      event: { type: 'string', description: "The host's name of the event." },
      repositories: { type: 'array', items: { type: 'string' }, description: 'The repositories whose sync was queued.' },
      unknown: { type: 'array', items: { type: 'string' }, description: 'Repositories the delivery named that its connection does not list: left alone.' },
    },
    required: ['outcome', 'event'],
    additionalProperties: false,
  },
  Connection: {
    type: 'object',
    properties: { id: { type: 'integer' }, name: { type: 'string' }, connectionType: { enum: [...CONNECTION_TYPES] } },
    required: ['id', 'name', 'connectionType'],
    additionalProperties: false,
  },
  ConnectionsResponse: { type: 'array', items: { $ref: '#/components/schemas/Connection' } },
  Health: {
    type: 'object',
    properties: { status: { enum: ['ok', 'unavailable'] }, reason: { type: 'string' } },
    required: ['status'],
    additionalProperties: false,
  },
  Version: {
    type: 'object',
    properties: { version: { type: 'string' }, apiVersion: { const: 'v5.1.6' } },
    required: ['version', 'apiVersion'],
    additionalProperties: false,
  },
  EmptyQuery: { type: 'object', additionalProperties: false },
};
