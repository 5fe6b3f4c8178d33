// How a cluster stands, computed from a view of it (cluster-view.ts): the nodes, every
// published shard with the nodes placed for it and the live nodes holding it, and replica
// health. One computation for every reader: GET /api/cluster and /metrics through a node
// (node.ts), `trawl cluster status` from the cluster's Redis without being a node
// (cli/cluster-command.ts, through Membership.observe).
//
// A shard is `ok` with replicationFactor live holders, or as many as there are live nodes
// (two nodes cannot hold three copies); `under-replicated` with fewer; `unavailable` with
// none: searches then leave it out and name it in `unavailableShards`.

import type { ClusterView } from './cluster-view.ts';

export type ShardHealth = 'ok' | 'under-replicated' | 'unavailable';

/** GET /api/cluster's answer (http/schemas/cluster.ts documents it). */
export interface ClusterStatus {
  name: string;
  /** The node that answered. */
  self: string;
  replicationFactor: number;
  nodes: Array<{
    id: string;
    url: string;
    state: string;
    live: boolean;
    lastHeartbeat: string;
    startedAt: string;
    version: string;
    shards: number;
    repositories: number;
  }>;
  repositories: Array<{
    repositoryId: number;
    repository: string;
    generation: number;
    builtBy: string;
    shards: Array<{ shard: string; owners: string[]; holders: string[]; replicas: number; health: ShardHealth }>;
  }>;
  summary: { shards: number; ok: number; underReplicated: number; unavailable: number };
}

/** The cluster as `view` last read it (refresh it first for the state of now); `self` is the reader's to add. */
export function clusterStatus(view: ClusterView, name: string): Omit<ClusterStatus, 'self'> {
  const nodes = view.membership.nodes();
  const live = nodes.filter((n) => n.live).map((n) => n.id);
  const placement = view.placement;
  const R = view.replicas;
  const perNode = new Map<string, { shards: number; repos: Set<number> }>(nodes.map((n) => [n.id, { shards: 0, repos: new Set() }]));
  const summary = { shards: 0, ok: 0, underReplicated: 0, unavailable: 0 };
  const repositories: ClusterStatus['repositories'] = view.indexes().map((p) => ({
    repositoryId: p.repoId,
    repository: p.manifest!.repo.name,
    generation: p.generation,
    builtBy: p.builtBy,
    shards: p.manifest!.shards.map((s) => {
      const holders = view.holdings.holders(live, p.repoId, p.generation, s.file);
      for (const h of holders) {
        const c = perNode.get(h);
        if (c) {
          c.shards++;
          c.repos.add(p.repoId);
        }
      }
      const health: ShardHealth = holders.length === 0 ? 'unavailable' : holders.length < Math.min(R, live.length) ? 'under-replicated' : 'ok';
      summary.shards++;
      if (health === 'ok') summary.ok++;
      else if (health === 'unavailable') summary.unavailable++;
      else summary.underReplicated++;
      return { shard: s.file, owners: placement.owners(p.repoId, s.file), holders, replicas: holders.length, health };
    }),
  }));
  return {
    name,
    replicationFactor: R,
    nodes: nodes.map((n) => ({
      id: n.id,
      url: n.url,
      state: n.live ? n.state : 'dead',
      live: n.live,
      lastHeartbeat: new Date(n.heartbeatAt).toISOString(),
      startedAt: n.startedAt,
      version: n.version,
      shards: perNode.get(n.id)?.shards ?? 0,
      repositories: perNode.get(n.id)?.repos.size ?? 0,
    })),
    repositories,
    summary,
  };
}

/**
 * A settled cluster: every shard is held by exactly the nodes placed for it (nothing left to
 * copy, and builders have dropped what is not placed on them), all of them live.
 */
export function settled(s: Pick<ClusterStatus, 'repositories'>): boolean {
  return s.repositories.every((r) =>
    r.shards.every((sh) => sh.health === 'ok' && sh.holders.length === sh.owners.length && sh.owners.every((o) => sh.holders.includes(o))),
  );
}
