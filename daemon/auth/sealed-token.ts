// A member's own token on a code host, kept in the store so that the permission sync can
// ask the host what that member's account may read. It is a live credential on another
// system, so the store holds it only sealed: AES-256-GCM under a key derived (HKDF-SHA256)
// from the installation's secret with a purpose label, so neither the database nor a
// backup of it yields the token, and a sealed value cannot be moved to another purpose.
//
// Format: "v1." + base64url(12-byte nonce | ciphertext | 16-byte tag). The record's
// owner (user id and connection) is the associated data: a sealed token copied to another
// member's row does not open.

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PURPOSE = 'trawl code-host account token v1';
const PREFIX = 'v1.';

export class TokenSeal {
  readonly #key: Buffer;

  constructor(secret: Buffer) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), PURPOSE, 32));
  }

  seal(token: string, owner: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, nonce);
    cipher.setAAD(Buffer.from(owner, 'utf8'));
    const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([nonce, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The token, or undefined when `sealed` was not sealed by this installation for `owner` (or is damaged). */
  open(sealed: string, owner: string): string | undefined {
    if (!sealed.startsWith(PREFIX)) return undefined;
    const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
    if (raw.length < 12 + 16) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(owner, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}

/** The associated data of a member's token on a connection. */
export const tokenOwner = (userId: string, connection: string): string => `${userId}\n${connection}`;
