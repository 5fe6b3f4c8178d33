// The daemon, and the composition root: the one place that builds and wires every part
// (the HTTP server with every route, the tool server, the web UI, the searcher, the
// repository catalog, the store, the rate limit, metrics, and when the configuration has
// connections the sync scheduler with the garbage collector of retired index files).
// `trawl serve` and the tests start it here. Only bench/ and cli/ sit above it
// (test/architecture/floors.test.ts).

import { webUi } from './web/handler.ts';
import { readFileSync, statSync } from 'node:fs';
import { ServiceError } from './errors.ts';
import { ownerKeySent } from './http/owner-key.ts';
import { readiness } from './http/readiness.ts';
import { join } from 'node:path';
import { INSTALL_ROOT } from './install-root.ts';
import type { Config } from './config/types.ts';
import { IndexView } from './index/index-health.ts';
import { loadManifest, namedPaths, symbolsPending } from './index/manifest.ts';
import { SHARD_EXT } from './index/shard-format.ts';
import { collectIndexGarbage } from './index/garbage.ts';
import { ClusterSyncScheduler } from './cluster/cluster-sync.ts';
import { closeAllRepositories } from './repos/git-repo-cache.ts';
import { SyncScheduler } from './sync/scheduler.ts';
import { compoundShardSettings } from './sync/sync.ts';
import { Searcher } from './search/searcher.ts';
import { Planner } from './search/planner.ts';
import { collectHeap } from './runtime/collect-heap.ts';
import { IdleCollector } from './runtime/idle-collector.ts';
import { trimHeap } from './runtime/heap-trim.ts';
import { openConfiguredStore } from './store/open.ts';
import { ClusterNode, clusterSecret } from './cluster/node.ts';
import { nodeIdOf } from './cluster/node-id.ts';
import type { InternalRoute } from './cluster/internal-route.ts';
import { installationSecret } from './auth/credentials.ts';
import { clusterRoutes } from './http/handlers/cluster.ts';
import { clusterSchemas } from './http/schemas/cluster.ts';
import type { Store } from './store/store.ts';
import { StoreAuthenticator } from './auth/authenticator.ts';
import { AuditLog } from './audit/log.ts';
import { AuthFailures, countingFailures } from './audit/auth-failures.ts';
import { auditRoutes } from './http/handlers/audit.ts';
import { auditSchemas } from './http/schemas/audit.ts';
import { BrowserSessions } from './auth/browser-session.ts';
import type { Authenticator } from './auth/identity.ts';
import type { RateLimiter } from './ratelimit/limiter.ts';
import type { RateCounter } from './ratelimit/counter.ts';
import { DailyRateLimiter } from './ratelimit/daily-limiter.ts';
import { openRateCounter } from './ratelimit/open-counter.ts';
import { redactUrl } from './runtime/redis-client.ts';
import { Catalog } from './http/catalog.ts';
import { forwardEndpoint } from './http/forward-endpoint.ts';
import { SearchGate } from './http/gate.ts';
import { browseRoutes } from './http/handlers/browse.ts';
import { historyRoutes } from './http/handlers/history.ts';
import { repoRoutes } from './http/handlers/repos.ts';
import { searchRoutes } from './http/handlers/search.ts';
import { symbolRoutes } from './http/handlers/symbols.ts';
import { systemRoutes } from './http/handlers/system.ts';
import type { HttpLogger } from './http/logging.ts';
import { Metrics, type IndexSize } from './http/metrics.ts';
import { metricsAuth, metricsGate } from './http/metrics-access.ts';
import { ClientAddresses } from './http/client-address.ts';
import { buildOpenApi } from './http/openapi.ts';
import type { Route } from './http/route.ts';
import { browseSchemas } from './http/schemas/browse.ts';
import { commonSchemas, type JsonSchema } from './http/schemas/common.ts';
import { historySchemas } from './http/schemas/history.ts';
import { repoSchemas } from './http/schemas/repos.ts';
import { memberSchemas } from './http/schemas/members.ts';
import { scopedTokenSchemas } from './http/schemas/scoped-tokens.ts';
import { memberRoutes } from './http/handlers/members.ts';
import { scopedTokenRoutes } from './http/handlers/scoped-tokens.ts';
import { mcpRoutes } from './mcp/endpoint.ts';
import { oauthRoutes } from './http/handlers/oauth.ts';
import { sessionRoutes } from './http/handlers/session.ts';
import { credentialRoutes } from './http/handlers/credentials.ts';
import { credentialSchemas } from './http/schemas/credentials.ts';
import { Entitlements } from './auth/entitlements.ts';
import { trustedKeys } from './auth/license.ts';
import { verifyAccessToken } from './oauth/access.ts';
import { unavailable, type OAuthContext } from './oauth/context.ts';
import { challenge } from './oauth/metadata.ts';
import { UNUSED_CLIENT_TTL_MS } from './oauth/clients.ts';
import { preparer } from './mcp/call.ts';
import { routeInvoker } from './mcp/invoke.ts';
import { createToolServer, MCP_MAX_SESSIONS, MCP_MAX_SESSIONS_PER_USER, MCP_SESSION_IDLE_MS } from './mcp/server.ts';
import { McpSessions } from './mcp/sessions.ts';
import { searchSchemas } from './http/schemas/search.ts';
import { sessionSchemas } from './http/schemas/session.ts';
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

/** Every schema of the API, with the configured bound of `matches`. */
export function apiSchemas(config: Config): Record<string, JsonSchema> {
  return { ...commonSchemas, ...searchSchemas(config.settings.search.maxMatches), ...browseSchemas, ...historySchemas, ...repoSchemas, ...memberSchemas, ...scopedTokenSchemas, ...auditSchemas, ...sessionSchemas, ...credentialSchemas, ...clusterSchemas };
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, dataDir, logger } = options;
  const settings = config.settings;
  const store: Store = options.store ?? openConfiguredStore(config, dataDir);
  if (!settings.anonymousAccess && (await store.listUsers()).length === 0) {
    logger.warn({}, 'anonymous access is off and there are no users yet: every API request will be refused (401) until you run trawl users add and trawl keys create');
  }
  let stopping = false;
  let server: HttpServer | undefined;
  let searcher: Searcher | undefined;
  // Queries are planned on threads of their own unless searches run in this thread (tests).
  const planner = new Planner({ threads: options.workers === 0 ? 0 : undefined });
  let counter: RateCounter | undefined;
  let node: ClusterNode | undefined;
  let clusterSync: ClusterSyncScheduler | undefined;
  try {
    // One view of the index for the catalog, the searcher and the metrics: a damaged
    // repository is logged once, counted, and left out of all three.
    let records: Catalog | undefined;
    const view: IndexView = new IndexView(dataDir, {
      onBroken: (b) => logger.error({ repoId: b.repoId, ...(b.name ? { repo: b.name } : {}), reason: b.reason }, 'repository index is damaged: left out of searches and listings until it is re-indexed (the next sync, or trawl index)'),
      onShardError: () => metrics.shardErrors.inc(),
      // The store's records as the catalog last read them (a sync hook: the view is read on every request).
      lookup: (id) => {
        const r = records?.recordOf(id);
        return r && { name: r.repoName, visibility: r.visibility };
      },
    });
    // In a cluster the catalog lists the cluster's published repositories, whichever nodes
    // hold them (this data dir's own until the node has joined).
    const catalog = new Catalog(dataDir, store, view, config.cluster ? { current: () => node?.view.catalogManifests() ?? view.current() } : undefined);
    records = catalog;
    await catalog.refresh();
    const metrics: Metrics = new Metrics({ store, indexSize: () => indexSize(view), brokenRepos: () => view.current().broken.length, searchLoad: () => searcher?.load() ?? { busy: 0, queued: 0 } });
    // Once searches have gone quiet, every thread collects its heap: what a burst left
    // (reply buffers, stream chunks) goes back instead of staying resident while idle.
    // The workers collect when their message arrives; what the collections free goes
    // back to the C heap, whose free pages are then given back to the system.
    const idle = new IdleCollector(QUIET_MS, () => {
      collectHeap();
      searcher?.collectHeaps();
      setTimeout(trimHeap, TRIM_AFTER_MS).unref();
    });
    const gate = new SearchGate({ concurrent: settings.search.maxConcurrent, queued: settings.search.maxQueued, perCaller: settings.search.maxConcurrentPerCaller, perCallerQueued: settings.search.maxQueuedPerCaller }, (running, waiting) => {
      metrics.running.set(running);
      metrics.queue.set(waiting);
      if (running + waiting > 0) idle.busy();
      else idle.quiet();
    }, () => metrics.rejected.inc());
    const schemas = apiSchemas(config);
    const validators = new Validators(schemas);
    const now = options.now ?? (() => new Date());
    let rateLimiter: RateLimiter | undefined = options.rateLimiter;
    if (!rateLimiter) {
      // In a cluster "embedded" means the cluster's Redis: every node counts in one place,
      // and one Lua take there costs less than a PostgreSQL transaction per request.
      const counterAt = settings.rateLimit.store === 'embedded' && config.cluster ? config.cluster.redis : settings.rateLimit.store;
      const where = counterAt === 'embedded' ? 'embedded' : redactUrl(counterAt);
      const onCounterError = (err: Error) => logger.error({ err: err.message, store: where }, 'rate-limit counter failed: counted requests get 503 until it is back');
      counter = await openRateCounter(counterAt, store, onCounterError);
      const onCounterFull = (err: Error) => logger.error({ err: err.message, store: where }, 'the disk under the rate-limit counter is full: requests below their limit go on uncounted until space returns (logged at most once a minute)');
      rateLimiter = new DailyRateLimiter({ counter, defaultLimit: settings.rateLimit.requestsPerDay, now, onCounterError, onCounterFull });
    }
    const limiter: RateLimiter = rateLimiter;
    // The audit log: strict for changes (audit/log.ts); a best-effort note that cannot be
    // written is logged, at most once a minute.
    const audit = new AuditLog(store, now, (err, action) => logger.warn({ err: err.message, action }, 'an audit event could not be written; what it records went ahead (logged at most once a minute)'));
    const authFailures = new AuthFailures({ log: audit, now });
    // The public address is known once the port is: routes read it through `services`.
    const services: Services = {
      config,
      dataDir,
      searcher: undefined as unknown as Searcher,
      catalog,
      store,
      metrics,
      gate,
      planner,
      baseUrl: '',
      version: VERSION,
      unavailable: () => (stopping ? 'shutting down' : undefined),
      now,
      entitlements: new Entitlements(store, trustedKeys(config), now),
      audit,
      rateLimiter: limiter,
      openapi: () => (openapi ??= buildOpenApi(routes, schemas, VERSION, services.baseUrl)),
      secret: Buffer.alloc(0),
      cluster: () => node,
    };
    let openapi: unknown;
    const routes: Route[] = [
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
    ];
    // The tool server answers through the routes above (mcp/invoke.ts), so it is added last.
    const mcp = new McpSessions({
      createServer: () => createToolServer(routeInvoker(routes, validators), preparer(logger), VERSION),
      countToolCall: async (identity) => void (await limiter.take(identity)),
      idleMs: MCP_SESSION_IDLE_MS,
      maxSessions: options.mcpSessions?.max ?? MCP_MAX_SESSIONS,
      maxPerUser: options.mcpSessions?.perUser ?? MCP_MAX_SESSIONS_PER_USER,
      now: () => now().getTime(),
      log: logger,
    });
    routes.push(...mcpRoutes(services, mcp));

    // The OAuth authorization server (enterprise: the "oauth" entitlement). Its consent
    // step signs the user in with an API key through the daemon's own authenticator, which
    // in turn accepts the access tokens it issues.
    const secret = await installationSecret(store, config, dataDir);
    services.secret = secret;
    const oauth: OAuthContext = {
      store,
      secret,
      now,
      issuer: () => services.baseUrl,
      entitlements: services.entitlements,
      async apiKeyUser(key, from) {
        const identity = await authenticator.authenticate({ token: key, via: 'apiKeyHeader', from });
        if (identity.kind !== 'apiKey' || identity.userId === undefined || identity.tokenId === undefined) throw new ServiceError('NOT_AUTHENTICATED', 'only an API key signs in here');
        return { userId: identity.userId, keyId: identity.tokenId };
      },
      audit,
      failures: authFailures,
      grantLifetimeMs: settings.oauth.grantLifetimeDays * 86_400_000,
    };
    // The web UI's browser sessions: tokens signed under the same secret, naming a session
    // the store keeps, so every daemon process sharing the data dir accepts them; signed in
    // with an API key through the same authenticator, which then accepts the session cookie
    // on the API's routes.
    const sessions = new BrowserSessions(secret, now);
    const onTouchError = (err: Error) => logger.warn({ err: err.message }, 'recording when an API key was last used failed; requests go on (this is logged at most once a minute)');
    // Every refusal of a credential sent from an address is counted into the audit log.
    const authenticator = countingFailures(
      options.authenticator ?? new StoreAuthenticator({ store, secret, anonymousAccess: settings.anonymousAccess, now, oauth: (token) => verifyAccessToken(oauth, token), sessions, onTouchError }),
      authFailures,
    );
    routes.push(...oauthRoutes(oauth));
    routes.push(...sessionRoutes(services, authenticator, sessions));
    routes.push(...credentialRoutes(services));
    const metricsAllowed = metricsGate(metricsAuth(settings), authenticator, options.env);
    // Started once the server listens (below); /readyz reads how far its first pass got.
    let scheduler: SyncScheduler | undefined;
    // A cluster's node-to-node endpoints: filled once the node has joined (below).
    const internal: InternalRoute[] = [];
    server = await startHttpServer({
      ...(config.cluster
        ? {
            internal: {
              routes: internal,
              authenticate: (method: string, target: string, headers: Readonly<Record<string, string>>) => {
                if (!node) throw new ServiceError('SERVICE_UNAVAILABLE', 'this node is still joining the cluster');
                node.auth.check(method, target, headers);
              },
              link: () => node?.link,
            },
          }
        : {}),
      host: options.host,
      port: options.port,
      routes,
      extra: [
        {
          method: 'GET',
          path: '/readyz',
          async handle(headers) {
            const owner = await ownerKeySent(headers, authenticator);
            const state = view.current();
            // In a cluster a node holds some shards: it is ready when the cluster can search
            // every repository through it (each shard on a live node).
            const held = node?.view.searchable();
            const out = readiness({
              unavailable: services.unavailable(),
              firstPassRunning: clusterSync ? (await clusterSync.listedAt()) === undefined : scheduler !== undefined && scheduler.passes === 0,
              repos: await store.listRepos(),
              loaded: held?.repos ?? new Set(state.manifests.map((m) => m.repoId)),
              damaged: held ? new Set() : new Set(state.broken.map((b) => b.repoId)),
              symbolsPending: held?.symbolsPending ?? new Set(state.manifests.filter(symbolsPending).map((m) => m.repoId)),
            }, owner);
            return { status: out.status, contentType: 'application/json', body: JSON.stringify(out.body) };
          },
        },
        {
          method: 'GET',
          path: '/metrics',
          async handle(headers) {
            await metricsAllowed(headers);
            return metrics.render();
          },
        },
      ],
      web: webUi(INSTALL_ROOT, (err) => logger.error({ err: err.message }, 'the web UI could not be built: its pages answer 500')).handle,
      validators,
      authenticator,
      rateLimiter: limiter,
      challenge: async (path, credentialSent) => {
        let available = false;
        try {
          available = (await unavailable(oauth)) === undefined;
        } catch {
          // The store is closing (shutdown): answer without the OAuth pointer.
        }
        return challenge(services.baseUrl, path, available, credentialSent);
      },
      logger,
      metrics,
      maxBodyBytes: settings.http.maxBodyBytes,
      clientAddresses: new ClientAddresses(settings.http.trustedProxies),
    });
    const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
    const url = `http://${hostForUrl}:${server.port}`;
    services.baseUrl = settings.publicUrl ?? url;
    searcher = new Searcher({ dataDir, workers: options.workers, baseUrl: services.baseUrl, maxWholeBytes: settings.http.maxSourceBytes, view });
    services.searcher = searcher;
    searcher.warm();
    planner.warm();
    if (config.cluster) {
      node = await ClusterNode.start(
        {
          settings: config.cluster,
          dataDir,
          self: { id: options.nodeId ?? nodeIdOf(dataDir), url: options.advertise ?? url, version: VERSION },
          searcher,
          store,
          log: logger,
          // A published shard that lost every copy: its repository's build is queued again.
          rebuild: (repoId) => void clusterSync?.requeue(repoId).catch((err: Error) => logger.warn({ repoId, err: err.message }, "a lost repository's build could not be queued; tried again next round")),
          // Its figures in /metrics: its view of the cluster, its fan-out and replication.
          counters: metrics.cluster(() => node?.lastStatus()),
        },
        await clusterSecret(store),
      );
      // Requests for repositories this node cannot read come from the others through POST /_cluster/forward.
      internal.push(...node.routes(), forwardEndpoint({ routes, validators, authenticator, logger }));
      services.searcher = node.fanOut;
      if (options.sync !== false && Object.keys(config.connections).length > 0) {
        const n = node;
        const packing = compoundShardSettings(config);
        clusterSync = await ClusterSyncScheduler.open({
          config,
          dataDir,
          store,
          log: logger,
          redisUrl: config.cluster.redis,
          keys: n.keys,
          nodeId: n.membership.id,
          heartbeatMs: config.cluster.heartbeatMs,
          inUse: () => searcher!.inUse(),
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
            const published = n.view.published.get(record.repoId);
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
    }

    const s = searcher;
    // In a cluster the cluster's sync (above) builds; a node's own scheduler would build everything here.
    if (!config.cluster && options.sync !== false && Object.keys(config.connections).length > 0) {
      scheduler = new SyncScheduler({ config, dataDir, store, log: logger, inUse: () => s.inUse() });
      scheduler.start();
    }
    // Without a scheduler, files retired by `trawl index` runs are still collected. Expired
    // OAuth codes and tokens, and browser sessions that expired or ended, go once an hour (a
    // day after they could last be used: a late reuse is still recognised as one meanwhile),
    // and so do audit events older than settings.audit.retentionDays. Clients registered but
    // never used go every minute, UNUSED_CLIENT_TTL_MS after registration, so a flood of
    // registrations drains by itself (oauth/clients.ts). Failed authentications whose minute
    // has passed are recorded.
    let lastOAuthPrune = 0;
    const maintain = async (): Promise<void> => {
      try {
        collectIndexGarbage(dataDir, s.inUse());
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'collecting retired index files failed');
      }
      const t = now().getTime();
      try {
        const gone = await store.oauth.pruneUnusedClients(new Date(t - UNUSED_CLIENT_TTL_MS).toISOString());
        if (gone > 0) logger.info({ clients: gone }, 'removed OAuth clients registered but never used');
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'pruning unused OAuth clients failed');
      }
      if (t - lastOAuthPrune >= 3_600_000) {
        lastOAuthPrune = t;
        try {
          await store.oauth.prune(new Date(t - 86_400_000).toISOString());
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'pruning expired OAuth codes and tokens failed');
        }
        try {
          await store.pruneSessions(new Date(t - 86_400_000).toISOString());
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'pruning ended browser sessions failed');
        }
        const retentionDays = settings.audit.retentionDays;
        try {
          const gone = await store.audit.prune(new Date(t - retentionDays * 86_400_000).toISOString());
          if (gone > 0) logger.info({ events: gone, retentionDays }, 'removed audit events older than the retention');
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'pruning old audit events failed');
        }
      }
      authFailures.flush();
    };
    // One round at a time: a slow store does not pile rounds up.
    let maintaining = false;
    const gc = setInterval(() => {
      if (maintaining) return;
      maintaining = true;
      void maintain().finally(() => (maintaining = false));
    }, options.maintenanceIntervalMs ?? 60_000);
    gc.unref();

    const srv = server;
    let closing: Promise<void> | undefined;
    return {
      url,
      port: srv.port,
      services,
      routes,
      ...(node ? { cluster: node } : {}),
      close(): Promise<void> {
        closing ??= (async () => {
          // A cluster's node stops taking builds, then leaves: the others take its shards over while it still serves.
          await clusterSync?.close();
          await node?.leave(settings.http.shutdownTimeoutMs);
          stopping = true;
          clearInterval(gc);
          idle.close();
          await srv.close(settings.http.shutdownTimeoutMs);
          // No request is left to fail: the open counts of failed authentications are recorded.
          authFailures.flush(true);
          await mcp.closeAll();
          await scheduler?.stop();
          await s.close();
          await planner.close();
          await closeAllRepositories();
          await counter?.close();
          await store.close();
        })();
        return closing;
      },
    };
  } catch (err) {
    await clusterSync?.close().catch(() => {});
    await node?.close();
    await server?.close(0);
    await searcher?.close();
    await planner.close();
    await counter?.close();
    await store.close();
    throw err;
  }
}

/** What the index serves, for the metrics (manifests only: no shard is opened). */
function indexSize(view: IndexView): IndexSize {
  const out: IndexSize = { shards: 0, bytes: 0, files: 0, contentBytes: 0 };
  const dataDir = view.dataDir;
  // A compound shard is named by each of its repositories' manifests: counted once.
  const seen = new Set<string>();
  for (const m of view.current().manifests) {
    out.files += m.files;
    out.contentBytes += m.contentBytes;
    for (const { file, path } of namedPaths(dataDir, m)) {
      if (seen.has(path)) continue;
      seen.add(path);
      out.bytes += fileSize(path);
      if (file.endsWith(SHARD_EXT)) out.shards++;
    }
  }
  return out;
}

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
