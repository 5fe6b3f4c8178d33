// Enterprise license verification (docs/identity.md "License", docs/http-api.md section 14).
//
// File format: a JSON object with two base64url strings,
//
//   {
//     "payload": "eyJpZCI6IkwtMjAyNi0wMDEiLCJsaWNlbnNlZSI6IkV4YW1wbGUgQ29ycCIsLi4ufQ",  (abridged)
//     "signature": "<86 base64url characters: the 64-byte Ed25519 signature>"
//   }
//
// `payload` decodes to a JSON object such as
//
//   {
//     "id": "L-2026-001",
//     "licensee": "Example Corp",
//     "entitlements": ["org-management", "scoped-access-tokens"],
//     "issuedAt": "2026-01-01T00:00:00Z",
//     "expiresAt": "2027-01-01T00:00:00Z"
//   }
//
// and `signature` is Ed25519 over the payload's base64url TEXT (its UTF-8 bytes), not over
// the decoded JSON: the signed bytes are exactly what the file carries, so no JSON
// canonicalisation is needed to check it. Times are ISO 8601 date-times with a zone ("Z" or
// "+hh:mm"); a license is valid from issuedAt (minus CLOCK_SKEW_MS) until, not including,
// expiresAt. Entitlement names this version does not know are kept (a newer license may
// carry them); extra payload fields are ignored. Padding ("=") on either string is accepted.
//
// A license is trusted when any trusted key verifies it: the project's own key
// (PROJECT_PUBLIC_KEY) plus the configuration's `license.publicKeys`.

import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import type { Config } from '../config/types.ts';
import { controlCharacterProblem } from './control-characters.ts';

/** Entitlements this version acts on; a license may name others. */
export const ENTITLEMENTS = ['org-management', 'scoped-access-tokens', 'oauth'] as const;
export type Entitlement = (typeof ENTITLEMENTS)[number];

/** The project's own license-signing key. The private key is held by the vendor and is not
 * in the repository; licenses signed with it are trusted without any configuration. */
export const PROJECT_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEA+ZnI6LAEIg5xtODSHiycsgMdvlUv1QPp0QT24BlFmV0=
-----END PUBLIC KEY-----
`;

/** How far issuedAt may lie in the future, so that a license issued "now" on a machine whose
 * clock runs slightly ahead still installs. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface License {
  id: string;
  licensee: string;
  entitlements: string[];
  issuedAt: string;
  expiresAt: string;
}

/** Every refusal; the message is one line that says why. */
export class LicenseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LicenseError';
  }
}

/** The keys a license may be signed with under this configuration: the project's key is #1,
 * `license.publicKeys` follow in order (error messages number them so). */
export function trustedKeys(config: Pick<Config, 'license'>): string[] {
  return [PROJECT_PUBLIC_KEY, ...config.license.publicKeys];
}

/** Parses, checks the signature against `keys`, checks the fields, then the validity period
 * at `now`. Throws LicenseError with the reason for any refusal. */
export function verifyLicense(text: string, keys: string[], now: Date): License {
  const license = readLicense(text, keys);
  const state = licenseState(license, now);
  if (!state.active) throw new LicenseError(state.reason!);
  return license;
}

/** verifyLicense without the validity period: for showing a stored license that may have
 * expired since it was installed. */
export function readLicense(text: string, keys: string[]): License {
  let file: unknown;
  try {
    file = JSON.parse(text);
  } catch {
    throw new LicenseError('license file is not JSON');
  }
  if (!isObject(file)) throw new LicenseError('license file is not a JSON object with "payload" and "signature"');
  const { payload, signature } = file;
  if (typeof payload !== 'string') throw new LicenseError('license file has no "payload" string');
  if (typeof signature !== 'string') throw new LicenseError('license file has no "signature" string');
  const payloadBytes = decodeBase64url(payload, 'payload');
  const signatureBytes = decodeBase64url(signature, 'signature');
  if (signatureBytes.length !== 64) throw new LicenseError(`license signature is ${signatureBytes.length} bytes, an Ed25519 signature is 64`);

  // The signature is checked before the payload is interpreted: nothing an untrusted party
  // wrote is read beyond its encoding.
  const signed = Buffer.from(payload, 'utf8');
  if (!keys.map(publicKey).some((key) => verify(null, signed, key, signatureBytes))) {
    throw new LicenseError(
      keys.length === 0 ? 'license cannot be verified: no trusted public keys' : 'license signature is not valid for any trusted public key',
    );
  }

  let body: unknown;
  try {
    body = JSON.parse(payloadBytes.toString('utf8'));
  } catch {
    throw new LicenseError('license payload is not JSON');
  }
  return checkPayload(body);
}

/** The payload's fields, checked; also used before signing so a vendor cannot sign a payload
 * that every daemon would refuse. */
export function checkPayload(body: unknown): License {
  if (!isObject(body)) throw new LicenseError('license payload is not a JSON object');
  const text = (name: string): string => {
    const v = body[name];
    if (v === undefined) throw new LicenseError(`license payload has no "${name}"`);
    if (typeof v !== 'string' || v.trim() === '') throw new LicenseError(`license payload "${name}" is not a non-empty string`);
    // Shown by trawl license show and recorded in the audit log.
    const problem = controlCharacterProblem(`license payload "${name}"`, v);
    if (problem !== undefined) throw new LicenseError(problem);
    return v;
  };
  const time = (name: string): string => {
    const v = text(name);
    if (isoTime(v) === undefined) throw new LicenseError(`license payload "${name}" is not an ISO 8601 date-time with a zone: "${v}"`);
    return v;
  };
  const id = text('id');
  const licensee = text('licensee');
  const entitlements = body.entitlements;
  if (entitlements === undefined) throw new LicenseError('license payload has no "entitlements"');
  if (!Array.isArray(entitlements) || !entitlements.every((e) => typeof e === 'string' && e !== '')) {
    throw new LicenseError('license payload "entitlements" is not an array of non-empty strings');
  }
  for (const e of entitlements as string[]) {
    const problem = controlCharacterProblem('license payload "entitlements"', e);
    if (problem !== undefined) throw new LicenseError(problem);
  }
  const issuedAt = time('issuedAt');
  const expiresAt = time('expiresAt');
  if (isoTime(expiresAt)! <= isoTime(issuedAt)!) throw new LicenseError(`license expires (${expiresAt}) before it is issued (${issuedAt})`);
  return { id, licensee, entitlements: [...new Set(entitlements as string[])], issuedAt, expiresAt };
}

/** Whether a (verified) license is in force at `now`. A license stored while valid becomes
 * inactive at the expiry instant itself. */
export function licenseState(license: License | undefined, now: Date): { active: boolean; reason?: string } {
  if (!license) return { active: false, reason: 'no license installed' };
  const t = now.getTime();
  if (t >= isoTime(license.expiresAt)!) return { active: false, reason: `license ${license.id} expired at ${license.expiresAt}` };
  if (t + CLOCK_SKEW_MS < isoTime(license.issuedAt)!) return { active: false, reason: `license ${license.id} is not valid until ${license.issuedAt}` };
  return { active: true };
}

export function hasEntitlement(license: License | undefined, name: string, now: Date): boolean {
  return licenseState(license, now).active && license!.entitlements.includes(name);
}

/** The license file text for `payload`, signed with an Ed25519 private key (PEM). The
 * payload is not checked here (tests sign bad ones on purpose); see checkPayload. */
export function signLicense(payload: object, privateKeyPem: string): string {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new LicenseError('signing key is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new LicenseError(`signing key is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  const encoded = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  const signature = sign(null, Buffer.from(encoded, 'utf8'), key).toString('base64url');
  return JSON.stringify({ payload: encoded, signature }, null, 2);
}

// ---------------------------------------------------------------------------------------

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Strict base64url: Buffer.from would silently skip foreign characters, and a string that
 * does not re-encode to itself has stray bits, so both are refused. */
function decodeBase64url(s: string, field: string): Buffer {
  const bare = s.replace(/={1,2}$/, '');
  if (!/^[A-Za-z0-9_-]*$/.test(bare) || bare.length % 4 === 1) throw new LicenseError(`license ${field} is not base64url`);
  const bytes = Buffer.from(bare, 'base64url');
  if (bytes.toString('base64url') !== bare || (bare !== s && s.length % 4 !== 0)) throw new LicenseError(`license ${field} is not base64url`);
  return bytes;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch, or undefined. Date.parse alone accepts "February 30". */
function isoTime(s: string): number | undefined {
  const m = ISO.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second = '0', zh = '0', zm = '0'] = m.slice(1);
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > daysInMonth) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(zh) > 23 || Number(zm) > 59) return undefined;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : t;
}

/** A trusted key, parsed; a configured key that is not Ed25519 is a configuration mistake
 * worth a refusal naming it rather than a silent "untrusted". */
function publicKey(pem: string, index: number): KeyObject {
  // createPublicKey would derive a public key from a private one; a private key in the
  // configuration is a leak to point out, not something to accept quietly.
  if (/PRIVATE KEY-----/.test(pem)) throw new LicenseError(`trusted public key #${index + 1} is a private key; configure its public key`);
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new LicenseError(`trusted public key #${index + 1} is not a PEM public key`);
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new LicenseError(`trusted public key #${index + 1} is ${key.asymmetricKeyType ?? 'not asymmetric'}, not Ed25519`);
  return key;
}
