// Redirect URIs: which a client may register, how a request's redirect_uri is matched
// against them, and the redirect that carries a code or an error back.
//
// Registration (OAuth 2.1 section 2.3.1, RFC 8252 for native apps): an absolute URI
// without a fragment; https anywhere; http only to a loopback host (a native app's local
// listener); or a private-use scheme of a native app (cursor://, vscode://, ...), except
// schemes a browser would run or read locally (javascript:, data:, file:, ...).
// Matching is exact string comparison, except that a loopback http URI matches on any
// port (RFC 8252 section 7.3: the app picks a free port at each run).

import { OAuthError } from './errors.ts';

export const MAX_REDIRECT_URIS = 20;
const MAX_URI_LENGTH = 2000;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
/** Schemes that never name a client's redirect endpoint, and that a browser would execute or read locally. */
const FORBIDDEN_SCHEMES = new Set([
  'javascript:',
  'data:',
  'file:',
  'vbscript:',
  'about:',
  'blob:',
  'filesystem:',
  'view-source:',
  'ftp:',
  'ws:',
  'wss:',
  'mailto:',
  'tel:',
  'sms:',
]);

/** Why `uri` cannot be registered, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_URI_LENGTH) return `is longer than ${MAX_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (uri.includes('#')) return 'has a fragment (#), which a redirect URI may not have';
  // The URL parser drops tabs and newlines and trims spaces, so what is stored (and matched
  // exactly) would differ from where a browser goes.
  if (/[\s\u0000-\u001f\u007f]/.test(uri)) return 'contains white space or control characters';
  if (FORBIDDEN_SCHEMES.has(url.protocol)) return `uses the ${url.protocol} scheme, which cannot be a redirect target`;
  if (url.username !== '' || url.password !== '') return 'has user information (user:password@)';
  if (url.protocol === 'http:' && !LOOPBACK.has(url.hostname)) return 'uses http to a host that is not loopback (localhost, 127.0.0.1, [::1]); use https';
  return undefined;
}

/** The registered URI `requested` stands for, or undefined when it matches none. */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  if (registered.includes(requested)) return requested;
  const key = loopbackKey(requested);
  if (key === undefined) return undefined;
  return registered.some((r) => loopbackKey(r) === key) ? requested : undefined;
}

/** A loopback http URI without its port, for port-insensitive matching; undefined for any other. */
function loopbackKey(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname) || uri.includes('#')) return undefined;
  url.port = '';
  return url.href;
}

/** `uri` with `params` added to its query (keeping the query it has). */
export function redirectTo(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** Registration's check of the list as a whole. */
export function checkRedirectUris(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array of URIs');
  if (value.length > MAX_REDIRECT_URIS) throw new OAuthError('invalid_redirect_uri', `at most ${MAX_REDIRECT_URIS} redirect_uris may be registered`);
  return value.map((uri, i) => {
    if (typeof uri !== 'string') throw new OAuthError('invalid_redirect_uri', `redirect_uris[${i}] is not a string`);
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris[${i}] ${problem}: ${uri.slice(0, 200)}`);
    return uri;
  });
}
