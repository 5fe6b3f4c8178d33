// Resource indicators (RFC 8707). A client may name the resource it wants a token for;
// trawl is one resource, its API, so any URL at or under the issuer (the MCP endpoint,
// the API root) is accepted and every token works on the whole API (docs/http-api.md section 5:
// OAuth tokens are bearer tokens of the API). Anything else is another server's resource.

import { OAuthError } from './errors.ts';

/** `value` checked against the issuer; returns it as given (it is echoed, not rewritten). */
export function acceptResource(issuer: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_target', `resource must be an absolute URL: ${value.slice(0, 200)}`);
  }
  if (url.hash !== '' || value.includes('#')) throw new OAuthError('invalid_target', 'resource may not have a fragment');
  // RFC 8707 section 2: no query either (SHOULD NOT), and nothing but a plain URL is ours.
  if (url.search !== '' || value.includes('?')) throw new OAuthError('invalid_target', 'resource may not have a query');
  if (url.username !== '' || url.password !== '') throw new OAuthError('invalid_target', 'resource may not have user information');
  const base = new URL(issuer);
  const basePath = base.pathname.replace(/\/+$/, '');
  const path = url.pathname.replace(/\/+$/, '');
  if (url.origin !== base.origin || (path !== basePath && !path.startsWith(`${basePath}/`))) {
    throw new OAuthError('invalid_target', `this server issues tokens only for its own API (${issuer}); not for ${value.slice(0, 200)}`);
  }
  return value;
}
