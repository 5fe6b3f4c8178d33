// Licenses for tests: a signing key made for the test file (its public half goes into the
// daemon's configuration, license.publicKeys), licenses signed with it, and installing one
// into a data dir's store as `trawl license install` does.

import { generateKeyPairSync } from 'node:crypto';
import { signLicense } from '../../daemon/auth/license.ts';
import { openStore } from '../../daemon/store/open.ts';

export interface TestLicensor {
  /** For `config: { license: { publicKeys: [publicPem] } }`. */
  publicPem: string;
  /** A license with these entitlements, issued 2026-01-01, valid until `expiresAt`. */
  sign(entitlements: string[], expiresAt?: string): string;
}

export function testLicensor(id: string): TestLicensor {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (entitlements, expiresAt = '2099-01-01T00:00:00Z') =>
      signLicense({ id, licensee: 'Test Org', entitlements, issuedAt: '2026-01-01T00:00:00Z', expiresAt }, privatePem),
  };
}

/** Puts the license into the store of `dataDir` (the running daemon reads it from there). */
export async function installLicense(dataDir: string, text: string): Promise<void> {
  const store = openStore(dataDir);
  try {
    await store.putLicense(text);
  } finally {
    await store.close();
  }
}
