// The daemon, and the composition root: the one place that builds and wires every part
// (the HTTP server with every route, the tool server, the web UI, the searcher, the
// repository catalog, the store, the rate limit, metrics, and when the configuration has
// connections the sync scheduler with the garbage collector of retired index files).
// `trawl serve` and the tests start it here. Only bench/ and cli/ sit above it
// (test/architecture/floors.test.ts).

import { webUi } from './web/handler.ts';
import { readFileSync } from 'node:fs';
import { ServiceError } from './errors.ts';
import { ownerKeySent } from './http/owner-key.ts';
import { readiness } from './http/readiness.ts';
import { join } from 'node:path';
import { INSTALL_ROOT } from './install-root.ts';
import type { Config, Settings } from './config/types.ts';
import { IndexView } from './index/index-health.ts';
import { loadManifest, manifestVisibility, symbolsPending } from './index/manifest.ts';
import { indexSize } from './index/index-size.ts';
import { ClusterSyncScheduler } from './cluster/cluster-sync.ts';
import { closeAllRepositories } from './repos/git-repo-cache.ts';
import { SyncScheduler } from './sync/scheduler.ts';
import { askedSyncs, type RepoSyncQueue } from './sync/repo-queue.ts';
import { startWatches, type WatchRuntime } from './watches/watch-runtime.ts';
import { WebhookReceiver } from './webhooks/receiver.ts';
import { SeenDeliveries } from './webhooks/seen-deliveries.ts';
import { compoundShardSettings } from './sync/sync.ts';
import { Searcher } from './search/searcher.ts';
import { historyBeside, type HistorySearch } from './history/history-search.ts';
import { Planner } from './search/planner.ts';
import { collectHeap } from './runtime/collect-heap.ts';
import { IdleCollector } from './runtime/idle-collector.ts';
import { trimHeap } from './runtime/heap-trim.ts';
import { openConfiguredStore } from './store/open.ts';
import { startMaintenance } from './maintenance-rounds.ts';
import { ClusterNode, clusterSecret } from './cluster/node.ts';
import { nodeIdOf } from './cluster/node-id.ts';
import type { InternalRoute } from './cluster/internal-route.ts';
import { installationSecret } from './auth/credentials.ts';
import { clusterRoutes } from './http/handlers/cluster.ts';
import type { Store } from './store/store.ts';
import { StoreAuthenticator } from './auth/authenticator.ts';
import { AuditLog } from './audit/log.ts';
import { AuthFailures, countingFailures } from './audit/auth-failures.ts';
import { auditRoutes } from './http/handlers/audit.ts';
import { BrowserSessions } from './auth/browser-session.ts';
import type { LinkHostAccount } from './auth/sso/host-link.ts';
import type { Authenticator } from './auth/identity.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import type { RateCounter } from './ratelimit/counter.ts';
import { DailyRateLimiter } from './ratelimit/daily-limiter.ts';
import { openRateCounter } from './ratelimit/open-counter.ts';
import { redactUrl } from './runtime/redis-client.ts';
import { Catalog } from './http/catalog.ts';
import { SearchContexts } from './http/contexts.ts';
import { contextRoutes } from './http/handlers/contexts.ts';
import { forwardEndpoint } from './http/forward-endpoint.ts';
import { SearchGate } from './http/gate.ts';
import { browseRoutes } from './http/handlers/browse.ts';
import { historyRoutes } from './http/handlers/history.ts';
import { repoRoutes } from './http/handlers/repos.ts';
import { webhookRoutes } from './http/handlers/webhooks.ts';
import { watchRoutes } from './http/handlers/watches.ts';
import { searchRoutes } from './http/handlers/search.ts';
import { symbolRoutes } from './http/handlers/symbols.ts';
import { systemRoutes } from './http/handlers/system.ts';
import type { HttpLogger } from './http/logging.ts';
import { Metrics } from './http/metrics.ts';
import { metricsAuth, metricsGate } from './http/metrics-access.ts';
import { ClientAddresses } from './http/client-address.ts';
import { buildOpenApi } from './http/openapi.ts';
import type { Route } from './http/route.ts';
import { permissionRoutes } from './http/handlers/permissions.ts';
import { apiSchemas } from './http/schemas/api-schemas.ts';
import { permissionService, type PermissionService } from './permissions/permission-service.ts';
import type { PermissionSyncReport } from './permissions/permission-sync.ts';
import { memberRoutes } from './http/handlers/members.ts';
import { scopedTokenRoutes } from './http/handlers/scoped-tokens.ts';
import { mcpRoutes } from './mcp/endpoint.ts';
import { oauthRoutes } from './http/handlers/oauth.ts';
import { sessionRoutes } from './http/handlers/session.ts';
import { singleSignOn } from './http/handlers/sign-in.ts';
import { credentialRoutes } from './http/handlers/credentials.ts';
import { Entitlements } from './auth/entitlements.ts';
import { trustedKeys } from './auth/license.ts';
import { verifyAccessToken } from './oauth/access.ts';
import { unavailable, type OAuthContext } from './oauth/context.ts';
import { challenge } from './oauth/metadata.ts';
import { preparer } from './mcp/call.ts';
import { routeInvoker } from './mcp/invoke.ts';
import { createToolServer, MCP_MAX_SESSIONS, MCP_MAX_SESSIONS_PER_USER, MCP_SESSION_IDLE_MS } from './mcp/server.ts';
import { McpSessions } from './mcp/sessions.ts';
import { startHttpServer, type HttpServer } from './http/server.ts';
import type { Services } from './http/services.ts';
import { Validators } from './http/validate.ts';

export interface DaemonOptions {
  config: Config;
  dataDir: string;
  host: string;
  port: number;
  logger: HttpLogger;
  /** Search worker threads (default: the machine's cores). */
  workers?: number;
  /** Run the sync scheduler when the configuration has connections (default true). */
  sync?: boolean;
  /** Replace the store's authentication (tests). */
  authenticator?: Authenticator;
  /** Injectable clock for credentials, licenses and the daily rate limit (tests). */
  now?: () => Date;
  /** Replace the daily rate limit (tests). */
  rateLimiter?: RateLimiter;
  /** Caps of the tool server's sessions (tests; default MCP_MAX_SESSIONS and MCP_MAX_SESSIONS_PER_USER). */
  mcpSessions?: { max: number; perUser: number };
  /** How often retired index files and unused OAuth clients are collected, and failed authentications counted into the audit log (default a minute; tests). */
  maintenanceIntervalMs?: number;
  /** Where `{"env": NAME}` secrets of the settings are read (settings.metrics.auth); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Replace the configured store (tests: nodes of a cluster in one process sharing one). */
  store?: Store;
  /** In a cluster (config.cluster): this node's id (default: the one kept in the data dir, cluster/node-id.ts). */
  nodeId?: string;
  /** In a cluster: the URL the other nodes reach this one at (default: its listen address). */
  advertise?: string;
  /** Links a member's code host account after a single sign-on through a host provider with a connection (auth/sso/host-link.ts); absent: none is linked. */
  linkHostAccount?: LinkHostAccount;
}

export interface Daemon {
  url: string;
  port: number;
  services: Services;
  routes: Route[];
  /** This daemon's node when it is part of a cluster (config.cluster). */
  cluster?: ClusterNode;
  /** Graceful stop: refuses new requests, lets in-flight ones finish (settings.http.shutdownTimeoutMs), closes shards and the store. */
  close(): Promise<void>;
}

/** How long searches stay quiet before the threads collect their heaps (IdleCollector). */
const QUIET_MS = 3000;
/** How long after the collections the C heap is trimmed (the workers' come a message later). */
const TRIM_AFTER_MS = 1000;

export const VERSION = (JSON.parse(readFileSync(join(INSTALL_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/**
 * The daemon, assembled in steps, each a function below in this order: the store, the
 * index and its metrics, search admission, the daily limit, the audit log, the API's
 * routes, identity (the installation's secret, OAuth, browser sessions), the HTTP server,
 * the search pool, the cluster node (in a cluster), the sync scheduler (alone), the
 * maintenance rounds; then the handle whose close shuts it all down in order. When a step
 * fails, what the steps before it started is closed.
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const d = await openStore(options);
  try {
    const index = await openIndex(d);
    const admission = searchAdmission(d, index.metrics);
    const limiter = await openRateLimit(d);
    const audit = openAudit(d);
    const api = apiRoutes(d, { index, admission, limiter, audit });
    const identity = await setUpIdentity(d, api, audit);
    const url = await startHttp(d, { index, api, identity, limiter });
    startSearchPool(d, api.services, index.view);
    if (!d.config.cluster) api.services.watches = d.watches = startWatching(d, api.services, index.view, identity.authenticator);
    if (d.config.cluster) await joinCluster(d, { api, metrics: index.metrics, authenticator: identity.authenticator, url });
    startLocalSync(d, api.services, index.view);
    const failures = [audit.authFailures, audit.webhookRefusals];
    const maintenance = startMaintenance({
      dataDir: options.dataDir,
      store: d.store,
      logger: d.logger,
      now: d.now,
      inUse: () => d.searcher!.inUse(),
      auditRetentionDays: () => d.settings.audit.retentionDays,
      failures,
      ...(options.maintenanceIntervalMs === undefined ? {} : { intervalMs: options.maintenanceIntervalMs }),
    });
    return daemonHandle(d, { url, api, admission, audit, maintenance });
  } catch (err) {
    await abandon(d);
    throw err;
  }
}

/**
 * What the steps share: the options, and the parts that others reach before they exist
 * (the metrics read the searcher's load, /readyz the schedulers, the routes the cluster
 * node) or that shutting down, or a failed start, closes. Filled in as the steps run.
 */
interface Assembly {
  readonly options: DaemonOptions;
  readonly config: Config;
  readonly settings: Settings;
  readonly logger: HttpLogger;
  /** The clock of credentials, licenses and the daily limit. */
  readonly now: () => Date;
  readonly store: Store;
  readonly planner: Planner;
  /** Set once shutting down has begun: every request is then refused (Services.unavailable). */
  stopping: boolean;
  counter?: RateCounter;
  server?: HttpServer;
  searcher?: Searcher;
  history?: HistorySearch;
  node?: ClusterNode;
  clusterSync?: ClusterSyncScheduler;
  scheduler?: SyncScheduler;
  repoQueue?: RepoSyncQueue;
  watches?: WatchRuntime;
  permissions?: PermissionService;
}

/** The store (the configured one unless the options give one), and the query planner. */
async function openStore(options: DaemonOptions): Promise<Assembly> {
  const { config, dataDir, logger } = options;
  const settings = config.settings;
  const store: Store = options.store ?? openConfiguredStore(config, dataDir);
  if (!settings.anonymousAccess && (await store.listUsers()).length === 0) {
    logger.warn(
      {},
      'anonymous access is off and there are no users yet: every API request will be refused (401) until you run trawl users add and trawl keys create',
    );
  }
  // Queries are planned on threads of their own unless searches run in this thread (tests).
  const planner = new Planner({ threads: options.workers === 0 ? 0 : undefined });
  return { options, config, settings, logger, now: options.now ?? (() => new Date()), store, planner, stopping: false };
}

interface IndexParts {
  view: IndexView;
  catalog: Catalog;
  metrics: Metrics;
}

/**
 * One view of the index for the catalog, the searcher and the metrics: a damaged
 * repository is logged once, counted, and left out of all three.
 */
async function openIndex(d: Assembly): Promise<IndexParts> {
  const { config, logger, store } = d;
  const dataDir = d.options.dataDir;
  let records: Catalog | undefined;
  const view: IndexView = new IndexView(dataDir, {
    onBroken: (b) =>
      logger.error(
        { repoId: b.repoId, ...(b.name ? { repo: b.name } : {}), reason: b.reason },
        'repository index is damaged: left out of searches and listings until it is re-indexed (the next sync, or trawl index)',
      ),
    onShardError: () => metrics.shardErrors.inc(),
    // The store's records as the catalog last read them (a sync hook: the view is read on every request).
    lookup: (id) => {
      const r = records?.recordOf(id);
      return r && { name: r.repoName, visibility: r.visibility };
    },
  });
  // In a cluster the catalog lists the cluster's published repositories, whichever nodes
  // hold them (this data dir's own until the node has joined).
  const catalog = new Catalog(dataDir, store, view, config.cluster ? { current: () => d.node?.view.catalogManifests() ?? view.current() } : undefined);
  records = catalog;
  await catalog.refresh();
  const metrics: Metrics = new Metrics({
    store,
    indexSize: () => indexSize(view),
    brokenRepos: () => view.current().broken.length,
    searchLoad: () => d.searcher?.load() ?? { busy: 0, queued: 0 },
  });
  return { view, catalog, metrics };
}

interface Admission {
  idle: IdleCollector;
  gate: SearchGate;
}

/** The gate searches wait at (settings.search), which tells the idle collector when they go quiet. */
function searchAdmission(d: Assembly, metrics: Metrics): Admission {
  const search = d.settings.search;
  // Once searches have gone quiet, every thread collects its heap: what a burst left
  // (reply buffers, stream chunks) goes back instead of staying resident while idle.
  // The workers collect when their message arrives; what the collections free goes
  // back to the C heap, whose free pages are then given back to the system.
  const idle = new IdleCollector(QUIET_MS, () => {
    collectHeap();
    d.searcher?.collectHeaps();
    setTimeout(trimHeap, TRIM_AFTER_MS).unref();
  });
  const gate = new SearchGate(
    { concurrent: search.maxConcurrent, queued: search.maxQueued, perCaller: search.maxConcurrentPerCaller, perCallerQueued: search.maxQueuedPerCaller },
    (running, waiting) => {
      metrics.running.set(running);
      metrics.queue.set(waiting);
      if (running + waiting > 0) idle.busy();
      else idle.quiet();
    },
    () => metrics.rejected.inc(),
  );
  return { idle, gate };
}

/** The daily limit: the options' (tests), or one counting in the configured store (settings.rateLimit). */
async function openRateLimit(d: Assembly): Promise<RateLimiter> {
  if (d.options.rateLimiter) return d.options.rateLimiter;
  const { config, settings, logger } = d;
  // In a cluster "embedded" means the cluster's Redis: every node counts in one place,
  // and one Lua take there costs less than a PostgreSQL transaction per request.
  const counterAt = settings.rateLimit.store === 'embedded' && config.cluster ? config.cluster.redis : settings.rateLimit.store;
  const where = counterAt === 'embedded' ? 'embedded' : redactUrl(counterAt);
  const onCounterError = (err: Error) =>
    logger.error({ err: err.message, store: where }, 'rate-limit counter failed: counted requests get 503 until it is back');
  d.counter = await openRateCounter(counterAt, d.store, onCounterError);
  const onCounterFull = (err: Error) =>
    logger.error(
      { err: err.message, store: where },
      'the disk under the rate-limit counter is full: requests below their limit go on uncounted until space returns (logged at most once a minute)',
    );
  return new DailyRateLimiter({ counter: d.counter, defaultLimit: settings.rateLimit.requestsPerDay, now: d.now, onCounterError, onCounterFull });
}

interface Auditing {
  audit: AuditLog;
  authFailures: AuthFailures;
  /** Refused webhook deliveries, counted the same way (webhooks/receiver.ts). */
  webhookRefusals: AuthFailures;
}

/**
 * The audit log: strict for changes (audit/log.ts); a best-effort note that cannot be
 * written is logged, at most once a minute. Failed authentications are counted into it.
 */
function openAudit(d: Assembly): Auditing {
  const audit = new AuditLog(d.store, d.now, (err, action) =>
    d.logger.warn({ err: err.message, action }, 'an audit event could not be written; what it records went ahead (logged at most once a minute)'),
  );
  return {
    audit,
    authFailures: new AuthFailures({ log: audit, now: d.now }),
    webhookRefusals: new AuthFailures({ log: audit, now: d.now, action: 'webhook.refused' }),
  };
}

interface Api {
  services: Services;
  routes: Route[];
  validators: Validators;
  mcp: McpSessions;
  /** A cluster's node-to-node endpoints: filled once the node has joined (joinCluster). */
  internal: InternalRoute[];
}

/** What the routes serve with (Services), the API's routes, and the tool server, which answers through them. */
function apiRoutes(d: Assembly, parts: { index: IndexParts; admission: Admission; limiter: RateLimiter; audit: Auditing }): Api {
  const { config, options, store, now } = d;
  const schemas = apiSchemas(config);
  const validators = new Validators(schemas);
  const routes: Route[] = [];
  let openapi: unknown;
  // The public address is known once the port is: routes read it through `services`.
  const services: Services = {
    config,
    dataDir: options.dataDir,
    searcher: undefined as unknown as Searcher,
    catalog: parts.index.catalog,
    contexts: new SearchContexts(config, store, parts.index.catalog),
    store,
    metrics: parts.index.metrics,
    gate: parts.admission.gate,
    planner: d.planner,
    baseUrl: '',
    version: VERSION,
    unavailable: () => (d.stopping ? 'shutting down' : undefined),
    now,
    entitlements: new Entitlements(store, trustedKeys(config), now),
    audit: parts.audit.audit,
    rateLimiter: parts.limiter,
    openapi: () => (openapi ??= buildOpenApi(routes, schemas, VERSION, services.baseUrl)),
    secret: Buffer.alloc(0),
    cluster: () => d.node,
  };
  // Webhook deliveries are verified (refusals audited) on every daemon, synced where it syncs (startLocalSync, joinCluster).
  services.webhooks = new WebhookReceiver({
    config,
    store,
    syncing: () => services.repoSync,
    seen: new SeenDeliveries(),
    refused: (address, host, why) => parts.audit.webhookRefusals.add(address, 'webhook', `${host} ${why}`),
    ...(services.metrics ? { observe: services.metrics.webhooks } : {}),
    env: options.env ?? process.env,
    log: d.logger,
  });
  routes.push(
    ...searchRoutes(services),
    ...symbolRoutes(services),
    ...browseRoutes(services),
    ...historyRoutes(services),
    ...repoRoutes(services),
    ...memberRoutes(services),
    ...scopedTokenRoutes(services),
    ...auditRoutes(services),
    ...systemRoutes(services),
    ...clusterRoutes(services),
    ...contextRoutes(services),
    ...webhookRoutes(services),
    ...watchRoutes(services),
  );
  // The tool server answers through the routes above (mcp/invoke.ts), so it is added last.
  const mcp = new McpSessions({
    createServer: () => createToolServer(routeInvoker(routes, validators), preparer(d.logger), VERSION, services.watches),
    countToolCall: async (identity) => void (await parts.limiter.take(identity)),
    idleMs: MCP_SESSION_IDLE_MS,
    maxSessions: options.mcpSessions?.max ?? MCP_MAX_SESSIONS,
    maxPerUser: options.mcpSessions?.perUser ?? MCP_MAX_SESSIONS_PER_USER,
    now: () => now().getTime(),
    log: d.logger,
  });
  routes.push(...mcpRoutes(services, mcp));
  return { services, routes, validators, mcp, internal: [] };
}

interface IdentityParts {
  oauth: OAuthContext;
  authenticator: Authenticator;
}

/**
 * Who the caller is: the installation's secret, the OAuth authorization server, the web
 * UI's browser sessions, and the authenticator that accepts all their credentials; their
 * routes join the API's.
 */
async function setUpIdentity(d: Assembly, api: Api, { audit, authFailures }: Auditing): Promise<IdentityParts> {
  const { config, options, settings, store, now, logger } = d;
  const services = api.services;
  // The OAuth authorization server (enterprise: the "oauth" entitlement). Its consent
  // step signs the user in with an API key through the daemon's own authenticator, which
  // in turn accepts the access tokens it issues.
  const secret = await installationSecret(store, config, options.dataDir);
  services.secret = secret;
  const hostOptions = { ...(options.env ? { env: options.env } : {}), log: logger };
  const onPass = (report: PermissionSyncReport) => services.metrics?.permissionPass(report);
  d.permissions = permissionService({ config, store, secret, catalog: services.catalog, audit, log: logger, now, hostOptions, onPass });
  const oauth: OAuthContext = {
    store,
    secret,
    now,
    issuer: () => services.baseUrl,
    entitlements: services.entitlements,
    async apiKeyUser(key, from) {
      const identity = await authenticator.authenticate({ token: key, via: 'apiKeyHeader', from });
      if (identity.kind !== 'apiKey' || identity.userId === undefined || identity.tokenId === undefined)
        throw new ServiceError('NOT_AUTHENTICATED', 'only an API key signs in here');
      return { userId: identity.userId, keyId: identity.tokenId };
    },
    audit,
    failures: authFailures,
    grantLifetimeMs: settings.oauth.grantLifetimeDays * 86_400_000,
  };
  // The web UI's browser sessions: tokens signed under the same secret, naming a session
  // the store keeps, so every daemon process sharing the data dir accepts them; signed in
  // with an API key through the same authenticator, which then accepts the session cookie on the API's routes.
  const sessions = new BrowserSessions(secret, now);
  // A sign-in with a code host links the member's account there, for the permission sync.
  const link = options.linkHostAccount ?? (async (userId, signIn) => void (await d.permissions!.links.linkSignedIn(userId, signIn)));
  const sso = singleSignOn(services, { secret, now, sessions, env: options.env ?? process.env, link });
  const onTouchError = (err: Error) =>
    logger.warn({ err: err.message }, 'recording when an API key was last used failed; requests go on (this is logged at most once a minute)');
  // Every refusal of a credential sent from an address is counted into the audit log.
  const authenticator = countingFailures(
    options.authenticator ??
      new StoreAuthenticator({
        store,
        secret,
        anonymousAccess: settings.anonymousAccess,
        now,
        oauth: (token) => verifyAccessToken(oauth, token),
        sessions,
        onTouchError,
        permissions: d.permissions.permissions,
        signInIssuers: sso.providers.issuers(),
      }),
    authFailures,
  );
  api.routes.push(...permissionRoutes(services, d.permissions), ...oauthRoutes(oauth));
  api.routes.push(...sessionRoutes(services, authenticator, sessions, sso.providers), ...sso.routes);
  api.routes.push(...credentialRoutes(services));
  return { oauth, authenticator };
}

/** Starts the HTTP server with every route, /readyz, /metrics and the web UI; its URL (the public one is settings.publicUrl when set). */
async function startHttp(d: Assembly, parts: { index: IndexParts; api: Api; identity: IdentityParts; limiter: RateLimiter }): Promise<string> {
  const { config, options, settings, logger } = d;
  const { api, identity } = parts;
  const { services } = api;
  const metricsAllowed = metricsGate(metricsAuth(settings), identity.authenticator, options.env);
  d.server = await startHttpServer({
    ...(config.cluster
      ? {
          internal: {
            routes: api.internal,
            authenticate: (method: string, target: string, headers: Readonly<Record<string, string>>) => {
              if (!d.node) throw new ServiceError('SERVICE_UNAVAILABLE', 'this node is still joining the cluster');
              d.node.auth.check(method, target, headers);
            },
            link: () => d.node?.link,
          },
        }
      : {}),
    host: options.host,
    port: options.port,
    routes: api.routes,
    extra: [
      {
        method: 'GET',
        path: '/readyz',
        async handle(headers) {
          const out = await readinessOf(d, parts.index.view, {
            owner: await ownerKeySent(headers, identity.authenticator),
            unavailable: services.unavailable(),
          });
          return { status: out.status, contentType: 'application/json', body: JSON.stringify(out.body) };
        },
      },
      {
        method: 'GET',
        path: '/metrics',
        async handle(headers) {
          await metricsAllowed(headers);
          return parts.index.metrics.render();
        },
      },
    ],
    web: webUi(INSTALL_ROOT, (err) => logger.error({ err: err.message }, 'the web UI could not be built: its pages answer 500')).handle,
    validators: api.validators,
    authenticator: identity.authenticator,
    rateLimiter: parts.limiter,
    challenge: async (path, credentialSent) => {
      let available = false;
      try {
        available = (await unavailable(identity.oauth)) === undefined;
      } catch {
        // The store is closing (shutdown): answer without the OAuth pointer.
      }
      return challenge(services.baseUrl, path, available, credentialSent);
    },
    logger,
    metrics: parts.index.metrics,
    maxBodyBytes: settings.http.maxBodyBytes,
    clientAddresses: new ClientAddresses(settings.http.trustedProxies),
  });
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  const url = `http://${hostForUrl}:${d.server.port}`;
  services.baseUrl = settings.publicUrl ?? url;
  return url;
}

/** What /readyz answers: whether the first sync pass is done, and which repositories are loaded, damaged or without symbols yet. */
async function readinessOf(d: Assembly, view: IndexView, asked: { owner: boolean; unavailable: string | undefined }): Promise<ReturnType<typeof readiness>> {
  const state = view.current();
  // In a cluster a node holds some shards: it is ready when the cluster can search
  // every repository through it (each shard on a live node).
  const held = d.node?.view.searchable();
  return readiness(
    {
      unavailable: asked.unavailable,
      firstPassRunning: d.clusterSync ? (await d.clusterSync.listedAt()) === undefined : d.scheduler !== undefined && d.scheduler.passes === 0,
      repos: await d.store.listRepos(),
      loaded: held?.repos ?? new Set(state.manifests.map((m) => m.repoId)),
      damaged: held ? new Set() : new Set(state.broken.map((b) => b.repoId)),
      symbolsPending: held?.symbolsPending ?? new Set(state.manifests.filter(symbolsPending).map((m) => m.repoId)),
    },
    asked.owner,
  );
}

/** The searcher's worker threads, started once the public address is known (results carry it), and the planner's. */
function startSearchPool(d: Assembly, services: Services, view: IndexView): void {
  const { dataDir, workers } = d.options;
  const maxWholeBytes = d.settings.http.maxSourceBytes;
  const searcher = new Searcher({ dataDir, workers, baseUrl: services.baseUrl, maxWholeBytes, view });
  d.searcher = searcher;
  services.searcher = d.history = historyBeside(searcher, { dataDir, baseUrl: services.baseUrl, maxWholeBytes });
  searcher.warm();
  d.planner.warm();
}

/**
 * In a cluster (config.cluster), once the server listens (the other nodes reach this one
 * there): the node joins, serves the node-to-node endpoints, fans searches out, and with
 * connections takes part in the cluster's sync, pushes' builds too (cluster/asked-syncs.ts).
 */
async function joinCluster(
  d: Assembly,
  { api, metrics, authenticator, url }: { api: Api; metrics: Metrics; authenticator: Authenticator; url: string },
): Promise<void> {
  const { config, options, store, logger } = d;
  const cluster = config.cluster!;
  const searcher = d.searcher!;
  d.node = await ClusterNode.start(
    {
      settings: cluster,
      dataDir: options.dataDir,
      self: { id: options.nodeId ?? nodeIdOf(options.dataDir), url: options.advertise ?? url, version: VERSION },
      searcher,
      store,
      log: logger,
      // A published shard that lost every copy: its repository's build is queued again.
      rebuild: (repoId) =>
        void d.clusterSync
          ?.requeue(repoId)
          .catch((err: Error) => logger.warn({ repoId, err: err.message }, "a lost repository's build could not be queued; tried again next round")),
      // Its figures in /metrics: its view of the cluster, its fan-out and replication.
      counters: metrics.cluster(() => d.node?.lastStatus()),
    },
    await clusterSecret(store),
  );
  // Requests for repositories this node cannot read come from the others through POST /_cluster/forward.
  api.internal.push(...d.node.routes(), forwardEndpoint({ routes: api.routes, validators: api.validators, authenticator, logger }));
  api.services.searcher = d.node.fanOut;
  api.services.watches = d.watches = startWatching(d, api.services, d.node, authenticator);
  if (options.sync !== false && Object.keys(config.connections).length > 0) d.clusterSync = await openClusterSync(d, d.node);
  if (d.clusterSync) api.services.repoSync = d.clusterSync.asked;
}

/**
 * The cluster's sync: builds are shared out among the nodes through the cluster's Redis,
 * and what a node builds is published for the others.
 */
function openClusterSync(d: Assembly, n: ClusterNode): Promise<ClusterSyncScheduler> {
  const { config, logger } = d;
  const dataDir = d.options.dataDir;
  const searcher = d.searcher!;
  const packing = compoundShardSettings(config);
  return ClusterSyncScheduler.open({
    config,
    dataDir,
    store: d.store,
    log: logger,
    redisUrl: config.cluster!.redis,
    keys: n.keys,
    nodeId: n.membership.id,
    heartbeatMs: config.cluster!.heartbeatMs,
    inUse: () => searcher.inUse(),
    // Small repositories, built on their own, are copied into compound shards afterwards.
    compoundShards: {
      version: () => n.view.published.seq,
      plan: () => n.planPacks(packing.build.target, packing.below),
      run: async (job) => void (await n.runPackJob(job, packing.build)),
    },
    // Each build gets generations no other node's build of the repository got
    // (published.ts allocate), and publishes what it commits.
    indexExtras: async (record, job) => {
      const local = loadManifest(dataDir, record.repoId);
      const least = local && !('unreadable' in local) ? local.generation + 1 : 1;
      const published = await n.publishedNow(record.repoId);
      return {
        minGeneration: await n.view.published.allocate(record.repoId, least),
        onCommit: (m) => void n.onCommit(m),
        // What the cluster serves now: a repository whose refs did not move is not built
        // again, unless some shard of it lost every copy (the replicator decides so,
        // after its grace, and queues a rebuild). A listing's job does not ask: nodes
        // restarted together rejoin one by one, and a listing run meanwhile saw shards
        // without a live holder and built every repository again.
        ...(published?.manifest && !published.deleted && (job.rebuild !== true || n.view.servable(record.repoId)) ? { current: published.manifest } : {}),
      };
    },
  });
}

/**
 * Watches: checked after each change of the index, as their owners (the authenticator says
 * what a member sees). In a cluster, of the cluster's published index, by one node at a time.
 */
function startWatching(d: Assembly, services: Services, view: IndexView | ClusterNode, authenticator: Authenticator): WatchRuntime {
  const n = view instanceof ClusterNode ? view : undefined;
  return startWatches({
    store: d.store,
    search: (req, options) => services.searcher.search(req, options),
    index:
      view instanceof ClusterNode
        ? { current: () => ({ version: view.view.version, manifests: view.view.catalogManifests().manifests }), visibility: (m) => manifestVisibility(m) }
        : view,
    ...(n ? { cluster: { leads: () => n.leadsWatches, readChange: (m, before) => n.readChange(m.repoId, before, m.refs) } } : {}),
    hold: () => d.searcher!.hold(),
    owner: async (userId) => authenticator.memberSees?.(userId),
    visibility: async (repoId) => services.catalog.recordOf(repoId)?.visibility ?? (await d.store.getRepo(repoId))?.visibility,
    scope: (userId, canSee, named) => services.contexts.searchFilter({ kind: 'apiKey', userId, canSee }, { named, useDefault: false }),
    secret: () => services.secret!,
    settings: () => d.settings.watches,
    userAgent: `trawl/${VERSION}`,
    ...(services.metrics ? { observe: services.metrics.watches } : {}),
    log: d.logger,
  });
}

/** Alone, when the configuration has connections, the sync scheduler (in a cluster the cluster's sync builds: a node's own would build everything here); and the permission schedule. */
function startLocalSync(d: Assembly, services: Services, view: IndexView): void {
  const { config, options } = d;
  const permissions = d.permissions!;
  // In a cluster every node runs the permission schedule: what one node synced is not due for the others (the store is shared).
  if (permissions.scheduled && options.sync !== false) permissions.scheduler.start();
  if (config.cluster || options.sync === false || Object.keys(config.connections).length === 0) return;
  const searcher = d.searcher!;
  // A sync pass that found new private repositories is followed by their permissions.
  const onPass = () => void permissions.scheduler.runNow().catch(() => {});
  // (The daemon's environment, where its options give one, is where the hosts' tokens are read.)
  const onSynced = () => {
    // Searches move to the index the sync made as it ends, not at the first search after it.
    searcher.catchUp();
    d.watches?.changed();
  };
  const onMerged = services.metrics ? (m: { seconds: number }) => services.metrics!.compoundMerge(m.seconds) : undefined;
  const sync = {
    config,
    dataDir: options.dataDir,
    store: d.store,
    log: d.logger,
    onSynced,
    // The merges after a sync take the manifests from the view, which keeps them current.
    manifests: () => view.current().manifests,
    ...(onMerged ? { onMerged } : {}),
    ...(options.env ? { hostOptions: { env: options.env } } : {}),
  };
  const scheduler = (d.scheduler = new SyncScheduler({ ...sync, inUse: () => searcher.inUse(), ...(permissions.scheduled ? { onPass } : {}) }));
  scheduler.start();
  // Repositories asked for between the passes (by id, by webhooks); compound shards tidied once none waits.
  const asked = askedSyncs(sync, scheduler);
  d.repoQueue = asked.queue;
  services.repoSync = asked;
}

/** The running daemon; closing it more than once waits for the one shutdown. */
function daemonHandle(d: Assembly, parts: { url: string; api: Api; admission: Admission; audit: Auditing; maintenance: NodeJS.Timeout }): Daemon {
  let closing: Promise<void> | undefined;
  return {
    url: parts.url,
    port: d.server!.port,
    services: parts.api.services,
    routes: parts.api.routes,
    ...(d.node ? { cluster: d.node } : {}),
    close: () => (closing ??= shutDown(d, parts)),
  };
}

/**
 * The graceful stop. A cluster's node stops taking builds, then leaves: the others take
 * its shards over while it still serves. Then new requests are refused, those in flight
 * finish (settings.http.shutdownTimeoutMs), and the parts close in the reverse of their
 * start.
 */
async function shutDown(
  d: Assembly,
  { api, admission, audit, maintenance }: { api: Api; admission: Admission; audit: Auditing; maintenance: NodeJS.Timeout },
): Promise<void> {
  const timeoutMs = d.settings.http.shutdownTimeoutMs;
  await d.clusterSync?.close();
  await d.node?.leave(timeoutMs);
  d.stopping = true;
  clearInterval(maintenance);
  admission.idle.close();
  api.mcp.endStreams();
  await d.server!.close(timeoutMs);
  // No request is left to fail: the open counts of failed authentications are recorded.
  audit.authFailures.flush(true);
  audit.webhookRefusals.flush(true);
  await api.mcp.closeAll();
  await d.repoQueue?.stop();
  await d.scheduler?.stop();
  await d.watches?.stop();
  await d.permissions?.scheduler.stop();
  await Promise.all([d.searcher!.close(), d.history?.close()]);
  await d.planner.close();
  await closeAllRepositories();
  await d.counter?.close();
  await d.store.close();
}

/** A start that failed: what the steps before started is closed, the store last. */
async function abandon(d: Assembly): Promise<void> {
  await d.clusterSync?.close().catch(() => {});
  await d.node?.close();
  await d.server?.close(0);
  await Promise.all([d.searcher?.close(), d.history?.close()]);
  await d.planner.close();
  await d.counter?.close();
  await d.store.close();
}
