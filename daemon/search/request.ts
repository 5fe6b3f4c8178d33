// Validation of the search request body (docs/http-api.md section 10). Shared by the HTTP
// API and the CLI so that both reject the same inputs with the same messages.

import { ServiceError } from '../errors.ts';
import type { SearchRequest } from './types.ts';

export const MAX_QUERY_BYTES = 16 * 1024;
export const DEFAULT_MAX_MATCHES = 100_000;
export const MAX_CONTEXT_LINES = 100;

const FIELDS = new Set(['query', 'matches', 'contextLines', 'whole', 'isRegexEnabled', 'isCaseSensitivityEnabled']);

export function validateSearchRequest(body: unknown, maxMatches = DEFAULT_MAX_MATCHES): Required<SearchRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw bad('the request body must be a JSON object');
  }
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) {
    if (!FIELDS.has(key)) throw bad(`unknown field "${key}"; allowed: ${[...FIELDS].join(', ')}`);
  }
  if (typeof b.query !== 'string') throw bad(b.query === undefined ? 'query is required' : 'query must be a string');
  if (Buffer.byteLength(b.query) > MAX_QUERY_BYTES) throw bad(`query must be at most ${MAX_QUERY_BYTES} bytes, got ${Buffer.byteLength(b.query)}`);
  if (b.matches === undefined) throw bad('matches is required');
  const matches = integerIn('matches', b.matches, 1, maxMatches);
  const contextLines = b.contextLines === undefined ? 0 : integerIn('contextLines', b.contextLines, 0, MAX_CONTEXT_LINES);
  return {
    query: b.query,
    matches,
    contextLines,
    whole: bool('whole', b.whole),
    isRegexEnabled: bool('isRegexEnabled', b.isRegexEnabled),
    isCaseSensitivityEnabled: bool('isCaseSensitivityEnabled', b.isCaseSensitivityEnabled),
  };
}

function integerIn(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw bad(`${name} must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function bool(name: string, v: unknown): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw bad(`${name} must be a boolean, got ${JSON.stringify(v)}`);
  return v;
}

function bad(message: string): ServiceError {
  return new ServiceError('INVALID_REQUEST_BODY', message);
}
