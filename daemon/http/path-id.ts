// The {id} of a route that names one stored record (an API key, an OAuth grant, a browser
// session, a scoped token, a user): refused unless it has the form the store gives those
// ids (store/records.ts), before anything is looked up, so that whatever else a path can
// carry (a newline, an escape sequence, a long string) reaches no query, no error message
// and no audit event. The refusal is the route's own "no such record" answer: no record
// has an id of another form.

import { ServiceError, type ErrorCode } from '../errors.ts';
import { isIdOf } from '../store/records.ts';

export interface IdKind {
  /** The ids' prefix: "key", "ogr", "ses", "sat", "usr". */
  prefix: string;
  /** The route's answer for an unknown id. */
  code: ErrorCode;
  /** The record, for the message: "API key". */
  what: string;
}

export const API_KEY_ID: IdKind = { prefix: 'key', code: 'API_KEY_NOT_FOUND', what: 'API key' };
export const OAUTH_GRANT_ID: IdKind = { prefix: 'ogr', code: 'OAUTH_GRANT_NOT_FOUND', what: 'OAuth grant' };
export const SESSION_ID: IdKind = { prefix: 'ses', code: 'SESSION_NOT_FOUND', what: 'browser session' };
export const SCOPED_TOKEN_ID: IdKind = { prefix: 'sat', code: 'SCOPED_ACCESS_TOKEN_NOT_FOUND', what: 'scoped access token' };
export const USER_ID: IdKind = { prefix: 'usr', code: 'USER_NOT_FOUND', what: 'user' };

/** Whether `id` has the form of `kind`'s ids. */
export function isPathId(id: string, kind: IdKind): boolean {
  return isIdOf(kind.prefix, id);
}

/** `id` when it has the form of `kind`'s ids; otherwise the route's "no such record" error, which does not repeat it. */
export function pathId(id: string, kind: IdKind): string {
  if (!isPathId(id, kind)) throw new ServiceError(kind.code, `no ${kind.what} with that id: ${kind.what} ids are "${kind.prefix}_" and 24 hexadecimal digits`);
  return id;
}
