// Parameters of OAuth requests: a query string (authorization requests) or an
// application/x-www-form-urlencoded body (token, revocation, consent). RFC 6749 section
// 3.1: a parameter sent more than once is an invalid request, never "the first one wins"
// (which would let a proxy and the server read different values); an empty value counts
// as absent.

import { OAuthError } from './errors.ts';

export type Params = Map<string, string>;

export function parseParams(text: string): Params {
  const out: Params = new Map();
  const seen = new Set<string>();
  for (const [k, v] of new URLSearchParams(text)) {
    // Counted whether or not empty: "a=&a=x" is sent twice too, not "a=x".
    if (seen.has(k)) throw new OAuthError('invalid_request', `the parameter "${k}" is sent more than once`);
    seen.add(k);
    if (v !== '') out.set(k, v);
  }
  return out;
}

/** A form body; anything but application/x-www-form-urlencoded is refused. */
export function parseForm(body: Buffer | undefined, contentType: string): Params {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new OAuthError('invalid_request', `the body must be application/x-www-form-urlencoded${type ? `, not ${type}` : ''}`);
  }
  const text = (body ?? Buffer.alloc(0)).toString('utf8');
  return parseParams(text);
}

export function required(params: Params, name: string): string {
  const v = params.get(name);
  if (v === undefined) throw new OAuthError('invalid_request', `the parameter "${name}" is required`);
  return v;
}
