// The daemon's maintenance rounds (every intervalMs, a minute by default), one at a time:
// a slow store does not pile rounds up. Each round collects the index files no manifest
// and no search uses any more (also those retired by `trawl index` runs, when no sync
// scheduler runs here); removes OAuth clients registered but never used,
// UNUSED_CLIENT_TTL_MS after their registration, so that a flood of registrations drains
// by itself (oauth/clients.ts); once an hour, what expired in the store
// (store/expired-records.ts); and records the failed authentications whose minute has
// passed.

import type { AuthFailures } from './audit/auth-failures.ts';
import { collectIndexGarbage } from './index/garbage.ts';
import { UNUSED_CLIENT_TTL_MS } from './oauth/clients.ts';
import type { Logger } from './runtime/logger.ts';
import { pruneExpiredRecords } from './store/expired-records.ts';
import type { Store } from './store/store.ts';

export interface MaintenanceDeps {
  dataDir: string;
  store: Store;
  logger: Logger;
  /** The index files searches still read (Searcher.inUse). */
  inUse(): Set<string>;
  now(): Date;
  /** Days the audit log keeps (settings.audit.retentionDays, read at each pruning). */
  auditRetentionDays(): number;
  failures: readonly AuthFailures[];
  intervalMs?: number;
}

/** Starts the rounds; clearInterval on the timer stops them. */
export function startMaintenance(deps: MaintenanceDeps): NodeJS.Timeout {
  const round = maintenanceRound(deps);
  let maintaining = false;
  const timer = setInterval(() => {
    if (maintaining) return;
    maintaining = true;
    void round().finally(() => (maintaining = false));
  }, deps.intervalMs ?? 60_000);
  timer.unref();
  return timer;
}

function maintenanceRound(deps: MaintenanceDeps): () => Promise<void> {
  const { store, logger } = deps;
  let lastOAuthPrune = 0;
  return async () => {
    try {
      collectIndexGarbage(deps.dataDir, deps.inUse());
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'collecting retired index files failed');
    }
    const t = deps.now().getTime();
    try {
      const gone = await store.oauth.pruneUnusedClients(new Date(t - UNUSED_CLIENT_TTL_MS).toISOString());
      if (gone > 0) logger.info({ clients: gone }, 'removed OAuth clients registered but never used');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'pruning unused OAuth clients failed');
    }
    if (t - lastOAuthPrune >= 3_600_000) {
      lastOAuthPrune = t;
      await pruneExpiredRecords(store, t, deps.auditRetentionDays(), logger);
    }
    for (const f of deps.failures) f.flush();
  };
}
