// The one error type of the service: an HTTP status, a stable error code and a message
// for people. Rendered centrally (HTTP: the error object; CLI: one line on stderr).
// Every errorCode is listed in the error table of docs/http-api.md (test/http/errors.test.ts checks it).

export const ERROR_CODES = {
  INVALID_REQUEST_BODY: 400,
  FAILED_TO_PARSE_QUERY: 400,
  INVALID_QUERY_PARAMS: 400,
  MISSING_REQUIRED_QUERY_PARAMETER: 400,
  INVALID_GIT_REF: 400,
  NOT_AUTHENTICATED: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  INVALID_CSRF_TOKEN: 403,
  CANNOT_SUSPEND_SELF: 403,
  INVALID_REPOSITORY_SCOPE: 400,
  UNKNOWN_CONTEXT: 400,
  INVALID_CONTEXT_NAME: 400,
  WATCH_TOO_BROAD: 400,
  NOT_FOUND: 404,
  REPOSITORY_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  SCOPED_ACCESS_TOKEN_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  OAUTH_GRANT_NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  CONNECTION_NOT_FOUND: 404,
  HOST_ACCOUNT_NOT_FOUND: 404,
  HOST_ACCOUNT_LINKED_ELSEWHERE: 409,
  CONTEXT_NOT_FOUND: 404,
  WATCH_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONTEXT_READ_ONLY: 409,
  REPOSITORY_NOT_SYNCABLE: 409,
  WATCH_LIMIT_REACHED: 409,
  REQUEST_TOO_LARGE: 413,
  FILE_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  API_RATE_LIMIT_EXCEEDED: 429,
  UNEXPECTED_ERROR: 500,
  CODE_HOST_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ServiceError extends Error {
  readonly statusCode: number;
  readonly errorCode: ErrorCode;
  /** HTTP headers the error response carries (Retry-After of a 429, ...). */
  readonly headers: Array<[string, string]>;

  constructor(errorCode: ErrorCode, message: string, statusCode: number = ERROR_CODES[errorCode], headers: Array<[string, string]> = []) {
    super(message);
    this.name = 'ServiceError';
    this.errorCode = errorCode;
    this.statusCode = statusCode;
    this.headers = headers;
  }

  toJSON(): { statusCode: number; errorCode: ErrorCode; message: string } {
    return { statusCode: this.statusCode, errorCode: this.errorCode, message: this.message };
  }
}

// A full disk (or a user's quota) is the one operational fault every writer shares: the
// store (SQLite says SQLITE_FULL; opening a database that no process has open fails with
// SQLITE_IOERR_SHMSIZE, its shared-memory file cannot get its pages), index files and
// mirrors (the system says ENOSPC or EDQUOT; libgit2 only puts the system's text in its
// message). Recognised here once, so that the HTTP server answers 503 and the CLI one clear
// line, whichever writer hit it.
const DISK_FULL_CODES = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE', 'ENOSPC', 'EDQUOT']);
const DISK_FULL_TEXT = /\b(?:ENOSPC|EDQUOT|SQLITE_FULL)\b|no space left on device|disk quota exceeded|database or disk is full/i;

/** Whether `err` (or an error it wraps, through `cause`) says the disk is full. */
export function isDiskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && DISK_FULL_CODES.has(code)) return true;
    if (DISK_FULL_TEXT.test(e.message)) return true;
  }
  return false;
}

/** The 503 a write that failed for a full disk answers with; undefined for any other error. */
export function diskFullError(err: unknown): ServiceError | undefined {
  if (!isDiskFull(err)) return undefined;
  return new ServiceError('SERVICE_UNAVAILABLE', 'the disk of the data directory is full: free some space and retry');
}

/**
 * What a client is answered for anything a request's handling threw: a ServiceError as it
 * is, a full disk as 503, anything else as 500 naming the request id (the details go to the
 * log only). `unexpected` tells the caller to log it as a bug; `diskFull`, as the operator's.
 */
export function answerFor(err: unknown, requestId: string): { error: ServiceError; unexpected: boolean; diskFull: boolean } {
  if (err instanceof ServiceError) return { error: err, unexpected: false, diskFull: false };
  const full = diskFullError(err);
  if (full) return { error: full, unexpected: false, diskFull: true };
  return {
    error: new ServiceError('UNEXPECTED_ERROR', `unexpected error (request id ${requestId}); the details are in the server log`),
    unexpected: true,
    diskFull: false,
  };
}

/** The message of anything thrown, for a one-line reason ("cannot read X (reason)"). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
