// Shared pieces of the API's JSON Schemas: the schema type, references into the OpenAPI
// document's components, and the error object (docs/http-api.md 2.10 and section 15).

import { ERROR_CODES } from '../../errors.ts';

/** A JSON Schema (2020-12) as a plain object. */
export type JsonSchema = { [key: string]: unknown };

/** Where every named schema lives, in the OpenAPI document and in the validator alike. */
export const COMPONENTS = '#/components/schemas/';

export function ref(name: string): JsonSchema {
  return { $ref: `${COMPONENTS}${name}` };
}

/** A code host's page (repository or file) in an answer: http(s) only, whatever the host reported (repos/web-urls.ts isWebUrl). */
export const EXTERNAL_WEB_URL: JsonSchema = {
  type: 'string',
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: "The code host's page, an http(s) URL; absent when the host gave none, or gave another kind of URL.",
};

export const CONNECTION_TYPES = ['github', 'gitlab', 'gitea', 'gerrit', 'bitbucket', 'azuredevops', 'git'] as const;

export const commonSchemas: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    description: 'Every error response; the HTTP status equals statusCode.',
    properties: {
      statusCode: { type: 'integer', minimum: 400, maximum: 599 },
      errorCode: { enum: Object.keys(ERROR_CODES) },
      message: { type: 'string', minLength: 1 },
    },
    required: ['statusCode', 'errorCode', 'message'],
    additionalProperties: false,
  },
};
