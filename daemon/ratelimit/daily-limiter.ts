// The rate limiter of docs/http-api.md section 14: per user, across all of the user's
// credentials, a daily budget (settings.rateLimit.requestsPerDay, or the user's own limit
// set with `trawl users limit`) that resets at 00:00 UTC. The HTTP server calls take() for
// every request to a rate-limited route once it has authenticated, before the request is
// parsed or run, so requests that then fail are counted too.
//
// Counted: API keys, OAuth tokens and scoped tokens. Not counted: anonymous requests and
// browser sessions (the web UI, docs/http-api.md 8.2: browser use never counts), by not
// being listed here: a credential kind added later is not counted until it is listed on
// purpose. An uncounted request gets no X-RateLimit-* headers (take() answers undefined).
//
// Over the limit the request is refused with 429 and not counted again: the count stays at
// the limit, so raising a user's limit during the day gives them exactly the difference.

import { isDiskFull, ServiceError } from '../errors.ts';
import type { CredentialKind, Identity } from '../auth/identity.ts';
import type { RateLimiter, RateLimitState } from './limiter.ts';
import type { RateCounter, TakeResult } from './counter.ts';

const COUNTED: ReadonlySet<CredentialKind> = new Set(['apiKey', 'oauth', 'scopedToken']);

export interface DailyRateLimiterOptions {
  counter: RateCounter;
  /** settings.rateLimit.requestsPerDay: the limit of users without their own. */
  defaultLimit: number;
  now: () => Date;
  /** Told when the counter fails (the request is then refused with 503). */
  onCounterError?: (err: Error) => void;
  /** Told, at most once a minute, when the counter cannot count because the disk is full (requests then go on uncounted). */
  onCounterFull?: (err: Error) => void;
}

/** How often a full disk under the counter is told (onCounterFull). */
const FULL_REPORT_EVERY_MS = 60_000;

export class DailyRateLimiter implements RateLimiter {
  private prunedBefore = '';
  private fullReportedAt = -Infinity;

  constructor(private readonly options: DailyRateLimiterOptions) {}

  async take(identity: Identity): Promise<RateLimitState | undefined> {
    if (!COUNTED.has(identity.kind) || identity.userId === undefined) return undefined;
    const now = this.options.now();
    const { day, reset } = utcDay(now);
    const limit = identity.dailyLimit ?? this.options.defaultLimit;
    let taken;
    try {
      taken = await this.options.counter.take(identity.userId, day, limit);
    } catch (err) {
      taken = isDiskFull(err) ? await this.readOnly(err as Error, identity.userId, day, limit) : undefined;
      if (taken === undefined) {
        this.options.onCounterError?.(err as Error);
        throw new ServiceError('SERVICE_UNAVAILABLE', 'the request counter of the rate limit is unavailable; retry shortly');
      }
    }
    const state: RateLimitState = { limit, remaining: Math.max(0, limit - taken.count), reset };
    if (!taken.counted) {
      const retryAfter = Math.max(1, reset - Math.floor(now.getTime() / 1000));
      throw new ServiceError('API_RATE_LIMIT_EXCEEDED', rateLimitMessage(limit), 429, [['Retry-After', String(retryAfter)], ...rateLimitHeaders(state)]);
    }
    if (this.prunedBefore !== day) {
      // Once a day per process: yesterday's counters are kept for a look the morning after.
      this.prunedBefore = day;
      const yesterday = new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
      this.options.counter.prune(yesterday).catch((err: unknown) => this.options.onCounterError?.(err as Error));
    }
    return state;
  }

  /**
   * The counter can read but not write (its disk is full): the limit is still enforced on
   * the count it holds, so a user at the limit stays refused, and a request below it goes
   * on uncounted until space returns. A full disk stops the counting, not the searches.
   * Undefined when the count cannot be read either.
   */
  private async readOnly(err: Error, userId: string, day: string, limit: number): Promise<TakeResult | undefined> {
    let count: number;
    try {
      count = await this.options.counter.count(userId, day);
    } catch {
      return undefined;
    }
    const now = this.options.now().getTime();
    if (now - this.fullReportedAt >= FULL_REPORT_EVERY_MS) {
      this.fullReportedAt = now;
      this.options.onCounterFull?.(err);
    }
    return { count, counted: count < limit };
  }
}

/** The message of docs/http-api.md section 14, word for word. */
export function rateLimitMessage(limit: number): string {
  return `API rate limit exceeded: ${limit} requests per day. The limit resets at 00:00 UTC. Ask an administrator for a higher limit.`;
}

export function rateLimitHeaders(state: RateLimitState): Array<[string, string]> {
  return [
    ['X-RateLimit-Limit', String(state.limit)],
    ['X-RateLimit-Remaining', String(state.remaining)],
    ['X-RateLimit-Reset', String(state.reset)],
  ];
}

/** The UTC day of `now` (YYYY-MM-DD) and its end, the next 00:00 UTC, in Unix seconds. */
export function utcDay(now: Date): { day: string; reset: number } {
  const start = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return { day: new Date(start).toISOString().slice(0, 10), reset: (start + 86_400_000) / 1000 };
}
