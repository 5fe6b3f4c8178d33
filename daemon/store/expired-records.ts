// The hourly pruning of what has expired in the store: OAuth codes and tokens, and browser
// sessions that expired or ended, a day after they could last be used (a late reuse is
// still recognised as one meanwhile); single sign-on flows an hour after their cookies
// expired, when they cannot come back; audit events older than the retention. Each part is
// tried on its own: one that fails is logged and the others still run.

import type { Logger } from '../runtime/logger.ts';
import type { Store } from './store.ts';

const DAY_MS = 86_400_000;

export async function pruneExpiredRecords(store: Store, now: number, auditRetentionDays: number, log: Logger): Promise<void> {
  try {
    await store.oauth.prune(new Date(now - DAY_MS).toISOString());
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'pruning expired OAuth codes and tokens failed');
  }
  try {
    await store.pruneSessions(new Date(now - DAY_MS).toISOString());
    await store.pruneSignInFlows(new Date(now - 3_600_000).toISOString());
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'pruning ended browser sessions and single sign-on flows failed');
  }
  try {
    const gone = await store.audit.prune(new Date(now - auditRetentionDays * DAY_MS).toISOString());
    if (gone > 0) log.info({ events: gone, retentionDays: auditRetentionDays }, 'removed audit events older than the retention');
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'pruning old audit events failed');
  }
}
