// The counters in Redis (settings.rateLimit.store = "redis://[user:password@]host:port[/db]"
// or "rediss://..." for TLS), for daemon processes on several hosts.
//
// Keys: `trawl:requests:<userId>:<day>` holding the count as an integer string. Each key
// expires one day after the end of its day (EXPIREAT), so nothing needs pruning and a day
// can still be inspected the day after (redis-cli GET).
//
// Exactness: one Lua script reads, compares with the limit and increments; Redis runs a
// script without interleaving any other command, so concurrent clients on any number of
// hosts cannot both see 99 and both write 100.
//
// Failure (runtime/redis-client.ts): a command is never re-sent after a dropped connection
// (it may have run; a second run would count the request twice), and nothing is queued
// while Redis is unreachable: take() rejects at once and the limiter answers 503 instead of
// letting requests through uncounted.

import type { Redis } from 'ioredis';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';
import type { RateCounter, TakeResult } from './counter.ts';

const KEY_PREFIX = 'trawl:requests:';

// KEYS[1] the counter, ARGV[1] the limit, ARGV[2] the key's expiry (Unix seconds).
// Returns { count after, 1 when counted else 0 }.
const TAKE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[1]) then return { count, 0 } end
count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('EXPIREAT', KEYS[1], ARGV[2]) end
return { count, 1 }
`;

type WithTake = Redis & { trawlTake(key: string, limit: number, expireAt: number): Promise<[number, number]> };

export interface RedisCounterOptions {
  /** Reported (once per outage) when the connection fails. */
  onError?: (err: Error) => void;
  /** How long one command may take before it fails (default 2000 ms). */
  commandTimeoutMs?: number;
}

export class RedisRateCounter implements RateCounter {
  private constructor(private readonly redis: WithTake) {}

  /** Connects (rejecting with a one-line reason when Redis cannot be reached) and checks that it answers. */
  static async connect(url: string, options: RedisCounterOptions = {}): Promise<RedisRateCounter> {
    const redis = (await connectRedis(url, { what: 'the rate-limit store', ...options })) as WithTake;
    redis.defineCommand('trawlTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    return new RedisRateCounter(redis);
  }

  async take(userId: string, day: string, limit: number): Promise<TakeResult> {
    const [count, counted] = await this.redis.trawlTake(key(userId, day), limit, expiry(day));
    return { count, counted: counted === 1 };
  }

  async count(userId: string, day: string): Promise<number> {
    return Number((await this.redis.get(key(userId, day))) ?? 0);
  }

  async prune(): Promise<void> {}

  close(): Promise<void> {
    return closeRedis(this.redis);
  }
}

function key(userId: string, day: string): string {
  return `${KEY_PREFIX}${userId}:${day}`;
}

/** The end of the day after `day`, in Unix seconds. */
function expiry(day: string): number {
  return Date.parse(`${day}T00:00:00Z`) / 1000 + 2 * 86400;
}
