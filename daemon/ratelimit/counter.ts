// The seam between the rate limiter (daily-limiter.ts) and where its counters live: the
// embedded store (store-counter.ts) or Redis (redis-counter.ts), chosen by
// settings.rateLimit.store (open-counter.ts). Every implementation passes the conformance
// suite in test/ratelimit/counter-conformance.ts.

export interface TakeResult {
  /** The user's count on that day after this call. */
  count: number;
  /** Whether this request was counted (false: the limit was already reached). */
  counted: boolean;
}

export interface RateCounter {
  /**
   * Counts one request of `userId` on `day` (YYYY-MM-DD, UTC) unless `limit` requests are
   * already counted there. Exact: of any number of concurrent calls from any number of
   * processes sharing the counter, exactly `limit` are counted per user and day.
   */
  take(userId: string, day: string, limit: number): Promise<TakeResult>;
  /** The count of `userId` on `day`, 0 when none. */
  count(userId: string, day: string): Promise<number>;
  /** Forgets the days before `day` (a counter whose entries expire by themselves does nothing). */
  prune(beforeDay: string): Promise<void>;
  close(): Promise<void>;
}
