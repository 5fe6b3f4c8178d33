// The discovery documents: authorization server metadata (RFC 8414) at
// /.well-known/oauth-authorization-server, protected resource metadata (RFC 9728) at
// /.well-known/oauth-protected-resource (the API) and .../api/mcp (the tool server, where
// MCP clients look first), and the WWW-Authenticate challenge of a 401 that points at the
// latter (RFC 9728 section 5.1), which is how an MCP client finds out it can sign in.

import { AUTH_METHODS, GRANT_TYPES } from './registration.ts';
import { SCOPE } from './tokens.ts';

export const ENDPOINTS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
} as const;

export const AS_METADATA_PATH = '/.well-known/oauth-authorization-server';
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
/** The resources with a metadata document: the API root and the tool server. */
export const RESOURCE_PATHS = ['', '/api/mcp'] as const;

export function authorizationServerMetadata(issuer: string): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}${ENDPOINTS.authorize}`,
    token_endpoint: `${issuer}${ENDPOINTS.token}`,
    registration_endpoint: `${issuer}${ENDPOINTS.register}`,
    revocation_endpoint: `${issuer}${ENDPOINTS.revoke}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANT_TYPES],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
    scopes_supported: [SCOPE],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${issuer}/api/openapi.json`,
  };
}

export function protectedResourceMetadata(issuer: string, path: (typeof RESOURCE_PATHS)[number]): Record<string, unknown> {
  return {
    resource: `${issuer}${path}`,
    authorization_servers: [issuer],
    scopes_supported: [SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: path === '' ? 'trawl API' : 'trawl tool server (MCP)',
    resource_documentation: `${issuer}/api/openapi.json`,
  };
}

/**
 * The WWW-Authenticate value of a 401 at `path`. With OAuth available it names the
 * resource metadata (the tool server's for /api/mcp, the API's otherwise), and says
 * invalid_token when a credential was sent (RFC 6750 section 3.1).
 */
export function challenge(issuer: string, path: string, oauth: boolean, credentialSent: boolean): string {
  const parts = ['Bearer realm="trawl"'];
  if (oauth) {
    const resource = path === '/api/mcp' || path.startsWith('/api/mcp/') ? '/api/mcp' : '';
    parts.push(`resource_metadata="${issuer}${RESOURCE_METADATA_PATH}${resource}"`, `scope="${SCOPE}"`);
  }
  if (credentialSent) parts.push('error="invalid_token"');
  return parts.join(', ');
}
