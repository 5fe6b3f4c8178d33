// When a cluster the benchmark started is ready to be measured (phase-cluster.ts): what
// each node's GET /api/cluster and GET /readyz say, judged together. Ready means that
// every node sees every node live and the same published index, every shard is held by
// exactly the nodes the placement names for it (not merely by enough nodes: the node that
// built the index holds every shard until their owners have copied them, so "ok" comes
// before the owners' copies, and then drops those not placed on it; a copy or a drop during
// a timed run would be measured), and every node is ready with no repository's symbols
// pending (a symbols pass publishes again, and the copies follow).

/** The parts of GET /api/cluster's answer this reads (cluster/status.ts). */
export interface ClusterStatusView {
  self: string;
  nodes: Array<{ id: string; live: boolean; shards: number }>;
  repositories: Array<{
    repositoryId: number;
    generation: number;
    builtBy: string;
    shards: Array<{ shard: string; owners: string[]; holders: string[]; health: string }>;
  }>;
  summary: { shards: number; ok: number };
}

/** The parts of GET /readyz's answer this reads (http/readiness.ts), with its status. */
export interface ReadyView {
  status: number;
  body: { status?: string; reason?: string; repositories?: { total: number; searchable: number; symbolsPending: number } };
}

/** Why the cluster is not ready yet (one line, the first reason found), or null when it is. */
export function clusterGap(states: ReadonlyArray<{ cluster: ClusterStatusView; ready: ReadyView }>, nodes: number): string | null {
  let index: string | undefined;
  for (const { cluster: c, ready: r } of states) {
    const live = c.nodes.filter((n) => n.live).length;
    if (live !== nodes) return `${c.self} sees ${live} of ${nodes} nodes live`;
    if (c.repositories.length === 0) return `${c.self}: no index published yet`;
    const generations = c.repositories
      .map((p) => `${p.repositoryId}@${p.generation}`)
      .sort()
      .join(',');
    if (index !== undefined && generations !== index) return `the nodes see different published indexes (${index} against ${generations} on ${c.self})`;
    index = generations;
    const shards = c.repositories.flatMap((p) => p.shards);
    const unplaced = shards.filter((s) => s.health !== 'ok' || !s.owners.every((o) => s.holders.includes(o))).length;
    if (unplaced > 0) return `${c.self}: ${unplaced} of ${shards.length} shards not yet on every node placed for them`;
    const extra = shards.filter((s) => s.holders.some((h) => !s.owners.includes(h))).length;
    if (extra > 0) return `${c.self}: ${extra} of ${shards.length} shards still held by a node not placed for them`;
    const repos = r.body.repositories;
    if (r.status !== 200 || repos === undefined) return `${c.self} is not ready (${r.body.reason ?? r.body.status ?? r.status})`;
    if (repos.total === 0 || repos.searchable !== repos.total) return `${c.self}: ${repos.searchable} of ${repos.total} repositories searchable`;
    if (repos.symbolsPending > 0) return `${c.self}: symbols pending for ${repos.symbolsPending} repositories`;
  }
  return states.length === nodes ? null : `${states.length} of ${nodes} nodes answered`;
}
