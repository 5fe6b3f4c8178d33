// Errors of the OAuth endpoints. Their format is OAuth's, not the API's error object:
// clients (the MCP SDK among them) parse `{"error", "error_description"}` as RFC 6749
// section 5.2, RFC 7591 section 3.2.2 and RFC 7009 section 2.2 define it.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'unsupported_token_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'server_error'
  | 'temporarily_unavailable';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : error === 'temporarily_unavailable' ? 503 : 400,
    /** Sent with the error (Retry-After of a refused registration). */
    readonly headers: ReadonlyArray<[string, string]> = [],
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
