// The daily rate limit's seam: the HTTP server (http/server.ts) and the tool server take
// one request of a caller through a RateLimiter. The implementation: daily-limiter.ts (the
// daily limit per user, counted in counter.ts's stores).

import type { Identity } from '../auth/identity.ts';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds of the next reset (00:00 UTC). */
  reset: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `identity` to a rate-limited endpoint. Returns the counters for
   * the X-RateLimit-* headers, undefined when the request is not counted (anonymous), or
   * throws 429 API_RATE_LIMIT_EXCEEDED.
   */
  take(identity: Identity): Promise<RateLimitState | undefined>;
}
