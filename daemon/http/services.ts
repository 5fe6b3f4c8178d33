// What the route handlers share: the searcher, the repository catalog, the store, the
// search gate and the daemon's settings. Built once by the composition root (daemon/daemon.ts).

import type { AuditLog } from '../audit/log.ts';
import type { Entitlements } from '../auth/entitlements.ts';
import type { Config } from '../config/types.ts';
import type { ClusterNode } from '../cluster/node.ts';
import type { Planner } from '../search/planner.ts';
import type { SearchService } from '../search/searcher.ts';
import type { RepoRecord, Store } from '../store/store.ts';
import type { Syncing, WebhookReceiver } from '../webhooks/receiver.ts';
import type { WatchServices } from '../watches/watch-runtime.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import type { Catalog } from './catalog.ts';
import type { SearchContexts } from './contexts.ts';
import type { SearchGate } from './gate.ts';
import type { Metrics } from './metrics.ts';

export interface Services {
  /**
   * The secret credentials are hashed and signed under (auth/credentials.ts
   * installationSecret): the data dir's, or in a cluster the one all nodes share.
   * Absent in tests that build services by hand: the data dir's then.
   */
  secret?: Buffer;
  /** This daemon's cluster node; undefined when it runs alone (or has not joined yet). */
  cluster?: () => ClusterNode | undefined;
  config: Config;
  dataDir: string;
  searcher: SearchService;
  catalog: Catalog;
  /** The search contexts, and what a search may read within one (contexts.ts). */
  contexts: SearchContexts;
  store: Store;
  metrics?: Metrics;
  gate: SearchGate;
  /** Plans search queries off the main thread (search/planner.ts). */
  planner: Planner;
  /** The daily limit: the HTTP server counts rate-limited routes, the tool server each tool call. */
  rateLimiter: RateLimiter;
  /** The daemon's public address, for webUrl fields. */
  baseUrl: string;
  /** trawl's version (package.json). */
  version: string;
  /** The audit log's recorder (audit/log.ts). */
  audit: AuditLog;
  /** What the installed license grants now (enterprise endpoints, OAuth). */
  entitlements: Entitlements;
  /** The clock of credentials and licenses (injectable in tests). */
  now(): Date;
  /** Why the daemon cannot serve, or undefined when it can. */
  unavailable(): string | undefined;
  /**
   * Syncs of single repositories (sync/repo-queue.ts; in a cluster cluster/asked-syncs.ts):
   * absent where this daemon syncs nothing (no connections, sync turned off).
   */
  repoSync?: RepoSync;
  /** Watches (watches/): absent until they are started (a node of a cluster: once it joined). */
  watches?: WatchServices;
  /** The code hosts' webhook deliveries (webhooks/receiver.ts): absent where repoSync is. */
  webhooks?: Pick<WebhookReceiver, 'receive'>;
  /** The OpenAPI document (built from the routes and schemas). */
  openapi(): unknown;
}

/**
 * A repository's sync asked for by id (POST /api/repos/{id}/sync, the webhooks: request,
 * the result of the first batch, or in a cluster build, that starts after the call), and a
 * listing of the connections (listing, the webhooks' repository events).
 */
export type { WatchServices };

export interface RepoSync extends Syncing {
  /** Why the repository cannot be synced alone, or undefined (sync/repo-work.ts syncRefusal). */
  refusal(record: RepoRecord): Promise<string | undefined>;
}
