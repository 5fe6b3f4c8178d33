// The bounds of the tools' arguments are the REST schemas' own (read from them, so the two
// cannot drift): an argument a tool accepts is one the route accepts. `matches` is the
// exception that cannot be read here: its maximum is configured (search.maxMatches); the
// default configuration's is used and a lower configured one is the route's
// INVALID_REQUEST_BODY.

import type { JsonSchema } from '../http/schemas/common.ts';

/** A numeric keyword of a REST schema; throws when it has none (a schema changed under a tool). */
export function bound(schema: JsonSchema | undefined, key: 'maxLength' | 'minimum' | 'maximum' | 'default'): number {
  const value = schema?.[key];
  if (typeof value !== 'number') throw new Error(`REST schema without a numeric ${key}: ${JSON.stringify(schema)}`);
  return value;
}

/** The schema of one property of a named object schema. */
export const prop = (schemas: Record<string, JsonSchema>, name: string, field: string): JsonSchema | undefined =>
  (schemas[name]?.properties as Record<string, JsonSchema> | undefined)?.[field];
