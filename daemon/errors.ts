// The one error type of the service: an HTTP status, a stable error code and a message
// for people. Rendered centrally (HTTP: the error object; CLI: one line on stderr).
// Every errorCode is listed in the README's error table and in test/errors.test.ts.

export const ERROR_CODES = {
  INVALID_REQUEST_BODY: 400,
  FAILED_TO_PARSE_QUERY: 400,
  INVALID_QUERY_PARAMS: 400,
  MISSING_REQUIRED_QUERY_PARAMETER: 400,
  INVALID_GIT_REF: 400,
  NOT_AUTHENTICATED: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  INVALID_CSRF_TOKEN: 403,
  INVALID_REPOSITORY_SCOPE: 400,
  NOT_FOUND: 404,
  REPOSITORY_NOT_FOUND: 404,
  FILE_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  SCOPED_ACCESS_TOKEN_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  API_RATE_LIMIT_EXCEEDED: 429,
  UNEXPECTED_ERROR: 500,
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
