// JSON Schemas of the search contexts' endpoints (handlers/contexts.ts; docs/http-api.md
// 4.8 and docs/identity.md "Search contexts"). A definition has the shape of the
// configuration file's (trawl.schema.json searchContext), with the same bounds
// (config/contexts.ts), so that what the API accepts the file could hold.

import { NO_CONTROL_CHARACTERS } from '../../auth/control-characters.ts';
import { CONTEXT_DESCRIPTION_MAX, CONTEXT_GLOB_MAX, CONTEXT_NAME, CONTEXT_TOPIC_MAX, GLOBAL_CONTEXT } from '../../config/contexts.ts';
import { ref, type JsonSchema } from './common.ts';

const iso = { type: 'string', format: 'date-time' };
const list = (items: JsonSchema, description: string): JsonSchema => ({ type: 'array', items, minItems: 1, maxItems: 1000, uniqueItems: true, description });

/** A context as the API shows it: its definition's fields, where it is defined, and (made through the API) when. */
const CONTEXT_FIELDS: Record<string, JsonSchema> = {
  name: { type: 'string', pattern: CONTEXT_NAME.source, description: 'What `context:` takes.' },
  description: { type: 'string' },
  include: ref('ContextSelection'),
  exclude: ref('ContextSelection'),
  source: {
    enum: ['configuration', 'api'],
    description: 'Where it is defined: the configuration file (read-only through the API) or the API (PUT /api/contexts/{name}).',
  },
  createdAt: { ...iso, description: 'Made through the API: when it was created.' },
  updatedAt: { ...iso, description: 'Made through the API: when it was last replaced.' },
};

export const contextSchemas: Record<string, JsonSchema> = {
  ContextSelection: {
    type: 'object',
    description:
      'Repositories selected by name, by connection and by code-host topic: a repository matches when it matches one entry of one of the lists. At least one list.',
    properties: {
      repos: list(
        { type: 'string', minLength: 1, maxLength: CONTEXT_GLOB_MAX },
        'Globs over repository names as GET /api/repos lists them ("github.com/acme/api-*", "**/legacy-*"): "*" within one "/"-separated part, "**" across parts, "?" one character; without regard to case.',
      ),
      connections: list({ type: 'string', minLength: 1, maxLength: 64 }, 'Connection names of the configuration: the repositories each one found.'),
      topics: list(
        { type: 'string', pattern: `^\\S{1,${CONTEXT_TOPIC_MAX}}$` },
        'Topics the code host gives the repository; without regard to case (kept in lower case).',
      ),
    },
    minProperties: 1,
    additionalProperties: false,
  },
  ContextDefinition: {
    type: 'object',
    description: 'A search context: the repositories that match `include` (every repository when it is absent) and not `exclude`.',
    properties: {
      description: {
        type: 'string',
        maxLength: CONTEXT_DESCRIPTION_MAX,
        pattern: NO_CONTROL_CHARACTERS,
        description: 'What the context holds, shown where contexts are chosen; no control characters.',
      },
      include: ref('ContextSelection'),
      exclude: ref('ContextSelection'),
    },
    additionalProperties: false,
  },
  Context: { type: 'object', properties: CONTEXT_FIELDS, required: ['name', 'source'], additionalProperties: false },
  ContextsResponse: { type: 'array', items: ref('Context'), description: 'Every search context, by name.' },
  ContextDetail: {
    type: 'object',
    description: 'A search context, with the repositories it holds that the caller may see.',
    properties: {
      ...CONTEXT_FIELDS,
      repositories: {
        type: 'array',
        items: { type: 'string' },
        description: 'The names of the repositories the context holds now that the caller may see, by name: a context never shows more than its caller sees.',
      },
    },
    required: ['name', 'source', 'repositories'],
    additionalProperties: false,
  },
  DefaultContext: {
    type: 'object',
    properties: {
      context: {
        type: ['string', 'null'],
        description: `The caller's default search context: searches whose query names none are limited to it. null: none (every repository the caller may see, as context:${GLOBAL_CONTEXT}).`,
      },
    },
    required: ['context'],
    additionalProperties: false,
  },
  DefaultContextChange: {
    type: 'object',
    properties: {
      context: {
        type: ['string', 'null'],
        pattern: CONTEXT_NAME.source,
        description: `A context's name (GET /api/contexts lists them), or null (or "${GLOBAL_CONTEXT}") for none.`,
      },
    },
    required: ['context'],
    additionalProperties: false,
  },
};
