// Enterprise license verification (docs/identity.md "License"): what is accepted, every
// refusal and its reason, the validity period around its edges, and `trawl license`.
// Every key pair is generated here; no private key lives in the repository.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLOCK_SKEW_MS,
  ENTITLEMENTS,
  hasEntitlement,
  licenseState,
  LicenseError,
  PROJECT_PUBLIC_KEY,
  readLicense,
  signLicense,
  trustedKeys,
  verifyLicense,
  type License,
} from '../../daemon/auth/license.ts';
import { installedLicense, MemoryLicenseStore } from '../../daemon/auth/license-store.ts';
import { defaultConfig } from '../../daemon/config/load.ts';
import type { Config } from '../../daemon/config/types.ts';
import { LICENSE_HELP, licenseCommand } from '../../daemon/cli/license-command.ts';
import { UsageError } from '../../daemon/cli/usage.ts';

function keyPair(): { pub: string; priv: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { pub: publicKey.export({ type: 'spki', format: 'pem' }) as string, priv: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

const vendor = keyPair();
const other = keyPair();
const stranger = keyPair();
const NOW = new Date('2026-06-01T12:00:00Z');

const PAYLOAD: License = {
  id: 'L-2026-001',
  licensee: 'Example Corp',
  entitlements: ['org-management', 'scoped-access-tokens'],
  issuedAt: '2026-01-01T00:00:00Z',
  expiresAt: '2027-01-01T00:00:00Z',
};

/** A file whose payload is any text (not necessarily JSON), signed by `priv`. */
function rawFile(payloadText: string, priv = vendor.priv): string {
  const payload = Buffer.from(payloadText).toString('base64url');
  return JSON.stringify({ payload, signature: sign(null, Buffer.from(payload), priv).toString('base64url') });
}

const file = (fields: Record<string, unknown> = {}, priv = vendor.priv): string => signLicense({ ...PAYLOAD, ...fields }, priv);
const valid = file();
const parts = JSON.parse(valid) as { payload: string; signature: string };

/** Flip one character of a base64url string, keeping it valid base64url. */
function flip(s: string, at: number): string {
  return s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
}

function without(name: keyof License): string {
  const p: Partial<License> = { ...PAYLOAD };
  delete p[name];
  return rawFile(JSON.stringify(p));
}

// ---------------------------------------------------------------------------------------
// verifyLicense: refusals, one reason each

const refusals: Array<{ name: string; text: string; keys?: string[]; now?: Date; reason: RegExp }> = [
  {
    name: 'tampered payload',
    text: JSON.stringify({ ...parts, payload: Buffer.from(JSON.stringify({ ...PAYLOAD, entitlements: [...ENTITLEMENTS] })).toString('base64url') }),
    reason: /^license signature is not valid for any trusted public key$/,
  },
  {
    name: 'one payload character changed',
    text: JSON.stringify({ ...parts, payload: flip(parts.payload, 10) }),
    reason: /not valid for any trusted public key/,
  },
  { name: 'tampered signature', text: JSON.stringify({ ...parts, signature: flip(parts.signature, 5) }), reason: /not valid for any trusted public key/ },
  { name: 'signed with a key nobody trusts', text: file({}, stranger.priv), reason: /not valid for any trusted public key/ },
  {
    name: 'valid signature, but its key is not configured',
    text: valid,
    keys: [PROJECT_PUBLIC_KEY, other.pub],
    reason: /not valid for any trusted public key/,
  },
  { name: 'no trusted keys at all', text: valid, keys: [], reason: /^license cannot be verified: no trusted public keys$/ },
  { name: 'expired', text: file({ expiresAt: '2026-05-31T00:00:00Z' }), reason: /^license L-2026-001 expired at 2026-05-31T00:00:00Z$/ },
  { name: 'expires at this very instant', text: file({ expiresAt: NOW.toISOString() }), reason: /expired at/ },
  {
    name: 'issued beyond the clock skew',
    text: file({ issuedAt: '2026-06-01T12:05:01Z' }),
    reason: /^license L-2026-001 is not valid until 2026-06-01T12:05:01Z$/,
  },
  { name: 'license file is not JSON', text: '{"payload": ', reason: /^license file is not JSON$/ },
  { name: 'license file is an array', text: '[]', reason: /not a JSON object with "payload" and "signature"/ },
  { name: 'no payload', text: JSON.stringify({ signature: parts.signature }), reason: /no "payload" string/ },
  { name: 'signature is a number', text: JSON.stringify({ payload: parts.payload, signature: 7 }), reason: /no "signature" string/ },
  {
    name: 'payload has a character outside base64url',
    text: JSON.stringify({ ...parts, payload: `${parts.payload.slice(0, 8)}+${parts.payload.slice(9)}` }),
    reason: /^license payload is not base64url$/,
  },
  {
    name: 'signature is standard base64 with "/"',
    text: JSON.stringify({ ...parts, signature: `/${parts.signature.slice(1)}` }),
    reason: /^license signature is not base64url$/,
  },
  { name: 'payload with an impossible length', text: JSON.stringify({ ...parts, payload: 'abcde' }), reason: /^license payload is not base64url$/ },
  { name: 'payload with stray bits (not canonical)', text: JSON.stringify({ ...parts, payload: 'ab' }), reason: /^license payload is not base64url$/ },
  { name: 'wrong padding', text: JSON.stringify({ ...parts, payload: 'abc==' }), reason: /^license payload is not base64url$/ },
  {
    name: 'signature too short',
    text: JSON.stringify({ ...parts, signature: parts.signature.slice(0, 40) }),
    reason: /signature is 30 bytes, an Ed25519 signature is 64/,
  },
  { name: 'signed payload is not JSON', text: rawFile('id=L-1'), reason: /^license payload is not JSON$/ },
  { name: 'signed payload is an array', text: rawFile('[1]'), reason: /payload is not a JSON object/ },
  { name: 'missing id', text: without('id'), reason: /^license payload has no "id"$/ },
  { name: 'missing licensee', text: without('licensee'), reason: /has no "licensee"/ },
  { name: 'missing entitlements', text: without('entitlements'), reason: /has no "entitlements"/ },
  { name: 'missing issuedAt', text: without('issuedAt'), reason: /has no "issuedAt"/ },
  { name: 'missing expiresAt', text: without('expiresAt'), reason: /has no "expiresAt"/ },
  { name: 'id is a number', text: file({ id: 42 }), reason: /"id" is not a non-empty string/ },
  { name: 'licensee is empty', text: file({ licensee: ' ' }), reason: /"licensee" is not a non-empty string/ },
  {
    name: 'licensee with a newline and ESC',
    text: file({ licensee: 'Example Corp\n\u001b[2J' }),
    reason: /^license payload "licensee" may not contain control or bidirectional-override characters \(U\+000A at character 13\)$/,
  },
  { name: 'id with a right-to-left override', text: file({ id: 'L-1\u202e' }), reason: /"id" may not contain control .*U\+202E/ },
  {
    name: 'an entitlement with a C1 character',
    text: file({ entitlements: ['oauth', 'x\u009b'] }),
    reason: /"entitlements" may not contain control .*U\+009B/,
  },
  { name: 'entitlements is a string', text: file({ entitlements: 'oauth' }), reason: /"entitlements" is not an array of non-empty strings/ },
  { name: 'entitlements holds a number', text: file({ entitlements: ['oauth', 3] }), reason: /"entitlements" is not an array/ },
  { name: 'expiresAt is a number', text: file({ expiresAt: 1798761600000 }), reason: /"expiresAt" is not a non-empty string/ },
  { name: 'expiresAt has no zone', text: file({ expiresAt: '2027-01-01T00:00:00' }), reason: /"expiresAt" is not an ISO 8601 date-time with a zone/ },
  { name: 'issuedAt is only a date', text: file({ issuedAt: '2026-01-01' }), reason: /"issuedAt" is not an ISO 8601/ },
  { name: 'expiresAt is February 30', text: file({ expiresAt: '2027-02-30T00:00:00Z' }), reason: /"expiresAt" is not an ISO 8601/ },
  {
    name: 'expires before it is issued',
    text: file({ issuedAt: '2027-01-01T00:00:00Z', expiresAt: '2026-01-01T00:00:00Z' }),
    reason: /expires \(2026-01-01T00:00:00Z\) before it is issued/,
  },
  { name: 'a configured "public" key is a private key', text: valid, keys: [vendor.priv], reason: /^trusted public key #1 is a private key/ },
  {
    name: 'a configured key is not a key',
    text: valid,
    keys: [PROJECT_PUBLIC_KEY, '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----'],
    reason: /^trusted public key #2 is not a PEM public key$/,
  },
];

for (const c of refusals) {
  test(`verifyLicense refuses: ${c.name}`, () => {
    assert.throws(
      () => verifyLicense(c.text, c.keys ?? [vendor.pub], c.now ?? NOW),
      (err: unknown) => {
        assert.ok(err instanceof LicenseError, `a LicenseError, got ${String(err)}`);
        assert.match(err.message, c.reason);
        assert.ok(!err.message.includes('\n'), 'one line');
        return true;
      },
    );
  });
}

// ---------------------------------------------------------------------------------------
// verifyLicense: accepted

test('verifyLicense accepts a valid license and returns exactly its fields', () => {
  assert.deepEqual(verifyLicense(valid, [vendor.pub], NOW), PAYLOAD);
});

test('any one of several trusted keys verifies it; order does not matter', () => {
  const byOther = file({ id: 'L-other' }, other.priv);
  for (const keys of [
    [vendor.pub, other.pub],
    [other.pub, vendor.pub],
    [PROJECT_PUBLIC_KEY, stranger.pub, other.pub],
  ]) {
    assert.equal(verifyLicense(byOther, keys, NOW).id, 'L-other');
  }
});

test('accepted: unknown entitlements kept, duplicates dropped, extra fields ignored, padding, offsets, clock skew', () => {
  const text = file({
    entitlements: ['oauth', 'future-thing', 'oauth'],
    tier: 'gold',
    issuedAt: '2026-06-01T14:04:00+02:00',
    expiresAt: '2026-06-01T10:04:00.001-02:00',
  });
  const license = verifyLicense(text, [vendor.pub], NOW);
  assert.deepEqual(license.entitlements, ['oauth', 'future-thing']);
  assert.equal('tier' in license, false);
  // issuedAt 4 minutes ahead (within the skew) is fine; "=" padding on either part is too.
  const padded = JSON.parse(text) as { payload: string; signature: string };
  const pad = (s: string) => s + '='.repeat((4 - (s.length % 4)) % 4);
  const payload = pad(padded.payload);
  const repadded = JSON.stringify({ payload, signature: pad(sign(null, Buffer.from(payload), vendor.priv).toString('base64url')) });
  assert.equal(verifyLicense(repadded, [vendor.pub], NOW).id, 'L-2026-001');
});

test('trustedKeys: the project key first, then the configured ones', () => {
  const config: Config = { ...defaultConfig(), license: { publicKeys: [vendor.pub, other.pub] } };
  assert.deepEqual(trustedKeys(config), [PROJECT_PUBLIC_KEY, vendor.pub, other.pub]);
  assert.deepEqual(trustedKeys(defaultConfig()), [PROJECT_PUBLIC_KEY]);
  // The project key is a real Ed25519 key: it refuses a license it did not sign, for the right reason.
  assert.throws(() => verifyLicense(valid, [PROJECT_PUBLIC_KEY], NOW), /not valid for any trusted public key/);
});

test('signLicense round trip: the payload is base64url JSON and the signature covers its text', () => {
  const f = JSON.parse(valid) as { payload: string; signature: string };
  assert.deepEqual(Object.keys(f), ['payload', 'signature']);
  assert.deepEqual(JSON.parse(Buffer.from(f.payload, 'base64url').toString()), PAYLOAD);
  assert.equal(Buffer.from(f.signature, 'base64url').length, 64);
  assert.deepEqual(readLicense(valid, [vendor.pub]), PAYLOAD);
  assert.throws(() => signLicense(PAYLOAD, vendor.pub), /signing key is not a PEM private key/);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  assert.throws(() => signLicense(PAYLOAD, rsa), /signing key is rsa, not Ed25519/);
});

// ---------------------------------------------------------------------------------------
// The validity period, with an injected clock

test('licenseState and hasEntitlement across the expiry instant', () => {
  const license = verifyLicense(valid, [vendor.pub], NOW);
  const expiry = Date.parse(PAYLOAD.expiresAt);
  const at = (ms: number) => new Date(ms);
  assert.deepEqual(licenseState(license, at(expiry - 1)), { active: true });
  assert.equal(hasEntitlement(license, 'org-management', at(expiry - 1)), true);
  assert.equal(hasEntitlement(license, 'oauth', at(expiry - 1)), false, 'not granted');
  assert.deepEqual(licenseState(license, at(expiry)), { active: false, reason: 'license L-2026-001 expired at 2027-01-01T00:00:00Z' });
  assert.equal(hasEntitlement(license, 'org-management', at(expiry)), false);
  assert.equal(hasEntitlement(license, 'org-management', at(expiry + 86_400_000)), false);
  // Before issuedAt: active within the skew, not beyond it.
  const issued = Date.parse(PAYLOAD.issuedAt);
  assert.equal(licenseState(license, at(issued - CLOCK_SKEW_MS)).active, true);
  assert.deepEqual(licenseState(license, at(issued - CLOCK_SKEW_MS - 1)), {
    active: false,
    reason: 'license L-2026-001 is not valid until 2026-01-01T00:00:00Z',
  });
  assert.deepEqual(licenseState(undefined, NOW), { active: false, reason: 'no license installed' });
  assert.equal(hasEntitlement(undefined, 'org-management', NOW), false);
});

// ---------------------------------------------------------------------------------------
// trawl license

function cli(store = new MemoryLicenseStore(), publicKeys = [vendor.pub]) {
  const config: Config = { ...defaultConfig(), license: { publicKeys } };
  let clock = NOW;
  const lines: string[] = [];
  const run = (...argv: string[]) => licenseCommand(argv, { store, config, now: () => clock, out: (l) => lines.push(l) });
  return { store, lines, run, setNow: (d: Date) => void (clock = d) };
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-license-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('license install stores the text and reports it; show reports it until it expires', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'license.json'), valid);
  const c = cli();
  assert.equal(await c.run('install', join(dir, 'license.json'), '--config', 'ignored.json'), 0);
  assert.deepEqual(c.lines, ['license L-2026-001 for Example Corp installed: entitlements org-management, scoped-access-tokens; expires 2027-01-01T00:00:00Z']);
  assert.equal(await c.store.getLicense(), valid);

  c.lines.length = 0;
  assert.equal(await c.run('show'), 0);
  assert.deepEqual(c.lines, [
    'id:           L-2026-001',
    'licensee:     Example Corp',
    'entitlements: org-management, scoped-access-tokens',
    'issued:       2026-01-01T00:00:00Z',
    'expires:      2027-01-01T00:00:00Z',
    'status:       active',
  ]);

  c.lines.length = 0;
  c.setNow(new Date(PAYLOAD.expiresAt));
  assert.equal(await c.run('show'), 1);
  assert.equal(c.lines.at(-1), 'status:       inactive (license L-2026-001 expired at 2027-01-01T00:00:00Z)');
  assert.deepEqual((await installedLicense(c.store, [vendor.pub])).license, PAYLOAD);
});

test('license show: none installed, or no longer trusted', async () => {
  const none = cli();
  assert.equal(await none.run('show'), 1);
  assert.deepEqual(none.lines, ['no license installed']);
  const untrusted = cli(new MemoryLicenseStore(valid), [other.pub]);
  assert.equal(await untrusted.run('show'), 1);
  assert.deepEqual(untrusted.lines, ['installed license is invalid: license signature is not valid for any trusted public key']);
});

test('license install refuses with one line naming the file and the reason, and keeps the old license', async (t) => {
  const dir = tempDir(t);
  const c = cli(new MemoryLicenseStore(valid));
  const cases: Array<[string, string, RegExp]> = [
    ['expired.json', file({ expiresAt: '2026-02-01T00:00:00Z' }), /^license .*expired\.json refused: license L-2026-001 expired at 2026-02-01T00:00:00Z$/],
    ['stranger.json', file({}, stranger.priv), /^license .*stranger\.json refused: license signature is not valid for any trusted public key$/],
    ['garbage.json', 'not json', /refused: license file is not JSON$/],
  ];
  for (const [name, text, reason] of cases) {
    writeFileSync(join(dir, name), text);
    await assert.rejects(c.run('install', join(dir, name)), (err: Error) => !(err instanceof UsageError) && reason.test(err.message));
  }
  await assert.rejects(c.run('install', join(dir, 'missing.json')), /^Error: cannot read license file .*missing\.json: no such file$/);
  assert.equal(await c.store.getLicense(), valid);
  assert.deepEqual(c.lines, []);
});

test('license sign prints a file that install accepts; refuses bad payloads and keys', async (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'key.pem'), vendor.priv);
  writeFileSync(join(dir, 'payload.json'), JSON.stringify(PAYLOAD));
  const c = cli();
  assert.equal(await c.run('sign', '--key', join(dir, 'key.pem'), '--payload', join(dir, 'payload.json')), 0);
  assert.deepEqual(verifyLicense(c.lines.join('\n'), [vendor.pub], NOW), PAYLOAD);

  writeFileSync(join(dir, 'license.json'), c.lines.join('\n'));
  assert.equal(await c.run('install', join(dir, 'license.json')), 0);

  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...PAYLOAD, entitlements: 'oauth' }));
  await assert.rejects(
    c.run('sign', '--key', join(dir, 'key.pem'), '--payload', join(dir, 'bad.json')),
    /cannot sign .*bad\.json: license payload "entitlements" is not an array/,
  );
  writeFileSync(join(dir, 'notjson.json'), '{');
  await assert.rejects(c.run('sign', '--key', join(dir, 'key.pem'), '--payload', join(dir, 'notjson.json')), /payload file .*notjson\.json is not JSON$/);
  writeFileSync(join(dir, 'pub.pem'), vendor.pub);
  await assert.rejects(c.run('sign', '--key', join(dir, 'pub.pem'), '--payload', join(dir, 'payload.json')), /signing key is not a PEM private key/);
});

test('license: usage errors and help', async () => {
  const c = cli();
  const usage = async (argv: string[], message: RegExp) =>
    assert.rejects(
      c.run(...argv),
      (err: Error) => (err instanceof UsageError || (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS') === true) && message.test(err.message),
    );
  await usage([], /needs a subcommand/);
  await usage(['renew'], /unknown license subcommand "renew"/);
  await usage(['install'], /usage: trawl license install FILE/);
  await usage(['install', 'a', 'b'], /usage: trawl license install FILE/);
  await usage(['show', 'x'], /takes no arguments/);
  await usage(['sign', '--key', 'k.pem'], /usage: trawl license sign --key PRIVATE.pem --payload FILE/);
  await usage(['install', 'a', '--key', 'k.pem'], /belong to "license sign"/);
  await usage(['show', '--bogus'], /bogus/);
  assert.equal(await c.run('--help'), 0);
  assert.deepEqual(c.lines, [LICENSE_HELP]);
});
