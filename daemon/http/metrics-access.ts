// Who may read GET /metrics (settings.metrics.auth):
//   "none"           anyone who reaches the port;
//   "owner"          an owner's API key (Authorization: Bearer or an API key header);
//   {"env": "NAME"}  the scrape token held in that environment variable, as
//                    `Authorization: Bearer <token>` (Prometheus's `authorization` /
//                    `bearer_token_file`), or an owner's API key.
// Unset, it follows settings.anonymousAccess: as open as the rest of the daemon ("none"
// with anonymous access on, else "owner"). The metrics themselves never name a repository
// (metrics.ts); this decides whether request volumes, latencies and index sizes are shown.

import { createHash, timingSafeEqual } from 'node:crypto';
import type { MetricsAuth, Settings } from '../config/types.ts';
import { ServiceError } from '../errors.ts';
import { readCredentials } from './auth.ts';
import { isOwnerKey } from './owner-key.ts';
import type { Authenticator } from '../auth/identity.ts';

/** A scrape token shorter than this is refused at start: it would be guessable. */
export const MIN_SCRAPE_TOKEN_LENGTH = 16;

export type MetricsGate = (headers: Readonly<Record<string, string | undefined>>) => Promise<void>;

/** The configured rule, the default applied. */
export function metricsAuth(settings: Pick<Settings, 'metrics' | 'anonymousAccess'>): MetricsAuth {
  return settings.metrics.auth ?? (settings.anonymousAccess ? 'none' : 'owner');
}

/**
 * The check GET /metrics runs first: resolves when the request may read the metrics,
 * else throws 401 NOT_AUTHENTICATED (no or a bad credential) or 403
 * INSUFFICIENT_PERMISSIONS (a valid credential of someone who is not an owner). Throws at
 * once (the daemon does not start) when the scrape token's variable is unset or short.
 */
export function metricsGate(auth: MetricsAuth, authenticator: Authenticator, env: NodeJS.ProcessEnv = process.env): MetricsGate {
  if (auth === 'none') return async () => {};
  let token: Buffer | undefined;
  if (typeof auth === 'object') {
    const value = env[auth.env];
    if (value === undefined || value === '')
      throw new Error(
        `settings.metrics.auth names the environment variable ${auth.env}, which is not set: set it to the scrape token, or choose "none" or "owner"`,
      );
    if (value.length < MIN_SCRAPE_TOKEN_LENGTH)
      throw new Error(`the scrape token in ${auth.env} is shorter than ${MIN_SCRAPE_TOKEN_LENGTH} characters: use a long random one (openssl rand -hex 32)`);
    token = digest(value);
  }
  const what = token === undefined ? "an owner's API key" : "the scrape token or an owner's API key";
  return async (headers) => {
    // Bearer credentials only: a browser's session cookie is not a scraper's.
    const sent = readCredentials(headers, true);
    if (sent.token === undefined) throw new ServiceError('NOT_AUTHENTICATED', `GET /metrics needs ${what} (Authorization: Bearer ...)`);
    if (token !== undefined && sent.via === 'bearer' && timingSafeEqual(digest(sent.token), token)) return;
    const identity = await authenticator.authenticate(sent);
    if (!isOwnerKey(identity)) {
      throw new ServiceError('INSUFFICIENT_PERMISSIONS', `GET /metrics needs ${what}; this credential is not an owner's API key`);
    }
  };
}

/** Equal-length values to compare in constant time, whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
