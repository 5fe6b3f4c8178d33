// A node of a cluster (docs/deployment.md): joins the membership, keeps its index in line
// with the placement (replicator.ts), answers the other nodes (link-server.ts, peer-routes.ts)
// and fans searches out (fan-out.ts). The daemon (daemon.ts) starts one when the configuration has
// a `cluster` section, once its HTTP server listens (the others reach it there).

import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClusterSettings } from '../config/types.ts';
import type { Manifest } from '../index/manifest.ts';
import { readAllManifests } from '../index/manifest.ts';
import type { Logger } from '../runtime/logger.ts';
import { closeRedis, connectRedis, redactUrl } from '../runtime/redis-client.ts';
import type { Searcher } from '../search/searcher.ts';
import type { Store } from '../store/store.ts';
import { ClusterView } from './cluster-view.ts';
import { FanOut } from './fan-out.ts';
import { forward, type ForwardedReply, type ForwardRequest } from './forward.ts';
import { ServiceError } from '../errors.ts';
import { Holdings } from './holdings.ts';
import type { InternalLink, InternalRoute } from './internal-route.ts';
import { serveLink } from './link-server.ts';
import { PeerLinks } from './peer-link.ts';
import { ClusterKeys } from './redis-keys.ts';
import type { ClusterCounters } from './counters.ts';
import { Leader } from './leader.ts';
import { Membership } from './membership.ts';
import { PeerAuth } from './peer-auth.ts';
import { PeerClient } from './peer-client.ts';
import { peerRoutes } from './peer-routes.ts';
import { changeRoute, localChange, peerChange } from './change-route.ts';
import type { ChangedText, RefAt } from '../repos/changed-text.ts';
import { PublishedIndexes, type PublishedIndex } from './published.ts';
import { runPackJob, type PackJobOptions, type PackJobReport } from './pack-job.ts';
import { planPacks, type PackJob } from './pack-plan.ts';
import { Replicator } from './replicator.ts';
import { clusterStatus, type ClusterStatus } from './status.ts';

export interface ClusterNodeOptions {
  settings: ClusterSettings;
  dataDir: string;
  self: { id: string; url: string; version: string };
  searcher: Searcher;
  store: Store;
  log: Logger;
  /** Queues a build of the repository (its published shards lost every copy). */
  rebuild(repoId: number): void;
  /** Where its fan-out and replication are counted (the daemon's /metrics). */
  counters: ClusterCounters;
}

/** The secret every node signs its requests to the others with (peer-auth.ts): made once, kept in the shared store. */
export async function clusterSecret(store: Store): Promise<Buffer> {
  return Buffer.from(await store.sharedSecret('cluster', randomBytes(32).toString('base64url')), 'base64url');
}

/** What a node is built on once it has joined (ClusterNode.start): its Redis connection, its membership, and its ways to the other nodes. */
interface NodeParts {
  redis: Redis;
  membership: Membership;
  peers: PeerClient;
  links: PeerLinks;
  auth: PeerAuth;
  published: PublishedIndexes;
  holdings: Holdings;
}

export class ClusterNode {
  readonly keys: ClusterKeys;
  readonly view: ClusterView;
  readonly fanOut: FanOut;
  readonly replicator: Replicator;
  readonly auth: PeerAuth;
  readonly membership: Membership;
  readonly peers: PeerClient;
  private readonly redis: Redis;
  private readonly links: PeerLinks;
  #timer: NodeJS.Timeout | undefined;
  /** Which node checks the watches and delivers their changes (ClusterKeys.watchesLeader). */
  #watchesLeader: Leader | undefined;
  #closed = false;
  /** A read of the whole cluster view under way for searches whose shards moved (FanOutOptions.relocate). */
  #rereading: Promise<void> | undefined;

  private constructor(
    private readonly o: ClusterNodeOptions,
    { redis, membership, peers, links, auth, published, holdings }: NodeParts,
  ) {
    this.redis = redis;
    this.membership = membership;
    this.peers = peers;
    this.links = links;
    this.keys = new ClusterKeys(o.settings.name);
    this.auth = auth;
    this.view = new ClusterView(o.self.id, membership, published, holdings, o.settings.replicationFactor);
    this.replicator = new Replicator({
      dataDir: o.dataDir,
      view: this.view,
      peers,
      log: o.log,
      rebuild: o.rebuild,
      counters: o.counters,
      orphanGraceMs: o.settings.nodeTimeoutMs,
    });
    this.fanOut = new FanOut({
      self: o.self.id,
      searcher: o.searcher,
      links,
      urlOf: (n) => this.view.urlOf(n),
      units: () => this.view.units(),
      relocate: async (u) => {
        // (Units lost together wait for one read: a node's holdings are read once, not once per unit.)
        this.#rereading ??= this.view.refresh(true).finally(() => (this.#rereading = undefined));
        await this.#rereading;
        const now = this.view.units().filter((x) => x.repoId === u.repoId);
        return now.length === 1 && now[0]!.holders.length > 0 ? now[0] : undefined;
      },
      counters: o.counters,
      onUnavailable: (u) =>
        o.log.error(
          { repoId: u.repositoryId, repo: u.repository, shard: u.shard, reason: u.reason },
          'a shard could not be searched: no live node holding it answered; the search is not exhaustive',
        ),
    });
  }

  /** Joins the cluster: membership, the published index, a first round of replication. */
  static async start(o: ClusterNodeOptions, secret: Buffer): Promise<ClusterNode> {
    const keys = new ClusterKeys(o.settings.name);
    const where = redactUrl(o.settings.redis);
    const redis = await connectRedis(o.settings.redis, {
      what: "the cluster's Redis",
      onError: (err) =>
        o.log.error(
          { err: err.message, redis: where },
          "the cluster's Redis cannot be reached: this node keeps serving what it holds with the membership it last read",
        ),
    });
    const auth = new PeerAuth(secret, o.self.id);
    const peers = new PeerClient(auth);
    let node: ClusterNode | undefined;
    try {
      const membership = await Membership.join({
        redis,
        keys,
        self: o.self,
        heartbeatMs: o.settings.heartbeatMs,
        nodeTimeoutMs: o.settings.nodeTimeoutMs,
        onChange: () => void node?.replicator.schedule().catch(() => {}),
        onError: (err) => o.log.error({ err: err.message }, 'cluster heartbeat failed'),
      });
      node = new ClusterNode(o, {
        redis,
        membership,
        peers,
        links: new PeerLinks(auth),
        auth,
        published: new PublishedIndexes(redis, keys),
        holdings: new Holdings(redis, keys, o.self.id),
      });
      await node.replicator.writeHoldings();
      await node.replicator.schedule();
      const n = node;
      n.#timer = setInterval(
        () => void n.replicator.schedule().catch((err: Error) => o.log.warn({ err: err.message }, 'replication round failed')),
        o.settings.heartbeatMs,
      );
      n.#timer.unref();
      n.#watchesLeader = await Leader.open({
        redis,
        key: keys.watchesLeader,
        id: o.self.id,
        leads: 'the watches',
        heartbeatMs: o.settings.heartbeatMs,
        log: o.log,
      });
      o.log.info({ node: o.self.id, url: o.self.url, nodes: membership.live().length }, 'joined the cluster');
      return node;
    } catch (err) {
      peers.close();
      await closeRedis(redis);
      throw err;
    }
  }

  /** Whether this node checks the cluster's watches and delivers their changes now (one node at a time). */
  get leadsWatches(): boolean {
    return this.#watchesLeader?.isLeader === true;
  }

  /** The node-to-node endpoints this node serves. */
  routes(): InternalRoute[] {
    return [...peerRoutes(this.o.dataDir), changeRoute(this.o.dataDir)];
  }

  /**
   * What a repository's change between two sets of refs touched, read from its git mirror:
   * here when this node built it, else by the node that did (change-route.ts); undefined
   * when it cannot be told (that node is gone, or lacks a commit).
   */
  async readChange(repoId: number, before: readonly RefAt[], after: readonly RefAt[]): Promise<ChangedText | undefined> {
    const ask = { repo: repoId, before: before.map(refAt), after: after.map(refAt) };
    const builder = this.view.published.get(repoId)?.builtBy;
    try {
      if (builder === undefined || builder === this.o.self.id) return await localChange(this.o.dataDir, ask);
      const url = this.view.urlOf(builder);
      return url === undefined ? undefined : await peerChange(this.peers, url, ask);
    } catch (err) {
      this.o.log.warn(
        { repoId, node: builder, err: (err as Error).message },
        "a repository's change could not be read from its git mirror: every watch is searched in it",
      );
      return undefined;
    }
  }

  /** The link endpoint the other nodes dial to search this node's shards (link-server.ts). */
  readonly link: InternalLink = { open: (peer) => serveLink(this.o.searcher, peer) };

  /**
   * Has another node run an API request that reads a repository's source this node cannot
   * read (forward.ts): the first of the nodes able to (ClusterView.sourceNodes) that
   * answers. 503 SERVICE_UNAVAILABLE when none is live, or none answered.
   */
  async forward(repo: { repoId: number; name: string }, wholeIndex: boolean, r: ForwardRequest, signal?: AbortSignal): Promise<ForwardedReply> {
    const nodes = this.view.sourceNodes(repo.repoId, wholeIndex);
    let failed = '';
    for (const id of nodes) {
      const url = this.view.urlOf(id);
      if (url === undefined) continue;
      try {
        return await forward(this.peers, url, r, signal);
      } catch (err) {
        if (signal?.aborted) throw err;
        failed = (err as Error).message;
        this.o.log.warn({ repo: repo.name, node: id, err: failed }, 'a forwarded request failed on the node that can read the repository');
      }
    }
    const builder = this.view.published.get(repo.repoId)?.builtBy;
    const why = failed
      ? `the node that can read it did not answer (${failed})`
      : wholeIndex
        ? 'no live node holds every shard of its index'
        : builder === this.o.self.id
          ? 'this node indexed it, but its git source here is gone or lacks the indexed commit'
          : `its git source is on the node that indexed it${builder ? ` (${builder})` : ''}, which is not live`;
    throw new ServiceError(
      'SERVICE_UNAVAILABLE',
      `${repo.name} cannot be read through this node: ${why}; retry later (or once the repository is indexed again)`,
    );
  }

  /** A build here committed a manifest: publish it, then replicate (the promise: for whoever waits; failures are logged). */
  onCommit(m: Manifest): Promise<void> {
    return this.replicator
      .publishBuild(m)
      .then(async () => void (await this.replicator.schedule()))
      .catch((err: Error) => this.o.log.warn({ repoId: m.repoId, err: err.message }, 'publishing a build failed; retried next round'));
  }

  /**
   * The copies into compound shards to make now (pack-plan.ts), from the published index
   * read again first: the view as of the last heartbeat may lack the publications of the
   * jobs that just ran, and a plan of their sources' old generations is out of date before
   * it runs (pack-job.ts).
   */
  async planPacks(target: number, below: number): Promise<PackJob[]> {
    await this.view.refresh();
    const unheld = new Set(
      this.view
        .units()
        .filter((u) => u.holders.length === 0)
        .map((u) => u.repoId),
    );
    return planPacks(this.view.indexes(), target, below, (repoId) => !unheld.has(repoId));
  }

  /**
   * A repository's published index as Redis holds it now, the view read again first: a
   * listing's job that runs just after another node published the repository's build, and
   * decided from the view as of the last heartbeat, would build it again.
   */
  async publishedNow(repoId: number): Promise<PublishedIndex | undefined> {
    await this.view.refresh();
    return this.view.published.get(repoId);
  }

  /** Copies published repositories into compound shards here (pack-job.ts), publishes them, then replicates. */
  async runPackJob(job: PackJob, build: PackJobOptions['build']): Promise<PackJobReport> {
    const report = await runPackJob(job, {
      dataDir: this.o.dataDir,
      view: this.view,
      peers: this.peers,
      log: this.o.log,
      build,
      publish: (m, source) => this.replicator.publishCopy(m, source),
    });
    await this.replicator.schedule();
    return report;
  }

  /** What GET /api/cluster answers: the cluster as Redis holds it now. */
  async status(): Promise<ClusterStatus> {
    await this.view.refresh();
    return this.lastStatus();
  }

  /** The cluster as this node last read it (every heartbeat), without asking Redis: what /metrics shows at each scrape. */
  lastStatus(): ClusterStatus {
    const { name, ...rest } = clusterStatus(this.view, this.o.settings.name);
    return { name, self: this.o.self.id, ...rest };
  }

  /**
   * Leaves without a gap: marks this node leaving (placement gives its shards to others),
   * waits until every shard it holds has replicationFactor copies elsewhere (or `waitMs`
   * passed), then leaves the membership.
   */
  async leave(waitMs: number): Promise<void> {
    if (this.#closed) return;
    await this.membership.setState('leaving').catch(() => {});
    const until = Date.now() + waitMs;
    while (Date.now() < until) {
      await this.view.refresh().catch(() => {});
      if (this.#coveredElsewhere()) break;
      await new Promise((r) => setTimeout(r, this.o.settings.heartbeatMs));
    }
    await this.close(true);
  }

  /** Whether every shard this node holds at a published generation has enough copies on other live nodes. */
  #coveredElsewhere(): boolean {
    const live = this.view
      .live()
      .map((n) => n.id)
      .filter((n) => n !== this.o.self.id);
    const need = Math.min(this.o.settings.replicationFactor, live.length);
    for (const m of readAllManifests(this.o.dataDir)) {
      const p = this.view.published.get(m.repoId);
      if (!p || p.generation !== m.generation) continue;
      for (const s of m.shards) if (this.view.holdings.holders(live, m.repoId, m.generation, s.file).length < need) return false;
    }
    return true;
  }

  /** Stops: `leave` removes this node from the membership now (a clean stop); otherwise the others wait for its heartbeat to time out. */
  async close(leave = true): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    await this.replicator.stop();
    await this.#watchesLeader?.close();
    if (leave) await this.membership.leave().catch(() => {});
    else this.membership.stop();
    this.peers.close();
    this.links.close();
    await closeRedis(this.redis);
  }
}

/** A ref as the change route reads it (the store's records carry more). */
function refAt(r: RefAt): RefAt {
  return { name: r.name, commit: r.commit };
}
