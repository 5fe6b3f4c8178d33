// PKCE (RFC 7636), S256 only: OAuth 2.1 drops "plain", whose challenge is the verifier.

import { createHash, timingSafeEqual } from 'node:crypto';

/** A verifier: 43 to 128 characters of the unreserved set (RFC 7636 section 4.1). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: base64url of 32 bytes, no padding. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/;

export function isChallenge(value: string): boolean {
  return CHALLENGE.test(value);
}

export function isVerifier(value: string): boolean {
  return VERIFIER.test(value);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether `verifier` answers `challenge`, compared in constant time. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isVerifier(verifier)) return false;
  const a = Buffer.from(s256(verifier));
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}
