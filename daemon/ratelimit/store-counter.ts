// The counters in the embedded store's database (store/sqlite-request-counts.ts): exact
// across the daemon processes and CLI commands that share one data directory.

import type { RequestCountStore } from '../store/store.ts';
import type { RateCounter, TakeResult } from './counter.ts';

export class StoreRateCounter implements RateCounter {
  constructor(private readonly store: RequestCountStore) {}

  async take(userId: string, day: string, limit: number): Promise<TakeResult> {
    return this.store.countRequest(userId, day, limit);
  }

  async count(userId: string, day: string): Promise<number> {
    return this.store.requestCount(userId, day);
  }

  async prune(beforeDay: string): Promise<void> {
    await this.store.pruneRequestCounts(beforeDay);
  }

  /** The store belongs to the daemon, which closes it. */
  async close(): Promise<void> {}
}
