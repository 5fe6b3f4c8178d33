// The permission parts of a daemon, assembled once (daemon.ts): what the authenticator asks
// (RepositoryPermissions, reading the store's synced permissions), the schedule that asks
// the code hosts (PermissionSyncScheduler, run only with settings.permissions "code-host"),
// and members' account links (AccountLinks). A pass's end is counted in the metrics and
// recorded in the audit log; a write of the sync makes the authenticator read the
// member's permissions again at once.

import type { AuditLog } from '../audit/log.ts';
import { RepositoryPermissions, SYNCED_TTL_MS, type RepositoryNames } from '../auth/permissions.ts';
import { TokenSeal } from '../auth/sealed-token.ts';
import type { Config } from '../config/types.ts';
import type { CodeHostOptions } from '../repos/hosts/index.ts';
import type { Logger } from '../runtime/logger.ts';
import type { Store } from '../store/store.ts';
import { AccountLinks } from './account-links.ts';
import { PermissionSyncScheduler } from './permission-scheduler.ts';
import type { PermissionSyncReport } from './permission-sync.ts';

export interface PermissionServiceOptions {
  config: Config;
  store: Store;
  /** The installation's secret: members' tokens on the hosts are sealed under it. */
  secret: Buffer;
  catalog: RepositoryNames;
  audit: AuditLog;
  log: Logger;
  now: () => Date;
  hostOptions?: CodeHostOptions;
  /** Told of every pass that ends (metrics). */
  onPass?: (report: PermissionSyncReport) => void;
}

export interface PermissionService {
  permissions: RepositoryPermissions;
  scheduler: PermissionSyncScheduler;
  links: AccountLinks;
  /** Whether the schedule runs (settings.permissions "code-host"). */
  scheduled: boolean;
}

export function permissionService(o: PermissionServiceOptions): PermissionService {
  const { config, store } = o;
  const seal = new TokenSeal(o.secret);
  // Alone, only this process writes the permissions (its sync, its links); in a cluster the
  // other nodes do too, so a member's rows are read again after a while.
  const permissions = new RepositoryPermissions(config.settings.permissions, config.permissions, o.catalog, {
    synced: store.permissions,
    ...(config.cluster ? { sharedTtlMs: SYNCED_TTL_MS } : {}),
  });
  const scheduler = new PermissionSyncScheduler({
    config,
    store,
    seal,
    log: o.log,
    now: o.now,
    ...(o.hostOptions ? { hostOptions: o.hostOptions } : {}),
    onWrite: (userId) => permissions.changed(userId),
    onEmailLink(account) {
      void o.audit.note({
        action: 'host_account.linked',
        actor: { credentialKind: 'system' },
        target: { type: 'user', id: account.userId },
        details: { connection: account.connection, login: account.login, linkedBy: 'email' },
      });
    },
    onPass(report) {
      o.onPass?.(report);
      void o.audit.note({
        action: 'permissions.synced',
        actor: { credentialKind: 'system' },
        details: { seconds: report.seconds, connections: report.connections },
      });
    },
  });
  const links = new AccountLinks({
    config,
    store,
    seal,
    audit: o.audit,
    now: o.now,
    ...(o.hostOptions ? { hostOptions: o.hostOptions } : {}),
    onLinked(userId) {
      permissions.changed(userId);
      scheduler
        .runNow({ only: { userId } })
        .catch((err: Error) => o.log.warn({ userId, err: err.message }, "a member's permissions could not be synced after a link"));
    },
  });
  const hosted = Object.values(config.connections).some((c) => c.type !== 'git');
  return { permissions, scheduler, links, scheduled: config.settings.permissions === 'code-host' && hosted };
}
