// settings.rateLimit.store → the counter: "embedded" counts in the data directory's
// database (every process on this host that shares it), a redis:// or rediss:// URL counts
// in Redis (processes on several hosts).

import type { RequestCountStore } from '../store/store.ts';
import type { RateCounter } from './counter.ts';
import { RedisRateCounter } from './redis-counter.ts';
import { StoreRateCounter } from './store-counter.ts';

export async function openRateCounter(setting: string, store: RequestCountStore, onError?: (err: Error) => void): Promise<RateCounter> {
  if (setting === 'embedded') return new StoreRateCounter(store);
  if (/^rediss?:\/\//.test(setting)) return RedisRateCounter.connect(setting, onError ? { onError } : {});
  // The configuration schema admits nothing else; this guards callers that bypass it.
  throw new Error(`settings.rateLimit.store must be "embedded" or a redis:// URL, got "${setting}"`);
}
