// Connecting to Redis, the one way every part of trawl that uses it does (the rate-limit
// counters, a cluster's membership and jobs): fail fast rather than queue.
//
// A command is never re-sent after a dropped connection (it may have run: an INCR run twice
// counts twice), nothing is queued while Redis is unreachable (a caller learns at once and
// decides: the limiter answers 503, a heartbeat is simply late), and the client reconnects
// in the background, at most every 2 s.

import { Redis, type RedisOptions } from 'ioredis';

export interface RedisClientOptions {
  /** Reported once per outage when the connection fails. */
  onError?: (err: Error) => void;
  /** How long one command may take before it fails (default 2000 ms). */
  commandTimeoutMs?: number;
  /** What the server is for, in the error when it cannot be reached ("the rate-limit store"). */
  what: string;
  /** Options of ioredis's own that a caller needs besides (BullMQ's connections: maxRetriesPerRequest null). */
  extra?: RedisOptions;
}

/** Connects, checks that the server answers, and rejects with a one-line reason (the URL without its password) when it does not. */
export async function connectRedis(url: string, options: RedisClientOptions): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 5000,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...options.extra,
  });
  let reported = false;
  // What the socket said: connect() itself rejects with only "Connection is closed." when
  // nothing listens, and the operator wants the reason (ECONNREFUSED, a DNS failure).
  let lastError: Error | undefined;
  redis.on('error', (err: Error) => {
    lastError = err;
    if (reported) return;
    reported = true;
    options.onError?.(err);
  });
  redis.on('ready', () => (reported = false));
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new Error(`cannot reach ${options.what} ${redactUrl(url)}: ${(lastError ?? (err as Error)).message}`);
  }
  return redis;
}

/** Closes politely, or at once when the server does not answer. */
export async function closeRedis(redis: Redis): Promise<void> {
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

/** A URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
