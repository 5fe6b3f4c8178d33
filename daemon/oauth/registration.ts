// Dynamic client registration (RFC 7591): which metadata a client may register with, and
// the answer. MCP clients register themselves on first contact, so registration is open
// (no initial access token); what a client registers gives it nothing until a user
// consents with an API key. Unknown metadata fields are ignored (RFC 7591 section 2).
//
// Accepted: redirect_uris (required; redirect.ts), client_name (shown on the consent
// page, marked as the client's own claim), token_endpoint_auth_method ("none" for a
// public client, "client_secret_basic" or "client_secret_post" for one that gets a
// secret; RFC 7591's default is client_secret_basic), grant_types within
// authorization_code and refresh_token, response_types within code, and scope (only
// "search" exists). Everything else is dropped from the stored metadata.

import { controlCharacterProblem } from '../auth/control-characters.ts';
import { OAuthError } from './errors.ts';
import { checkRedirectUris } from './redirect.ts';
import { SCOPE } from './tokens.ts';

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
const MAX_NAME = 200;

export interface Registration {
  redirectUris: string[];
  name: string;
  authMethod: AuthMethod;
  /** The metadata as it will be answered and stored (without the secret). */
  metadata: Record<string, unknown>;
}

export function readRegistration(body: unknown): Registration {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new OAuthError('invalid_client_metadata', 'the body must be a JSON object of client metadata');
  const m = body as Record<string, unknown>;
  const redirectUris = checkRedirectUris(m.redirect_uris);

  let name = 'Unnamed client';
  if (m.client_name !== undefined) {
    if (typeof m.client_name !== 'string' || m.client_name.trim() === '')
      throw new OAuthError('invalid_client_metadata', 'client_name must be a non-empty string');
    name = m.client_name.trim();
    if (name.length > MAX_NAME) throw new OAuthError('invalid_client_metadata', `client_name is longer than ${MAX_NAME} characters`);
    // The consent page, the key listings and the audit log show it.
    const problem = controlCharacterProblem('client_name', name);
    if (problem !== undefined) throw new OAuthError('invalid_client_metadata', problem);
  }

  const authMethod = (m.token_endpoint_auth_method === undefined ? 'client_secret_basic' : m.token_endpoint_auth_method) as AuthMethod;
  if (!AUTH_METHODS.includes(authMethod)) {
    throw new OAuthError('invalid_client_metadata', `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}`);
  }

  const grantTypes = subset(m.grant_types, 'grant_types', GRANT_TYPES, ['authorization_code', 'refresh_token']);
  if (!grantTypes.includes('authorization_code'))
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code (the only way to get a first token)');
  const responseTypes = subset(m.response_types, 'response_types', ['code'], ['code']);

  if (m.scope !== undefined) {
    if (typeof m.scope !== 'string') throw new OAuthError('invalid_client_metadata', 'scope must be a string of space-separated scopes');
    // Unknown scopes are not an error: the server grants "search", and says so.
  }

  return {
    redirectUris,
    name,
    authMethod,
    metadata: {
      client_name: name,
      redirect_uris: redirectUris,
      token_endpoint_auth_method: authMethod,
      grant_types: grantTypes,
      response_types: responseTypes,
      scope: SCOPE,
    },
  };
}

function subset(value: unknown, field: string, allowed: readonly string[], fallback: string[]): string[] {
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    throw new OAuthError('invalid_client_metadata', `${field} must be a non-empty array of strings`);
  }
  const bad = value.filter((v) => !allowed.includes(v));
  if (bad.length > 0) throw new OAuthError('invalid_client_metadata', `${field} may hold only ${allowed.join(', ')}; not ${bad.slice(0, 5).join(', ')}`);
  return [...new Set(value as string[])];
}
