// A watch's signing secret, and the signature of what is POSTed for it.
//
// The secret is derived, never stored: HMAC-SHA256 of the watch's salt under the
// installation's secret, so a copy of the database alone cannot sign a delivery, and the
// owner is shown the secret once, when the watch is made. The signature header is the one
// trawl's own git route verifies (X-Trawl-Signature-256: "sha256=" and the body's
// HMAC-SHA256 in hex), so a receiver checks it the way GitHub's is checked.

import { createHmac, randomBytes } from 'node:crypto';

export const SIGNATURE_HEADER = 'X-Trawl-Signature-256';

/** A new watch's salt. */
export function newSalt(): string {
  return randomBytes(16).toString('base64url');
}

/** The secret of the watch with this salt, in this installation. */
export function watchSecret(installationSecret: Buffer, salt: string): string {
  return `whsec_${createHmac('sha256', installationSecret).update(`trawl watch signing v1\n${salt}`).digest('base64url')}`;
}

/** The signature header's value for `body`. */
export function signature(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
