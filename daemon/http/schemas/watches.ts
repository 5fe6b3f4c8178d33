// JSON Schemas of the watches' endpoints (handlers/watches.ts; docs/watches.md).

import { NO_CONTROL_CHARACTERS } from '../../auth/control-characters.ts';
import { MAX_QUERY_BYTES } from '../../search/request.ts';
import { MAX_URL_LENGTH } from '../../watches/url-policy.ts';
import { ref, type JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };
const match: JsonSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    line: { type: 'integer', minimum: 0, description: '1-based; 0 for a file matched by its name alone.' },
    text: { type: 'string', description: 'The line, cut to its first 300 characters.' },
  },
  required: ['path', 'line', 'text'],
};

export const watchSchemas: Record<string, JsonSchema> = {
  NewWatch: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 100, pattern: NO_CONTROL_CHARACTERS, description: 'What the watch is called where it is shown.' },
      query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_BYTES, description: 'A search query, as POST /api/search takes it.' },
      isRegexEnabled: { type: 'boolean', default: false },
      isCaseSensitivityEnabled: { type: 'boolean', default: false },
      url: {
        type: 'string',
        maxLength: MAX_URL_LENGTH,
        description: 'Where each change is POSTed, signed (http or https); absent: changes are listed and streamed only.',
      },
    },
    required: ['name', 'query'],
    additionalProperties: false,
  },
  Watch: {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      query: { type: 'string' },
      isRegexEnabled: { type: 'boolean' },
      isCaseSensitivityEnabled: { type: 'boolean' },
      url: { type: 'string' },
      owner: { type: 'string', description: 'The id of the member it belongs to.' },
      createdAt: iso,
      lastChangedAt: { ...iso, description: 'When its matches last changed.' },
      delivered: { type: 'integer', description: 'Changes POSTed and answered 2xx.' },
      deadLetters: { type: 'integer', description: 'Changes given up after every attempt failed.' },
      secret: { type: 'string', description: 'Only in the answer that creates a watch with a url: the key of its X-Trawl-Signature-256 header.' },
    },
    required: ['id', 'name', 'query', 'isRegexEnabled', 'isCaseSensitivityEnabled', 'owner', 'createdAt', 'delivered', 'deadLetters'],
  },
  Watches: { type: 'array', items: ref('Watch') },
  WatchEvent: {
    type: 'object',
    description: "A change of a watch's matches in one repository.",
    properties: {
      type: { const: 'watch.matches' },
      id: { type: 'integer', description: 'Ascending per installation; the SSE event id.' },
      at: iso,
      watch: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, query: { type: 'string' } } },
      repository: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, commit: { type: 'string' } } },
      added: { type: 'array', items: match, description: 'Lines that match now and did not (as they are now).' },
      removed: { type: 'array', items: match, description: 'Lines that matched and do not now (as they were).' },
      delivery: {
        type: 'object',
        description: 'A watch with a url: how its POST went.',
        properties: {
          state: { enum: ['pending', 'delivered', 'dead', 'withheld'] },
          attempts: { type: 'integer' },
          nextAttemptAt: iso,
          lastError: { type: 'string' },
        },
      },
    },
    required: ['type', 'id', 'at', 'watch', 'repository', 'added', 'removed'],
  },
  WatchEvents: { type: 'array', items: ref('WatchEvent') },
  WatchEventsQuery: {
    type: 'object',
    properties: {
      after: { type: 'string', pattern: '^[0-9]{1,16}$', description: 'Only events with a greater id (the last one you read).' },
      limit: { type: 'string', pattern: '^[0-9]{1,4}$', description: 'At most this many, 1 to 1000 (default 100).' },
    },
    additionalProperties: false,
  },
};
