// The installed license, read from where it lives (the Store's LicenseStore keeps the
// file's text, re-verified on every read, so a key removed from the configuration or an
// expiry takes effect without reinstalling); MemoryLicenseStore serves the tests.

import type { LicenseStore } from '../store/store.ts';
import { readLicense, LicenseError, type License } from './license.ts';

export class MemoryLicenseStore implements LicenseStore {
  constructor(private text?: string) {}
  async getLicense(): Promise<string | undefined> {
    return this.text;
  }
  async putLicense(text: string): Promise<void> {
    this.text = text;
  }
}

/** The installed license if its signature still verifies against `keys`; otherwise why not.
 * Expiry is not judged here (licenseState does, at the moment of each use). */
export async function installedLicense(store: LicenseStore, keys: string[]): Promise<{ license?: License; reason?: string }> {
  return licenseFromText(await store.getLicense(), keys);
}

/** installedLicense of a license text already read (auth/entitlements.ts reads it once per request). */
export function licenseFromText(text: string | undefined, keys: string[]): { license?: License; reason?: string } {
  if (text === undefined) return { reason: 'no license installed' };
  try {
    return { license: readLicense(text, keys) };
  } catch (err) {
    if (err instanceof LicenseError) return { reason: `installed license is invalid: ${err.message}` };
    throw err;
  }
}
