// API keys and the server secret (docs/http-api.md section 14).
//
// A key is "svk_" + 64 hex characters (32 random bytes), shown once at creation. The
// store keeps only HMAC-SHA256(server secret, key) in hex, so neither the database nor a
// backup of it holds a usable key, and a lookup by that hash finds the key's row. That
// lookup is the comparison, and it is constant-time where it matters: the database
// compares HMAC outputs, whose timing says nothing an attacker without the secret could
// relate to a key (the reason keyed hashes are compared instead of the keys). The
// secret is 32 random bytes generated into `<dataDir>/server-secret` (hex, mode 0600) on
// first use and never changes: losing or changing it invalidates every key.

import type { SecretStore } from '../store/store.ts';
import { createHmac, randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readBoundedText } from '../bounded-read.ts';

export const API_KEY_PREFIX = 'svk_';
const API_KEY = /^svk_[0-9a-f]{64}$/;
/** Scoped access tokens (docs/http-api.md 2.11): the same shape, prefix "svst_", one hour of life. */
export const SCOPED_TOKEN_PREFIX = 'svst_';
const SCOPED_TOKEN = /^svst_[0-9a-f]{64}$/;
export const SCOPED_TOKEN_LIFETIME_MS = 60 * 60 * 1000;
/**
 * OAuth access tokens, issued by the OAuth server (oauth/tokens.ts has their shape and
 * lifetime): the authenticator tells them from API keys by this prefix.
 */
export const ACCESS_TOKEN_PREFIX = 'svoa_';
export const SECRET_FILE = 'server-secret';
/** The largest server-secret file read: it holds 64 hex characters and a newline. */
const SECRET_MAX_BYTES = 4096;

/** A new API key: the prefix and 32 random bytes in hex. */
export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('hex')}`;
}

export function isApiKeyShape(token: string): boolean {
  return API_KEY.test(token);
}

export function newScopedToken(): string {
  return `${SCOPED_TOKEN_PREFIX}${randomBytes(32).toString('hex')}`;
}

export function isScopedTokenShape(token: string): boolean {
  return SCOPED_TOKEN.test(token);
}

/** What the store keeps of a credential. */
export function credentialHash(secret: Buffer, credential: string): string {
  return createHmac('sha256', secret).update(credential, 'utf8').digest('hex');
}

/** The first characters of a key, to tell keys apart in lists; useless as a key. */
export function keyHint(key: string): string {
  return key.slice(0, 12);
}

/**
 * The data dir's server secret, created on first use. Two processes starting at once on a
 * new data dir may race to create it: each writes a complete temporary file and hard-links
 * it into place, which fails when the file exists, so exactly one secret lands and every
 * process reads that one.
 */
export function serverSecret(dataDir: string): Buffer {
  const path = join(dataDir, SECRET_FILE);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeFileSync(fd, `${randomBytes(32).toString('hex')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  const hex = readBoundedText(path, SECRET_MAX_BYTES).trim();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error(`${path} is not a trawl server secret (64 hex characters); restore it from a backup`);
  return Buffer.from(hex, 'hex');
}

/**
 * The secret an installation hashes and signs credentials under: in a cluster
 * (config.cluster) the one every node and command shares, kept in the shared store (made
 * by the first that asked); alone, the data dir's file (serverSecret). A key created on one
 * node is then known to all of them at once.
 */
export async function installationSecret(store: SecretStore, config: { cluster?: unknown } | undefined, dataDir: string): Promise<Buffer> {
  if (!config?.cluster) return serverSecret(dataDir);
  const hex = await store.sharedSecret('server', randomBytes(32).toString('hex'));
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error("the cluster store's server secret is not 64 hex characters; restore the secrets table from a backup");
  return Buffer.from(hex, 'hex');
}
